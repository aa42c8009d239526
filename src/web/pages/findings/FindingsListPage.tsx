// Findings: severity chips with counts for the current filters, a filter bar kept in the URL, a
// sortable table with "Load more" paging, bulk status changes for selected rows, and exports of
// the current filters as CSV, JSON or SARIF.
import {
  Badge,
  Button,
  Checkbox,
  Chip,
  Group,
  Menu,
  NativeSelect,
  Paper,
  SimpleGrid,
  Stack,
  Switch,
  Table,
  Text,
  TextInput,
  UnstyledButton,
} from '@mantine/core';
import { useInfiniteQuery, useQuery, type InfiniteData, type UseInfiniteQueryResult } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useEffect, useMemo, useState } from 'react';
import { IconFindings } from '../../components/icons.tsx';
import { ButtonLink, TextLink } from '../../components/links.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, FirstItemState, LoadingState, NoMatches } from '../../components/QueryStates.tsx';
import { api } from '../../lib/api.ts';
import {
  exportUrl,
  findingKeys,
  findingsQuery,
  type FindingFilters,
  type FindingSort,
  type FindingsPage,
  type FindingStatus,
  type FindingSummary,
  type Scanner,
  type Severity,
} from '../../lib/findings-api.ts';
import { formatDate, formatDateTime, pluralize } from '../../lib/format.ts';
import { isTenantAdmin, useTenant } from '../../lib/me.ts';
import type { AssetsPage } from '../../lib/types.ts';
import {
  SCANNER_LABELS,
  SCANNERS,
  SEVERITIES,
  SEVERITY_COLORS,
  SEVERITY_LABELS,
  SeverityBadge,
  SORT_LABELS,
  STATUS_LABELS,
  StatusBadge,
  STATUSES,
} from './finding-ui.tsx';
import { StatusDialog } from './StatusDialog.tsx';
import { useUrlText } from '../../lib/use-url-text.ts';

export interface FindingsSearch {
  q?: string;
  /** Comma-separated severities. */
  severity?: string;
  /** A status, or "all"; absent means open findings. */
  status?: FindingStatus | 'all';
  assetId?: string;
  scanner?: Scanner;
  /** Findings a scan reported last (the link from a scan's page). */
  scanId?: string;
  overdue?: boolean;
  sort?: FindingSort;
  dir?: 'asc' | 'desc';
}

const DEFAULT_DIR: Record<FindingSort, 'asc' | 'desc'> = {
  severity: 'desc',
  first_seen: 'desc',
  last_seen: 'desc',
  sla_due: 'asc',
};

export function FindingsListPage({ search }: { search: FindingsSearch }) {
  const tenant = useTenant();
  const navigate = useNavigate({ from: '/findings' });
  const update = (patch: Partial<FindingsSearch>) =>
    void navigate({ to: '/findings', search: (prev) => ({ ...prev, ...patch }), replace: true });
  const [q, setQ] = useUrlText(search.q, (v) => update({ q: v }));

  const severities = useMemo(
    () => (search.severity ? (search.severity.split(',') as Severity[]) : []),
    [search.severity],
  );
  const filters = useMemo(() => {
    const f: FindingFilters = {};
    if (severities.length) f.severity = severities;
    if (search.status !== 'all') f.status = [search.status ?? 'open'];
    if (search.assetId) f.assetId = search.assetId;
    if (search.scanner) f.scanner = search.scanner;
    if (search.scanId) f.scanId = search.scanId;
    if (search.q) f.q = search.q;
    if (search.overdue) f.overdue = true;
    if (search.sort) f.sort = search.sort;
    if (search.dir) f.dir = search.dir;
    return f;
  }, [
    severities,
    search.status,
    search.assetId,
    search.scanner,
    search.scanId,
    search.q,
    search.overdue,
    search.sort,
    search.dir,
  ]);
  const query = useInfiniteQuery(findingsQuery(tenant.id, filters));
  const assets = useQuery({
    queryKey: [...findingKeys.all(tenant.id), 'asset-options'],
    queryFn: ({ signal }) =>
      api<AssetsPage>(`/api/v1/tenants/${encodeURIComponent(tenant.id)}/assets`, { query: { limit: 200 }, signal }),
    staleTime: 60_000,
  });

  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [dialog, setDialog] = useState(false);
  const filterKey = JSON.stringify(filters);
  useEffect(() => setSelected(new Set()), [filterKey]);

  const counts = query.data?.pages[0]?.counts;
  const total = query.data?.pages[0]?.total ?? undefined;
  const narrowed = Boolean(
    search.q ||
    search.severity ||
    search.assetId ||
    search.scanner ||
    search.scanId ||
    search.overdue ||
    (search.status && search.status !== 'open'),
  );
  const exportFilters: FindingFilters = filters;

  return (
    <>
      <PageHeader
        title="Findings"
        titleContext={tenant.name}
        description="Issues your scans found, worst first. Rescans close what is gone and reopen what comes back; each finding is due for a fix by its SLA date."
        actions={
          <>
            <ButtonLink to="/explain-results" variant="default">
              Explain a result file
            </ButtonLink>
            <Menu position="bottom-end" withinPortal>
              <Menu.Target>
                <Button variant="default">Export</Button>
              </Menu.Target>
              <Menu.Dropdown>
                <Menu.Label>The findings matching these filters</Menu.Label>
                <Menu.Item component="a" href={exportUrl(tenant.id, 'csv', exportFilters)} download>
                  CSV (spreadsheet)
                </Menu.Item>
                <Menu.Item component="a" href={exportUrl(tenant.id, 'json', exportFilters)} download>
                  JSON
                </Menu.Item>
                <Menu.Item component="a" href={exportUrl(tenant.id, 'sarif', exportFilters)} download>
                  SARIF 2.1.0 (code scanning)
                </Menu.Item>
              </Menu.Dropdown>
            </Menu>
          </>
        }
      />
      <Chip.Group
        multiple
        value={severities}
        onChange={(v) => update({ severity: v.length ? SEVERITIES.filter((s) => v.includes(s)).join(',') : undefined })}
      >
        <Group gap="xs" mb="md" role="group" aria-label="Severity">
          {SEVERITIES.map((s) => (
            <Chip key={s} value={s} color={SEVERITY_COLORS[s]} variant="outline">
              {SEVERITY_LABELS[s]} <span aria-hidden="true">·</span> {counts ? counts[s].toLocaleString() : '…'}
            </Chip>
          ))}
        </Group>
      </Chip.Group>
      <Paper withBorder p="md" radius="md" mb="lg" component="section" aria-label="Filters">
        <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }} spacing="sm" verticalSpacing="sm">
          <TextInput
            label="Search findings"
            type="search"
            placeholder="Title, rule, location or CVE"
            maxLength={200}
            spellCheck={false}
            autoCapitalize="off"
            value={q}
            onChange={(e) => setQ(e.currentTarget.value)}
          />
          <NativeSelect
            label="Status"
            data={[
              ...STATUSES.map((s) => ({ value: s, label: STATUS_LABELS[s] })),
              { value: 'all', label: 'Any status' },
            ]}
            value={search.status ?? 'open'}
            onChange={(e) =>
              update({
                status: e.currentTarget.value === 'open' ? undefined : (e.currentTarget.value as FindingStatus | 'all'),
              })
            }
          />
          <NativeSelect
            label="Asset"
            data={[
              { value: '', label: 'Any asset' },
              ...(assets.data?.assets ?? []).map((a) => ({ value: a.id, label: a.name || a.target })),
            ]}
            value={search.assetId ?? ''}
            onChange={(e) => update({ assetId: e.currentTarget.value || undefined })}
          />
          <NativeSelect
            label="Scanner"
            data={[
              { value: '', label: 'Any scanner' },
              ...SCANNERS.map((s) => ({ value: s, label: SCANNER_LABELS[s] })),
            ]}
            value={search.scanner ?? ''}
            onChange={(e) => update({ scanner: (e.currentTarget.value || undefined) as Scanner | undefined })}
          />
        </SimpleGrid>
        <Group justify="space-between" mt="md" gap="sm">
          <Switch
            label="Overdue only"
            description="Open findings past their SLA due date"
            checked={search.overdue === true}
            onChange={(e) => update({ overdue: e.currentTarget.checked || undefined })}
          />
          {search.scanId && (
            <Group gap="xs">
              <Text size="sm">Only findings reported by</Text>
              <TextLink to="/scans/$scanId" params={{ scanId: search.scanId }} size="sm">
                this scan
              </TextLink>
              <Button variant="subtle" size="compact-xs" onClick={() => update({ scanId: undefined })}>
                Any scan
              </Button>
            </Group>
          )}
          {narrowed && (
            <Button
              variant="default"
              size="xs"
              onClick={() => void navigate({ to: '/findings', search: {}, replace: true })}
            >
              Clear filters
            </Button>
          )}
        </Group>
      </Paper>
      {selected.size > 0 && (
        <Paper withBorder p="sm" radius="md" mb="md" component="section" aria-label="Selected findings">
          <Group justify="space-between" gap="sm">
            <Text size="sm" fw={600} aria-live="polite">
              {pluralize(selected.size, 'finding')} selected
            </Text>
            <Group gap="sm">
              <Button variant="default" size="xs" onClick={() => setSelected(new Set())}>
                Clear selection
              </Button>
              <Button size="xs" onClick={() => setDialog(true)}>
                Change status…
              </Button>
            </Group>
          </Group>
        </Paper>
      )}
      <FindingsTable
        query={query}
        narrowed={narrowed}
        total={total}
        sort={search.sort ?? 'severity'}
        dir={search.dir ?? DEFAULT_DIR[search.sort ?? 'severity']}
        onSort={(sort) => {
          const current = search.sort ?? 'severity';
          const dir =
            sort === current ? ((search.dir ?? DEFAULT_DIR[current]) === 'asc' ? 'desc' : 'asc') : DEFAULT_DIR[sort];
          update({ sort: sort === 'severity' ? undefined : sort, dir: dir === DEFAULT_DIR[sort] ? undefined : dir });
        }}
        selected={selected}
        onSelect={setSelected}
      />
      <StatusDialog
        opened={dialog}
        tenantId={tenant.id}
        ids={[...selected]}
        canAcceptRisk={isTenantAdmin(tenant)}
        onClose={() => setDialog(false)}
        onDone={() => setSelected(new Set())}
      />
    </>
  );
}

interface FindingsTableProps {
  query: UseInfiniteQueryResult<InfiniteData<FindingsPage>, Error>;
  narrowed: boolean;
  total: number | undefined;
  sort: FindingSort;
  dir: 'asc' | 'desc';
  onSort: (sort: FindingSort) => void;
  selected: Set<string>;
  onSelect: (next: Set<string>) => void;
}

function SortHeader({
  sort,
  current,
  dir,
  onSort,
}: {
  sort: FindingSort;
  current: FindingSort;
  dir: 'asc' | 'desc';
  onSort: (s: FindingSort) => void;
}) {
  const active = sort === current;
  return (
    <Table.Th scope="col" aria-sort={active ? (dir === 'asc' ? 'ascending' : 'descending') : 'none'} className="nowrap">
      <UnstyledButton onClick={() => onSort(sort)} fw={700} fz="sm">
        {SORT_LABELS[sort]} <span aria-hidden="true">{active ? (dir === 'asc' ? '▲' : '▼') : '↕'}</span>
      </UnstyledButton>
    </Table.Th>
  );
}

function FindingsTable({ query, narrowed, total, sort, dir, onSort, selected, onSelect }: FindingsTableProps) {
  if (query.isPending) return <LoadingState label="Loading findings…" />;
  if (!query.data)
    return <ErrorState error={query.error} title="Could not load the findings" onRetry={() => void query.refetch()} />;
  const findings: FindingSummary[] = query.data.pages.flatMap((p) => p.findings);
  if (findings.length === 0) {
    if (narrowed) return <NoMatches>No findings match these filters.</NoMatches>;
    return (
      <FirstItemState
        icon={<IconFindings size={28} />}
        title="No open findings"
        description="Findings appear when scans finish: open ports, vulnerable software, weak TLS, risky web-app behaviour and vulnerable image packages. Critical findings raise an alert as soon as they appear."
      />
    );
  }
  const allSelected = findings.every((f) => selected.has(f.id));
  const someSelected = !allSelected && findings.some((f) => selected.has(f.id));
  const toggle = (id: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    onSelect(next);
  };

  return (
    <Stack gap="md">
      <Paper withBorder radius="md">
        <Table.ScrollContainer
          minWidth={980}
          type="native"
          tabIndex={0}
          role="region"
          aria-label="Findings"
          style={{ position: 'relative' }}
        >
          <Table highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                <Table.Th scope="col" w={40}>
                  <Checkbox
                    aria-label="Select all shown findings"
                    checked={allSelected}
                    indeterminate={someSelected}
                    onChange={(e) =>
                      onSelect(
                        e.currentTarget.checked ? new Set([...selected, ...findings.map((f) => f.id)]) : new Set(),
                      )
                    }
                  />
                </Table.Th>
                <SortHeader sort="severity" current={sort} dir={dir} onSort={onSort} />
                <Table.Th scope="col">Finding</Table.Th>
                <Table.Th scope="col">Asset</Table.Th>
                <Table.Th scope="col">Status</Table.Th>
                <SortHeader sort="first_seen" current={sort} dir={dir} onSort={onSort} />
                <SortHeader sort="last_seen" current={sort} dir={dir} onSort={onSort} />
                <SortHeader sort="sla_due" current={sort} dir={dir} onSort={onSort} />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {findings.map((f) => (
                <Table.Tr key={f.id} bg={selected.has(f.id) ? 'var(--mantine-color-gray-1)' : undefined}>
                  <Table.Td>
                    <Checkbox
                      aria-label={`Select ${f.title}`}
                      checked={selected.has(f.id)}
                      onChange={(e) => toggle(f.id, e.currentTarget.checked)}
                    />
                  </Table.Td>
                  <Table.Td>
                    <SeverityBadge severity={f.severity} />
                  </Table.Td>
                  <Table.Td style={{ maxWidth: 380 }}>
                    <TextLink
                      to="/findings/$findingId"
                      params={{ findingId: f.id }}
                      size="sm"
                      fw={600}
                      style={{ wordBreak: 'break-word' }}
                    >
                      {f.title}
                    </TextLink>
                    <Text size="xs" c="dimmed" className="mono-break">
                      {f.locationText}
                    </Text>
                    <Text size="xs" c="dimmed">
                      {SCANNER_LABELS[f.scanner]} · {f.ruleId}
                      {f.cveIds.length ? ` · ${f.cveIds.slice(0, 2).join(', ')}${f.cveIds.length > 2 ? '…' : ''}` : ''}
                    </Text>
                  </Table.Td>
                  <Table.Td style={{ maxWidth: 220, wordBreak: 'break-word' }}>
                    <TextLink to="/assets/$assetId" params={{ assetId: f.asset.id }} size="sm">
                      {f.asset.name || f.asset.target}
                    </TextLink>
                  </Table.Td>
                  <Table.Td>
                    <StatusBadge status={f.status} />
                    {f.status === 'accepted_risk' && f.statusExpiresAt && (
                      <Text size="xs" c="dimmed" className="nowrap">
                        until {formatDate(f.statusExpiresAt)}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td className="nowrap">{formatDateTime(f.firstSeenAt)}</Table.Td>
                  <Table.Td className="nowrap">{formatDateTime(f.lastSeenAt)}</Table.Td>
                  <Table.Td className="nowrap">
                    {f.slaDueAt ? (
                      formatDate(f.slaDueAt)
                    ) : (
                      <Text span size="sm" c="dimmed">
                        —
                      </Text>
                    )}
                    {f.overdue && (
                      <Badge color="red" variant="light" size="sm" ml={6}>
                        Overdue
                      </Badge>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </Paper>
      <Stack gap="xs" align="center">
        <Text size="sm" c="dimmed" aria-live="polite" ta="center">
          {findings.length.toLocaleString()} of {pluralize(total ?? findings.length, 'finding')} shown
          {query.hasNextPage ? '' : '.'}
        </Text>
        {query.hasNextPage && (
          <Button variant="default" loading={query.isFetchingNextPage} onClick={() => void query.fetchNextPage()}>
            Load more
          </Button>
        )}
      </Stack>
      {query.isError && <ErrorState error={query.error} title="Could not load more findings" />}
    </Stack>
  );
}
