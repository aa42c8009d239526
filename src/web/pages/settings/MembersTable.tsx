import { Badge, Button, Group, NativeSelect, Paper, Stack, Table, Text, Title, VisuallyHidden } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { authCall, authClient } from '../../lib/auth-client.ts';
import { notifyError, notifySuccess } from '../../lib/errors.ts';
import { formatDate, tenantRoleLabel } from '../../lib/format.ts';
import { isTenantAdmin } from '../../lib/me.ts';
import { tenantKeys } from '../../lib/tenant-api.ts';
import type { Member, MeTenant, TenantRole } from '../../lib/types.ts';

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
  const [removing, setRemoving] = useState<Member | null>(null);
  const canManage = isTenantAdmin(tenant);
  const isOwner = tenant.role === 'owner';
  const refresh = () => queryClient.invalidateQueries({ queryKey: tenantKeys.members(tenant.id) });

  const changeRole = useMutation({
    mutationFn: (v: { member: Member; role: TenantRole }) =>
      authCall(authClient.organization.updateMemberRole({ memberId: v.member.id, role: v.role, organizationId: tenant.id })),
    onSuccess: (_d, v) => notifySuccess(`${v.member.email} is now ${tenantRoleLabel(v.role).toLowerCase()}.`),
    onError: (error) => notifyError(error, 'Could not change the role'),
    onSettled: refresh,
  });
  const remove = useMutation({
    mutationFn: (member: Member) => authCall(authClient.organization.removeMember({ memberIdOrEmail: member.id, organizationId: tenant.id })),
    onSuccess: (_d, member) => {
      notifySuccess(`${member.email} was removed from ${tenant.name}.`);
      setRemoving(null);
    },
    onError: (error) => notifyError(error, 'Could not remove the member'),
    onSettled: refresh,
  });

  const roleOptions = [
    { value: 'member', label: 'Member' },
    { value: 'admin', label: 'Admin' },
    ...(isOwner ? [{ value: 'owner', label: 'Owner' }] : []),
  ];
  const editable = (m: Member) => canManage && m.userId !== currentUserId && (isOwner || m.role !== 'owner');

  return (
    <Paper withBorder p="lg" radius="md" component="section" aria-labelledby="members-heading">
      <Stack gap="md">
        <Title order={2} size="h4" id="members-heading">
          Members ({members.length})
        </Title>
        <Table.ScrollContainer minWidth={640}>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th scope="col">Name</Table.Th>
                <Table.Th scope="col">Email</Table.Th>
                <Table.Th scope="col">Role</Table.Th>
                <Table.Th scope="col">Two-factor</Table.Th>
                <Table.Th scope="col">Joined</Table.Th>
                {canManage && (
                  <Table.Th scope="col">
                    <VisuallyHidden>Actions</VisuallyHidden>
                  </Table.Th>
                )}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
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
                        <Button size="xs" variant="default" color="red" aria-label={`Remove ${m.email}`} onClick={() => setRemoving(m)}>
                          Remove
                        </Button>
                      )}
                    </Table.Td>
                  )}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </Stack>
      <ConfirmDialog
        opened={removing !== null}
        title="Remove member"
        confirmLabel="Remove member"
        danger
        loading={remove.isPending}
        onClose={() => setRemoving(null)}
        onConfirm={() => removing && remove.mutate(removing)}
      >
        <strong>{removing?.email}</strong> will lose access to {tenant.name} at once. You can invite them again later.
      </ConfirmDialog>
    </Paper>
  );
}
