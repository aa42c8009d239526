// Scan schedules: recurring scans with their cron expression, time zone and next run (shown in
// the schedule's own zone), the last run's outcome, enable/disable in place, and "New schedule".
import { Badge, Button, Paper, Stack, Switch, Table, Text } from '@mantine/core';
import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { DataTable } from '../../components/DataTable.tsx';
import { IconPlus } from '../../components/icons.tsx';
import { TextLink } from '../../components/links.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, FirstItemState, LoadingState } from '../../components/QueryStates.tsx';
import { notifyError, notifySuccess } from '../../lib/errors.ts';
import { formatDateTime } from '../../lib/format.ts';
import { useTenant } from '../../lib/me.ts';
import { scheduleKeys, schedulesQuery, setScheduleEnabled, type Schedule } from '../../lib/scans-api.ts';
import { describeOptions, SCAN_KIND_LABELS } from '../scans/scan-ui.tsx';
import { ScheduleDialog } from './ScheduleDialog.tsx';
import { IconCalendar } from '../../components/icons.tsx';

export function SchedulesListPage() {
  const tenant = useTenant();
  const [adding, setAdding] = useState(false);
  const query = useInfiniteQuery(schedulesQuery(tenant.id));
  return (
    <>
      <TextLink to="/scans" size="sm" display="inline-block" mb="sm">
        ← Scans
      </TextLink>
      <PageHeader
        title="Scan schedules"
        titleContext={tenant.name}
        description="Recurring scans. Each run is queued like any other scan and counts against the daily quota; a run that cannot be queued (quota used up, asset busy or no longer verified) is skipped and shown here."
        actions={
          <Button leftSection={<IconPlus />} onClick={() => setAdding(true)}>
            New schedule
          </Button>
        }
      />
      {query.isPending ? (
        <LoadingState label="Loading schedules…" />
      ) : !query.data ? (
        <ErrorState error={query.error} title="Could not load the schedules" onRetry={() => void query.refetch()} />
      ) : (
        <SchedulesTable
          schedules={query.data.pages.flatMap((p) => p.schedules)}
          tenantId={tenant.id}
          onAdd={() => setAdding(true)}
          hasMore={query.hasNextPage}
          loadingMore={query.isFetchingNextPage}
          onMore={() => void query.fetchNextPage()}
        />
      )}
      <ScheduleDialog opened={adding} onClose={() => setAdding(false)} />
    </>
  );
}

/** Enable/disable in place. */
export function EnabledSwitch({ schedule, tenantId }: { schedule: Schedule; tenantId: string }) {
  const queryClient = useQueryClient();
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => setScheduleEnabled(tenantId, schedule.id, enabled),
    onSuccess: async ({ schedule: s }) => {
      notifySuccess(`"${s.name}" ${s.enabled ? 'is enabled' : 'is disabled'}.`);
      await queryClient.invalidateQueries({ queryKey: scheduleKeys.all(tenantId) });
    },
    onError: (error) => notifyError(error, 'The schedule was not changed'),
  });
  return (
    <Switch
      aria-label={`Enabled: ${schedule.name}`}
      checked={toggle.isPending ? Boolean(toggle.variables) : schedule.enabled}
      disabled={toggle.isPending}
      onChange={(e) => toggle.mutate(e.currentTarget.checked)}
    />
  );
}

interface TableProps {
  schedules: Schedule[];
  tenantId: string;
  onAdd: () => void;
  hasMore: boolean;
  loadingMore: boolean;
  onMore: () => void;
}

function SchedulesTable({ schedules, tenantId, onAdd, hasMore, loadingMore, onMore }: TableProps) {
  if (schedules.length === 0)
    return (
      <FirstItemState
        icon={<IconCalendar size={28} />}
        title="No schedules yet"
        description="Scan an asset every night, every Monday or every six hours, in the time zone you choose."
        action={{ label: 'Create a schedule', onClick: onAdd }}
      />
    );
  return (
    <Stack gap="md">
      <Paper withBorder radius="md">
        <DataTable
          label="Scan schedules"
          minWidth={900}
          columns={['Schedule', 'Asset', 'When', 'Next run', 'Last run', { label: 'Enabled' }]}
        >
          {schedules.map((s) => (
            <Table.Tr key={s.id}>
              <Table.Td>
                <TextLink to="/schedules/$scheduleId" params={{ scheduleId: s.id }} size="sm" fw={600}>
                  {s.name}
                </TextLink>
                <Text size="xs" c="dimmed">
                  {SCAN_KIND_LABELS[s.kind]} · {describeOptions(s.kind, s.options)}
                  {s.chunkCount ? ` · ${s.chunkCount} chunks` : ''}
                </Text>
              </Table.Td>
              <Table.Td style={{ maxWidth: 220, wordBreak: 'break-word' }}>
                <Text size="sm">{s.asset.name || s.asset.target}</Text>
              </Table.Td>
              <Table.Td>
                <Text size="sm" className="mono">
                  {s.cron}
                </Text>
                <Text size="xs" c="dimmed">
                  {s.timeZone}
                </Text>
              </Table.Td>
              <Table.Td className="nowrap">
                {s.nextRunLocal ? (
                  <Text size="sm" title={s.nextRunAt ?? undefined}>
                    {s.nextRunLocal}
                  </Text>
                ) : (
                  <Badge variant="light" color="gray">
                    Disabled
                  </Badge>
                )}
              </Table.Td>
              <Table.Td>
                <Text size="sm" className="nowrap">
                  {s.lastRunAt ? formatDateTime(s.lastRunAt) : 'Never'}
                </Text>
                {s.lastError && (
                  <Text size="xs" c="var(--mantine-color-error)" style={{ wordBreak: 'break-word' }}>
                    Skipped: {s.lastError.replace(/^[a-z_]+: /, '')}
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                <EnabledSwitch schedule={s} tenantId={tenantId} />
              </Table.Td>
            </Table.Tr>
          ))}
        </DataTable>
      </Paper>
      {hasMore && (
        <Button variant="default" loading={loadingMore} onClick={onMore} mx="auto">
          Load more
        </Button>
      )}
    </Stack>
  );
}
