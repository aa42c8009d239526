// Transactional outbox. An event is enqueued in the same transaction as its cause, so it exists
// exactly when the cause committed; any replica delivers it. A delivery takes a short lease on the
// row (FOR UPDATE SKIP LOCKED), so two replicas never send it at the same time; a replica that
// dies mid-delivery leaves a lease that expires, and the next attempt reuses the row's request id,
// so an idempotent peer executes it once.
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../db/schema.ts';
import { withService, type Tx } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import type { MeshClient } from './mesh-client.ts';

export interface OutboxMessage {
  peer: string;
  flow: string;
  payload: Record<string, unknown>;
  eventType?: string | null;
  severity?: string | null;
  /** Defaults to a new UUID; the peer sees it as x-svc-request-id on every attempt. */
  requestId?: string;
}

export interface OutboxOptions {
  /** How long a delivery may hold a row before another replica may retry it. */
  leaseMs?: number;
  batchSize?: number;
  pollMs?: number;
  /** Attempts (each itself a few HTTP tries) before a message is marked failed. */
  maxAttempts?: number;
  maxBackoffMs?: number;
}

export interface Outbox {
  enqueue(tx: Tx, message: OutboxMessage): Promise<string>;
  /** Delivers what is due now; returns how many rows it handled. */
  deliverDue(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
  /** Wakes the worker after a commit, instead of waiting for the next poll. */
  nudge(): void;
}

export function createOutbox(deps: {
  db: Kysely<DB>;
  client: MeshClient;
  clock: Clock;
  log: Pick<Logger, 'warn' | 'error'>;
  /** Peers this instance can reach; rows for others wait for a replica (or a config) that can. */
  deliverablePeers(): string[];
  onFailed?(row: { peer: string; flow: string; eventType: string | null; lastError: string | null }): void; options?: OutboxOptions }): Outbox {
  const o = { leaseMs: 60_000, batchSize: 20, pollMs: 1_000, maxAttempts: 10, maxBackoffMs: 10 * 60_000, ...deps.options };
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<number> | null = null;
  let stopped = false;
  let started = false;

  async function claimDue() {
    const now = deps.clock.now();
    const peers = deps.deliverablePeers();
    if (!peers.length) return [];
    return withService(deps.db, async (tx) =>
      (
        await sql<{ id: number; peer: string; flow: string; payload: Record<string, unknown>; event_type: string | null; severity: string | null; request_id: string; attempts: number; locked_until: Date }>`
          update svc_outbox set locked_until = ${new Date(now.getTime() + o.leaseMs)}, attempts = attempts + 1
          where id in (
            select id from svc_outbox
            where status = 'pending' and next_attempt_at <= ${now} and (locked_until is null or locked_until < ${now})
              and peer in (${sql.join(peers)})
            order by id limit ${o.batchSize}
            for update skip locked)
          returning id, peer, flow, payload, event_type, severity, request_id, attempts, locked_until`.execute(tx)
      ).rows,
    );
  }

  /** Every write below is fenced by this delivery's lease: a replica that lost it changes nothing. */
  async function deliverOne(row: Awaited<ReturnType<typeof claimDue>>[number]) {
    // Keep one delivery well inside the lease (two HTTP attempts, each bounded), so another replica
    // never takes the row over while this one is still sending; the outbox retries later anyway.
    const result = await deps.client.call(row.peer, row.flow, row.payload, {
      requestId: row.request_id,
      maxAttempts: 2,
      timeoutMs: Math.max(500, Math.floor(o.leaseMs / 4)),
      ...(row.event_type ? { eventType: row.event_type } : {}),
      ...(row.severity ? { severity: row.severity } : {}),
    });
    const now = deps.clock.now();
    // Final: answers that say the message itself is wrong (400, 404, 413, 422 …) or that the route
    // is not deployed. Not final: 401/403 (a secret being rotated, clocks drifting, an allowlist
    // being fixed), 408, 409 (a previous attempt still running), 429; those wait and retry.
    const RETRYABLE_4XX = [401, 403, 408, 409, 425, 429];
    const final = !result.ok && (result.routeNotDeployed || (result.status !== null && result.status >= 400 && result.status < 500 && !RETRYABLE_4XX.includes(result.status)));
    await withService(deps.db, async (tx) => {
      if (result.ok) {
        await tx.updateTable('svc_outbox').set({ status: 'delivered', delivered_at: now, locked_until: null, last_error: null }).where('id', '=', row.id).where('locked_until', '=', row.locked_until).execute();
      } else if (final || row.attempts >= o.maxAttempts) {
        await tx.updateTable('svc_outbox').set({ status: 'failed', locked_until: null, last_error: result.error }).where('id', '=', row.id).where('locked_until', '=', row.locked_until).execute();
      } else {
        const backoff = Math.min(o.maxBackoffMs, 1000 * 2 ** row.attempts);
        await tx.updateTable('svc_outbox').set({ locked_until: null, last_error: result.error, next_attempt_at: new Date(now.getTime() + backoff) }).where('id', '=', row.id).where('locked_until', '=', row.locked_until).execute();
      }
    });
    if (!result.ok && (final || row.attempts >= o.maxAttempts)) {
      deps.log.warn({ peer: row.peer, flow: row.flow, error: result.error }, 'outbox message failed for good');
      deps.onFailed?.({ peer: row.peer, flow: row.flow, eventType: row.event_type, lastError: result.error });
    }
  }

  async function deliverDue(): Promise<number> {
    let handled = 0;
    for (;;) {
      const rows = await claimDue();
      if (!rows.length) return handled;
      await Promise.all(rows.map((r) => deliverOne(r).catch((err: unknown) => deps.log.error({ err, id: r.id }, 'outbox delivery crashed; the lease will expire and it is retried'))));
      handled += rows.length;
      if (stopped) return handled;
    }
  }

  function tick() {
    if (running || stopped) return;
    running = deliverDue()
      .catch((err: unknown) => {
        deps.log.error({ err }, 'outbox poll failed');
        return 0;
      })
      .finally(() => {
        running = null;
      });
  }

  return {
    async enqueue(tx, m) {
      const requestId = m.requestId ?? newId();
      await tx
        .insertInto('svc_outbox')
        .values({ peer: m.peer, flow: m.flow, payload: JSON.stringify(m.payload), event_type: m.eventType ?? null, severity: m.severity ?? null, request_id: requestId, next_attempt_at: deps.clock.now() })
        .execute();
      return requestId;
    },
    deliverDue,
    start() {
      stopped = false;
      started = true;
      timer ??= setInterval(tick, o.pollMs);
      timer.unref();
      tick();
    },
    async stop() {
      stopped = true;
      started = false;
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
    nudge() {
      // Only a started worker delivers on its own; until then callers drive deliverDue().
      if (started) setImmediate(tick);
    },
  };
}
