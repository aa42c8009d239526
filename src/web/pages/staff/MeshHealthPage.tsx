// Staff → Mesh health (/settings/mesh-health, super-admins): one row per peer over the window
// (24 h, 7 d or 30 d, kept in the URL as ?window=): attempts, success rate, average and exact
// p95 duration, last outbound and inbound times, both-ways flag and per-day bars; failing,
// degraded, idle and never-contacted peers are listed apart. "Details" opens the drill-down (per-day
// table and recent failures). "Run health sweep" pings every configured peer and shows each result
// as it arrives; the results export as CSV or JSON. Charts are plain SVG (no chart library is
// installed): each bar chart also has its numbers in a table or its accessible name.
// Over 500 lines on purpose: the health table, its drill-down and the sweep share one window state and query.
import {
  Alert,
  Badge,
  Button,
  Group,
  Modal,
  SegmentedControl,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useRef, useState } from 'react';
import { DataTable } from '../../components/DataTable.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorAlert, ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { ForbiddenPage } from '../../components/StatusPages.tsx';
import {
  buildCsv,
  buildJson,
  downloadFile,
  exportFileName,
  MESH_CHECK_COLUMNS,
  sweepRows,
} from '../../lib/csv-export.ts';
import { useMe } from '../../lib/me.ts';
import {
  HEALTH_WINDOW_OPTIONS,
  isHealthWindow,
  meshHealthQuery,
  meshSelfQuery,
  runSweep,
  type HealthResponse,
  type HealthWindow,
  type PeerHealth,
  type SweepResult,
} from '../../lib/mesh-health-api.ts';
import { pluralize } from '../../lib/format.ts';
import { Cell, formatDuration, formatInstant, HttpStatusBadge } from './MeshRecordsList.tsx';

export interface MeshHealthSearch {
  window?: HealthWindow;
}

export { isHealthWindow };

const STATUS: Record<PeerHealth['status'], { label: string; color: string }> = {
  healthy: { label: 'Healthy', color: 'green' },
  degraded: { label: 'Degraded', color: 'yellow' },
  failing: { label: 'Failing', color: 'red' },
  idle: { label: 'Idle', color: 'gray' },
  no_data: { label: 'No data', color: 'gray' },
};

const GROUPS: { id: string; title: string; statuses: PeerHealth['status'][]; empty: string; description: string }[] = [
  {
    id: 'failing',
    title: 'Failing or degraded',
    statuses: ['failing', 'degraded'],
    empty: 'No peer is failing or degraded in this window.',
    description: 'Success rate below 99 % (degraded) or below 90 % (failing).',
  },
  {
    id: 'healthy',
    title: 'Healthy',
    statuses: ['healthy'],
    empty: 'No peer answered successfully at 99 % or more in this window.',
    description: 'Success rate of 99 % or more.',
  },
  {
    id: 'idle',
    title: 'Idle',
    statuses: ['idle'],
    empty: 'No idle peers.',
    description: 'No outbound attempt in this window, but earlier ones are on record.',
  },
  {
    id: 'nodata',
    title: 'No data',
    statuses: ['no_data'],
    empty: 'Every peer has outbound records.',
    description: 'Never contacted: no outbound attempt on record (records are kept 90 days).',
  },
];

const percent = (x: number | null) => (x === null ? '—' : `${(Math.floor(x * 1000) / 10).toFixed(1)} %`);
const ms = (x: number | null) => (x === null ? '—' : formatDuration(x));

export function MeshHealthPage({ search }: { search: MeshHealthSearch }) {
  const me = useMe();
  if (!me.staff) return <ForbiddenPage />;
  if (!me.superAdmin)
    return (
      <ForbiddenPage
        title="Super-admins only"
        message="Only Rampart super-admins can see mesh health and run health sweeps."
      />
    );
  return <MeshHealth window={search.window ?? '7d'} />;
}

function MeshHealth({ window }: { window: HealthWindow }) {
  const navigate = useNavigate();
  const query = useQuery(meshHealthQuery(window));
  const [detail, setDetail] = useState<PeerHealth | null>(null);
  const data = query.data;

  return (
    <>
      <PageHeader
        title="Mesh health"
        titleContext="Staff"
        description="Outbound calls to each mesh peer over the window, from the recorded attempts (every retry counts), with the inbound side. p95 is the exact nearest-rank 95th percentile of attempt durations. Read-only; run a sweep to ping every peer now."
      />
      <Stack gap="lg">
        <SegmentedControl
          aria-label="Window"
          value={window}
          data={HEALTH_WINDOW_OPTIONS}
          onChange={(value) => {
            if (isHealthWindow(value))
              void navigate({
                to: '/settings/mesh-health',
                search: { window: value === '7d' ? undefined : value },
                replace: true,
              });
          }}
          style={{ alignSelf: 'flex-start', maxWidth: '100%' }}
        />
        <SweepSection />
        {query.isPending ? (
          <LoadingState label="Loading mesh health…" />
        ) : !data ? (
          <ErrorState error={query.error} title="Could not load mesh health" onRetry={() => void query.refetch()} />
        ) : data.peers.length === 0 ? (
          <NoPeers />
        ) : (
          <>
            <Summary data={data} />
            {GROUPS.map((g) => (
              <PeerGroup
                key={g.id}
                id={g.id}
                title={g.title}
                description={g.description}
                empty={g.empty}
                peers={data.peers.filter((p) => g.statuses.includes(p.status))}
                onDetails={setDetail}
              />
            ))}
          </>
        )}
      </Stack>
      <PeerDetails peer={detail} data={data} onClose={() => setDetail(null)} />
    </>
  );
}

/** An installation without mesh peers has nothing to chart: one plain statement instead of empty groups. */
function NoPeers() {
  return (
    <Alert color="gray" variant="light" role="note" title="No peers configured">
      This installation has no mesh peers and no outbound records, so there is no health to show. A peer is configured
      with SVC_PEER_URL_&lt;PEER&gt; and its shared secrets (see the configuration table in the README).
    </Alert>
  );
}

function Summary({ data }: { data: HealthResponse }) {
  const count = (s: PeerHealth['status']) => data.peers.filter((p) => p.status === s).length;
  const tiles: [string, number][] = [
    ['Peers', data.peers.length],
    ['Healthy', count('healthy')],
    ['Degraded', count('degraded')],
    ['Failing', count('failing')],
    ['Idle', count('idle')],
    ['No data', count('no_data')],
  ];
  return (
    <section aria-label="Summary">
      <Text size="sm" c="dimmed" mb="xs">
        {formatInstant(data.from)} to {formatInstant(data.to)}, UTC days {data.days[0]} to {data.days.at(-1)}.
      </Text>
      <SimpleGrid cols={{ base: 2, sm: 3, md: 6 }} spacing="sm">
        {tiles.map(([label, n]) => (
          <div
            key={label}
            style={{ border: '1px solid var(--mantine-color-default-border)', borderRadius: 8, padding: '8px 12px' }}
          >
            <Text size="xs" c="dimmed" tt="uppercase" fw={700}>
              {label}
            </Text>
            <Text size="xl" fw={700}>
              {n}
            </Text>
          </div>
        ))}
      </SimpleGrid>
    </section>
  );
}

/** Per-day bars: attempts (height), the failed part in red. Decorative detail; the numbers are in the accessible name. */
export function DayBars({
  days,
  width = 160,
  height = 32,
  label,
}: {
  days: PeerHealth['days'];
  width?: number;
  height?: number;
  label: string;
}) {
  const max = Math.max(1, ...days.map((d) => d.attempts));
  const w = width / Math.max(1, days.length);
  const total = days.reduce((s, d) => s + d.attempts, 0);
  const failed = days.reduce((s, d) => s + d.failures, 0);
  return (
    <svg
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label={`${label}: ${total} attempts, ${failed} failed, over ${days.length} days`}
      style={{ display: 'block', maxWidth: '100%' }}
    >
      <title>{`${label}: ${total} attempts, ${failed} failed`}</title>
      <line x1={0} y1={height - 0.5} x2={width} y2={height - 0.5} stroke="var(--mantine-color-default-border)" />
      {days.map((d, i) => {
        const h = (d.attempts / max) * (height - 2);
        const fh = (d.failures / max) * (height - 2);
        return (
          <g key={d.day}>
            <rect
              x={i * w + 0.5}
              y={height - 1 - h}
              width={Math.max(1, w - 1)}
              height={h}
              fill="var(--mantine-color-teal-6)"
            />
            {fh > 0 && (
              <rect
                x={i * w + 0.5}
                y={height - 1 - fh}
                width={Math.max(1, w - 1)}
                height={Math.max(1, fh)}
                fill="var(--mantine-color-red-7)"
              />
            )}
          </g>
        );
      })}
    </svg>
  );
}

function StatusBadge({ status }: { status: PeerHealth['status'] }) {
  const s = STATUS[status];
  return (
    <Badge variant="light" color={s.color}>
      {s.label}
    </Badge>
  );
}

function PeerGroup({
  id,
  title,
  description,
  empty,
  peers,
  onDetails,
}: {
  id: string;
  title: string;
  description: string;
  empty: string;
  peers: PeerHealth[];
  onDetails: (p: PeerHealth) => void;
}) {
  return (
    <SectionCard headingId={`mesh-health-${id}`} title={`${title} (${peers.length})`} description={description}>
      <DataTable
        label={title}
        minWidth={1100}
        columns={[
          'Peer',
          'Status',
          { label: 'Attempts', align: 'right' },
          { label: 'Success', align: 'right' },
          { label: 'Avg', align: 'right' },
          { label: 'p95', align: 'right' },
          'Last outbound',
          'Last inbound',
          'Direction',
          'Per day',
          { label: 'Actions', visuallyHidden: true },
        ]}
        empty={peers.length ? undefined : empty}
      >
        {peers.map((p) => (
          <Table.Tr key={p.peer}>
            <Table.Td>
              <Text size="sm" fw={500} style={{ wordBreak: 'break-word' }}>
                {p.peer}
              </Text>
              {!p.configured && (
                <Text size="xs" c="dimmed">
                  Not configured (seen in records)
                </Text>
              )}
            </Table.Td>
            <Table.Td>
              <StatusBadge status={p.status} />
              {p.fewSamples && p.attempts > 0 && (
                <Text size="xs" c="dimmed">
                  Few samples
                </Text>
              )}
            </Table.Td>
            <Table.Td ta="right">
              {p.attempts.toLocaleString()}
              {p.failures > 0 && (
                <Text size="xs" c="red.8">
                  {p.failures.toLocaleString()} failed
                </Text>
              )}
            </Table.Td>
            <Table.Td ta="right">{percent(p.successRate)}</Table.Td>
            <Table.Td ta="right" className="nowrap">
              {ms(p.avgDurationMs)}
            </Table.Td>
            <Table.Td ta="right" className="nowrap">
              {ms(p.p95DurationMs)}
            </Table.Td>
            <Table.Td className="nowrap">
              {p.lastOutboundAt ? formatInstant(p.lastOutboundAt) : <Cell value={null} />}
              {p.lastOutboundOk === false && (
                <Text size="xs" c="red.8">
                  Last attempt failed
                </Text>
              )}
            </Table.Td>
            <Table.Td className="nowrap">
              {p.lastInboundAt ? formatInstant(p.lastInboundAt) : <Cell value={null} />}
            </Table.Td>
            <Table.Td>
              {p.bidirectional ? (
                <Badge variant="light" color="blue">
                  Both ways
                </Badge>
              ) : (
                <Text size="sm" c="dimmed">
                  {p.inboundCalls > 0 ? 'Inbound only' : p.successes > 0 ? 'Outbound only' : '—'}
                </Text>
              )}
            </Table.Td>
            <Table.Td>
              <DayBars
                days={p.days}
                label={`Attempts per day to ${p.peer}`}
                width={Math.min(180, p.days.length * 12)}
              />
            </Table.Td>
            <Table.Td>
              <Button size="xs" variant="default" onClick={() => onDetails(p)} aria-label={`Details of ${p.peer}`}>
                Details
              </Button>
            </Table.Td>
          </Table.Tr>
        ))}
      </DataTable>
    </SectionCard>
  );
}

function PeerDetails({
  peer,
  data,
  onClose,
}: {
  peer: PeerHealth | null;
  data: HealthResponse | undefined;
  onClose: () => void;
}) {
  // Keep the last peer while the dialog closes (its transition still shows it).
  const shown = useRef<PeerHealth | null>(null);
  if (peer) shown.current = peer;
  const p = peer ?? shown.current;
  return (
    <Modal
      opened={peer !== null}
      onClose={onClose}
      title={p ? `Mesh health of ${p.peer}` : 'Mesh health'}
      size="xl"
      closeButtonProps={{ 'aria-label': 'Close details' }}
    >
      {p && (
        <Stack gap="md">
          <Group gap="sm" wrap="wrap">
            <StatusBadge status={p.status} />
            <Text size="sm">
              {pluralize(p.attempts, 'attempt')}, {percent(p.successRate)} OK, avg {ms(p.avgDurationMs)}, p95{' '}
              {ms(p.p95DurationMs)}
              {data ? ` (${HEALTH_WINDOW_OPTIONS.find((o) => o.value === data.window)?.label.toLowerCase()})` : ''}.
            </Text>
          </Group>
          <DayBars
            days={p.days}
            label={`Attempts per day to ${p.peer}`}
            width={Math.min(640, p.days.length * 24)}
            height={80}
          />
          <Title order={3} size="h5">
            Per day (UTC)
          </Title>
          <DataTable
            label={`Per day for ${p.peer}`}
            minWidth={480}
            columns={[
              'Day',
              { label: 'Attempts', align: 'right' },
              { label: 'OK', align: 'right' },
              { label: 'Failed', align: 'right' },
              { label: 'Avg', align: 'right' },
            ]}
          >
            {p.days.map((d) => (
              <Table.Tr key={d.day}>
                <Table.Td>{d.day}</Table.Td>
                <Table.Td ta="right">{d.attempts}</Table.Td>
                <Table.Td ta="right">{d.successes}</Table.Td>
                <Table.Td ta="right">{d.failures}</Table.Td>
                <Table.Td ta="right">{ms(d.avgDurationMs)}</Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
          <Title order={3} size="h5">
            Recent failures
          </Title>
          <DataTable
            label={`Recent failures of ${p.peer}`}
            minWidth={720}
            columns={['Time', 'Flow', 'HTTP', 'Error', { label: 'Duration', align: 'right' }, 'Request id']}
            empty={p.recentFailures.length ? undefined : 'No failed attempt in this window.'}
          >
            {p.recentFailures.map((f) => (
              <Table.Tr key={`${f.requestId}-${f.attempt}-${f.at}`}>
                <Table.Td className="nowrap">{formatInstant(f.at)}</Table.Td>
                <Table.Td>
                  <Cell value={f.flow} mono />
                </Table.Td>
                <Table.Td>
                  <HttpStatusBadge status={f.httpStatus} />
                </Table.Td>
                <Table.Td>
                  <Cell value={f.error} mono />
                </Table.Td>
                <Table.Td ta="right" className="nowrap">
                  {formatDuration(f.durationMs)}
                </Table.Td>
                <Table.Td>
                  <Cell value={f.requestId} mono />
                </Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        </Stack>
      )}
    </Modal>
  );
}

const OUTCOME_COLOR: Record<SweepResult['outcome'], string> = {
  ok: 'green',
  route_not_deployed: 'orange',
  unauthorized: 'red',
  forbidden: 'red',
  timeout: 'orange',
  unreachable: 'red',
  http_error: 'red',
  unexpected_answer: 'orange',
  not_callable: 'gray',
};
const OUTCOME_LABEL: Record<SweepResult['outcome'], string> = {
  ok: 'OK',
  route_not_deployed: 'Route not deployed',
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
  timeout: 'Timed out',
  unreachable: 'Unreachable',
  http_error: 'HTTP error',
  unexpected_answer: 'Unexpected answer',
  not_callable: 'Not callable',
};

function SweepSection() {
  const self = useQuery(meshSelfQuery);
  const queryClient = useQueryClient();
  const [state, setState] = useState<{
    running: boolean;
    peers: string[];
    results: SweepResult[];
    finishedAt: string | null;
    error: unknown;
    stopped: string | null;
  }>({
    running: false,
    peers: [],
    results: [],
    finishedAt: null,
    error: null,
    stopped: null,
  });

  const start = async () => {
    setState({ running: true, peers: [], results: [], finishedAt: null, error: null, stopped: null });
    let finished = false;
    try {
      await runSweep((line) => {
        if (line.type === 'start') setState((s) => ({ ...s, peers: line.peers }));
        else if (line.type === 'result') {
          const { type: _type, ...result } = line;
          setState((s) => ({ ...s, results: [...s.results, result] }));
        } else if (line.type === 'done') {
          finished = true;
          setState((s) => ({ ...s, finishedAt: line.finishedAt }));
        } else if (line.type === 'error') {
          finished = true;
          setState((s) => ({ ...s, stopped: line.message }));
        }
      });
      // A stream that ends without its done line (a dropped connection, a proxy timeout) is not a finished sweep.
      setState((s) => ({
        ...s,
        running: false,
        stopped: finished
          ? s.stopped
          : 'The connection closed before the sweep finished. The results above stand; peers without a result may not have been pinged.',
      }));
    } catch (error) {
      setState((s) => ({ ...s, running: false, error }));
    }
    // The pings are outbound attempts now (also those of a sweep that stopped): the rollup changed.
    void queryClient.invalidateQueries({ queryKey: ['staff', 'mesh-health'] });
  };

  const prefix = self.data?.selfName ?? 'rampart';
  const exportAs = (ext: 'csv' | 'json') => {
    const at = new Date();
    const name = exportFileName(prefix, 'mesh-check-results', ext, at);
    if (ext === 'csv') downloadFile(name, buildCsv(MESH_CHECK_COLUMNS, sweepRows(state.results)), 'text/csv');
    else
      downloadFile(
        name,
        buildJson('mesh-check-results', prefix, state.results, { finishedAt: state.finishedAt }, at),
        'application/json',
      );
  };
  const ok = state.results.filter((r) => r.ok).length;
  const started = state.running || state.results.length > 0 || state.finishedAt !== null;

  return (
    <SectionCard
      headingId="mesh-sweep"
      title="Health sweep"
      description="A signed ping to every configured peer at once (one attempt each, 5 s timeout). Each ping is stored as an outbound attempt with flow ping; results appear as they arrive."
    >
      <Group gap="sm" wrap="wrap">
        <Button onClick={() => void start()} loading={state.running} disabled={state.running}>
          Run health sweep
        </Button>
        <Button variant="default" disabled={!state.results.length || state.running} onClick={() => exportAs('csv')}>
          Export results as CSV
        </Button>
        <Button variant="default" disabled={!state.results.length || state.running} onClick={() => exportAs('json')}>
          Export results as JSON
        </Button>
      </Group>
      {state.error !== null && <ErrorAlert error={state.error} title="The sweep could not run" />}
      {state.stopped !== null && (
        <Alert color="red" variant="light" role="alert" title="The sweep stopped before it finished">
          {state.stopped}
        </Alert>
      )}
      <Text size="sm" role="status" aria-live="polite">
        {started
          ? state.running
            ? `Sweep running: ${state.results.length} of ${state.peers.length || '…'} peers answered.`
            : state.finishedAt !== null && state.peers.length === 0 && state.stopped === null
              ? 'No peers configured: there was nothing to ping.'
              : state.stopped !== null
                ? `Sweep stopped: ${state.results.length} of ${state.peers.length} peers answered, ${ok} OK.`
                : `Sweep finished: ${ok} of ${state.results.length} peers OK.`
          : ''}
      </Text>
      {started && (
        <DataTable
          label="Sweep results"
          minWidth={860}
          columns={['Peer', 'Outcome', 'Result', 'HTTP', { label: 'Duration', align: 'right' }, 'Request id']}
          empty={
            state.results.length
              ? undefined
              : state.peers.length === 0 && !state.running
                ? 'No peers configured.'
                : 'Waiting for the first answer…'
          }
        >
          {state.results.map((r) => (
            <Table.Tr key={r.peer}>
              <Table.Td>
                <Text size="sm" fw={500}>
                  {r.peer}
                </Text>
              </Table.Td>
              <Table.Td>
                <Badge variant="light" color={OUTCOME_COLOR[r.outcome]}>
                  {OUTCOME_LABEL[r.outcome]}
                </Badge>
              </Table.Td>
              <Table.Td>
                <Text size="sm" style={{ wordBreak: 'break-word' }}>
                  {r.label}
                </Text>
              </Table.Td>
              <Table.Td>
                <HttpStatusBadge status={r.httpStatus} />
              </Table.Td>
              <Table.Td ta="right" className="nowrap">
                {formatDuration(r.durationMs)}
              </Table.Td>
              <Table.Td>
                <Cell value={r.requestId} mono />
              </Table.Td>
            </Table.Tr>
          ))}
        </DataTable>
      )}
      {!state.running && state.finishedAt && state.results.some((r) => r.outcome === 'route_not_deployed') && (
        <Alert color="yellow" variant="light" role="note" title="Route not deployed">
          A peer answered 200 with an HTML page: its dispatch route is not deployed at the configured URL, so that is
          not a live mesh leg. Check its SVC_PEER_URL_* (a URL with a path other than the dispatch path is used as the
          complete transport URL).
        </Alert>
      )}
    </SectionCard>
  );
}
