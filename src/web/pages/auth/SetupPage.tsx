// First run of a self-hosted install: the one-time setup link printed by the server's start. A
// signed-in visitor becomes the installation's super-admin; a signed-out one creates the account
// first and comes back here.
import { Alert, Button, Stack, Text } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { AuthLayout } from '../../components/AuthLayout.tsx';
import { ButtonLink, TextLink } from '../../components/links.tsx';
import { ErrorAlert, LoadingState } from '../../components/QueryStates.tsx';
import { api } from '../../lib/api.ts';
import { useMeQuery, useRefreshMe } from '../../lib/me.ts';

export interface SetupSearch {
  token?: string;
}

export function SetupPage({ search }: { search: SetupSearch }) {
  const me = useMeQuery();
  const refreshMe = useRefreshMe();
  const navigate = useNavigate();
  const here = `/setup?token=${encodeURIComponent(search.token ?? '')}`;
  const redeem = useMutation({
    mutationFn: () =>
      api<{ staffEmailDomains: string[] }>('/api/v1/setup', { method: 'POST', body: { token: search.token ?? '' } }),
    onSuccess: async () => {
      await refreshMe();
      await navigate({ to: '/', replace: true });
    },
  });
  if (me.isPending) return <LoadingState label="Loading…" />;
  return (
    <AuthLayout
      title="Set up this installation"
      subtitle="The one-time link makes you this installation's administrator (super-admin)."
    >
      <Stack gap="md">
        {!search.token && (
          <Alert color="orange">
            This page needs the setup link printed when the server started (it ends in ?token=…).
          </Alert>
        )}
        {me.data ? (
          <>
            <Text size="sm">
              You are signed in as <strong>{me.data.user.email}</strong>. As administrator you can manage staff, hosted
              workers and ownership bypasses; your e-mail domain becomes an approved staff domain (editable under
              Settings → Staff).
            </Text>
            <ErrorAlert error={redeem.error} title="The setup did not complete" />
            <Button onClick={() => redeem.mutate()} loading={redeem.isPending} disabled={!search.token}>
              Become administrator
            </Button>
          </>
        ) : (
          <>
            <Text size="sm">Create your account first (or sign in); you come back here afterwards.</Text>
            <ButtonLink to="/sign-up" search={{ redirect: here }}>
              Create the first account
            </ButtonLink>
            <TextLink to="/sign-in" search={{ redirect: here }} size="sm">
              I already have an account
            </TextLink>
          </>
        )}
      </Stack>
    </AuthLayout>
  );
}
