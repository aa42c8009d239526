// Choose a new password from an e-mailed link (/reset-password?token=…). Also the landing page
// of the admin CLI's one-time "set your password" link.
import { Alert, Button, Stack } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { AuthLayout } from '../../components/AuthLayout.tsx';
import { IconAlert } from '../../components/icons.tsx';
import { ButtonLink, TextLink } from '../../components/links.tsx';
import { ErrorAlert } from '../../components/QueryStates.tsx';
import { authCall, authClient } from '../../lib/auth-client.ts';
import { errorMessage } from '../../lib/errors.ts';
import { useForm } from '../../lib/use-form.ts';
import { validateNewPassword } from '../../lib/validate.ts';
import { NewPasswordFields } from '../../components/PasswordField.tsx';

export interface ResetPasswordSearch {
  token?: string;
  error?: string;
}

export function ResetPasswordPage({ search }: { search: ResetPasswordSearch }) {
  const navigate = useNavigate();
  const form = useForm({ password: '', confirm: '' }, (v) => ({
    password: validateNewPassword(v.password),
    confirm: v.confirm === v.password ? null : 'The passwords do not match',
  }));
  const reset = useMutation({
    mutationFn: (v: { password: string }) =>
      authCall(authClient.resetPassword({ newPassword: v.password, token: search.token ?? '' })),
    onSuccess: () => navigate({ to: '/sign-in', search: { notice: 'password-reset' }, replace: true }),
  });

  const footer = (
    <TextLink to="/sign-in" size="sm">
      Back to sign in
    </TextLink>
  );

  if (search.error || !search.token)
    return (
      <AuthLayout title="This link does not work" footer={footer}>
        <Alert color="red" variant="light" icon={<IconAlert />} role="alert">
          The password link is invalid or has expired. Links work once, for one hour. Ask for a new one.
        </Alert>
        <ButtonLink to="/forgot-password">Request a new link</ButtonLink>
      </AuthLayout>
    );

  const expired = reset.error && /token/i.test(errorMessage(reset.error));

  return (
    <AuthLayout
      title="Choose a new password"
      subtitle="Other sessions of this account are signed out when the password changes."
      footer={footer}
    >
      <form ref={form.formRef} onSubmit={form.onSubmit((v) => reset.mutate(v))} noValidate>
        <Stack gap="md">
          <ErrorAlert error={reset.error} title="Could not set the password">
            {expired ? 'The link is invalid or has expired. Ask for a new one.' : errorMessage(reset.error)}
            {expired && (
              <>
                {' '}
                <TextLink to="/forgot-password">Request a new link</TextLink>
              </>
            )}
          </ErrorAlert>
          <NewPasswordFields form={form} autoFocus />
          <Button type="submit" loading={reset.isPending}>
            Set password
          </Button>
        </Stack>
      </form>
    </AuthLayout>
  );
}
