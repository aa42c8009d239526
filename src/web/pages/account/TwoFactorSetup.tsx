// Step 2 of enabling two-factor: scan the QR code (or type the key), save the recovery codes,
// and prove it works with a code before it is switched on.
import { Button, Code, CopyButton, Group, Image, Skeleton, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { toDataURL } from 'qrcode';
import { useEffect, useRef, useState } from 'react';
import { ErrorAlert } from '../../components/QueryStates.tsx';
import { authCall, authClient } from '../../lib/auth-client.ts';
import { useForm } from '../../lib/use-form.ts';
import { RecoveryCodes } from './RecoveryCodes.tsx';

interface TwoFactorSetupProps {
  totpURI: string;
  backupCodes: string[];
  onEnabled: () => Promise<void>;
  onCancel: () => void;
}

function secretOf(uri: string): string {
  try {
    return new URL(uri).searchParams.get('secret') ?? '';
  } catch {
    return '';
  }
}

export function TwoFactorSetup({ totpURI, backupCodes, onEnabled, onCancel }: TwoFactorSetupProps) {
  const [qr, setQr] = useState<string | null>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const secret = secretOf(totpURI);
  const form = useForm({ code: '' }, (v) => ({
    code: /^\d{6}$/.test(v.code.replace(/\s+/g, '')) ? null : 'Enter the 6-digit code from the app',
  }));
  const verify = useMutation({
    mutationFn: (code: string) => authCall(authClient.twoFactor.verifyTotp({ code: code.replace(/\s+/g, '') })),
    onSuccess: onEnabled,
  });

  // The password dialog that led here has closed: continue from the first step.
  useEffect(() => {
    headingRef.current?.focus();
    headingRef.current?.scrollIntoView({ block: 'nearest' });
  }, []);

  useEffect(() => {
    let live = true;
    toDataURL(totpURI, { errorCorrectionLevel: 'M', margin: 2, width: 200 })
      .then((url) => live && setQr(url))
      .catch(() => live && setQr(''));
    return () => {
      live = false;
    };
  }, [totpURI]);

  return (
    <Stack gap="lg">
      <Stack gap="xs">
        <Title order={3} size="h5" ref={headingRef} tabIndex={-1} style={{ outline: 'none' }}>
          1. Add Rampart to your authenticator app
        </Title>
        <Text size="sm" c="dimmed">
          Scan the QR code with an app such as 1Password, Google Authenticator or Microsoft Authenticator.
        </Text>
        {qr === null ? (
          <Skeleton w={200} h={200} />
        ) : qr ? (
          <Image
            src={qr}
            w={200}
            h={200}
            alt="QR code for your authenticator app"
            radius="sm"
            style={{ background: '#fff' }}
          />
        ) : (
          <Text size="sm">The QR code could not be drawn; type the key below instead.</Text>
        )}
        <Text size="sm">Cannot scan? Enter this key by hand:</Text>
        <Group gap="sm" wrap="nowrap" align="center">
          <Code fz="sm" className="mono-break" data-testid="totp-secret">
            {secret}
          </Code>
          <CopyButton value={secret}>
            {({ copied, copy }) => (
              <Button size="compact-xs" variant="default" onClick={copy}>
                {copied ? 'Copied' : 'Copy key'}
              </Button>
            )}
          </CopyButton>
        </Group>
      </Stack>
      <Stack gap="xs">
        <Title order={3} size="h5">
          2. Save your recovery codes
        </Title>
        <RecoveryCodes codes={backupCodes} />
      </Stack>
      <Stack gap="xs">
        <Title order={3} size="h5">
          3. Confirm with a code
        </Title>
        <form ref={form.formRef} onSubmit={form.onSubmit((v) => verify.mutate(v.code))} noValidate>
          <Stack gap="sm" maw={360}>
            <ErrorAlert error={verify.error} withIcon={false} />
            <TextInput
              label="Authentication code"
              description="The 6-digit code your app shows for Rampart"
              inputMode="numeric"
              autoComplete="one-time-code"
              maxLength={7}
              required
              {...form.field('code')}
            />
            <Group gap="sm">
              <Button type="submit" loading={verify.isPending}>
                Verify and enable
              </Button>
              <Button variant="default" onClick={onCancel}>
                Cancel
              </Button>
            </Group>
          </Stack>
        </form>
      </Stack>
    </Stack>
  );
}
