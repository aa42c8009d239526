// Create an account (name, e-mail, password). The user is signed in at once; a verification
// e-mail is sent and a banner reminds them until it is confirmed.
import { Button, Stack, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { AuthLayout } from '../../components/AuthLayout.tsx';
import { TextLink } from '../../components/links.tsx';
import { MailboxNotice } from '../../components/MailboxNotice.tsx';
import { ErrorAlert, LoadingState } from '../../components/QueryStates.tsx';
import { authCall, authClient } from '../../lib/auth-client.ts';
import { publicConfigQueryOptions, useRefreshMe } from '../../lib/me.ts';
import { useForm } from '../../lib/use-form.ts';
import {
  MIN_PASSWORD_LENGTH,
  requireText,
  safeRedirect,
  validateEmail,
  validateNewPassword,
} from '../../lib/validate.ts';
import { PasswordField } from '../../components/PasswordField.tsx';
import { USER_NAME_MAX } from '../../../auth/auth-schemas.ts';

export interface SignUpSearch {
  redirect?: string;
  email?: string;
}

export function SignUpPage({ search }: { search: SignUpSearch }) {
  const navigate = useNavigate();
  const refreshMe = useRefreshMe();
  const config = useQuery(publicConfigQueryOptions);
  const form = useForm({ name: '', email: search.email ?? '', password: '' }, (v) => ({
    name:
      requireText(v.name, 'Name') ??
      (v.name.trim().length > USER_NAME_MAX ? `Use at most ${USER_NAME_MAX} characters` : null),
    email: validateEmail(v.email),
    password: validateNewPassword(v.password),
  }));

  const signUp = useMutation({
    mutationFn: (v: { name: string; email: string; password: string }) =>
      authCall(authClient.signUp.email({ name: v.name.trim(), email: v.email.trim(), password: v.password })),
    onSuccess: async () => {
      const me = await refreshMe();
      await navigate({ href: me ? safeRedirect(search.redirect) : '/sign-in', replace: true });
    },
  });

  const footer = (
    <Text size="sm" component="span">
      Already have an account?{' '}
      <TextLink to="/sign-in" search={search.redirect ? { redirect: search.redirect } : {}}>
        Sign in
      </TextLink>
    </Text>
  );

  if (config.isPending)
    return (
      <AuthLayout title="Create your Rampart account" footer={footer}>
        <LoadingState />
      </AuthLayout>
    );

  if (config.data && !config.data.signupEnabled)
    return (
      <AuthLayout title="Sign-up is closed" footer={footer}>
        <Text>
          This Rampart server does not accept new accounts. Ask an administrator of your organisation to invite you; the
          invitation e-mail has a link that lets you join.
        </Text>
        <MailboxNotice />
      </AuthLayout>
    );

  return (
    <AuthLayout
      title="Create your Rampart account"
      subtitle="Scan what you own, track findings and prove compliance."
      footer={footer}
    >
      <form ref={form.formRef} onSubmit={form.onSubmit((v) => signUp.mutate(v))} noValidate>
        <Stack gap="md">
          <ErrorAlert error={signUp.error} title="Could not create the account" />
          <TextInput
            label="Name"
            autoComplete="name"
            required
            autoFocus
            maxLength={USER_NAME_MAX}
            {...form.field('name')}
          />
          <TextInput label="Email" type="email" autoComplete="email" required {...form.field('email')} />
          <PasswordField
            label="Password"
            description={`At least ${MIN_PASSWORD_LENGTH} characters. A long passphrase is best.`}
            autoComplete="new-password"
            required
            {...form.field('password')}
          />
          <Button type="submit" loading={signUp.isPending}>
            Create account
          </Button>
        </Stack>
      </form>
    </AuthLayout>
  );
}
