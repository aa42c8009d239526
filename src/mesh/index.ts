// The service mesh, assembled: peers, signed client, records, idempotency, outbox, dispatch and
// relay routes. Background work (outbox delivery, retention) starts with start().
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/client.ts';
import type { DB } from '../db/schema.ts';
import { withService } from '../db/tenant.ts';
import type { Config } from '../lib/config.ts';
import type { Clock } from '../lib/clock.ts';
import { createReporter, type Reporter } from '../reporter/reporter.ts';
import { createMeshClient, type MeshClient } from './mesh-client.ts';
import { createDispatcher, registerDispatchRoute } from './mesh-dispatch.ts';
import { createDispatchFastPath, type FastPath, type FastPathDeps } from './mesh-fast-path.ts';
import { coreFlows, type FlowHandler, type FlowName } from './mesh-flows.ts';
import { createIdempotencyStore } from './mesh-idempotency.ts';
import { createOutbox, type FailedDelivery, type Outbox, type OutboxOptions } from './mesh-outbox.ts';
import { createPeerRegistry, type PeerRegistry } from './mesh-peers.ts';
import { createInboundRecorder, createOutboundRecorder } from './mesh-records.ts';
import { registerRelayRoute } from './relay-routes.ts';

export const RECORD_RETENTION_DAYS = 90;

/** "Could not deliver cmmc.expired for Acme Tools (CAGE 1ABC2) to bid-portal". */
export function deliveryFailedTitle(row: FailedDelivery): string {
  const about = row.companyName
    ? ` for ${row.companyName}${row.cageCode ? ` (CAGE ${row.cageCode})` : ''}`
    : row.cageCode
      ? ` for CAGE ${row.cageCode}`
      : '';
  return `Could not deliver ${row.eventType ?? row.flow}${about} to ${row.peer}`;
}

function deliveryFailedDetail(row: FailedDelivery): string {
  const why =
    row.lastError === 'idempotency_key_reuse'
      ? 'the peer holds another payload under this request id (409 idempotency_key_reuse); sending it again uses a new id'
      : `last error ${row.lastError ?? 'unknown'}`;
  return `Gave up after ${row.attempts} deliveries, ${why}. Request id ${row.requestId}. Staff can send it again from Mesh outbox.`;
}

export interface Mesh {
  peers: PeerRegistry;
  client: MeshClient;
  outbox: Outbox;
  reporter: Reporter;
  /** The dispatch URL served straight from node:http (mesh-fast-path.ts); the server wires it in. */
  dispatchFastPath(deps: Pick<FastPathDeps, 'inFlight' | 'requestId' | 'onUnexpected'>): FastPath;
  /** Flow handlers other modules add (the CMMC module registers cmmc_handoff and cmmc_status). */
  registerFlow(name: FlowName, handler: FlowHandler): void;
  start(): void;
  stop(): Promise<void>;
  /** Retention: idempotency records past 24 h, mesh records past 90 days. */
  purge(): Promise<void>;
}

export function createMesh(
  app: FastifyInstance,
  deps: {
    config: Config;
    db: Kysely<DB>;
    dbKind: string;
    copyRows?: Database['copyRows'];
    clock: Clock;
    log: Logger;
    fetch?: typeof fetch;
    outboxOptions?: OutboxOptions;
  },
): Mesh {
  const { config, db, clock, log } = deps;
  const peers = createPeerRegistry(config);
  const client = createMeshClient({
    selfName: config.SVC_SELF_NAME,
    peers,
    clock,
    recordAttempt: createOutboundRecorder({ db }),
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
  let reporter: Reporter | null = null;
  const outbox = createOutbox({
    db,
    client,
    clock,
    log,
    deliverablePeers: () =>
      peers
        .list()
        .filter((p) => p.transportUrl && p.secretTo)
        .map((p) => p.name),
    options: { leaseMs: config.SVC_OUTBOX_LEASE_MS, ...deps.outboxOptions },
    onFailed(row) {
      // Failures towards the management peer itself cannot be reported to it: they stay on the
      // staff outbox page (failed), logged above.
      if (row.peer === config.SVC_MANAGEMENT_PEER) return;
      void reporter?.report({
        kind: 'mesh.delivery_failed',
        severity: 'high',
        title: deliveryFailedTitle(row),
        detail: deliveryFailedDetail(row),
        fingerprint: `${row.peer}:${row.eventType ?? row.flow}:${row.cageCode ?? row.tenantId ?? ''}`,
        subject: { companyName: row.companyName, cageCode: row.cageCode, tenantId: row.tenantId },
        data: {
          peer: row.peer,
          flow: row.flow,
          eventType: row.eventType,
          error: row.lastError,
          requestId: row.requestId,
          attempts: row.attempts,
          companyName: row.companyName,
          cageCode: row.cageCode,
          tenantId: row.tenantId,
        },
      });
    },
  });
  reporter = createReporter({ db, outbox, clock, managementPeer: config.SVC_MANAGEMENT_PEER, log });
  const idempotency = createIdempotencyStore({ db, staleMs: config.SVC_IDEMPOTENCY_STALE_MS });
  const inbound = createInboundRecorder({ db, log, ...(deps.copyRows ? { copyRows: deps.copyRows } : {}) });
  const flows = coreFlows({ db, selfName: config.SVC_SELF_NAME, dbKind: deps.dbKind });

  const dispatcher = createDispatcher({
    db,
    peers,
    flows,
    idempotency,
    clock,
    bidPeer: config.SVC_BID_PEER,
    maxDriftMs: config.SVC_MAX_DRIFT_MS,
    handlerDeadlineMs: Math.floor(config.SVC_IDEMPOTENCY_STALE_MS / 3),
    onHandlerError(error, flow, caller) {
      log.error({ err: error, flow, caller }, 'mesh flow handler failed');
      void reporter!.report({
        kind: 'system.error',
        severity: 'error',
        title: `Mesh flow ${flow} failed`,
        detail: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        fingerprint: `mesh:${flow}:${error instanceof Error ? error.name : 'unknown'}`,
        data: { flow, caller },
      });
    },
  });
  registerDispatchRoute(app, { dispatcher, inbound, maxBodyBytes: config.SVC_MAX_BODY_BYTES });
  registerRelayRoute(app, {
    db,
    secret: config.AGENT_RELAY_SECRET,
    managementPeer: config.SVC_MANAGEMENT_PEER,
    client,
    outbox,
  });

  let purgeTimer: NodeJS.Timeout | null = null;
  const purge = async () => {
    const now = clock.now();
    await idempotency.purge(now);
    const cutoff = new Date(now.getTime() - RECORD_RETENTION_DAYS * 86_400_000);
    await withService(db, async (tx) => {
      await tx.deleteFrom('svc_inbound_events').where('received_at', '<', cutoff).execute();
      await tx.deleteFrom('svc_outbound_events').where('created_at', '<', cutoff).execute();
    });
  };

  app.addHook('onClose', async () => {
    await outbox.stop();
    await inbound.close();
    if (purgeTimer) clearInterval(purgeTimer);
  });

  return {
    peers,
    client,
    outbox,
    reporter,
    dispatchFastPath: (d) =>
      createDispatchFastPath({ dispatcher, inbound, maxBodyBytes: config.SVC_MAX_BODY_BYTES, ...d }),
    registerFlow(name, handler) {
      flows[name] = handler;
    },
    start() {
      outbox.start();
      purgeTimer ??= setInterval(
        () => void purge().catch((err: unknown) => log.error({ err }, 'mesh retention failed')),
        3_600_000,
      );
      purgeTimer.unref();
    },
    stop: () => outbox.stop(),
    purge,
  };
}

export { createPeerRegistry, describePeer } from './mesh-peers.ts';
export type { Peer, PeerView } from './mesh-peers.ts';
export type { MeshClient, MeshCallResult } from './mesh-client.ts';
export type { Reporter, Report } from '../reporter/reporter.ts';
export { DISPATCH_PATH } from './mesh-signing.ts';
export type { FastPath, InFlight } from './mesh-fast-path.ts';
