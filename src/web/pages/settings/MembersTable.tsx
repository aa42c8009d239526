import { Badge, Button, Group, NativeSelect, Table, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { DataTable } from '../../components/DataTable.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { authCall, authClient } from '../../lib/auth-client.ts';
import { notifyError, notifySuccess } from '../../lib/errors.ts';
import { formatDate, tenantRoleLabel } from '../../lib/format.ts';
import { isTenantAdmin } from '../../lib/me.ts';
import { tenantKeys } from '../../lib/tenant-api.ts';
import type { Member, MeTenant, TenantRole } from '../../lib/types.ts';
import { useConfirmedAction } from '../../lib/use-confirmed-action.ts';

interface MembersTableProps {
  tenant: MeTenant;
  members: Member[];
  currentUserId: string;
}

const ROLE_COLORS: Record<TenantRole, string> = { owner: 'grape', admin: 'indigo', member: 'gray' };

export function RoleBadge({ role }: { role: TenantRole }) {
  return (
    <Badge color={ROLE_COLORS[role] ?? 'gray'} variant="light">
      {tenantRoleLabel(role)}
    </Badge>
  );
}

export function MembersTable({ tenant, members, currentUserId }: MembersTableProps) {
  const queryClient = useQueryClient();
  const canManage = isTenantAdmin(tenant);
  const isOwner = tenant.role === 'owner';
  const refresh = () => queryClient.invalidateQueries({ queryKey: tenantKeys.members(tenant.id) });

  const changeRole = useMutation({
    mutationFn: (v: { member: Member; role: TenantRole }) =>
      authCall(
        authClient.organization.updateMemberRole({ memberId: v.member.id, role: v.role, organizationId: tenant.id }),
      ),
    onSuccess: (_d, v) => notifySuccess(`${v.member.email} is now ${tenantRoleLabel(v.role).toLowerCase()}.`),
    onError: (error) => notifyError(error, 'Could not change the role'),
    onSettled: refresh,
  });
  const remove = useConfirmedAction({
    action: (member: Member) =>
      authCall(authClient.organization.removeMember({ memberIdOrEmail: member.id, organizationId: tenant.id })),
    successMessage: (member) => `${member.email} was removed from ${tenant.name}.`,
    errorTitle: 'Could not remove the member',
    queryKey: tenantKeys.members(tenant.id),
    refreshOnError: true,
  });

  const roleOptions = [
    { value: 'member', label: 'Member' },
    { value: 'admin', label: 'Admin' },
    ...(isOwner ? [{ value: 'owner', label: 'Owner' }] : []),
  ];
  const editable = (m: Member) => canManage && m.userId !== currentUserId && (isOwner || m.role !== 'owner');

  return (
    <SectionCard headingId="members-heading" title={<>Members ({members.length})</>}>
      <DataTable
        label="Members"
        minWidth={640}
        columns={[
          'Name',
          'Email',
          'Role',
          'Two-factor',
          'Joined',
          canManage && { label: 'Actions', visuallyHidden: true },
        ]}
      >
        {members.map((m) => (
          <Table.Tr key={m.id}>
            <Table.Td>
              <Group gap={6} wrap="nowrap">
                <Text size="sm" fw={500} className="nowrap">
                  {m.name || '—'}
                </Text>
                {m.userId === currentUserId && (
                  <Badge size="xs" variant="outline" color="gray" style={{ flexShrink: 0 }}>
                    You
                  </Badge>
                )}
              </Group>
            </Table.Td>
            <Table.Td>
              <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
                {m.email}
              </Text>
            </Table.Td>
            <Table.Td>
              {editable(m) ? (
                <NativeSelect
                  aria-label={`Change role for ${m.email}`}
                  size="xs"
                  w={120}
                  data={roleOptions}
                  value={m.role}
                  disabled={changeRole.isPending && changeRole.variables?.member.id === m.id}
                  onChange={(e) => changeRole.mutate({ member: m, role: e.currentTarget.value as TenantRole })}
                />
              ) : (
                <RoleBadge role={m.role} />
              )}
            </Table.Td>
            <Table.Td>
              {m.twoFactorEnabled ? (
                <Badge color="green" variant="light">
                  On
                </Badge>
              ) : (
                <Badge color="gray" variant="light">
                  Off
                </Badge>
              )}
            </Table.Td>
            <Table.Td className="nowrap">{formatDate(m.joinedAt)}</Table.Td>
            {canManage && (
              <Table.Td ta="right">
                {editable(m) && (
                  <Button
                    size="xs"
                    variant="default"
                    color="red"
                    aria-label={`Remove ${m.email}`}
                    onClick={() => remove.ask(m)}
                  >
                    Remove
                  </Button>
                )}
              </Table.Td>
            )}
          </Table.Tr>
        ))}
      </DataTable>
      <ConfirmDialog {...remove.dialogProps} title="Remove member" confirmLabel="Remove member" danger>
        <strong>{remove.target?.email}</strong> will lose access to {tenant.name} at once. You can invite them again
        later.
      </ConfirmDialog>
    </SectionCard>
  );
}
