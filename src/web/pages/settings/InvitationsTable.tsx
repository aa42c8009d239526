import { Badge, Button, Table, Text } from '@mantine/core';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { DataTable } from '../../components/DataTable.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { authCall, authClient } from '../../lib/auth-client.ts';
import { formatDate, tenantRoleLabel } from '../../lib/format.ts';
import { tenantKeys } from '../../lib/tenant-api.ts';
import type { Invitation, MeTenant } from '../../lib/types.ts';
import { useConfirmedAction } from '../../lib/use-confirmed-action.ts';

export function InvitationsTable({ tenant, invitations }: { tenant: MeTenant; invitations: Invitation[] }) {
  const cancel = useConfirmedAction({
    action: (inv: Invitation) => authCall(authClient.organization.cancelInvitation({ invitationId: inv.id })),
    successMessage: (inv) => `Invitation for ${inv.email} cancelled.`,
    errorTitle: 'Could not cancel the invitation',
    queryKey: tenantKeys.members(tenant.id),
  });
  const open = invitations.filter((i) => i.status === 'pending');
  const now = Date.now();

  return (
    <SectionCard headingId="invitations-heading" title="Pending invitations">
      {open.length === 0 ? (
        <Text size="sm" c="dimmed">
          No pending invitations.
        </Text>
      ) : (
        <DataTable
          label="Pending invitations"
          minWidth={520}
          columns={['Email', 'Role', 'Expires', { label: 'Actions', visuallyHidden: true }]}
        >
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
                  <Button
                    size="xs"
                    variant="default"
                    aria-label={`Cancel invitation for ${inv.email}`}
                    onClick={() => cancel.ask(inv)}
                  >
                    Cancel
                  </Button>
                </Table.Td>
              </Table.Tr>
            );
          })}
        </DataTable>
      )}
      <ConfirmDialog
        {...cancel.dialogProps}
        title="Cancel invitation"
        confirmLabel="Cancel invitation"
        cancelLabel="Keep invitation"
        danger
      >
        The link sent to <strong>{cancel.target?.email}</strong> will stop working.
      </ConfirmDialog>
    </SectionCard>
  );
}
