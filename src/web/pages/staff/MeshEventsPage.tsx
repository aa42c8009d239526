// Staff → Mesh records: what the service mesh stored, read-only. Four tabs: events peers reported
// to us, inbound dispatch calls, outbound attempts and the outbox. One panel (filters, export, a
// table with "Load more" and a details dialog) is driven by each tab's description below: its
// filter fields, query and columns. The active tab is in the URL (?tab=), the filters stay per tab.
// Over 500 lines on purpose: one panel driven by four tab descriptions; the descriptions are data and read best next
// to the panel they drive.
import { Badge, Button, Group, Tabs, Text } from '@mantine/core';
import {
  useInfiniteQuery,
  useQuery,
  type InfiniteData,
  type QueryKey,
  type UseInfiniteQueryOptions,
} from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useMemo, useState, type ReactNode } from 'react';
import { PageHeader } from '../../components/PageHeader.tsx';
import { meshInboundQuery, meshOutboundQuery, meshOutboxQuery, meshReceivedQuery } from '../../lib/staff-api.ts';
import {
  buildCsv,
  buildJson,
  downloadFile,
  exportFileName,
  OPERATIONS_LOG_COLUMNS,
  operationsLogItems,
  operationsLogRows,
} from '../../lib/csv-export.ts';
import { meshSelfQuery } from '../../lib/mesh-health-api.ts';
import type {
  MeshInboundFilters,
  MeshOutboundFilters,
  MeshOutboxFilters,
  MeshReceivedFilters,
} from '../../lib/types.ts';
import type { FormErrors } from '../../lib/use-form.ts';
import {
  compact,
  dateRange,
  emptyInputs,
  MeshFilters,
  textValue,
  type FilterField,
  type FilterInputs,
} from './MeshFilters.tsx';
import {
  Cell,
  formatDuration,
  formatInstant,
  HttpStatusBadge,
  MeshRecordsList,
  OkBadge,
  SeverityBadge,
  type MeshRecordsListProps,
  type Paged,
} from './MeshRecordsList.tsx';

export const MESH_TABS = ['received', 'inbound', 'outbound', 'outbox'] as const;
export type MeshTab = (typeof MESH_TABS)[number];

export interface MeshEventsSearch {
  tab?: MeshTab;
}

export function isMeshTab(value: unknown): value is MeshTab {
  return typeof value === 'string' && (MESH_TABS as readonly string[]).includes(value);
}

const DATE_FIELDS: FilterField[] = [
  { name: 'fromDate', label: 'From date', type: 'date' },
  { name: 'toDate', label: 'To date', type: 'date' },
];

const SEVERITIES = ['critical', 'high', 'medium', 'low', 'warning', 'error', 'info'];

const RECEIVED_FIELDS: FilterField[] = [
  { name: 'caller', label: 'Caller', type: 'text', placeholder: 'Peer name' },
  { name: 'kind', label: 'Kind prefix', type: 'text', placeholder: 'e.g. finding.' },
  {
    name: 'severity',
    label: 'Severity',
    type: 'select',
    options: [{ value: '', label: 'Any severity' }, ...SEVERITIES.map((s) => ({ value: s, label: s }))],
  },
  ...DATE_FIELDS,
];

const INBOUND_FIELDS: FilterField[] = [
  { name: 'caller', label: 'Caller', type: 'text', placeholder: 'Peer name' },
  { name: 'flow', label: 'Flow', type: 'text', placeholder: 'e.g. ping' },
  { name: 'status', label: 'HTTP status', type: 'text', placeholder: 'e.g. 401', inputMode: 'numeric' },
  { name: 'errorCode', label: 'Error code', type: 'text', placeholder: 'e.g. bad_signature' },
  ...DATE_FIELDS,
];

const OUTBOUND_FIELDS: FilterField[] = [
  { name: 'peer', label: 'Peer', type: 'text', placeholder: 'Peer name' },
  { name: 'flow', label: 'Flow', type: 'text', placeholder: 'e.g. event_report' },
  {
    name: 'ok',
    label: 'Result',
    type: 'select',
    options: [
      { value: '', label: 'Any result' },
      { value: 'true', label: 'OK' },
      { value: 'false', label: 'Failed' },
    ],
  },
  { name: 'requestId', label: 'Request id', type: 'text', placeholder: 'x-svc-request-id' },
  ...DATE_FIELDS,
];

const OUTBOX_FIELDS: FilterField[] = [
  {
    name: 'status',
    label: 'Status',
    type: 'select',
    options: [
      { value: '', label: 'Any status' },
      { value: 'pending', label: 'Pending' },
      { value: 'delivered', label: 'Delivered' },
      { value: 'failed', label: 'Failed' },
    ],
  },
  { name: 'peer', label: 'Peer', type: 'text', placeholder: 'Peer name' },
];

interface PanelProps {
  inputs: FilterInputs;
  onApply: (inputs: FilterInputs) => void;
}

export function MeshEventsPage({ search }: { search: MeshEventsSearch }) {
  const navigate = useNavigate();
  const tab = search.tab ?? 'received';
  const [inputs, setInputs] = useState<Record<MeshTab, FilterInputs>>(() => ({
    received: emptyInputs(TABS.received.fields),
    inbound: emptyInputs(TABS.inbound.fields),
    outbound: emptyInputs(TABS.outbound.fields),
    outbox: emptyInputs(TABS.outbox.fields),
  }));

  return (
    <>
      <PageHeader
        title="Mesh records"
        titleContext="Staff"
        description="What the service mesh stored on this server: events peers reported to us, every inbound dispatch call, every outbound attempt, and the outbox of events to send. Read-only; inbound and outbound records are kept for 90 days."
      />
      <Tabs
        value={tab}
        keepMounted={false}
        onChange={(value) => {
          if (isMeshTab(value))
            void navigate({
              to: '/settings/staff/mesh',
              search: { tab: value === 'received' ? undefined : value },
              replace: true,
            });
        }}
      >
        <Tabs.List aria-label="Mesh record types" mb="md">
          {MESH_TABS.map((t) => (
            <Tabs.Tab key={t} value={t}>
              {TABS[t].title}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        {MESH_TABS.map((t) => (
          <Tabs.Panel key={t} value={t}>
            {TABS[t].panel({ inputs: inputs[t], onApply: (v) => setInputs((prev) => ({ ...prev, [t]: v })) })}
          </Tabs.Panel>
        ))}
      </Tabs>
    </>
  );
}

/** What describes one tab: its filter form, how its inputs become the query, and its records list. */
type TabSpec<F extends object, P extends Paged, K extends QueryKey, C> = Omit<
  MeshRecordsListProps<P>,
  'query' | 'filtered'
> & {
  /** The tab's title. */
  title: string;
  /** Names the filter region, e.g. "Filters for received events". */
  filtersLabel: string;
  fields: FilterField[];
  validate?: (values: FilterInputs) => FormErrors<FilterInputs>;
  /** The query filters of the applied inputs (a stable function: it is a memo dependency). */
  toFilters: (inputs: FilterInputs) => F;
  queryOptions: (filters: F) => UseInfiniteQueryOptions<P, Error, InfiniteData<P>, K, C>;
  /** Which records these are, for the operations-log export. */
  exportKind: MeshTab;
};

/** A tab as the page uses it, whatever its record type. */
interface Tab {
  title: string;
  fields: FilterField[];
  panel: (props: PanelProps) => ReactNode;
}

function tab<F extends object, P extends Paged, K extends QueryKey, C>(spec: TabSpec<F, P, K, C>): Tab {
  return { title: spec.title, fields: spec.fields, panel: (props) => <MeshTabPanel {...props} {...spec} /> };
}

/** The one panel: filters above the export bar and the records list. */
function MeshTabPanel<F extends object, P extends Paged, K extends QueryKey, C>({
  inputs,
  onApply,
  title: _title,
  filtersLabel,
  fields,
  validate,
  toFilters,
  queryOptions,
  exportKind,
  ...list
}: PanelProps & TabSpec<F, P, K, C>) {
  const filters = useMemo(() => toFilters(inputs), [toFilters, inputs]);
  const query = useInfiniteQuery(queryOptions(filters));
  return (
    <>
      <MeshFilters label={filtersLabel} fields={fields} initial={inputs} onApply={onApply} validate={validate} />
      <ExportBar
        kind={exportKind}
        filters={filters}
        entries={query.data?.pages.flatMap((p) => p.entries) ?? []}
        noun={list.noun}
      />
      <MeshRecordsList query={query} filtered={Object.keys(filters).length > 0} {...list} />
    </>
  );
}

/** A flow with the event type it carried, if any. */
function FlowCell({ flow, eventType }: { flow: string | null; eventType?: string | null }) {
  return (
    <>
      <Cell value={flow} mono />
      {eventType && (
        <Text size="xs" c="dimmed" ff="monospace" style={{ wordBreak: 'break-word' }}>
          {eventType}
        </Text>
      )}
    </>
  );
}

function receivedFilters(inputs: FilterInputs) {
  return compact<MeshReceivedFilters>({
    caller: textValue(inputs, 'caller'),
    kind: textValue(inputs, 'kind'),
    severity: textValue(inputs, 'severity'),
    ...dateRange(inputs),
  });
}

function validateInbound(v: FilterInputs) {
  const status = (v['status'] ?? '').trim();
  return { status: status && !/^[1-5]\d\d$/.test(status) ? 'Enter an HTTP status from 100 to 599' : null };
}

function inboundFilters(inputs: FilterInputs) {
  const status = textValue(inputs, 'status');
  return compact<MeshInboundFilters>({
    caller: textValue(inputs, 'caller'),
    flow: textValue(inputs, 'flow'),
    status: status === undefined ? undefined : Number(status),
    errorCode: textValue(inputs, 'errorCode'),
    ...dateRange(inputs),
  });
}

function outboundFilters(inputs: FilterInputs) {
  const ok = inputs['ok'];
  return compact<MeshOutboundFilters>({
    peer: textValue(inputs, 'peer'),
    flow: textValue(inputs, 'flow'),
    ok: ok === 'true' || ok === 'false' ? ok : undefined,
    requestId: textValue(inputs, 'requestId'),
    ...dateRange(inputs),
  });
}

const OUTBOX_STATUS: Record<string, { label: string; color: string }> = {
  pending: { label: 'Pending', color: 'blue' },
  delivered: { label: 'Delivered', color: 'green' },
  failed: { label: 'Failed', color: 'red' },
};

function outboxFilters(inputs: FilterInputs) {
  const status = inputs['status'];
  return compact<MeshOutboxFilters>({
    status: status === 'pending' || status === 'delivered' || status === 'failed' ? status : undefined,
    peer: textValue(inputs, 'peer'),
  });
}

function OutboxStatusBadge({ status }: { status: string }) {
  const s = OUTBOX_STATUS[status] ?? { label: status, color: 'gray' };
  return (
    <Badge variant="light" color={s.color}>
      {s.label}
    </Badge>
  );
}

const TABS: Record<MeshTab, Tab> = {
  received: tab({
    title: 'Received events',
    filtersLabel: 'Filters for received events',
    exportKind: 'received',
    fields: RECEIVED_FIELDS,
    toFilters: receivedFilters,
    queryOptions: meshReceivedQuery,
    label: 'Received events',
    noun: 'received events',
    nounOne: 'received event',
    minWidth: 880,
    columns: [
      { label: 'Received', nowrap: true, content: (e) => formatInstant(e.receivedAt) },
      { label: 'Caller', text: (e) => e.caller },
      { label: 'Kind', text: (e) => e.kind, mono: true },
      { label: 'Severity', content: (e) => <SeverityBadge severity={e.severity} /> },
      {
        label: 'Title',
        content: (e) => (
          <>
            <Text size="sm" fw={500} style={{ wordBreak: 'break-word' }}>
              {e.title}
            </Text>
            {e.detail && (
              <Text size="xs" c="dimmed" lineClamp={2}>
                {e.detail}
              </Text>
            )}
          </>
        ),
      },
    ],
    emptyMessage:
      'No events received yet. Events that mesh peers report to this server (the event_report flow) appear here.',
    rowKey: (e) => e.id,
    detailsLabel: (e) => `Details of ${e.kind} from ${e.caller} at ${formatInstant(e.receivedAt)}`,
    details: (e) => ({
      title: 'Received event',
      rows: [
        ['Received', formatInstant(e.receivedAt)],
        ['Occurred', e.occurredAt ? formatInstant(e.occurredAt) : null],
        ['Caller', e.caller],
        ['Kind', e.kind],
        ['Severity', e.severity],
        ['Title', e.title],
        ['Detail', e.detail],
        ['Brand', e.brand],
        ['Request id', e.requestId],
        ['Event id', e.id],
      ],
      json: { label: 'Data', value: e.data },
    }),
  }),
  inbound: tab({
    title: 'Inbound calls',
    filtersLabel: 'Filters for inbound calls',
    exportKind: 'inbound',
    fields: INBOUND_FIELDS,
    validate: validateInbound,
    toFilters: inboundFilters,
    queryOptions: meshInboundQuery,
    label: 'Inbound calls',
    noun: 'inbound calls',
    nounOne: 'inbound call',
    minWidth: 900,
    columns: [
      { label: 'Received', nowrap: true, content: (e) => formatInstant(e.receivedAt) },
      {
        label: 'Caller',
        content: (e) =>
          e.caller ? (
            <Cell value={e.caller} />
          ) : (
            <Text span size="sm" c="dimmed">
              Unknown
            </Text>
          ),
      },
      { label: 'Flow', text: (e) => e.flow, mono: true },
      { label: 'Status', content: (e) => <HttpStatusBadge status={e.status} /> },
      { label: 'Error code', text: (e) => e.errorCode, mono: true },
      { label: 'Duration', align: 'right', nowrap: true, content: (e) => formatDuration(e.durationMs) },
      {
        label: 'Checks',
        content: (e) => (
          <Group gap={6} wrap="wrap">
            <Badge variant={e.verified ? 'light' : 'outline'} color={e.verified ? 'green' : 'gray'}>
              {e.verified ? 'Verified' : 'Not verified'}
            </Badge>
            {e.replayed && (
              <Badge variant="light" color="blue" title="Answered from the idempotency record of an earlier call">
                Replayed
              </Badge>
            )}
          </Group>
        ),
      },
    ],
    emptyMessage: "No inbound calls yet. Every call to this server's mesh dispatch route, signed or not, appears here.",
    rowKey: (e) => e.id,
    detailsLabel: (e) => `Details of inbound call ${e.id} at ${formatInstant(e.receivedAt)}`,
    details: (e) => ({
      title: 'Inbound call',
      rows: [
        ['Received', formatInstant(e.receivedAt)],
        ['Caller', e.caller ?? 'Unknown'],
        ['Flow', e.flow],
        ['HTTP status', String(e.status)],
        ['Error code', e.errorCode],
        ['Duration', formatDuration(e.durationMs)],
        ['Signature', e.verified ? 'Verified' : 'Not verified'],
        ['Replayed', e.replayed ? 'Yes, answered from the idempotency record' : 'No'],
        ['Request id', e.requestId],
        ['Record id', String(e.id)],
      ],
    }),
  }),
  outbound: tab({
    title: 'Outbound attempts',
    filtersLabel: 'Filters for outbound attempts',
    exportKind: 'outbound',
    fields: OUTBOUND_FIELDS,
    toFilters: outboundFilters,
    queryOptions: meshOutboundQuery,
    label: 'Outbound attempts',
    noun: 'outbound attempts',
    nounOne: 'outbound attempt',
    minWidth: 960,
    columns: [
      { label: 'Time', nowrap: true, content: (e) => formatInstant(e.createdAt) },
      { label: 'Peer', text: (e) => e.peer },
      { label: 'Flow', content: (e) => <FlowCell flow={e.flow} eventType={e.eventType} /> },
      { label: 'Result', content: (e) => <OkBadge ok={e.ok} /> },
      { label: 'HTTP', content: (e) => <HttpStatusBadge status={e.httpStatus} /> },
      { label: 'Attempt', align: 'right', content: (e) => e.attempt },
      { label: 'Duration', align: 'right', nowrap: true, content: (e) => formatDuration(e.durationMs) },
      { label: 'Error', text: (e) => e.error, mono: true },
    ],
    emptyMessage:
      'No outbound attempts yet. Every call this server makes to a mesh peer, each retry included, appears here.',
    rowKey: (e) => e.id,
    detailsLabel: (e) => `Details of ${e.flow} attempt ${e.attempt} to ${e.peer} at ${formatInstant(e.createdAt)}`,
    details: (e) => ({
      title: 'Outbound attempt',
      rows: [
        ['Time', formatInstant(e.createdAt)],
        ['Peer', e.peer],
        ['Flow', e.flow],
        ['Event type', e.eventType],
        ['Severity', e.severity],
        ['Result', e.ok ? 'OK' : 'Failed'],
        ['HTTP status', e.httpStatus === null ? 'No answer' : String(e.httpStatus)],
        ['Attempt', String(e.attempt)],
        ['Duration', formatDuration(e.durationMs)],
        ['Error', e.error],
        ['Request id', e.requestId],
        ['Record id', String(e.id)],
      ],
      json: { label: 'Response', value: e.response },
    }),
  }),
  outbox: tab({
    title: 'Outbox',
    filtersLabel: 'Filters for the outbox',
    exportKind: 'outbox',
    fields: OUTBOX_FIELDS,
    toFilters: outboxFilters,
    queryOptions: meshOutboxQuery,
    label: 'Outbox',
    noun: 'outbox entries',
    nounOne: 'outbox entry',
    minWidth: 900,
    columns: [
      { label: 'Created', nowrap: true, content: (e) => formatInstant(e.createdAt) },
      { label: 'Peer', text: (e) => e.peer },
      { label: 'Event', content: (e) => <FlowCell flow={e.flow} eventType={e.eventType} /> },
      {
        label: 'Company',
        text: (e) => (e.companyName ? `${e.companyName}${e.cageCode ? ` (${e.cageCode})` : ''}` : null),
      },
      { label: 'Status', content: (e) => <OutboxStatusBadge status={e.status} /> },
      { label: 'Attempts', align: 'right', content: (e) => e.attempts },
      {
        label: 'Next attempt or delivered',
        nowrap: true,
        content: (e) =>
          e.status === 'delivered'
            ? `Delivered ${formatInstant(e.deliveredAt)}`
            : e.status === 'pending'
              ? `Next ${formatInstant(e.nextAttemptAt)}`
              : '—',
      },
      { label: 'Last error', text: (e) => e.lastError, mono: true },
    ],
    emptyMessage: 'The outbox is empty. Events this server reports to mesh peers wait here until they are delivered.',
    rowKey: (e) => e.id,
    detailsLabel: (e) => `Details of outbox entry ${e.id} for ${e.peer}`,
    details: (e) => ({
      title: 'Outbox entry',
      rows: [
        ['Created', formatInstant(e.createdAt)],
        ['Peer', e.peer],
        ['Flow', e.flow],
        ['Event type', e.eventType],
        ['Severity', e.severity],
        ['Company', e.companyName],
        ['CAGE code', e.cageCode],
        ['Status', OUTBOX_STATUS[e.status]?.label ?? e.status],
        ['Failed', e.failedAt ? formatInstant(e.failedAt) : null],
        ['Sent again', e.resentAt ? `${formatInstant(e.resentAt)} (${e.resendCount}×)` : null],
        ['Earlier request ids', e.previousRequestIds.length ? e.previousRequestIds.join(', ') : null],
        ['Attempts', String(e.attempts)],
        ['Next attempt', e.status === 'pending' ? formatInstant(e.nextAttemptAt) : null],
        ['Delivered', e.deliveredAt ? formatInstant(e.deliveredAt) : null],
        ['Last error', e.lastError],
        ['Request id', e.requestId],
        ['Entry id', String(e.id)],
      ],
    }),
  }),
};

/**
 * The operations-log export of this tab: the records loaded so far (with the applied filters), as
 * CSV or JSON built in the browser, named <SVC_SELF_NAME>-operations-log-<YYYYMMDD>-<HHMMSS>.
 */
function ExportBar({
  kind,
  filters,
  entries,
  noun,
}: {
  kind: MeshTab;
  filters: object;
  entries: unknown[];
  noun: string;
}) {
  const self = useQuery(meshSelfQuery);
  const prefix = self.data?.selfName ?? 'rampart';
  const exportAs = (ext: 'csv' | 'json') => {
    const at = new Date();
    const name = exportFileName(prefix, 'operations-log', ext, at);
    if (ext === 'csv')
      downloadFile(
        name,
        buildCsv(
          OPERATIONS_LOG_COLUMNS,
          operationsLogRows({ [kind]: entries } as Parameters<typeof operationsLogRows>[0]),
        ),
        'text/csv',
      );
    else
      downloadFile(
        name,
        buildJson(
          'operations-log',
          prefix,
          operationsLogItems(kind, entries as object[]),
          { records: kind, filters },
          at,
        ),
        'application/json',
      );
  };
  return (
    <Group gap="sm" mb="sm" justify="flex-end" wrap="wrap">
      <Text size="xs" c="dimmed">
        Exports the {noun} loaded below.
      </Text>
      <Button
        size="xs"
        variant="default"
        disabled={!entries.length}
        onClick={() => exportAs('csv')}
        aria-label={`Export CSV of the loaded ${noun}`}
      >
        Export CSV
      </Button>
      <Button
        size="xs"
        variant="default"
        disabled={!entries.length}
        onClick={() => exportAs('json')}
        aria-label={`Export JSON of the loaded ${noun}`}
      >
        Export JSON
      </Button>
    </Group>
  );
}
