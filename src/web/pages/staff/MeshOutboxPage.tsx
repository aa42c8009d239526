// Staff → Mesh outbox: events this server could not deliver to a mesh peer, per peer, with the
// company they are about, attempts and last error; "Send again" for one, or for all failed of a
// peer (same request id; a new one after 409 idempotency_key_reuse). docs/mesh.md section 11.6.
import { Alert, Badge, Button, Stack, Table, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorAlert, ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { api } from '../../lib/api.ts';
import { notifySuccess } from '../../lib/errors.ts';
import type { MeshOutboxEntry, MeshOutboxPage } from '../../lib/types.ts';
import { Cell, formatInstant } from './MeshRecordsList.tsx';

// Each button's accessible name starts with its visible text (WCAG 2.5.3), then says which.

interface Summary {
  peers: { peer: string; pending: number; failed: number; oldestPendingAt: string | null }[];
}

const KEY = ['staff', 'mesh-outbox'] as const;
const FAILED_SHOWN = 200;

export function MeshOutboxPage() {
  const queryClient = useQueryClient();
  const summary = useQuery({
    queryKey: [...KEY, 'summary'],
    queryFn: () => api<Summary>('/api/v1/staff/mesh/outbox/summary'),
  });
  const failed = useQuery({
    queryKey: [...KEY, 'failed'],
    queryFn: () =>
      api<MeshOutboxPage>('/api/v1/staff/mesh/outbox', { query: { status: 'failed', limit: FAILED_SHOWN } }),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['staff'] });
  const resendOne = useMutation({
    mutationFn: (e: MeshOutboxEntry) =>
      api<MeshOutboxEntry>(`/api/v1/staff/mesh/outbox/${e.id}/resend`, { method: 'POST', body: {} }),
    onSuccess: async (e) => {
      notifySuccess(`${e.eventType ?? e.flow} to ${e.peer} is queued again (request id ${e.requestId}).`);
      await refresh();
    },
  });
  const resendPeer = useMutation({
    mutationFn: (peer: string) =>
      api<{ peer: string; resent: number }>('/api/v1/staff/mesh/outbox/resend-failed', {
        method: 'POST',
        body: { peer },
      }),
    onSuccess: async (r) => {
      notifySuccess(`${r.resent} failed ${r.resent === 1 ? 'event' : 'events'} to ${r.peer} queued again.`);
      await refresh();
    },
  });

  return (
    <>
      <PageHeader
        title="Mesh outbox"
        titleContext="Staff"
        description="Events this server sends to mesh peers and could not deliver. Deliveries are retried for 72 hours (at most 30 minutes apart); after that an event is marked failed and stays here until you send it again."
      />
      <Stack gap="lg">
        <ErrorAlert error={resendOne.error ?? resendPeer.error} title="Could not send it again" />
        <SectionCard headingId="outbox-peers" title="Per peer">
          {summary.isPending ? (
            <LoadingState label="Loading the outbox…" />
          ) : summary.isError ? (
            <ErrorState error={summary.error} onRetry={() => void summary.refetch()} />
          ) : summary.data.peers.length === 0 ? (
            <Text c="dimmed">Nothing is waiting and nothing failed: every event was delivered.</Text>
          ) : (
            <Table.ScrollContainer minWidth={560} type="native" tabIndex={0} role="region" aria-label="Outbox per peer">
              <Table aria-label="Outbox per peer">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Peer</Table.Th>
                    <Table.Th ta="right">Waiting</Table.Th>
                    <Table.Th>Oldest waiting</Table.Th>
                    <Table.Th ta="right">Failed</Table.Th>
                    <Table.Th>Action</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {summary.data.peers.map((p) => (
                    <Table.Tr key={p.peer}>
                      <Table.Td>
                        <Cell value={p.peer} />
                      </Table.Td>
                      <Table.Td ta="right">{p.pending}</Table.Td>
                      <Table.Td>{p.oldestPendingAt ? formatInstant(p.oldestPendingAt) : '—'}</Table.Td>
                      <Table.Td ta="right">
                        {p.failed > 0 ? (
                          <Badge color="red" variant="light">
                            {p.failed}
                          </Badge>
                        ) : (
                          0
                        )}
                      </Table.Td>
                      <Table.Td>
                        {p.failed > 0 && (
                          <Button
                            size="xs"
                            variant="light"
                            loading={resendPeer.isPending && resendPeer.variables === p.peer}
                            onClick={() => resendPeer.mutate(p.peer)}
                            aria-label={`Send all failed again: ${p.failed} ${p.failed === 1 ? 'event' : 'events'} to ${p.peer}`}
                          >
                            Send all failed again
                          </Button>
                        )}
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          )}
        </SectionCard>
        <SectionCard headingId="outbox-failed" title="Failed deliveries">
          {failed.isPending ? (
            <LoadingState label="Loading failed deliveries…" />
          ) : failed.isError ? (
            <ErrorState error={failed.error} onRetry={() => void failed.refetch()} />
          ) : failed.data.entries.length === 0 ? (
            <Text c="dimmed">No failed deliveries.</Text>
          ) : (
            <Stack gap="sm">
              {failed.data.nextBefore !== null && (
                <Alert color="yellow" variant="light" role="note">
                  The newest {FAILED_SHOWN} are shown; Mesh records → Outbox lists them all.
                </Alert>
              )}
              <Table.ScrollContainer
                minWidth={960}
                type="native"
                tabIndex={0}
                role="region"
                aria-label="Failed deliveries"
              >
                <Table aria-label="Failed deliveries">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>Failed</Table.Th>
                      <Table.Th>Company</Table.Th>
                      <Table.Th>Event</Table.Th>
                      <Table.Th>Peer</Table.Th>
                      <Table.Th ta="right">Attempts</Table.Th>
                      <Table.Th>Last error</Table.Th>
                      <Table.Th>Action</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {failed.data.entries.map((e) => (
                      <Table.Tr key={e.id}>
                        <Table.Td className="nowrap">{formatInstant(e.failedAt ?? e.createdAt)}</Table.Td>
                        <Table.Td>
                          <Cell value={e.companyName ?? 'Not about a company'} />
                          {e.cageCode && (
                            <Text size="xs" c="dimmed" ff="monospace">
                              CAGE {e.cageCode}
                            </Text>
                          )}
                        </Table.Td>
                        <Table.Td>
                          <Cell value={e.eventType ?? e.flow} mono />
                          <Text size="xs" c="dimmed" ff="monospace" style={{ wordBreak: 'break-all' }}>
                            {e.requestId}
                          </Text>
                        </Table.Td>
                        <Table.Td>
                          <Cell value={e.peer} />
                        </Table.Td>
                        <Table.Td ta="right">{e.attempts}</Table.Td>
                        <Table.Td>
                          <Cell value={e.lastError} mono />
                          {e.lastError === 'idempotency_key_reuse' && (
                            <Text size="xs" c="dimmed">
                              Sent again under a new request id.
                            </Text>
                          )}
                        </Table.Td>
                        <Table.Td>
                          <Button
                            size="xs"
                            variant="light"
                            loading={resendOne.isPending && resendOne.variables?.id === e.id}
                            onClick={() => resendOne.mutate(e)}
                            aria-label={`Send again: ${e.eventType ?? e.flow}${e.companyName ? ` for ${e.companyName}` : ''} to ${e.peer}`}
                          >
                            Send again
                          </Button>
                        </Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              </Table.ScrollContainer>
            </Stack>
          )}
        </SectionCard>
      </Stack>
    </>
  );
}
