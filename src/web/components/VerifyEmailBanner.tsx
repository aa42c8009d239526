// Reminder shown while the signed-in user's e-mail is unverified; dismissible for this tab.
import { Alert, Button, Group, Text } from '@mantine/core';
import { useSessionStorage } from '@mantine/hooks';
import { useMutation } from '@tanstack/react-query';
import { authCall, authClient } from '../lib/auth-client.ts';
import { notifyError, notifySuccess } from '../lib/errors.ts';
import { IconMail } from './icons.tsx';
import { MAILBOX_NOTICE, useMailKept } from './MailboxNotice.tsx';

export function VerifyEmailBanner({ email }: { email: string }) {
  const kept = useMailKept();
  const [dismissed, setDismissed] = useSessionStorage({ key: 'rampart-verify-banner-dismissed', defaultValue: false });
  const resend = useMutation({
    mutationFn: () => authCall(authClient.sendVerificationEmail({ email, callbackURL: '/' })),
    onSuccess: () =>
      notifySuccess(
        kept
          ? `A new verification link for ${email} is ready. ${MAILBOX_NOTICE}`
          : `We sent a new verification link to ${email}.`,
      ),
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
          {kept ? (
            <>
              A verification link for <strong>{email}</strong> is ready. {MAILBOX_NOTICE} Open the link to confirm the
              address; some features (such as staff rights) need a verified e-mail.
            </>
          ) : (
            <>
              We sent a link to <strong>{email}</strong>. Open it to confirm the address; some features (such as staff
              rights) need a verified e-mail.
            </>
          )}
        </Text>
        <Button size="xs" variant="default" loading={resend.isPending} onClick={() => resend.mutate()}>
          Resend verification e-mail
        </Button>
      </Group>
    </Alert>
  );
}
