// One list of mesh records: a table with a "Details" button per row (a dialog with every field
// and the JSON the record carries), cursor pagination ("Load more"), and readable empty states.
import { Badge, Button, Code, Modal, Paper, Stack, Table, Text } from '@mantine/core';
import type { InfiniteData, UseInfiniteQueryResult } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { DataTable, type Column } from '../../components/DataTable.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** Local date and time to the second (mesh records are seconds apart). */
export function formatInstant(value: string | null | undefined): string {
  if (!value) return '—';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? '—' : dateTime.format(d);
}

export function formatDuration(ms: number): string {
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms).toLocaleString()} ms`;
}

/** The colour of an event severity; the badge text says the severity itself. */
export function severityColor(severity: string | null): string {
  switch (severity) {
    case 'critical':
    case 'error':
      return 'red';
    case 'high':
      return 'orange';
    case 'medium':
    case 'warning':
      return 'yellow';
    case 'low':
      return 'blue';
    default:
      return 'gray';
  }
}

export function SeverityBadge({ severity }: { severity: string | null }) {
  if (!severity)
    return (
      <Text span size="sm" c="dimmed">
        —
      </Text>
    );
  return (
    <Badge variant="light" color={severityColor(severity)}>
      {severity}
    </Badge>
  );
}

/** An HTTP status: green 2xx, blue 3xx, orange 4xx, red 5xx; "No answer" when there was none. */
export function HttpStatusBadge({ status }: { status: number | null }) {
  if (status === null)
    return (
      <Badge variant="outline" color="gray">
        No answer
      </Badge>
    );
  const color = status < 300 ? 'green' : status < 400 ? 'blue' : status < 500 ? 'orange' : 'red';
  return (
    <Badge variant="light" color={color} title={`HTTP ${status}`}>
      {status}
    </Badge>
  );
}

export function OkBadge({ ok }: { ok: boolean }) {
  return (
    <Badge variant="light" color={ok ? 'green' : 'red'}>
      {ok ? 'OK' : 'Failed'}
    </Badge>
  );
}

/** A value shown in a cell, or a dimmed dash when there is none. */
export function Cell({ value, mono }: { value: ReactNode; mono?: boolean }) {
  if (value === null || value === undefined || value === '')
    return (
      <Text span size="sm" c="dimmed">
        —
      </Text>
    );
  return (
    <Text span size="sm" ff={mono ? 'monospace' : undefined} style={{ wordBreak: 'break-word' }}>
      {value}
    </Text>
  );
}

export interface RecordDetails {
  title: string;
  rows: [string, ReactNode][];
  /** The record's JSON (event data, peer answer), shown below the fields. */
  json?: { label: string; value: unknown };
}

export interface Paged {
  entries: unknown[];
}
type EntryOf<P extends Paged> = P['entries'][number];

/**
 * One column of a records table: its header and its cell. `text` and `mono` show a value (a dash
 * when there is none); `content` renders anything, e.g. a badge.
 */
export type RecordColumn<E> = (Column & { nowrap?: boolean }) &
  ({ text: (entry: E) => ReactNode; mono?: boolean } | { content: (entry: E) => ReactNode });

function RecordCell<E>({ column, entry }: { column: RecordColumn<E>; entry: E }) {
  return (
    <Table.Td ta={column.align} className={column.nowrap ? 'nowrap' : undefined}>
      {'text' in column ? <Cell value={column.text(entry)} mono={column.mono} /> : column.content(entry)}
    </Table.Td>
  );
}

export interface MeshRecordsListProps<P extends Paged, E = EntryOf<P>> {
  query: UseInfiniteQueryResult<InfiniteData<P>, Error>;
  /** Names the table for assistive technology, e.g. "Received events". */
  label: string;
  /** Lower-case plural for messages, e.g. "received events". */
  noun: string;
  /** Its singular, e.g. "received event". */
  nounOne: string;
  minWidth: number;
  columns: RecordColumn<E>[];
  filtered: boolean;
  /** Shown when there are no records at all. */
  emptyMessage: string;
  rowKey: (entry: E) => string | number;
  /** Accessible name of the row's Details button, e.g. "Details of ping at 12:00:01". */
  detailsLabel: (entry: E) => string;
  details: (entry: E) => RecordDetails;
}

export function MeshRecordsList<P extends Paged>(props: MeshRecordsListProps<P>) {
  const { query, label, noun, filtered } = props;
  const [open, setOpen] = useState<EntryOf<P> | null>(null);
  if (query.isPending) return <LoadingState label={`Loading ${noun}…`} />;
  if (!query.data)
    return <ErrorState error={query.error} title={`Could not load ${noun}`} onRetry={() => void query.refetch()} />;

  const entries: EntryOf<P>[] = query.data.pages.flatMap((p) => p.entries);
  if (entries.length === 0)
    return (
      <Paper withBorder p="xl" radius="md">
        <Text ta="center" c="dimmed">
          {filtered ? `No ${noun} match these filters.` : props.emptyMessage}
        </Text>
      </Paper>
    );

  const details = open === null ? null : props.details(open);
  return (
    <Stack gap="md">
      <Paper withBorder radius="md">
        {/* The Details column has a visible header: a visually hidden one is absolutely positioned
            outside the table's scroll box and widens the whole page on a phone. */}
        <DataTable
          label={label}
          minWidth={props.minWidth}
          striped
          columns={[
            ...props.columns.map(({ label, align }) => ({ label, align })),
            { label: 'Details', align: 'right' },
          ]}
        >
          {entries.map((e) => (
            <Table.Tr key={props.rowKey(e)}>
              {props.columns.map((c) => (
                <RecordCell key={c.label} column={c} entry={e} />
              ))}
              <Table.Td ta="right">
                <Button
                  size="compact-xs"
                  variant="subtle"
                  aria-label={props.detailsLabel(e)}
                  onClick={() => setOpen(e)}
                >
                  Details
                </Button>
              </Table.Td>
            </Table.Tr>
          ))}
        </DataTable>
      </Paper>
      <Stack gap="xs" align="center">
        <Text size="sm" c="dimmed" aria-live="polite" ta="center">
          {entries.length} {entries.length === 1 ? props.nounOne : noun} shown, newest first
          {query.hasNextPage ? '' : `. No older ${noun}.`}
        </Text>
        {query.hasNextPage && (
          <Button variant="default" loading={query.isFetchingNextPage} onClick={() => void query.fetchNextPage()}>
            Load more
          </Button>
        )}
      </Stack>
      {query.isError && <ErrorState error={query.error} title={`Could not load more ${noun}`} />}
      <Modal
        opened={open !== null}
        onClose={() => setOpen(null)}
        title={details?.title ?? ''}
        size="lg"
        closeButtonProps={{ 'aria-label': 'Close details' }}
      >
        {details && <DetailsBody details={details} />}
      </Modal>
    </Stack>
  );
}

function DetailsBody({ details }: { details: RecordDetails }) {
  const json = details.json;
  return (
    <Stack gap="md">
      <Table variant="vertical" layout="fixed" withTableBorder>
        <Table.Tbody>
          {details.rows.map(([k, v]) => (
            <Table.Tr key={k}>
              <Table.Th w={130}>{k}</Table.Th>
              <Table.Td style={{ wordBreak: 'break-word' }}>
                {v === null || v === undefined || v === '' ? '—' : v}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {json && (
        <Stack gap={4}>
          <Text size="sm" fw={600}>
            {json.label}
          </Text>
          {json.value === null || json.value === undefined ? (
            <Text size="sm" c="dimmed">
              None
            </Text>
          ) : (
            // Wrapped rather than scrolled sideways, so it reads on a phone.
            <Code block style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
              {JSON.stringify(json.value, null, 2)}
            </Code>
          )}
        </Stack>
      )}
    </Stack>
  );
}
