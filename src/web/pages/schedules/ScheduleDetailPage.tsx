// One schedule: what it scans, when (next runs in its zone), the last run's outcome, the scans it
// queued (live while one is unfinished), and edit / enable / delete.
import { Badge, Button, Group, List, Paper, SimpleGrid, Stack, Table, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { DataTable } from '../../components/DataTable.tsx';
import { TextLink } from '../../components/links.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { ApiError } from '../../lib/api.ts';
import { notifyError, notifySuccess } from '../../lib/errors.ts';
import { formatDateTime } from '../../lib/format.ts';
import { useTenant } from '../../lib/me.ts';
import { deleteSchedule, scheduleKeys, scheduleQuery, type ScheduleDetail } from '../../lib/scans-api.ts';
import { describeOptions, SCAN_KIND_LABELS, ScanProgress, ScanStatusBadge } from '../scans/scan-ui.tsx';
import { ScheduleDialog } from './ScheduleDialog.tsx';
import { EnabledSwitch } from './SchedulesListPage.tsx';

export function ScheduleDetailPage({ scheduleId }: { scheduleId: string }) {
  const tenant = useTenant();
  const query = useQuery(scheduleQuery(tenant.id, scheduleId));
  if (query.isPending)
    return (
      <>
        <BackLink />
        <LoadingState label="Loading the schedule…" />
      </>
    );
  if (query.isError) {
    const notFound =
      query.error instanceof ApiError && (query.error.status === 404 || query.error.code === 'validation_failed');
    return (
      <>
        <BackLink />
        <PageHeader title={notFound ? 'Schedule not found' : 'Schedule'} titleContext={tenant.name} />
        <ErrorState
          error={notFound ? new Error(`There is no schedule with this id in ${tenant.name}.`) : query.error}
          title={notFound ? 'Schedule not found' : 'Could not load the schedule'}
          onRetry={notFound ? undefined : () => void query.refetch()}
        />
      </>
    );
  }
  return <ScheduleView detail={query.data} tenantId={tenant.id} tenantName={tenant.name} />;
}

function BackLink() {
  return (
    <TextLink to="/schedules" size="sm" display="inline-block" mb="sm">
      ← All schedules
    </TextLink>
  );
}

function ScheduleView({
  detail,
  tenantId,
  tenantName,
}: {
  detail: ScheduleDetail;
  tenantId: string;
  tenantName: string;
}) {
  const { schedule, upcoming, history } = detail;
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const remove = useMutation({
    mutationFn: () => deleteSchedule(tenantId, schedule.id),
    onSuccess: async () => {
      notifySuccess(`"${schedule.name}" was deleted.`);
      setDeleting(false);
      await queryClient.invalidateQueries({ queryKey: scheduleKeys.lists(tenantId) });
      await navigate({ to: '/schedules' });
    },
    onError: (error) => {
      setDeleting(false);
      notifyError(error, 'The schedule was not deleted');
    },
  });

  return (
    <>
      <BackLink />
      <PageHeader
        title={schedule.name}
        titleContext={tenantName}
        actions={
          <>
            <Button variant="default" onClick={() => setEditing(true)}>
              Edit
            </Button>
            <Button color="red" variant="light" onClick={() => setDeleting(true)}>
              Delete
            </Button>
          </>
        }
      />
      <Stack gap="lg">
        <Paper withBorder p="lg" radius="md" component="section" aria-label="Schedule">
          <SimpleGrid cols={{ base: 1, xs: 2, md: 3 }} spacing="md">
            <div>
              <Text size="xs" c="dimmed">
                Scans
              </Text>
              <Text size="sm">
                {SCAN_KIND_LABELS[schedule.kind]} of {schedule.asset.name || schedule.asset.target}
              </Text>
              <Text size="xs" c="dimmed">
                {describeOptions(schedule.kind, schedule.options)}
                {schedule.chunkCount ? ` · ${schedule.chunkCount} chunks` : ''}
              </Text>
            </div>
            <div>
              <Text size="xs" c="dimmed">
                When
              </Text>
              <Text size="sm" className="mono">
                {schedule.cron}
              </Text>
              <Text size="xs" c="dimmed">
                {schedule.timeZone}
              </Text>
            </div>
            <div>
              <Text size="xs" c="dimmed">
                Enabled
              </Text>
              <EnabledSwitch schedule={schedule} tenantId={tenantId} />
            </div>
            <div>
              <Text size="xs" c="dimmed">
                Next run
              </Text>
              <Text size="sm" data-testid="next-run">
                {schedule.nextRunLocal ?? 'None while disabled'}
              </Text>
              {schedule.nextRunAt && (
                <Text size="xs" c="dimmed">
                  {formatDateTime(schedule.nextRunAt)} your time
                </Text>
              )}
            </div>
            <div>
              <Text size="xs" c="dimmed">
                Last run
              </Text>
              <Text size="sm">{schedule.lastRunAt ? formatDateTime(schedule.lastRunAt) : 'Never'}</Text>
              {schedule.lastError && (
                <Text size="xs" c="var(--mantine-color-error)" style={{ wordBreak: 'break-word' }}>
                  Skipped: {schedule.lastError.replace(/^[a-z_]+: /, '')}
                </Text>
              )}
            </div>
            <div>
              <Text size="xs" c="dimmed">
                Created
              </Text>
              <Text size="sm">{formatDateTime(schedule.createdAt)}</Text>
              <Text size="xs" c="dimmed">
                {schedule.createdBy?.email ?? ''}
              </Text>
            </div>
          </SimpleGrid>
          {upcoming.length > 0 && (
            <Stack gap={4} mt="md">
              <Text size="sm" fw={600}>
                Upcoming runs ({schedule.timeZone})
              </Text>
              <List size="sm" spacing={2}>
                {upcoming.map((u) => (
                  <List.Item key={u.at}>{u.local}</List.Item>
                ))}
              </List>
            </Stack>
          )}
        </Paper>
        <SectionCard
          headingId="history-heading"
          title="History"
          description="The scans this schedule queued, newest first."
        >
          {history.length === 0 ? (
            <Text size="sm" c="dimmed">
              No runs yet.
            </Text>
          ) : (
            <DataTable label="Scans queued by this schedule" minWidth={560} columns={['Queued', 'Status', 'Progress']}>
              {history.map((s) => (
                <Table.Tr key={s.id}>
                  <Table.Td className="nowrap">
                    <TextLink to="/scans/$scanId" params={{ scanId: s.id }} size="sm">
                      {formatDateTime(s.createdAt)}
                    </TextLink>
                  </Table.Td>
                  <Table.Td>
                    <ScanStatusBadge status={s.status} outcome={s.outcome} />
                  </Table.Td>
                  <Table.Td>
                    <ScanProgress scan={s} label={`Progress of the run queued ${formatDateTime(s.createdAt)}`} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </DataTable>
          )}
          <Group>
            <TextLink to="/scans" size="sm">
              All scans
            </TextLink>
            {!schedule.enabled && (
              <Badge variant="light" color="gray">
                Disabled
              </Badge>
            )}
          </Group>
        </SectionCard>
      </Stack>
      <ScheduleDialog opened={editing} onClose={() => setEditing(false)} schedule={schedule} />
      <ConfirmDialog
        opened={deleting}
        title="Delete this schedule?"
        confirmLabel="Delete schedule"
        danger
        loading={remove.isPending}
        onConfirm={() => remove.mutate()}
        onClose={() => setDeleting(false)}
      >
        No further scans are queued. Scans it already queued stay in the scan list.
      </ConfirmDialog>
    </>
  );
}
