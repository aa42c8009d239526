// Staff → Mesh client console (/settings/mesh, super-admins): the configured peers (presence
// booleans only: never a secret or a URL), and one signed call at a time through the server's
// outbound mesh client: pick a peer and a flow, edit the JSON payload (checked before sending),
// send with a new request id or retry with the same one (to see the peer's idempotency replies:
// replayed, 409 idempotency_key_reuse, 409 request_in_progress). The answer shows status, headers,
// body, duration and the stored outbound attempts of that request id.
import {
  Alert,
  Badge,
  Button,
  Code,
  Group,
  NativeSelect,
  Stack,
  Table,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import { DataTable } from '../../components/DataTable.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorAlert, ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { ForbiddenPage } from '../../components/StatusPages.tsx';
import { useMe } from '../../lib/me.ts';
import {
  consolePeersQuery,
  sendConsoleCall,
  type ConsolePeers,
  type ConsoleSendResponse,
} from '../../lib/mesh-health-api.ts';
import { Cell, formatDuration, formatInstant, HttpStatusBadge, OkBadge } from './MeshRecordsList.tsx';

const URL_FORM: Record<string, string> = {
  origin: 'Bare origin',
  dispatch: 'Full dispatch URL',
  custom: 'Custom transport path',
};
const OTHER = '__other__';

/** A starting payload per flow; the operator edits it. */
function templateFor(flow: string): string {
  switch (flow) {
    case 'ping':
      return JSON.stringify({ nonce: `console-${Math.random().toString(36).slice(2, 10)}` }, null, 2);
    case 'event_report':
      return JSON.stringify(
        { kind: 'console.test', severity: 'info', title: 'Test event from the mesh console' },
        null,
        2,
      );
    case 'cmmc_status':
      return JSON.stringify({ cageCode: '1ABC2' }, null, 2);
    case 'cmmc_handoff':
      return JSON.stringify(
        { cageCode: '1ABC2', companyName: 'Example Co', contactEmail: 'officer@example.com' },
        null,
        2,
      );
    default:
      return '{}';
  }
}

/** The payload text as a JSON object, or the reason it is not one. */
export function parsePayload(text: string, maxBytes: number): { value: Record<string, unknown> } | { error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { error: `Not valid JSON: ${(e as Error).message}` };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    return { error: 'The payload must be a JSON object, e.g. {"nonce": "abc"}.' };
  if (new TextEncoder().encode(JSON.stringify(parsed)).length > maxBytes)
    return { error: `The payload is larger than ${maxBytes.toLocaleString()} bytes.` };
  return { value: parsed as Record<string, unknown> };
}

export function MeshConsolePage() {
  const me = useMe();
  if (!me.staff) return <ForbiddenPage />;
  if (!me.superAdmin)
    return (
      <ForbiddenPage
        title="Super-admins only"
        message="Only Rampart super-admins can use the mesh client console, since it sends signed calls to mesh peers."
      />
    );
  return <MeshConsole />;
}

function MeshConsole() {
  const peers = useQuery(consolePeersQuery);
  return (
    <>
      <PageHeader
        title="Mesh client console"
        titleContext="Staff"
        description="Send one signed call to a mesh peer through this server's outbound client and see the answer. Every call is stored as an outbound attempt and written to the audit log (without its payload)."
      />
      {peers.isPending ? (
        <LoadingState label="Loading peers…" />
      ) : !peers.data ? (
        <ErrorState error={peers.error} title="Could not load the peers" onRetry={() => void peers.refetch()} />
      ) : (
        <Stack gap="lg">
          <CallForm data={peers.data} />
          <PeersTable data={peers.data} />
        </Stack>
      )}
    </>
  );
}

function Presence({ present, what }: { present: boolean; what: string }) {
  return (
    <Badge
      variant={present ? 'light' : 'outline'}
      color={present ? 'green' : 'gray'}
      aria-label={`${what} ${present ? 'present' : 'missing'}`}
    >
      {present ? 'Present' : 'Missing'}
    </Badge>
  );
}

function PeersTable({ data }: { data: ConsolePeers }) {
  return (
    <SectionCard
      headingId="console-peers"
      title="Configured peers"
      description={`This server calls itself "${data.selfName}". Only presence is shown: no secret value and no URL.`}
    >
      <DataTable
        label="Configured peers"
        minWidth={860}
        columns={['Peer', 'Secret to', 'Secret from', 'URL form', 'Inbound allowlist', 'Role']}
        empty={
          data.peers.length
            ? undefined
            : 'No mesh peer is configured (SVC_PEER_URL_*, SVC_SECRET_TO_*, SVC_SECRET_FROM_*).'
        }
      >
        {data.peers.map((p) => (
          <Table.Tr key={p.name}>
            <Table.Td>
              <Text size="sm" fw={500}>
                {p.name}
              </Text>
              {!p.callable && (
                <Text size="xs" c="dimmed">
                  Cannot be called (needs a URL and a secret to)
                </Text>
              )}
            </Table.Td>
            <Table.Td>
              <Presence present={p.secretToPresent} what="Secret to" />
            </Table.Td>
            <Table.Td>
              <Presence present={p.secretFromPresent} what="Secret from" />
            </Table.Td>
            <Table.Td>{p.urlForm ? URL_FORM[p.urlForm] : <Cell value={p.hasUrl ? 'Invalid URL' : null} />}</Table.Td>
            <Table.Td>
              <Cell value={p.inboundFlows.join(', ')} mono />
            </Table.Td>
            <Table.Td>
              <Cell
                value={[p.managementPeer && 'Management peer', p.bidPeer && 'Bid peer'].filter(Boolean).join(', ')}
              />
            </Table.Td>
          </Table.Tr>
        ))}
      </DataTable>
    </SectionCard>
  );
}

function CallForm({ data }: { data: ConsolePeers }) {
  const callable = data.peers.filter((p) => p.callable);
  const [peer, setPeer] = useState(callable[0]?.name ?? data.peers[0]?.name ?? '');
  const [flowChoice, setFlowChoice] = useState('ping');
  const [otherFlow, setOtherFlow] = useState('');
  const flow = flowChoice === OTHER ? otherFlow.trim() : flowChoice;
  const [payloadText, setPayloadText] = useState(() => templateFor('ping'));
  const [payloadError, setPayloadError] = useState<string | null>(null);
  const [flowError, setFlowError] = useState<string | null>(null);
  const [last, setLast] = useState<ConsoleSendResponse | null>(null);
  const send = useMutation({ mutationFn: sendConsoleCall, onSuccess: setLast });

  useEffect(() => {
    if (flowChoice !== OTHER) setPayloadText(templateFor(flowChoice));
  }, [flowChoice]);

  const submit = (reuse: boolean) => {
    const parsed = parsePayload(payloadText, data.maxPayloadBytes);
    const badFlow = /^[a-z][a-z0-9_.-]{0,99}$/.test(flow)
      ? null
      : 'A flow name: lower-case letters, digits, _ . -, starting with a letter.';
    setPayloadError('error' in parsed ? parsed.error : null);
    setFlowError(badFlow);
    if ('error' in parsed || badFlow || !peer) return;
    send.mutate({ peer, flow, payload: parsed.value, ...(reuse && last ? { requestId: last.requestId } : {}) });
  };

  return (
    <SectionCard
      headingId="console-call"
      title="Send a call"
      description="One attempt, no automatic retry. Use the same request id again to see how the peer's idempotency answers."
    >
      {data.peers.length === 0 ? (
        <Text size="sm" c="dimmed">
          No peer is configured, so there is nothing to call.
        </Text>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            submit(false);
          }}
        >
          <Stack gap="sm">
            <Group gap="sm" align="flex-start" wrap="wrap">
              <NativeSelect
                label="Peer"
                value={peer}
                onChange={(e) => setPeer(e.currentTarget.value)}
                data={data.peers.map((p) => ({
                  value: p.name,
                  label: p.callable ? p.name : `${p.name} (cannot be called)`,
                }))}
                w={260}
              />
              <NativeSelect
                label="Flow"
                value={flowChoice}
                onChange={(e) => setFlowChoice(e.currentTarget.value)}
                data={[...data.knownFlows.map((f) => ({ value: f, label: f })), { value: OTHER, label: 'Other…' }]}
                w={200}
              />
              {flowChoice === OTHER && (
                <TextInput
                  label="Flow name"
                  value={otherFlow}
                  onChange={(e) => setOtherFlow(e.currentTarget.value)}
                  error={flowError}
                  w={220}
                />
              )}
            </Group>
            <Textarea
              label="Payload (JSON object)"
              value={payloadText}
              onChange={(e) => {
                setPayloadText(e.currentTarget.value);
                setPayloadError(null);
              }}
              error={payloadError}
              autosize
              minRows={4}
              maxRows={16}
              styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
              spellCheck={false}
            />
            <Group gap="sm" wrap="wrap">
              <Button type="submit" loading={send.isPending && !send.variables?.requestId}>
                Send with a new request id
              </Button>
              <Button
                variant="default"
                disabled={!last || send.isPending}
                loading={send.isPending && Boolean(send.variables?.requestId)}
                onClick={() => submit(true)}
              >
                Retry with the same id
              </Button>
              {last && (
                <Text size="sm" c="dimmed">
                  Last request id: <Code>{last.requestId}</Code>
                </Text>
              )}
            </Group>
          </Stack>
        </form>
      )}
      {send.isError && <ErrorAlert error={send.error} title="The call was not sent" />}
      {last && <CallResult r={last} />}
    </SectionCard>
  );
}

function CallResult({ r }: { r: ConsoleSendResponse }) {
  const headers = useMemo(() => Object.entries(r.headers).sort(([a], [b]) => a.localeCompare(b)), [r.headers]);
  return (
    <section aria-label="Answer" aria-live="polite">
      <Stack gap="sm">
        <Title order={3} size="h5">
          Answer
        </Title>
        <Alert
          color={r.ok ? 'green' : r.outcome === 'route_not_deployed' || r.outcome === 'timeout' ? 'yellow' : 'red'}
          variant="light"
          title={r.label}
        >
          <Group gap="sm" wrap="wrap">
            <HttpStatusBadge status={r.httpStatus} />
            {r.replayed && (
              <Badge variant="light" color="blue">
                Replayed
              </Badge>
            )}
            {r.error && <Code>{r.error}</Code>}
            <Text size="sm">
              {r.flow} to {r.peer} in {formatDuration(r.durationMs)}, request id <Code>{r.requestId}</Code>
            </Text>
          </Group>
        </Alert>
        <Title order={4} size="h6">
          Response body
        </Title>
        <Code block style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word', maxHeight: 320, overflow: 'auto' }}>
          {typeof r.body === 'string' ? r.body : JSON.stringify(r.body, null, 2)}
        </Code>
        <Title order={4} size="h6">
          Response headers
        </Title>
        <DataTable
          label="Response headers"
          minWidth={420}
          columns={['Header', 'Value']}
          empty={headers.length ? undefined : 'No answer, so no headers.'}
        >
          {headers.map(([k, v]) => (
            <Table.Tr key={k}>
              <Table.Td>
                <Cell value={k} mono />
              </Table.Td>
              <Table.Td>
                <Cell value={v} mono />
              </Table.Td>
            </Table.Tr>
          ))}
        </DataTable>
        <Title order={4} size="h6">
          Stored outbound attempts with this request id
        </Title>
        <DataTable
          label="Stored outbound attempts"
          minWidth={720}
          columns={['Time', 'Flow', 'Result', 'HTTP', { label: 'Duration', align: 'right' }, 'Error', 'Record id']}
        >
          {r.events.map((e) => (
            <Table.Tr key={e.id}>
              <Table.Td className="nowrap">{formatInstant(e.createdAt)}</Table.Td>
              <Table.Td>
                <Cell value={e.flow} mono />
              </Table.Td>
              <Table.Td>
                <OkBadge ok={e.ok} />
              </Table.Td>
              <Table.Td>
                <HttpStatusBadge status={e.httpStatus} />
              </Table.Td>
              <Table.Td ta="right" className="nowrap">
                {formatDuration(e.durationMs)}
              </Table.Td>
              <Table.Td>
                <Cell value={e.error} mono />
              </Table.Td>
              <Table.Td>{e.id}</Table.Td>
            </Table.Tr>
          ))}
        </DataTable>
      </Stack>
    </section>
  );
}
