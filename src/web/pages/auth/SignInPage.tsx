// Sign in with e-mail and password; a second step asks for the TOTP or a recovery code when the
// account has two-factor authentication.
import { Alert, Button, Group, Stack, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { AuthLayout } from '../../components/AuthLayout.tsx';
import { TextLink } from '../../components/links.tsx';
import { ErrorAlert } from '../../components/QueryStates.tsx';
import { authCall, authClient } from '../../lib/auth-client.ts';
import { publicConfigQueryOptions, useRefreshMe } from '../../lib/me.ts';
import { useForm } from '../../lib/use-form.ts';
import { safeRedirect, validateEmail } from '../../lib/validate.ts';
import { TwoFactorStep } from './TwoFactorStep.tsx';
import { api } from '../../lib/api.ts';
import { PasswordField } from '../../components/PasswordField.tsx';

export interface SignInSearch {
  redirect?: string;
  notice?: 'password-reset' | 'verified';
}

const NOTICES: Record<NonNullable<SignInSearch['notice']>, string> = {
  'password-reset': 'Your password is set. Sign in with the new password.',
  verified: 'Your e-mail address is verified. Sign in to continue.',
};

export function SignInPage({ search }: { search: SignInSearch }) {
  const navigate = useNavigate();
  const refreshMe = useRefreshMe();
  const config = useQuery(publicConfigQueryOptions);
  const [step, setStep] = useState<'password' | 'two-factor'>('password');
  const target = safeRedirect(search.redirect);

  const finish = async () => {
    await refreshMe();
    await navigate({ href: target, replace: true });
  };

  const form = useForm({ email: '', password: '' }, (v) => ({
    email: validateEmail(v.email),
    password: v.password ? null : 'Password is required',
  }));

  const signIn = useMutation({
    mutationFn: (v: { email: string; password: string }) =>
      authCall(authClient.signIn.email({ email: v.email.trim(), password: v.password })),
    onSuccess: async (data) => {
      if (data && 'twoFactorRedirect' in data && data.twoFactorRedirect) {
        setStep('two-factor');
        return;
      }
      await finish();
    },
  });

  if (step === 'two-factor')
    return (
      <AuthLayout title="Two-factor authentication" subtitle="Enter the 6-digit code from your authenticator app.">
        <TwoFactorStep
          onVerified={finish}
          onBack={() => {
            form.setValue('password', '');
            signIn.reset();
            setStep('password');
          }}
        />
      </AuthLayout>
    );

  const signupLink = config.data?.signupEnabled !== false && (
    <Text size="sm" component="span">
      New to Rampart?{' '}
      <TextLink to="/sign-up" search={search.redirect ? { redirect: search.redirect } : {}}>
        Create an account
      </TextLink>
    </Text>
  );

  return (
    <AuthLayout title="Sign in to Rampart" footer={signupLink}>
      <form ref={form.formRef} onSubmit={form.onSubmit((v) => signIn.mutate(v))} noValidate>
        <Stack gap="md">
          {search.notice && NOTICES[search.notice] && (
            <Alert color="green" variant="light" role="status">
              {NOTICES[search.notice]}
            </Alert>
          )}
          <FirstRunNotice />
          <ErrorAlert error={signIn.error} title="Could not sign in" />
          <TextInput label="Email" type="email" autoComplete="username" required autoFocus {...form.field('email')} />
          <PasswordField label="Password" autoComplete="current-password" required {...form.field('password')} />
          <Group justify="space-between" align="center">
            <TextLink to="/forgot-password" size="sm">
              Forgot password?
            </TextLink>
            <Button type="submit" loading={signIn.isPending}>
              Sign in
            </Button>
          </Group>
        </Stack>
      </form>
    </AuthLayout>
  );
}

/** An install without an administrator says how to get one; on the server's own machine it shows the link. */
function FirstRunNotice() {
  const setup = useQuery({
    queryKey: ['setup'],
    queryFn: () => api<{ needed: boolean; setupUrl: string | null }>('/api/v1/setup'),
  });
  if (!setup.data?.needed) return null;
  const link = setup.data.setupUrl ? new URL(setup.data.setupUrl) : null;
  return (
    <Alert color="blue" variant="light" title="This installation has no administrator yet">
      <Text size="sm">
        Create your account, then open the one-time setup link to become its administrator.{' '}
        {link ? (
          <a href={`${link.pathname}${link.search}`}>Open the setup link</a>
        ) : (
          'The server printed the link in its terminal when it started (npm start).'
        )}
      </Text>
    </Alert>
  );
}
