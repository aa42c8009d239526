// Ask for a password-reset link. The answer never reveals whether an account exists.
import { Alert, Anchor, Button, Stack, Text, TextInput } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { AuthLayout } from '../../components/AuthLayout.tsx';
import { TextLink } from '../../components/links.tsx';
import { MailboxNotice, useMailKept } from '../../components/MailboxNotice.tsx';
import { ErrorAlert } from '../../components/QueryStates.tsx';
import { authCall, authClient } from '../../lib/auth-client.ts';
import { useForm } from '../../lib/use-form.ts';
import { validateEmail } from '../../lib/validate.ts';

export function ForgotPasswordPage() {
  const kept = useMailKept();
  const form = useForm({ email: '' }, (v) => ({ email: validateEmail(v.email) }));
  const request = useMutation({
    mutationFn: (v: { email: string }) =>
      authCall(authClient.requestPasswordReset({ email: v.email.trim(), redirectTo: '/reset-password' })),
  });

  const footer = (
    <TextLink to="/sign-in" size="sm">
      Back to sign in
    </TextLink>
  );

  if (request.isSuccess)
    return (
      <AuthLayout title={kept ? 'Ask an administrator for the link' : 'Check your e-mail'} footer={footer}>
        <Alert color="green" variant="light" role="status">
          If an account exists for {form.values.email.trim()}, a link to reset its password was {kept ? 'made' : 'sent'}
          . The link works for one hour.
        </Alert>
        <MailboxNotice />
        <Text size="sm" c="dimmed">
          {kept ? 'No link? Check the address, or' : 'No e-mail after a few minutes? Check the spam folder, or'}{' '}
          <Anchor component="button" type="button" size="sm" onClick={() => request.reset()}>
            try again
          </Anchor>
          .
        </Text>
      </AuthLayout>
    );

  return (
    <AuthLayout
      title="Reset your password"
      subtitle="Enter the e-mail address of your account and we will send you a link to choose a new password."
      footer={footer}
    >
      <form ref={form.formRef} onSubmit={form.onSubmit((v) => request.mutate(v))} noValidate>
        <Stack gap="md">
          <ErrorAlert error={request.error} title="Could not send the link" />
          <TextInput label="Email" type="email" autoComplete="email" required autoFocus {...form.field('email')} />
          <Button type="submit" loading={request.isPending}>
            Send reset link
          </Button>
        </Stack>
      </form>
    </AuthLayout>
  );
}
