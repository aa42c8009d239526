// Landing page of the invitation e-mail (/accept-invitation/:id). Signed out: explain and link to
// sign-in / sign-up, both returning here. Signed in: show the invitation with Accept / Decline.
import { Button, Group, Stack, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { AuthLayout } from '../../components/AuthLayout.tsx';
import { ButtonLink, TextLink } from '../../components/links.tsx';
import { MailboxNotice, useMailKept } from '../../components/MailboxNotice.tsx';
import { ErrorAlert, ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { authCall, authClient } from '../../lib/auth-client.ts';
import { errorMessage, errorStatus, notifySuccess } from '../../lib/errors.ts';
import { formatDate, tenantRoleLabel } from '../../lib/format.ts';
import { useMeQuery, useRefreshMe, useSignOut } from '../../lib/me.ts';
import type { Me } from '../../lib/types.ts';

export interface AcceptInvitationSearch {
  email?: string;
}

export function AcceptInvitationPage({
  invitationId,
  search,
}: {
  invitationId: string;
  search: AcceptInvitationSearch;
}) {
  const me = useMeQuery();
  if (me.isPending)
    return (
      <AuthLayout title="Invitation">
        <LoadingState />
      </AuthLayout>
    );
  if (me.isError)
    return (
      <AuthLayout title="Invitation">
        <ErrorState error={me.error} onRetry={() => void me.refetch()} />
      </AuthLayout>
    );
  if (!me.data) return <SignedOut invitationId={invitationId} email={search.email} />;
  return <SignedIn invitationId={invitationId} me={me.data} />;
}

function SignedOut({ invitationId, email }: { invitationId: string; email?: string }) {
  const here = `/accept-invitation/${invitationId}${email ? `?email=${encodeURIComponent(email)}` : ''}`;
  return (
    <AuthLayout title="You are invited to Rampart">
      <Text>
        Sign in or create an account with{' '}
        {email ? <strong>{email}</strong> : 'the e-mail address this invitation was sent to'} to accept the invitation.
        You will come back to this page afterwards.
      </Text>
      <Group grow>
        <ButtonLink to="/sign-in" search={{ redirect: here }}>
          Sign in
        </ButtonLink>
        <ButtonLink to="/sign-up" search={email ? { redirect: here, email } : { redirect: here }} variant="default">
          Create an account
        </ButtonLink>
      </Group>
    </AuthLayout>
  );
}

function SignedIn({ invitationId, me }: { invitationId: string; me: Me }) {
  const kept = useMailKept();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const refreshMe = useRefreshMe();
  const signOut = useSignOut();
  const verified = me.user.emailVerified;
  const invitation = useQuery({
    queryKey: ['invitation', invitationId],
    queryFn: () => authCall(authClient.organization.getInvitation({ query: { id: invitationId } })),
    retry: false,
    // The server reveals and accepts invitations only for proven addresses.
    enabled: verified,
  });
  const resend = useMutation({
    mutationFn: () =>
      authCall(
        authClient.sendVerificationEmail({ email: me.user.email, callbackURL: `/accept-invitation/${invitationId}` }),
      ),
  });

  const accept = useMutation({
    mutationFn: async () => {
      await authCall(authClient.organization.acceptInvitation({ invitationId }));
      const orgId = invitation.data?.organizationId;
      if (orgId) await authCall(authClient.organization.setActive({ organizationId: orgId }));
    },
    onSuccess: async () => {
      queryClient.removeQueries({ predicate: (q) => q.queryKey[0] === 'tenant' });
      await refreshMe();
      notifySuccess(`You joined ${invitation.data?.organizationName ?? 'the tenant'}.`);
      await navigate({ to: '/home', replace: true });
    },
  });
  const decline = useMutation({
    mutationFn: () => authCall(authClient.organization.rejectInvitation({ invitationId })),
  });

  const signedInAs = (
    <Text size="sm" component="span">
      Signed in as {me.user.email}.{' '}
      <Button variant="subtle" size="compact-sm" onClick={() => void signOut()}>
        Sign out
      </Button>
    </Text>
  );

  if (!verified)
    return (
      <AuthLayout title="Confirm your e-mail address first" footer={signedInAs}>
        <Stack>
          <Text>
            Invitations can only be accepted by a confirmed address. We {kept ? 'made' : 'sent'} a confirmation link for{' '}
            <strong>{me.user.email}</strong> when you signed up; open it, then come back to this invitation.
          </Text>
          <MailboxNotice />
          {resend.isSuccess ? (
            <Text c="dimmed">
              {kept ? 'A new link is ready' : 'A new link is on its way'}. It brings you back here.
            </Text>
          ) : (
            <Button onClick={() => resend.mutate()} loading={resend.isPending}>
              Send the confirmation link again
            </Button>
          )}
          <ErrorAlert error={resend.error} />
        </Stack>
      </AuthLayout>
    );

  if (invitation.isPending)
    return (
      <AuthLayout title="Invitation" footer={signedInAs}>
        <LoadingState label="Loading the invitation…" />
      </AuthLayout>
    );

  if (invitation.isError) {
    const status = errorStatus(invitation.error);
    const wrongUser = status === 403 && /recipient/i.test(errorMessage(invitation.error));
    return (
      <AuthLayout title="This invitation cannot be used" footer={signedInAs}>
        <ErrorAlert error={invitation.error}>
          {wrongUser
            ? `This invitation was sent to another e-mail address. Sign out, then sign in with the invited address.`
            : status === 400 || status === 404
              ? 'The invitation was not found. It may have expired, been cancelled, or already been used.'
              : errorMessage(invitation.error)}
        </ErrorAlert>
        <ButtonLink to="/" variant="default">
          Go to Rampart
        </ButtonLink>
      </AuthLayout>
    );
  }

  const inv = invitation.data;
  if (decline.isSuccess)
    return (
      <AuthLayout title="Invitation declined">
        <Text>
          You declined the invitation to {inv.organizationName}. Whoever invited you can send a new one if you change
          your mind.
        </Text>
        <ButtonLink to="/">Go to Rampart</ButtonLink>
      </AuthLayout>
    );

  const busy = accept.isPending || decline.isPending;
  const failure = accept.error ?? decline.error;
  return (
    <AuthLayout title={`Join ${inv.organizationName}`} footer={signedInAs}>
      <Text>
        <strong>{inv.inviterEmail}</strong> invited you to join <strong>{inv.organizationName}</strong> on Rampart as{' '}
        <strong>{tenantRoleLabel(inv.role)}</strong>.
      </Text>
      <Text size="sm" c="dimmed">
        The invitation is for {inv.email} and expires on {formatDate(String(inv.expiresAt))}.
      </Text>
      <ErrorAlert error={failure} />
      <Stack gap="sm">
        <Button onClick={() => accept.mutate()} loading={accept.isPending} disabled={busy && !accept.isPending}>
          Accept invitation
        </Button>
        <Button
          variant="default"
          onClick={() => decline.mutate()}
          loading={decline.isPending}
          disabled={busy && !decline.isPending}
        >
          Decline
        </Button>
      </Stack>
      <Text size="sm" c="dimmed">
        Not now? <TextLink to="/">Go to Rampart</TextLink> and open this link again later.
      </Text>
    </AuthLayout>
  );
}
