// Account → Two-factor authentication: enable (QR + recovery codes + confirm), regenerate
// recovery codes, disable. Each change asks for the password again.
import { Badge, Button, Group, Stack, Text } from '@mantine/core';
import { useState } from 'react';
import { SectionCard } from '../../components/SectionCard.tsx';
import { authCall, authClient } from '../../lib/auth-client.ts';
import { notifySuccess } from '../../lib/errors.ts';
import { useRefreshMe } from '../../lib/me.ts';
import type { Me } from '../../lib/types.ts';
import { PasswordPromptModal } from './PasswordPromptModal.tsx';
import { RecoveryCodes } from './RecoveryCodes.tsx';
import { TwoFactorSetup } from './TwoFactorSetup.tsx';

type Prompt = 'enable' | 'disable' | 'regenerate' | null;

export function TwoFactorCard({ me }: { me: Me }) {
  const refreshMe = useRefreshMe();
  const [prompt, setPrompt] = useState<Prompt>(null);
  const [setup, setSetup] = useState<{ totpURI: string; backupCodes: string[] } | null>(null);
  const [newCodes, setNewCodes] = useState<string[] | null>(null);
  const enabled = me.user.twoFactorEnabled;

  const enable = async (password: string) => {
    const data = await authCall(authClient.twoFactor.enable({ password }));
    if (!data || !('totpURI' in data)) throw new Error('The server did not return an authenticator key. Try again.');
    setNewCodes(null);
    setSetup({ totpURI: data.totpURI, backupCodes: data.backupCodes });
  };
  const disable = async (password: string) => {
    await authCall(authClient.twoFactor.disable({ password }));
    setNewCodes(null);
    await refreshMe();
    notifySuccess('Two-factor authentication is off.');
  };
  const regenerate = async (password: string) => {
    const data = await authCall(authClient.twoFactor.generateBackupCodes({ password }));
    setNewCodes(data.backupCodes);
    notifySuccess('New recovery codes created. The old ones no longer work.');
  };

  return (
    <SectionCard
      headingId="two-factor-heading"
      title="Two-factor authentication"
      aside={
        <Badge color={enabled ? 'green' : 'gray'} variant="light" data-testid="two-factor-status">
          {enabled ? 'On' : 'Off'}
        </Badge>
      }
    >
      <Text size="sm" c="dimmed">
        {enabled
          ? 'Signing in asks for a code from your authenticator app, or one of your recovery codes.'
          : 'Protect your account with a code from an authenticator app in addition to your password.'}
      </Text>

      {setup && !enabled ? (
        <TwoFactorSetup
          totpURI={setup.totpURI}
          backupCodes={setup.backupCodes}
          onCancel={() => setSetup(null)}
          onEnabled={async () => {
            setSetup(null);
            await refreshMe();
            notifySuccess('Two-factor authentication is on.');
          }}
        />
      ) : enabled ? (
        <Stack gap="md">
          {newCodes && (
            <>
              <RecoveryCodes codes={newCodes} />
              <Button variant="default" size="xs" style={{ alignSelf: 'flex-start' }} onClick={() => setNewCodes(null)}>
                I saved the codes
              </Button>
            </>
          )}
          <Group gap="sm">
            <Button variant="default" onClick={() => setPrompt('regenerate')}>
              Regenerate recovery codes
            </Button>
            <Button color="red" variant="light" onClick={() => setPrompt('disable')}>
              Disable two-factor authentication
            </Button>
          </Group>
        </Stack>
      ) : (
        <Button style={{ alignSelf: 'flex-start' }} onClick={() => setPrompt('enable')}>
          Enable two-factor authentication
        </Button>
      )}

      <PasswordPromptModal
        opened={prompt === 'enable'}
        title="Enable two-factor authentication"
        description="Enter your password to start. Next you will scan a QR code and save recovery codes."
        confirmLabel="Continue"
        onClose={() => setPrompt(null)}
        onConfirm={enable}
      />
      <PasswordPromptModal
        opened={prompt === 'regenerate'}
        title="Regenerate recovery codes"
        description="Your current recovery codes stop working and 10 new ones are shown once."
        confirmLabel="Regenerate codes"
        onClose={() => setPrompt(null)}
        onConfirm={regenerate}
      />
      <PasswordPromptModal
        opened={prompt === 'disable'}
        title="Disable two-factor authentication"
        description="Signing in will only need your password. Enter it to confirm."
        confirmLabel="Disable"
        danger
        onClose={() => setPrompt(null)}
        onConfirm={disable}
      />
    </SectionCard>
  );
}
