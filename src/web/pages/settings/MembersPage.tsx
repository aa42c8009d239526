// Settings → Members: who belongs to the tenant, invitations, role changes, leaving.
import { Button, Stack, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { authCall, authClient } from '../../lib/auth-client.ts';
import { notifyError, notifySuccess } from '../../lib/errors.ts';
import { isTenantAdmin, useMe, useRefreshMe, useTenant } from '../../lib/me.ts';
import { membersQuery } from '../../lib/tenant-api.ts';
import { InvitationsTable } from './InvitationsTable.tsx';
import { InviteMemberForm } from './InviteMemberForm.tsx';
import { MembersTable } from './MembersTable.tsx';

export function MembersPage() {
  const me = useMe();
  const tenant = useTenant();
  const members = useQuery(membersQuery(tenant.id));
  const canManage = isTenantAdmin(tenant);

  return (
    <>
      <PageHeader
        title="Members"
        titleContext={tenant.name}
        description={
          canManage
            ? `People with access to ${tenant.name}. Owners and admins manage members and settings; members work with assets, scans and findings.`
            : `People with access to ${tenant.name}. Ask an admin or owner to invite someone or change a role.`
        }
      />
      <Stack gap="lg">
        {canManage && <InviteMemberForm tenant={tenant} />}
        {members.isPending ? (
          <LoadingState label="Loading members…" />
        ) : members.isError ? (
          <ErrorState error={members.error} title="Could not load members" onRetry={() => void members.refetch()} />
        ) : (
          <>
            <MembersTable tenant={tenant} members={members.data.members} currentUserId={me.user.id} />
            {canManage && <InvitationsTable tenant={tenant} invitations={members.data.invitations} />}
          </>
        )}
        <LeaveTenant />
      </Stack>
    </>
  );
}

function LeaveTenant() {
  const tenant = useTenant();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const refreshMe = useRefreshMe();
  const [confirming, setConfirming] = useState(false);
  const leave = useMutation({
    mutationFn: () => authCall(authClient.organization.leave({ organizationId: tenant.id })),
    onSuccess: async () => {
      setConfirming(false);
      notifySuccess(`You left ${tenant.name}.`);
      queryClient.removeQueries({ predicate: (q) => q.queryKey[0] === 'tenant' });
      await navigate({ to: '/home' });
      await refreshMe();
    },
    onError: (error) => {
      setConfirming(false);
      notifyError(error, 'Could not leave the tenant');
    },
  });

  return (
    <SectionCard headingId="leave-heading" title={<>Leave {tenant.name}</>} gap="sm" align="flex-start">
      <Text size="sm" c="dimmed">
        You lose access to this tenant's assets, scans and findings.{' '}
        {tenant.role === 'owner' && 'A tenant needs an owner: make someone else owner before you leave.'}
      </Text>
      <Button color="red" variant="light" onClick={() => setConfirming(true)}>
        Leave tenant
      </Button>
      <ConfirmDialog
        opened={confirming}
        title={`Leave ${tenant.name}?`}
        confirmLabel="Leave tenant"
        danger
        loading={leave.isPending}
        onClose={() => setConfirming(false)}
        onConfirm={() => leave.mutate()}
      >
        You will need a new invitation to come back.
      </ConfirmDialog>
    </SectionCard>
  );
}
