// Second sign-in step: a TOTP code from the authenticator app, or one of the recovery codes.
import { Button, Checkbox, Group, Stack, TextInput } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { ErrorAlert } from '../../components/QueryStates.tsx';
import { authCall, authClient } from '../../lib/auth-client.ts';
import { useForm } from '../../lib/use-form.ts';

interface TwoFactorStepProps {
  onVerified: () => Promise<void>;
  onBack: () => void;
}

export function TwoFactorStep({ onVerified, onBack }: TwoFactorStepProps) {
  const [mode, setMode] = useState<'totp' | 'recovery'>('totp');
  const form = useForm({ code: '', trustDevice: false }, (v) => {
    const code = v.code.replace(/\s+/g, '');
    if (!code) return { code: mode === 'totp' ? 'Enter the 6-digit code' : 'Enter a recovery code' };
    if (mode === 'totp' && !/^\d{6}$/.test(code)) return { code: 'The code has 6 digits' };
    return {};
  });

  const verify = useMutation({
    mutationFn: async (v: { code: string; trustDevice: boolean }) => {
      const code = v.code.replace(/\s+/g, '');
      if (mode === 'totp') await authCall(authClient.twoFactor.verifyTotp({ code, trustDevice: v.trustDevice }));
      else await authCall(authClient.twoFactor.verifyBackupCode({ code, trustDevice: v.trustDevice }));
    },
    onSuccess: onVerified,
  });

  const switchMode = () => {
    verify.reset();
    form.reset({ code: '', trustDevice: form.values.trustDevice });
    setMode(mode === 'totp' ? 'recovery' : 'totp');
  };

  return (
    <form ref={form.formRef} onSubmit={form.onSubmit((v) => verify.mutate(v))} noValidate>
      <Stack gap="md">
        <ErrorAlert error={verify.error} title="Code not accepted" />
        {mode === 'totp' ? (
          <TextInput
            key="totp"
            label="Authentication code"
            description="The 6-digit code shown in your authenticator app"
            inputMode="numeric"
            autoComplete="one-time-code"
            maxLength={7}
            required
            autoFocus
            {...form.field('code')}
          />
        ) : (
          <TextInput
            key="recovery"
            label="Recovery code"
            description="One of the recovery codes you saved when you set up two-factor authentication. Each works once."
            autoComplete="off"
            spellCheck={false}
            required
            autoFocus
            {...form.field('code')}
          />
        )}
        <Checkbox
          label="Trust this device for 30 days"
          checked={form.values.trustDevice}
          onChange={(e) => form.setValue('trustDevice', e.currentTarget.checked)}
        />
        <Button type="submit" loading={verify.isPending}>
          Verify
        </Button>
        <Group justify="space-between" gap="xs">
          <Button variant="subtle" size="compact-sm" onClick={switchMode}>
            {mode === 'totp' ? 'Use a recovery code instead' : 'Use your authenticator app instead'}
          </Button>
          <Button variant="subtle" size="compact-sm" onClick={onBack}>
            Back to sign in
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
