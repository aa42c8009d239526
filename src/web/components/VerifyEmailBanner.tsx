// Reminder shown while the signed-in user's e-mail is unverified; dismissible for this tab.
import { Alert, Button, Group, Text } from '@mantine/core';
import { useSessionStorage } from '@mantine/hooks';
import { useMutation } from '@tanstack/react-query';
import { authCall, authClient } from '../lib/auth-client.ts';
import { notifyError, notifySuccess } from '../lib/errors.ts';
import { IconMail } from './icons.tsx';

export function VerifyEmailBanner({ email }: { email: string }) {
  const [dismissed, setDismissed] = useSessionStorage({ key: 'rampart-verify-banner-dismissed', defaultValue: false });
  const resend = useMutation({
    mutationFn: () => authCall(authClient.sendVerificationEmail({ email, callbackURL: '/' })),
    onSuccess: () => notifySuccess(`We sent a new verification link to ${email}.`),
    onError: (error) => notifyError(error, 'Could not send the e-mail'),
  });
  if (dismissed) return null;
  return (
    <Alert
      color="yellow"
      variant="light"
      icon={<IconMail />}
      title="Verify your e-mail"
      withCloseButton
      closeButtonLabel="Dismiss"
      onClose={() => setDismissed(true)}
      mb="lg"
    >
      <Group gap="sm" justify="space-between" align="center">
        <Text size="sm">
          We sent a link to <strong>{email}</strong>. Open it to confirm the address; some features (such as staff
          rights) need a verified e-mail.
        </Text>
        <Button size="xs" variant="default" loading={resend.isPending} onClick={() => resend.mutate()}>
          Resend verification e-mail
        </Button>
      </Group>
    </Alert>
  );
}
