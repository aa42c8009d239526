import { Badge, Button, Paper, Stack, Table, Text, Title, VisuallyHidden } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { authCall, authClient } from '../../lib/auth-client.ts';
import { notifyError, notifySuccess } from '../../lib/errors.ts';
import { formatDate, tenantRoleLabel } from '../../lib/format.ts';
import { tenantKeys } from '../../lib/tenant-api.ts';
import type { Invitation, MeTenant } from '../../lib/types.ts';

export function InvitationsTable({ tenant, invitations }: { tenant: MeTenant; invitations: Invitation[] }) {
  const queryClient = useQueryClient();
  const [pending, setPending] = useState<Invitation | null>(null);
  const cancel = useMutation({
    mutationFn: (inv: Invitation) => authCall(authClient.organization.cancelInvitation({ invitationId: inv.id })),
    onSuccess: async (_d, inv) => {
      notifySuccess(`Invitation for ${inv.email} cancelled.`);
      setPending(null);
      await queryClient.invalidateQueries({ queryKey: tenantKeys.members(tenant.id) });
    },
    onError: (error) => notifyError(error, 'Could not cancel the invitation'),
  });
  const open = invitations.filter((i) => i.status === 'pending');
  const now = Date.now();

  return (
    <Paper withBorder p="lg" radius="md" component="section" aria-labelledby="invitations-heading">
      <Stack gap="md">
        <Title order={2} size="h4" id="invitations-heading">
          Pending invitations
        </Title>
        {open.length === 0 ? (
          <Text size="sm" c="dimmed">
            No pending invitations.
          </Text>
        ) : (
          <Table.ScrollContainer minWidth={520}>
            <Table>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th scope="col">Email</Table.Th>
                  <Table.Th scope="col">Role</Table.Th>
                  <Table.Th scope="col">Expires</Table.Th>
                  <Table.Th scope="col">
                    <VisuallyHidden>Actions</VisuallyHidden>
                  </Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {open.map((inv) => {
                  const expired = new Date(inv.expiresAt).getTime() < now;
                  return (
                    <Table.Tr key={inv.id}>
                      <Table.Td>{inv.email}</Table.Td>
                      <Table.Td>{tenantRoleLabel(inv.role)}</Table.Td>
                      <Table.Td className="nowrap">
                        {expired ? (
                          <Badge color="gray" variant="light">
                            Expired
                          </Badge>
                        ) : (
                          formatDate(inv.expiresAt)
                        )}
                      </Table.Td>
                      <Table.Td ta="right">
                        <Button size="xs" variant="default" aria-label={`Cancel invitation for ${inv.email}`} onClick={() => setPending(inv)}>
                          Cancel
                        </Button>
                      </Table.Td>
                    </Table.Tr>
                  );
                })}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </Stack>
      <ConfirmDialog
        opened={pending !== null}
        title="Cancel invitation"
        confirmLabel="Cancel invitation"
        cancelLabel="Keep invitation"
        danger
        loading={cancel.isPending}
        onClose={() => setPending(null)}
        onConfirm={() => pending && cancel.mutate(pending)}
      >
        The link sent to <strong>{pending?.email}</strong> will stop working.
      </ConfirmDialog>
    </Paper>
  );
}
