// Staff → mesh client console (super-admin): one signed call to a configured peer through the
// outbound mesh client, one attempt (no automatic retry: the operator decides, with a new request
// id or the same one, to see idempotency replies). The attempt is stored as every outbound
// attempt is; the answer shows it with the earlier attempts of the same request id.
import { describePeer, type Mesh, type MeshClient, type MeshCallResult } from '../mesh/index.ts';
import { appError } from '../lib/errors.ts';
import {
  CONSOLE_MAX_PAYLOAD_BYTES,
  KNOWN_FLOWS,
  type ConsolePeers,
  type ConsoleSendBody,
  type ConsoleSendResponse,
} from './mesh-console-schemas.ts';
import { classifySweep } from './mesh-health-service.ts';
import type { MeshRecordsService } from './mesh-records-service.ts';

export interface MeshConsoleService {
  peers(): ConsolePeers;
  send(body: ConsoleSendBody): Promise<ConsoleSendResponse>;
}

export interface MeshConsoleDeps {
  peers: Mesh['peers'];
  client: MeshClient;
  records: MeshRecordsService;
  selfName: string;
  managementPeer: string | undefined;
  bidPeer: string | undefined;
}

export function createMeshConsoleService(deps: MeshConsoleDeps): MeshConsoleService {
  const { peers, client, records } = deps;
  const sameName = (a: string | undefined, b: string) => a !== undefined && peers.byName(a)?.name === b;

  return {
    peers() {
      return {
        selfName: deps.selfName,
        knownFlows: [...KNOWN_FLOWS],
        maxPayloadBytes: CONSOLE_MAX_PAYLOAD_BYTES,
        peers: peers.list().map((p) => {
          const v = describePeer(p);
          return {
            name: v.name,
            callable: Boolean(p.transportUrl && p.secretTo),
            hasUrl: v.hasUrl,
            urlForm: v.urlForm,
            secretToPresent: v.secretToPresent,
            secretFromPresent: v.secretFromPresent,
            inboundFlows: v.flows,
            managementPeer: sameName(deps.managementPeer, v.name),
            bidPeer: sameName(deps.bidPeer, v.name),
          };
        }),
      };
    },

    async send(body) {
      const peer = peers.byName(body.peer);
      if (!peer) throw appError('mesh_peer_not_found', `No configured mesh peer is named "${body.peer}".`);
      let r: MeshCallResult;
      try {
        r = await client.call(peer.name, body.flow, body.payload, {
          maxAttempts: 1,
          timeoutMs: body.timeoutMs,
          ...(body.requestId ? { requestId: body.requestId } : {}),
        });
      } catch {
        r = {
          ok: false,
          status: null,
          body: null,
          requestId: body.requestId ?? '',
          attempts: 1,
          durationMs: 0,
          error: 'network_error',
          routeNotDeployed: false,
          headers: {},
        };
      }
      const replayed = Boolean(
        r.body && typeof r.body === 'object' && (r.body as { replayed?: unknown }).replayed === true,
      );
      let outcome: ConsoleSendResponse['outcome'];
      let label: string;
      if (r.ok) {
        outcome = 'ok';
        label = `OK: HTTP ${r.status}${replayed ? ', replayed from the peer’s idempotency record' : ''}`;
      } else if (r.error === 'peer_not_configured') {
        outcome = 'not_callable';
        label = 'Not callable: the peer has no URL or no outbound secret; nothing was sent';
      } else {
        ({ outcome, label } = classifySweep(r, body.timeoutMs));
        if (r.error === 'idempotency_key_reuse')
          label += ' (this request id was used with a different payload: use a new id)';
        if (r.error === 'request_in_progress')
          label += ' (the first call with this id is still running: retry with the same id)';
      }
      const headers = Object.fromEntries(Object.entries(r.headers).filter(([k]) => k.toLowerCase() !== 'set-cookie'));
      const stored = r.requestId
        ? await records.outbound({ peer: peer.name, requestId: r.requestId, limit: 200 })
        : { entries: [] };
      return {
        peer: peer.name,
        flow: body.flow,
        requestId: r.requestId,
        ok: r.ok,
        outcome,
        label,
        httpStatus: r.status,
        error: r.error,
        replayed,
        durationMs: r.durationMs,
        headers,
        body: r.body ?? null,
        // Staff records carry no URL: the console shows where a peer lives only as its URL form (peers()).
        events: [...stored.entries].reverse(),
      };
    },
  };
}
