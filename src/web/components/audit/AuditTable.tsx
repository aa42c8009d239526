// Audit entries with cursor pagination ("Load more"), shared by the tenant and staff views.
import { Button, Code, Modal, Paper, Stack, Table, Text } from '@mantine/core';
import type { InfiniteData, UseInfiniteQueryResult } from '@tanstack/react-query';
import { useState } from 'react';
import { formatDateTime } from '../../lib/format.ts';
import type { AuditEntry, AuditPage } from '../../lib/types.ts';
import { DataTable } from '../DataTable.tsx';
import { ErrorState, LoadingState } from '../QueryStates.tsx';

interface AuditTableProps {
  query: UseInfiniteQueryResult<InfiniteData<AuditPage>, Error>;
  showTenant?: boolean;
  filtered: boolean;
}

const FAILURE_RE = /failed|denied|forbidden|rejected/;

function target(entry: AuditEntry): string {
  if (!entry.targetType) return '—';
  return entry.targetId ? `${entry.targetType} ${entry.targetId}` : entry.targetType;
}

/** "invitation 7012ff98…" — the full id is in the details dialog. */
function shortTarget(entry: AuditEntry): string {
  if (!entry.targetType) return '—';
  if (!entry.targetId) return entry.targetType;
  const id = entry.targetId.length > 12 ? `${entry.targetId.slice(0, 8)}…` : entry.targetId;
  return `${entry.targetType} ${id}`;
}

export function AuditTable({ query, showTenant, filtered }: AuditTableProps) {
  const [open, setOpen] = useState<AuditEntry | null>(null);
  if (query.isPending) return <LoadingState label="Loading the audit log…" />;
  if (!query.data)
    return <ErrorState error={query.error} title="Could not load the audit log" onRetry={() => void query.refetch()} />;

  const entries = query.data.pages.flatMap((p) => p.entries);
  if (entries.length === 0)
    return (
      <Paper withBorder p="xl" radius="md">
        <Text ta="center" c="dimmed">
          {filtered
            ? 'No entries match these filters.'
            : 'No audit entries yet. Sign-ins, member changes and settings changes appear here.'}
        </Text>
      </Paper>
    );

  return (
    <Stack gap="md">
      <Paper withBorder radius="md">
        <DataTable
          label="Audit log entries"
          minWidth={showTenant ? 920 : 800}
          striped
          columns={[
            'Time',
            showTenant && 'Tenant',
            'Actor',
            'Action',
            'Target',
            'IP address',
            { label: 'Details', visuallyHidden: true },
          ]}
        >
          {entries.map((e) => (
            <Table.Tr key={e.id}>
              <Table.Td className="nowrap">{formatDateTime(e.createdAt)}</Table.Td>
              {showTenant && (
                <Table.Td>
                  {e.tenantName ??
                    (e.tenantId ? (
                      e.tenantId
                    ) : (
                      <Text c="dimmed" size="sm">
                        Platform
                      </Text>
                    ))}
                </Table.Td>
              )}
              <Table.Td>
                {e.actorEmail ?? e.actorUserId ?? (
                  <Text c="dimmed" size="sm">
                    System
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                <Text
                  size="sm"
                  ff="monospace"
                  fw={600}
                  c={FAILURE_RE.test(e.action) ? 'var(--mantine-color-error)' : undefined}
                >
                  {e.action}
                </Text>
              </Table.Td>
              <Table.Td>
                <Text size="sm" title={target(e)}>
                  {shortTarget(e)}
                </Text>
              </Table.Td>
              <Table.Td className="nowrap">{e.ipAddress ?? '—'}</Table.Td>
              <Table.Td ta="right">
                <Button
                  size="compact-xs"
                  variant="subtle"
                  aria-label={`Details of ${e.action} at ${formatDateTime(e.createdAt)}`}
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
        <Text size="sm" c="dimmed" aria-live="polite">
          {entries.length} {entries.length === 1 ? 'entry' : 'entries'} shown, newest first
          {query.hasNextPage ? '' : '. End of the audit log.'}
        </Text>
        {query.hasNextPage && (
          <Button variant="default" loading={query.isFetchingNextPage} onClick={() => void query.fetchNextPage()}>
            Load more
          </Button>
        )}
      </Stack>
      {query.isError && <ErrorState error={query.error} title="Could not load more entries" />}
      <Modal
        opened={open !== null}
        onClose={() => setOpen(null)}
        title="Audit entry"
        size="lg"
        closeButtonProps={{ 'aria-label': 'Close audit entry' }}
      >
        {open && <EntryDetails entry={open} />}
      </Modal>
    </Stack>
  );
}

function EntryDetails({ entry }: { entry: AuditEntry }) {
  const rows: [string, string][] = [
    ['Time', formatDateTime(entry.createdAt)],
    ['Action', entry.action],
    ['Actor', [entry.actorEmail, entry.actorUserId].filter(Boolean).join(' · ') || 'System'],
    ['Tenant', entry.tenantName ?? entry.tenantId ?? 'Platform'],
    ['Target', target(entry)],
    ['IP address', entry.ipAddress ?? '—'],
    ['User agent', entry.userAgent ?? '—'],
    ['Request id', entry.requestId ?? '—'],
  ];
  const hasDetails = Object.keys(entry.details).length > 0;
  return (
    <Stack gap="md">
      <Table variant="vertical" layout="fixed" withTableBorder>
        <Table.Tbody>
          {rows.map(([k, v]) => (
            <Table.Tr key={k}>
              <Table.Th w={120}>{k}</Table.Th>
              <Table.Td style={{ wordBreak: 'break-word' }}>{v}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {hasDetails && (
        <Stack gap={4}>
          <Text size="sm" fw={600}>
            Details
          </Text>
          <Code block>{JSON.stringify(entry.details, null, 2)}</Code>
        </Stack>
      )}
    </Stack>
  );
}
