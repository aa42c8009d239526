// Transactional outbox. An event is enqueued in the same transaction as its cause, so it exists
// exactly when the cause committed; any replica delivers it. A delivery takes a short lease on the
// row (FOR UPDATE SKIP LOCKED), so two replicas never send it at the same time; a replica that
// dies mid-delivery leaves a lease that expires, and the next attempt reuses the row's request id,
// so an idempotent peer executes it once.
//
// Retry schedule (docs/mesh.md §7.3): after n failed deliveries the next one waits 2^n s, at most
// 30 min, so a peer that comes back after a day-long outage gets its events within 30 min (at once
// when any other event to it gets through: its waiting events are then brought forward). An event
// is given up 72 h after it was queued (or sent again by staff); a given-up event stays, marked
// failed, for staff to see and send again, and is reported to the management peer.
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../db/schema.ts';
import { withService, type Tx } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import { withBrand } from './mesh-brand.ts';
import type { MeshClient, MeshCallResult } from './mesh-client.ts';

/** Who an event is about, shown to staff (and in the failure report) when its delivery fails. */
export interface OutboxSubject {
  tenantId?: string | null;
  companyName?: string | null;
  cageCode?: string | null;
}

export interface OutboxMessage {
  peer: string;
  flow: string;
  payload: Record<string, unknown>;
  eventType?: string | null;
  severity?: string | null;
  /** Defaults to a new UUID; the peer sees it as x-svc-request-id on every attempt. */
  requestId?: string;
  subject?: OutboxSubject | undefined;
}

export interface OutboxOptions {
  /** How long a delivery may hold a row before another replica may retry it. */
  leaseMs?: number;
  batchSize?: number;
  pollMs?: number;
  /** Give up on a message this long after it was queued or sent again (default 72 h). */
  giveUpAfterMs?: number;
  /** Also give up after this many deliveries (each itself up to two HTTP tries); default no limit. */
  maxAttempts?: number;
  /** Longest wait between two deliveries (default 30 min). */
  maxBackoffMs?: number;
}

export const OUTBOX_GIVE_UP_MS = 72 * 3_600_000;
export const OUTBOX_MAX_BACKOFF_MS = 30 * 60_000;

/** What a message that failed for good looks like to the failure report. */
export interface FailedDelivery {
  peer: string;
  flow: string;
  eventType: string | null;
  lastError: string | null;
  requestId: string;
  attempts: number;
  companyName: string | null;
  cageCode: string | null;
  tenantId: string | null;
}

/**
 * Whether an answer is final for this request id. Final: answers that say the message itself is
 * wrong (400, 404, 413, 422 …), a route that is not deployed, and 409 idempotency_key_reuse (the
 * peer holds another payload under this id; docs/mesh.md says to use a new id, which only staff's
 * "send again" does, so one event is never delivered twice). Not final: 401/403 (a secret being
 * rotated, clocks drifting, an allowlist being fixed), 408, 409 request_in_progress, 425, 429.
 */
export function isFinalAnswer(result: Pick<MeshCallResult, 'ok' | 'status' | 'error' | 'routeNotDeployed'>): boolean {
  if (result.ok) return false;
  if (result.routeNotDeployed) return true;
  if (result.status === 409) return result.error === 'idempotency_key_reuse';
  const RETRYABLE_4XX = [401, 403, 408, 425, 429];
  return (
    result.status !== null && result.status >= 400 && result.status < 500 && !RETRYABLE_4XX.includes(result.status)
  );
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
  onFailed?(row: FailedDelivery): void;
  options?: OutboxOptions;
}): Outbox {
  const o = {
    leaseMs: 60_000,
    batchSize: 20,
    pollMs: 1_000,
    giveUpAfterMs: OUTBOX_GIVE_UP_MS,
    maxAttempts: Number.POSITIVE_INFINITY,
    maxBackoffMs: OUTBOX_MAX_BACKOFF_MS,
    ...deps.options,
  };
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<number> | null = null;
  let stopped = false;
  let started = false;

  async function claimDue() {
    const now = deps.clock.now();
    const peers = deps.deliverablePeers();
    if (!peers.length) return [];
    return withService(
      deps.db,
      async (tx) =>
        (
          await sql<{
            id: number;
            peer: string;
            flow: string;
            payload: Record<string, unknown>;
            event_type: string | null;
            severity: string | null;
            request_id: string;
            attempts: number;
            locked_until: Date;
            since: Date;
            company_name: string | null;
            cage_code: string | null;
            subject_tenant_id: string | null;
          }>`
          update svc_outbox set locked_until = ${new Date(now.getTime() + o.leaseMs)}, attempts = attempts + 1
          where id in (
            select id from svc_outbox
            where status = 'pending' and next_attempt_at <= ${now} and (locked_until is null or locked_until < ${now})
              and peer in (${sql.join(peers)})
            order by id limit ${o.batchSize}
            for update skip locked)
          returning id, peer, flow, payload, event_type, severity, request_id, attempts, locked_until,
            coalesce(resent_at, created_at) as since, company_name, cage_code, subject_tenant_id`.execute(tx)
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
    const final = isFinalAnswer(result);
    const givenUp =
      !result.ok &&
      (final || row.attempts >= o.maxAttempts || now.getTime() - new Date(row.since).getTime() >= o.giveUpAfterMs);
    await withService(deps.db, async (tx) => {
      // Fenced by this delivery's lease.
      const fenced = () =>
        tx.updateTable('svc_outbox').where('id', '=', row.id).where('locked_until', '=', row.locked_until);
      if (result.ok) {
        await fenced().set({ status: 'delivered', delivered_at: now, locked_until: null, last_error: null }).execute();
        // The peer answers again: what waits for it need not sit out its backoff.
        await tx
          .updateTable('svc_outbox')
          .set({ next_attempt_at: now })
          .where('peer', '=', row.peer)
          .where('status', '=', 'pending')
          .where('next_attempt_at', '>', now)
          .execute();
      } else if (givenUp) {
        await fenced()
          .set({ status: 'failed', failed_at: now, locked_until: null, last_error: result.error })
          .execute();
      } else {
        const backoff = Math.min(o.maxBackoffMs, 1000 * 2 ** Math.min(row.attempts, 30));
        await fenced()
          .set({ locked_until: null, last_error: result.error, next_attempt_at: new Date(now.getTime() + backoff) })
          .execute();
      }
    });
    if (result.ok) return true;
    if (givenUp) {
      deps.log.warn(
        { peer: row.peer, flow: row.flow, eventType: row.event_type, requestId: row.request_id, error: result.error },
        'outbox message failed for good; staff can send it again',
      );
      deps.onFailed?.({
        peer: row.peer,
        flow: row.flow,
        eventType: row.event_type,
        lastError: result.error,
        requestId: row.request_id,
        attempts: row.attempts,
        companyName: row.company_name,
        cageCode: row.cage_code,
        tenantId: row.subject_tenant_id,
      });
    }
    return false;
  }

  async function deliverDue(): Promise<number> {
    let handled = 0;
    for (;;) {
      const rows = await claimDue();
      if (!rows.length) return handled;
      await Promise.all(
        rows.map((r) =>
          deliverOne(r).catch((err: unknown) =>
            deps.log.error({ err, id: r.id }, 'outbox delivery crashed; the lease will expire and it is retried'),
          ),
        ),
      );
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
        .values({
          peer: m.peer,
          flow: m.flow,
          // Stored as json, byte for byte: a retry sends exactly what a first direct call sent.
          payload: JSON.stringify(m.flow === 'event_report' ? withBrand(m.payload) : m.payload),
          event_type: m.eventType ?? null,
          severity: m.severity ?? null,
          request_id: requestId,
          // The give-up window counts from here: the service clock, like every other outbox time.
          created_at: deps.clock.now(),
          next_attempt_at: deps.clock.now(),
          company_name: m.subject?.companyName?.slice(0, 300) ?? null,
          cage_code: m.subject?.cageCode?.slice(0, 20) ?? null,
          subject_tenant_id: m.subject?.tenantId ?? null,
        })
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
