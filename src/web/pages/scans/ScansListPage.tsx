// Scans: the tenant's scans newest first with live progress (the list refreshes itself while any
// scan on it is unfinished), filters kept in the URL, today's quota use, and "New scan".
import { Badge, Button, Group, NativeSelect, Paper, SimpleGrid, Stack, Table, Text } from '@mantine/core';
import { useInfiniteQuery, useQuery, type InfiniteData, type UseInfiniteQueryResult } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useMemo, useState } from 'react';
import { DataTable } from '../../components/DataTable.tsx';
import { IconPlus, IconScans } from '../../components/icons.tsx';
import { TextLink } from '../../components/links.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, FirstItemState, LoadingState, NoMatches } from '../../components/QueryStates.tsx';
import { formatDateTime } from '../../lib/format.ts';
import { useTenant } from '../../lib/me.ts';
import {
  scansQuery,
  scanUsageQuery,
  type ScanFilters,
  type ScanKind,
  type ScansPage,
  type ScanStatus,
} from '../../lib/scans-api.ts';
import { NewScanDialog } from './NewScanDialog.tsx';
import {
  describeOptions,
  SCAN_KIND_LABELS,
  SCAN_KINDS,
  SCAN_STATUSES,
  ScanProgress,
  ScanStatusBadge,
  STATUS_LABELS,
  WaitReasonNote,
} from './scan-ui.tsx';

export interface ScansSearch {
  status?: ScanStatus;
  kind?: ScanKind;
  active?: boolean;
}

export function ScansListPage({ search }: { search: ScansSearch }) {
  const tenant = useTenant();
  const navigate = useNavigate();
  const [adding, setAdding] = useState(false);
  const update = (patch: Partial<ScansSearch>) =>
    void navigate({ to: '/scans', search: { ...search, ...patch }, replace: true });
  const filters = useMemo(() => {
    const f: ScanFilters = {};
    if (search.status) f.status = search.status;
    if (search.kind) f.kind = search.kind;
    if (search.active) f.active = 'true';
    return f;
  }, [search.status, search.kind, search.active]);
  const query = useInfiniteQuery(scansQuery(tenant.id, filters));
  const usage = useQuery(scanUsageQuery(tenant.id));
  const filtered = Object.keys(filters).length > 0;

  return (
    <>
      <PageHeader
        title="Scans"
        titleContext={tenant.name}
        description="Scans of your verified assets. Large scans split into 2 to 8 chunks that run in parallel; the scan shows their combined progress."
        actions={
          <Group gap="sm">
            <Button variant="default" onClick={() => void navigate({ to: '/schedules' })}>
              Schedules
            </Button>
            <Button leftSection={<IconPlus />} onClick={() => setAdding(true)}>
              New scan
            </Button>
          </Group>
        }
      />
      <Paper withBorder p="md" radius="md" mb="lg" component="section" aria-label="Filters">
        <SimpleGrid cols={{ base: 1, xs: 3 }} spacing="sm">
          <NativeSelect
            label="Status"
            data={[
              { value: '', label: 'Any status' },
              { value: 'active', label: 'Unfinished' },
              ...SCAN_STATUSES.map((s) => ({ value: s, label: STATUS_LABELS[s] })),
            ]}
            value={search.active ? 'active' : (search.status ?? '')}
            onChange={(e) => {
              const v = e.currentTarget.value;
              update(
                v === 'active'
                  ? { active: true, status: undefined }
                  : { active: undefined, status: (v || undefined) as ScanStatus | undefined },
              );
            }}
          />
          <NativeSelect
            label="Scanner"
            data={[
              { value: '', label: 'Any scanner' },
              ...SCAN_KINDS.map((k) => ({ value: k, label: SCAN_KIND_LABELS[k] })),
            ]}
            value={search.kind ?? ''}
            onChange={(e) => update({ kind: (e.currentTarget.value || undefined) as ScanKind | undefined })}
          />
          <Stack gap={4} justify="flex-end">
            {usage.data && (
              <Text size="sm" aria-live="polite">
                <Text span fw={600}>
                  {usage.data.used} of {usage.data.dailyScanQuota}
                </Text>{' '}
                scans used today (UTC)
              </Text>
            )}
            {filtered && (
              <Button
                variant="default"
                size="xs"
                w="fit-content"
                onClick={() => void navigate({ to: '/scans', search: {}, replace: true })}
              >
                Clear filters
              </Button>
            )}
          </Stack>
        </SimpleGrid>
      </Paper>
      <ScansTable query={query} filtered={filtered} onAdd={() => setAdding(true)} />
      <NewScanDialog opened={adding} onClose={() => setAdding(false)} />
    </>
  );
}

function ScansTable({
  query,
  filtered,
  onAdd,
}: {
  query: UseInfiniteQueryResult<InfiniteData<ScansPage>, Error>;
  filtered: boolean;
  onAdd: () => void;
}) {
  if (query.isPending) return <LoadingState label="Loading scans…" />;
  if (!query.data)
    return <ErrorState error={query.error} title="Could not load the scans" onRetry={() => void query.refetch()} />;
  const scans = query.data.pages.flatMap((p) => p.scans);
  if (scans.length === 0) {
    if (filtered) return <NoMatches>No scans match these filters.</NoMatches>;
    return (
      <FirstItemState
        icon={<IconScans size={28} />}
        title="No scans yet"
        description="Queue a port, template, web application, container or edge scan of a verified asset, now or on a schedule. Workers pick scans up and report back."
        action={{ label: 'Queue your first scan', onClick: onAdd }}
      />
    );
  }
  return (
    <Stack gap="md">
      <Paper withBorder radius="md">
        <DataTable label="Scans" minWidth={860} columns={['Scan', 'Asset', 'Status', 'Progress', 'Queued']}>
          {scans.map((s) => (
            <Table.Tr key={s.id}>
              <Table.Td>
                <TextLink to="/scans/$scanId" params={{ scanId: s.id }} size="sm" fw={600}>
                  {SCAN_KIND_LABELS[s.kind]}
                </TextLink>
                <Text size="xs" c="dimmed">
                  {s.source === 'import' ? 'Imported results · ' : ''}
                  {describeOptions(s.kind, s.options)}
                  {s.chunkCount ? ` · ${s.chunkCount} chunks` : ''}
                </Text>
              </Table.Td>
              <Table.Td style={{ maxWidth: 260 }}>
                <TextLink
                  to="/assets/$assetId"
                  params={{ assetId: s.asset.id }}
                  size="sm"
                  style={{ wordBreak: 'break-word' }}
                >
                  {s.asset.name || s.asset.target}
                </TextLink>
              </Table.Td>
              <Table.Td>
                <ScanStatusBadge status={s.status} outcome={s.outcome} />
                <WaitReasonNote scan={s} compact />
              </Table.Td>
              <Table.Td>
                <ScanProgress
                  scan={s}
                  label={`Progress of the ${SCAN_KIND_LABELS[s.kind].toLowerCase()} of ${s.asset.name || s.asset.target}`}
                />
              </Table.Td>
              <Table.Td className="nowrap">
                <Text size="sm">{formatDateTime(s.createdAt)}</Text>
                <Text size="xs" c="dimmed">
                  {s.scheduleId ? (
                    <Badge size="xs" variant="outline" color="gray">
                      Scheduled
                    </Badge>
                  ) : (
                    (s.requestedBy?.email ?? '')
                  )}
                </Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </DataTable>
      </Paper>
      <Stack gap="xs" align="center">
        <Text size="sm" c="dimmed" aria-live="polite">
          {scans.length} {scans.length === 1 ? 'scan' : 'scans'} shown{query.hasNextPage ? '' : '.'}
        </Text>
        {query.hasNextPage && (
          <Button variant="default" loading={query.isFetchingNextPage} onClick={() => void query.fetchNextPage()}>
            Load more
          </Button>
        )}
      </Stack>
    </Stack>
  );
}
