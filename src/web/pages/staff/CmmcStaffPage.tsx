// Staff → CMMC (/settings/cmmc): every company's Level 1 profile with its device fields; six tiles
// (customers, compliant, in progress, expired, renewing within 30 days, device checks pending)
// that filter the list; sorted by CAGE code; search by CAGE code or company; 100 rows per page;
// the whole filtered and searched list (every page) exported as CSV or JSON, built in the browser.
import { Badge, Button, Group, Paper, SimpleGrid, Table, Text, TextInput, UnstyledButton } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useDeferredValue, useState } from 'react';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ForbiddenPage } from '../../components/StatusPages.tsx';
import { ErrorAlert, ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import {
  fetchAllStaffProfiles,
  STAFF_PAGE_SIZE,
  staffProfilesQuery,
  type StaffFilter,
  type StaffListDto,
} from '../../lib/cmmc-api.ts';
import { buildCsv, downloadFile, type CsvColumns } from '../../lib/csv-export.ts';
import { formatDate, formatDateTime } from '../../lib/format.ts';
import { useMe } from '../../lib/me.ts';

const TILES: { filter: StaffFilter; key: keyof StaffListDto['tiles']; label: string }[] = [
  { filter: 'all', key: 'customers', label: 'Customers' },
  { filter: 'compliant', key: 'compliant', label: 'Compliant' },
  { filter: 'in_progress', key: 'inProgress', label: 'In progress' },
  { filter: 'expired', key: 'expired', label: 'Expired' },
  { filter: 'renewing_soon', key: 'renewingSoon', label: 'Renewing within 30 days' },
  { filter: 'devices_pending', key: 'devicesPending', label: 'Device checks pending' },
];
const STATUS: Record<string, { label: string; color: string }> = {
  in_progress: { label: 'In progress', color: 'blue' },
  compliant: { label: 'Compliant', color: 'green' },
  renewal_due: { label: 'Renewal due', color: 'yellow' },
  not_compliant: { label: 'Not compliant', color: 'red' },
  expired: { label: 'Expired', color: 'red' },
};

const COLUMNS: CsvColumns = [
  ['cageCode', 'cage_code'],
  ['companyName', 'company'],
  ['status', 'status'],
  ['statusDate', 'status_date'],
  ['renewalDueAt', 'renewal_due_date'],
  ['device_link_issued', 'device_link_issued'],
  ['device_count', 'device_count'],
  ['failing_devices', 'failing_devices'],
  ['pendingDevices', 'pending_devices'],
  ['latestRunAt', 'latest_device_check'],
];
const stamp = (d: Date) => d.toISOString().slice(0, 19).replace(/-/g, '').replace(/:/g, '').replace('T', '-');

function exportList(data: StaffListDto, filter: StaffFilter, q: string, format: 'csv' | 'json') {
  const now = new Date();
  const name = `cmmc-profiles-${stamp(now)}.${format}`;
  if (format === 'csv') downloadFile(name, buildCsv(COLUMNS, data.profiles), 'text/csv');
  else
    downloadFile(
      name,
      JSON.stringify(
        {
          kind: 'cmmc-profiles',
          exportedAt: now.toISOString(),
          filter,
          search: q || null,
          total: data.total,
          tiles: data.tiles,
          profiles: data.profiles,
        },
        null,
        2,
      ),
      'application/json',
    );
}

function CmmcStaff() {
  const [filter, setFilterState] = useState<StaffFilter>('all');
  const [search, setSearchState] = useState('');
  const [page, setPage] = useState(0);
  const [exporting, setExporting] = useState<'csv' | 'json' | null>(null);
  const [exportError, setExportError] = useState<unknown>(null);
  // A new filter or search starts again at the first page.
  const setFilter = (f: StaffFilter) => {
    setFilterState(f);
    setPage(0);
  };
  const setSearch = (v: string) => {
    setSearchState(v);
    setPage(0);
  };
  const q = useDeferredValue(search);
  const list = useQuery({ ...staffProfilesQuery(filter, q, page), placeholderData: keepPreviousData });
  const exportAll = async (format: 'csv' | 'json') => {
    setExporting(format);
    setExportError(null);
    try {
      exportList(await fetchAllStaffProfiles(filter, q), filter, q, format);
    } catch (e) {
      setExportError(e);
    } finally {
      setExporting(null);
    }
  };
  return (
    <>
      <PageHeader
        title="CMMC Level 1"
        titleContext="Staff"
        description="Every company's Level 1 self-assessment: status, renewal and device checks. Choose a tile to filter the list."
      />
      {list.isPending ? (
        <LoadingState label="Loading CMMC profiles…" />
      ) : list.isError ? (
        <ErrorState error={list.error} title="Could not load the CMMC profiles" onRetry={() => void list.refetch()} />
      ) : (
        <>
          <SimpleGrid cols={{ base: 2, sm: 3, lg: 6 }} mb="md" role="group" aria-label="Filter by status">
            {TILES.map((t) => (
              <UnstyledButton
                key={t.filter}
                onClick={() => setFilter(t.filter)}
                aria-pressed={filter === t.filter}
                data-testid={`tile-${t.filter}`}
              >
                <Paper
                  withBorder
                  p="md"
                  radius="md"
                  bg={filter === t.filter ? 'var(--mantine-primary-color-light)' : undefined}
                >
                  <Text size="xl" fw={700}>
                    {list.data.tiles[t.key]}
                  </Text>
                  <Text size="sm">{t.label}</Text>
                </Paper>
              </UnstyledButton>
            ))}
          </SimpleGrid>
          <Group justify="space-between" align="flex-end" mb="md">
            <TextInput
              label="Search"
              description="By CAGE code or company"
              w={360}
              value={search}
              onChange={(e) => setSearch(e.currentTarget.value)}
            />
            <Group gap="xs">
              <Button
                variant="default"
                size="xs"
                loading={exporting === 'csv'}
                disabled={exporting !== null}
                onClick={() => void exportAll('csv')}
              >
                Export CSV
              </Button>
              <Button
                variant="default"
                size="xs"
                loading={exporting === 'json'}
                disabled={exporting !== null}
                onClick={() => void exportAll('json')}
              >
                Export JSON
              </Button>
            </Group>
          </Group>
          <ErrorAlert error={exportError} title="Could not export the list" />
          <Text size="sm" c="dimmed" mb="xs" aria-live="polite" data-testid="cmmc-staff-count">
            {list.data.total} {list.data.total === 1 ? 'profile' : 'profiles'}
            {list.data.total > STAFF_PAGE_SIZE
              ? `, ${page * STAFF_PAGE_SIZE + 1}–${page * STAFF_PAGE_SIZE + list.data.profiles.length} shown`
              : ''}
            . The exports hold every {list.data.total === 1 ? 'profile' : `one of the ${list.data.total} profiles`} of
            this filter and search, not only this page.
          </Text>
          <Paper withBorder radius="md">
            <Table.ScrollContainer minWidth={900} type="native" tabIndex={0} role="region" aria-label="CMMC profiles">
              <Table striped>
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>CAGE code</Table.Th>
                    <Table.Th>Company</Table.Th>
                    <Table.Th>Status</Table.Th>
                    <Table.Th>Renewal due</Table.Th>
                    <Table.Th>Device link</Table.Th>
                    <Table.Th>Devices</Table.Th>
                    <Table.Th>Failing</Table.Th>
                    <Table.Th>Latest device check</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {list.data.profiles.map((p) => (
                    <Table.Tr key={p.id} data-testid="cmmc-staff-row">
                      <Table.Td>
                        <Text size="sm" ff="monospace">
                          {p.cageCode}
                        </Text>
                      </Table.Td>
                      <Table.Td>{p.companyName}</Table.Td>
                      <Table.Td>
                        <Badge variant="light" color={STATUS[p.status]?.color ?? 'gray'}>
                          {STATUS[p.status]?.label ?? p.status}
                        </Badge>
                      </Table.Td>
                      <Table.Td>{p.renewalDueAt ? formatDate(p.renewalDueAt) : '—'}</Table.Td>
                      <Table.Td>{p.device_link_issued ? 'Issued' : 'Not issued'}</Table.Td>
                      <Table.Td>
                        {p.device_count}
                        {p.pendingDevices ? ` (${p.pendingDevices} pending)` : ''}
                      </Table.Td>
                      <Table.Td>{p.failing_devices}</Table.Td>
                      <Table.Td>{p.latestRunAt ? formatDateTime(p.latestRunAt) : '—'}</Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
            {list.data.profiles.length === 0 && (
              <Text size="sm" c="dimmed" p="md">
                No profiles match.
              </Text>
            )}
          </Paper>
          {list.data.total > STAFF_PAGE_SIZE && (
            <Group justify="space-between" mt="sm" role="navigation" aria-label="Pages of profiles">
              <Button
                variant="default"
                size="xs"
                disabled={page === 0}
                onClick={() => setPage((p) => Math.max(0, p - 1))}
              >
                Previous page
              </Button>
              <Text size="sm" data-testid="cmmc-staff-page">
                Page {page + 1} of {Math.ceil(list.data.total / STAFF_PAGE_SIZE)}
              </Text>
              <Button
                variant="default"
                size="xs"
                disabled={(page + 1) * STAFF_PAGE_SIZE >= list.data.total}
                onClick={() => setPage((p) => p + 1)}
              >
                Next page
              </Button>
            </Group>
          )}
        </>
      )}
    </>
  );
}

export function CmmcStaffPage() {
  const me = useMe();
  if (!me.staff) return <ForbiddenPage />;
  return <CmmcStaff />;
}
