// Workers: the machines that lease and run this tenant's scans. Lists each worker with its last
// heartbeat, version, platform and current scan; admins enroll new ones with a one-time code,
// revoke them, and manage the webhook signing secret their requests are signed with.
import { Badge, Button, Stack, Table, Text, Tooltip } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { DataTable } from '../../components/DataTable.tsx';
import { IconPlus } from '../../components/icons.tsx';
import { TextLink } from '../../components/links.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { formatDateTime } from '../../lib/format.ts';
import { isTenantAdmin, useTenant } from '../../lib/me.ts';
import { useConfirmedAction } from '../../lib/use-confirmed-action.ts';
import { revokeWorker, workersKeys, workersQuery, type Worker } from '../../lib/workers-api.ts';
import { EnrollWorkerDialog } from './EnrollWorkerDialog.tsx';
import { WebhookSecretCard } from './WebhookSecretCard.tsx';

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** "2 minutes ago", from seconds up to days. */
export function timeAgo(iso: string, now: number): string {
  const s = Math.round((new Date(iso).getTime() - now) / 1000);
  const abs = Math.abs(s);
  if (abs < 60) return relative.format(s, 'second');
  if (abs < 3600) return relative.format(Math.round(s / 60), 'minute');
  if (abs < 86_400) return relative.format(Math.round(s / 3600), 'hour');
  return relative.format(Math.round(s / 86_400), 'day');
}

function useNow(intervalMs = 15_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}

export function WorkersPage() {
  const tenant = useTenant();
  const query = useQuery(workersQuery(tenant.id));
  const [enrolling, setEnrolling] = useState(false);
  const admin = isTenantAdmin(tenant);
  const now = useNow();
  const revoke = useConfirmedAction<Worker>({
    action: (w) => revokeWorker(tenant.id, w.id),
    successMessage: (w) => `${w.name} was revoked; its token no longer works.`,
    errorTitle: 'Could not revoke the worker',
    queryKey: workersKeys.list(tenant.id),
    refreshOnError: true,
  });

  return (
    <>
      <PageHeader
        title="Workers"
        titleContext={tenant.name}
        description="The machines that lease this tenant's queued scans, run them and upload the reports."
        actions={
          admin && (
            <Button leftSection={<IconPlus size={16} />} onClick={() => setEnrolling(true)}>
              Enroll a worker
            </Button>
          )
        }
      />
      <Stack gap="lg">
        {query.isPending ? (
          <LoadingState label="Loading workers…" />
        ) : query.isError ? (
          <ErrorState error={query.error} title="Could not load the workers" onRetry={() => void query.refetch()} />
        ) : (
          <DataTable
            label="Workers"
            minWidth={820}
            columns={[
              'Name',
              'Status',
              'Platform',
              'Version',
              'Last seen',
              'Current scan',
              query.data.canManage && { label: 'Actions', visuallyHidden: true },
            ]}
            empty={
              query.data.workers.length === 0 &&
              (admin
                ? 'No workers yet. Enroll one with a one-time code.'
                : 'No workers yet. An owner or admin can enroll one.')
            }
          >
            {query.data.workers.map((w) => (
              <Table.Tr key={w.id}>
                <Table.Td>
                  <Text size="sm" fw={600}>
                    {w.name}
                  </Text>
                  {w.hosted && (
                    <Text size="xs" c="dimmed">
                      Hosted by Rampart
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <Badge color={w.status === 'active' ? 'green' : 'gray'} variant="light">
                    {w.status === 'active' ? 'Active' : 'Revoked'}
                  </Badge>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{w.platform}</Text>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{w.version}</Text>
                </Table.Td>
                <Table.Td>
                  {w.lastSeenAt ? (
                    <Tooltip label={formatDateTime(w.lastSeenAt)}>
                      <Text size="sm" component="span">
                        {timeAgo(w.lastSeenAt, now)}
                      </Text>
                    </Tooltip>
                  ) : (
                    <Text size="sm" c="dimmed">
                      Never
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  {w.currentScan ? (
                    <TextLink to="/scans/$scanId" params={{ scanId: w.currentScan.id }} size="sm">
                      {w.currentScan.kind} scan, {w.currentScan.status} ({w.currentScan.percent}%)
                    </TextLink>
                  ) : (
                    <Text size="sm" c="dimmed">
                      Idle
                    </Text>
                  )}
                </Table.Td>
                {query.data.canManage && (
                  <Table.Td ta="right">
                    {w.status === 'active' && (
                      <Button
                        size="compact-sm"
                        variant="default"
                        color="red"
                        onClick={() => revoke.ask(w)}
                        aria-label={`Revoke ${w.name}`}
                      >
                        Revoke
                      </Button>
                    )}
                  </Table.Td>
                )}
              </Table.Tr>
            ))}
          </DataTable>
        )}
        <WebhookSecretCard tenantId={tenant.id} />
      </Stack>
      {admin && <EnrollWorkerDialog tenantId={tenant.id} opened={enrolling} onClose={() => setEnrolling(false)} />}
      <ConfirmDialog title="Revoke this worker?" confirmLabel="Revoke" danger {...revoke.dialogProps}>
        {revoke.target?.name} stops working at once: its token is refused and it cannot lease scans. To use the machine
        again, enroll it with a new code.
      </ConfirmDialog>
    </>
  );
}
