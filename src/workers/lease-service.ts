// Leasing (docs/worker-protocol.md): workers take queued scans (standalone scans and
// chunks alike). A lease attempt is one statement, the database function lease_scan() (migrations
// 0012, 0027): one round trip and its own short transaction, which is what lets one replica hand out
// hundreds of leases a second.
//
// - Candidates are read FOR UPDATE SKIP LOCKED, so two replicas never look at the same row at
//   once, and the claim is a compare-and-set on status = 'queued': a scan is leased once.
// - Admission is re-checked for each candidate with the scans module's rule, scan_admission()
//   (lease phase: its quota rank on the day it was queued, and the asset's concurrency under the
//   asset's advisory lock, without waiting for a busy lock).
// - An asset whose ownership proof is older than an hour is re-checked by DNS outside the
//   transaction before its scan may be leased; a lapsed or missing proof fails the scan.
// - Every worker write names the lease token (fencing): a write with a stale token changes
//   nothing. Leases last WORKER_LEASE_SECONDS (LEASE_SECONDS by default) and are extended by heartbeats and progress; any replica
//   re-queues an expired lease (the attempt counts) and fails the scan after maxAttempts.
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { asService, withService, type Tx } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { appError } from '../lib/errors.ts';
import type { Lease, LeaseState } from '../lib/worker-wire.ts';
import {
  DEFAULT_DAILY_SCAN_QUOTA,
  DEFAULT_PER_ASSET_CONCURRENT_SCANS,
  KIND_FITS_JSON,
  refusalMessage,
  SEVERITIES,
  utcDay,
  type AdmissionRefusal,
  type ScanKind,
} from '../scans/index.ts';
import { templatesForLease } from '../templates/index.ts';

export const LEASE_SECONDS = 90;
export const HEARTBEAT_SECONDS = 30;
/** Heartbeats come at least three times per lease, so one lost heartbeat never expires a lease. */
export const heartbeatSecondsFor = (leaseSeconds: number): number =>
  Math.max(1, Math.min(HEARTBEAT_SECONDS, Math.floor(leaseSeconds / 3)));
export const MAX_WAIT_SECONDS = 25;
/** How old a proof may be before a lease re-checks it by DNS (also in the assets module). */
export const PROOF_FRESH_MS = 60 * 60 * 1000;
/** A re-queued scan waits attempt × this before it may be leased again. */
const BACKOFF_SECONDS = 15;

export interface LeaseWorker {
  workerId: string;
  tenantId: string;
}

export interface LeaseServiceDeps {
  db: Kysely<DB>;
  clock: Clock;
  /** The assets module's DNS re-check of a stale proof. */
  recheckForLease(assetId: string): Promise<unknown>;
  maxAttempts: number;
  /** How long a lease lasts without a heartbeat (WORKER_LEASE_SECONDS; default LEASE_SECONDS). */
  leaseSeconds?: number;
  /** Poll interval of a waiting lease (ms); a local wake-up answers sooner. */
  pollMs?: number;
  /** Out-of-band settings a template lease carries (options.oob), when the server receives callbacks. */
  oobLeaseOptions?(q: Kysely<DB> | Tx, scanId: string): Promise<Record<string, unknown> | undefined>;
}

interface LeaseRow {
  outcome: 'leased' | 'stale' | 'refused';
  scan_id: string;
  asset_id: string;
  reason: string | null;
  lease_expires_at: Date | string | null;
  attempts: number | null;
  kind: string | null;
  options: Record<string, unknown> | null;
  chunk_index: number | null;
  chunk_spec: Record<string, unknown> | null;
  chunk_count: number | null;
  asset_kind: string | null;
  target: string | null;
  asset_name: string | null;
}

/** Lease times are the database's clock, one clock for every replica (and for tests' data). */
const iso = (d: Date | string) => new Date(d).toISOString();
const strings = (v: unknown): string[] | undefined =>
  Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : undefined;

/**
 * A template scan carries the tenant's own templates (options.customTemplates: [{id, yaml}]): those
 * the scan (or its chunk) names by id, or all, of its severities. One more statement, for template
 * leases only; the total is bounded by TENANT_TEMPLATE_TOTAL_BYTES (templates module).
 */
async function templateOptions(
  deps: LeaseServiceDeps,
  scanId: string,
  tenantId: string,
  options: Record<string, unknown>,
  spec: Record<string, unknown> | null,
): Promise<Record<string, unknown>> {
  const templateIds = strings(spec?.templateIds) ?? strings(options.templateIds) ?? [];
  const severities = strings(spec?.severities) ?? strings(options.severities) ?? [...SEVERITIES];
  const customTemplates = await asService(deps.db, (q) => templatesForLease(q, tenantId, { templateIds, severities }));
  const oob = deps.oobLeaseOptions ? await asService(deps.db, (q) => deps.oobLeaseOptions!(q, scanId)) : undefined;
  return { ...options, customTemplates, ...(oob ? { oob } : {}) };
}

export function createLeaseService(deps: LeaseServiceDeps) {
  const { db, clock, maxAttempts } = deps;
  const leaseSeconds = deps.leaseSeconds ?? LEASE_SECONDS;
  const heartbeatSeconds = heartbeatSecondsFor(leaseSeconds);
  const LEASE_EXPIRY = sql<Date>`now() + make_interval(secs => ${leaseSeconds})`;
  const pollMs = deps.pollMs ?? 1000;
  // Wakes waiting lease requests on this replica when work may have appeared here (a release, a
  // re-queue). Other replicas' work is found by polling.
  const wake = new EventEmitter();
  wake.setMaxListeners(0);
  const signalWork = () => wake.emit('work');
  // Waiting lease requests also reap expired leases, at most once a second per replica.
  let lastReap = 0;
  const reapSoon = async () => {
    if (Date.now() - lastReap < 1000) return;
    lastReap = Date.now();
    await reapExpired();
  };

  /**
   * One lease attempt: one statement (lease_scan(), migration 0012), its own transaction. Returns
   * the lease, or the assets whose proofs need a DNS re-check first. Candidates whose asset can no
   * longer be scanned fail with the reason rather than waiting forever.
   */
  async function tryLease(
    w: LeaseWorker,
    kinds: readonly ScanKind[],
  ): Promise<{ lease: Lease | null; stale: string[] }> {
    const now = clock.now();
    const day = utcDay(now);
    const token = randomUUID();
    const { rows } = await asService(db, (q) =>
      sql<LeaseRow>`
        select * from lease_scan(${w.tenantId}::uuid, ${w.workerId}::uuid, ${kinds as string[]}::text[], ${token}::uuid, ${leaseSeconds}::int, ${day}::date,
          ${new Date(now.getTime() - PROOF_FRESH_MS)}::timestamptz, ${KIND_FITS_JSON}::jsonb, ${DEFAULT_DAILY_SCAN_QUOTA}::int,
          ${DEFAULT_PER_ASSET_CONCURRENT_SCANS}::int)`.execute(q),
    );
    const refused = rows.filter((r) => r.outcome === 'refused');
    for (const r of refused) {
      const message = refusalMessage(
        {
          verdict: r.reason as AdmissionRefusal,
          used: 0,
          daily_quota: 0,
          active: 0,
          per_asset: 0,
          asset_kind: r.asset_kind,
        },
        { kind: r.kind as ScanKind, phase: 'lease', quotaDay: day },
      );
      await asService(db, (q) =>
        q
          .updateTable('scans')
          .set({ status: 'failed', error: message, finished_at: now, updated_at: now })
          .where('id', '=', r.scan_id)
          .where('status', '=', 'queued')
          .execute(),
      );
    }
    const l = rows.find((r) => r.outcome === 'leased');
    const stale = rows.filter((r) => r.outcome === 'stale').map((r) => r.asset_id);
    if (!l) return { lease: null, stale };
    const options =
      l.kind === 'template'
        ? await templateOptions(deps, l.scan_id, w.tenantId, l.options ?? {}, l.chunk_spec)
        : (l.options ?? {});
    return {
      lease: {
        scanId: l.scan_id,
        leaseToken: token,
        leaseExpiresAt: iso(l.lease_expires_at!),
        leaseSeconds,
        heartbeatSeconds,
        attempt: l.attempts!,
        maxAttempts,
        kind: l.kind as ScanKind,
        options,
        chunk:
          l.chunk_index === null ? null : { index: l.chunk_index, count: l.chunk_count ?? 0, spec: l.chunk_spec ?? {} },
        asset: { id: l.asset_id, kind: l.asset_kind!, target: l.target!, name: l.asset_name! },
      },
      stale,
    };
  }

  /** Waits until the deadline, a local wake-up, the next poll, or the caller going away. */
  function pause(deadline: number, signal: AbortSignal | undefined): Promise<void> {
    const ms = Math.min(Math.max(0, deadline - Date.now()), pollMs * (0.75 + Math.random() * 0.5));
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        wake.off('work', done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      wake.once('work', done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  return {
    signalWork,

    /** Long poll: a lease as soon as one may be had, else null after waitSeconds (or an abort). */
    async lease(
      w: LeaseWorker,
      input: { kinds: readonly ScanKind[]; waitSeconds: number },
      signal?: AbortSignal,
    ): Promise<Lease | null> {
      const deadline = Date.now() + Math.min(input.waitSeconds, MAX_WAIT_SECONDS) * 1000;
      const rechecked = new Set<string>();
      for (;;) {
        if (signal?.aborted) return null;
        await reapSoon();
        const { lease, stale } = await tryLease(w, input.kinds);
        if (lease) return lease;
        // Stale proofs are re-checked (once per request each) and the scan tried again at once.
        const fresh = stale.filter((a) => !rechecked.has(a)).slice(0, 2);
        for (const assetId of fresh) {
          rechecked.add(assetId);
          await deps.recheckForLease(assetId);
        }
        if (fresh.length > 0) continue;
        if (Date.now() >= deadline) return null;
        await pause(deadline, signal);
      }
    },

    /** Extends the named leases held by this worker; tells which were cancelled or lost. */
    async heartbeat(
      w: LeaseWorker,
      leases: readonly { scanId: string; leaseToken: string }[],
    ): Promise<{ scanId: string; state: LeaseState; leaseExpiresAt: string | null }[]> {
      if (leases.length === 0) return [];
      const now = clock.now();
      const json = JSON.stringify(leases.map((l) => ({ id: l.scanId, token: l.leaseToken })));
      return withService(db, async (tx) => {
        const { rows } = await sql<{ id: string; status: string; extended: Date | null }>`
          with wanted as (select * from jsonb_to_recordset(${json}::jsonb) as x(id uuid, token uuid)),
          extended as (
            update scans s set lease_expires_at = ${LEASE_EXPIRY}, updated_at = ${now}
              from wanted x
             where s.id = x.id and s.lease_token = x.token and s.leased_by = ${w.workerId} and s.tenant_id = ${w.tenantId}
               and s.status in ('leased', 'running')
            returning s.id, s.lease_token, s.lease_expires_at
          )
          select x.id, coalesce(s.status, 'missing') as status,
                 (select e.lease_expires_at from extended e where e.id = x.id and e.lease_token = x.token) as extended
            from wanted x left join scans s on s.id = x.id and s.tenant_id = ${w.tenantId}`.execute(tx);
        return rows.map((r) => ({
          scanId: r.id,
          state: r.extended ? 'active' : r.status === 'cancelled' ? 'cancelled' : 'lost',
          leaseExpiresAt: r.extended ? iso(r.extended) : null,
        }));
      });
    },

    /** Progress under the lease; the first one moves the scan to running. Extends the lease. */
    async progress(
      w: LeaseWorker,
      scanId: string,
      input: { leaseToken: string; percent: number },
    ): Promise<{ leaseExpiresAt: string }> {
      const now = clock.now();
      return withService(db, async (tx) => {
        const row = await tx
          .updateTable('scans')
          .set({
            status: 'running',
            percent: Math.min(99, Math.max(0, Math.round(input.percent))),
            lease_expires_at: LEASE_EXPIRY,
            updated_at: now,
          })
          .where('id', '=', scanId)
          .where('tenant_id', '=', w.tenantId)
          .where('lease_token', '=', input.leaseToken)
          .where('leased_by', '=', w.workerId)
          .where('status', 'in', ['leased', 'running'])
          .returning('lease_expires_at')
          .executeTakeFirst();
        if (!row) throw await fenceError(tx, w, scanId);
        return { leaseExpiresAt: iso(row.lease_expires_at!) };
      });
    },

    /** Gives a lease back unfinished (graceful shutdown): queued again, the attempt not counted. */
    async release(w: LeaseWorker, scanId: string, leaseToken: string): Promise<void> {
      const now = clock.now();
      await withService(db, async (tx) => {
        const row = await tx
          .updateTable('scans')
          .set((eb) => ({
            status: 'queued',
            percent: 0,
            lease_token: null,
            leased_by: null,
            lease_expires_at: null,
            attempts: eb('attempts', '-', 1),
            updated_at: now,
          }))
          .where('id', '=', scanId)
          .where('tenant_id', '=', w.tenantId)
          .where('lease_token', '=', leaseToken)
          .where('leased_by', '=', w.workerId)
          .where('status', 'in', ['leased', 'running'])
          .returning('id')
          .executeTakeFirst();
        if (!row) throw await fenceError(tx, w, scanId);
      });
      signalWork();
    },

    /** The scanner could not run: re-queued with back-off while attempts remain (retryable), else failed. */
    async fail(
      w: LeaseWorker,
      scanId: string,
      input: { leaseToken: string; error: string; retryable: boolean },
    ): Promise<'queued' | 'failed'> {
      const now = clock.now();
      const status = await withService(db, async (tx) => {
        const row = await tx
          .selectFrom('scans')
          .select(['attempts'])
          .where('id', '=', scanId)
          .where('tenant_id', '=', w.tenantId)
          .where('lease_token', '=', input.leaseToken)
          .where('leased_by', '=', w.workerId)
          .where('status', 'in', ['leased', 'running'])
          .forUpdate()
          .executeTakeFirst();
        if (!row) throw await fenceError(tx, w, scanId);
        const requeue = input.retryable && row.attempts < maxAttempts;
        const error = input.error.slice(0, 2000);
        await tx
          .updateTable('scans')
          .set(
            requeue
              ? {
                  status: 'queued',
                  percent: 0,
                  lease_token: null,
                  leased_by: null,
                  lease_expires_at: null,
                  error,
                  not_before: sql<Date>`now() + make_interval(secs => ${row.attempts * BACKOFF_SECONDS})`,
                  updated_at: now,
                }
              : {
                  status: 'failed',
                  error,
                  lease_token: null,
                  lease_expires_at: null,
                  finished_at: now,
                  updated_at: now,
                },
          )
          .where('id', '=', scanId)
          .execute();
        return requeue ? ('queued' as const) : ('failed' as const);
      });
      if (status === 'queued') signalWork();
      return status;
    },

    /** Checks the fence inside the caller's transaction, locking the scan row; throws lease_lost / scan_cancelled. */
    async assertHolds(
      tx: Tx,
      w: LeaseWorker,
      scanId: string,
      leaseToken: string,
    ): Promise<{ assetId: string; kind: ScanKind }> {
      const row = await tx
        .selectFrom('scans')
        .select(['asset_id', 'kind'])
        .where('id', '=', scanId)
        .where('tenant_id', '=', w.tenantId)
        .where('lease_token', '=', leaseToken)
        .where('leased_by', '=', w.workerId)
        .where('status', 'in', ['leased', 'running'])
        .forUpdate()
        .executeTakeFirst();
      if (!row) throw await fenceError(tx, w, scanId);
      return { assetId: row.asset_id, kind: row.kind };
    },

    /** Ends a lease because its report is in: the scan is ingesting until its findings are. */
    async endForIngestion(tx: Tx, scanId: string, now: Date): Promise<void> {
      await tx
        .updateTable('scans')
        .set({ status: 'ingesting', percent: 99, lease_token: null, lease_expires_at: null, updated_at: now })
        .where('id', '=', scanId)
        .execute();
    },

    reapExpired,
  };

  /**
   * Re-queues (or, out of attempts, fails) scans whose lease ran out. Safe on every replica at
   * once: each row is taken by one reaper (SKIP LOCKED) and changed with its lease still expired.
   */
  async function reapExpired(limit = 100): Promise<number> {
    const now = clock.now();
    const { rows } = await withService(db, (tx) =>
      sql<{ id: string; status: string }>`
        update scans s set
          status = case when s.attempts >= ${maxAttempts} then 'failed' else 'queued' end,
          error = case when s.attempts >= ${maxAttempts}
                       then format('The worker stopped reporting (lease expired) on all %s attempts.', s.attempts)
                       else 'The previous worker stopped reporting (lease expired); queued again.' end,
          finished_at = case when s.attempts >= ${maxAttempts} then ${now}::timestamptz else null end,
          not_before = case when s.attempts >= ${maxAttempts} then null else now() + make_interval(secs => s.attempts * ${BACKOFF_SECONDS}) end,
          percent = case when s.attempts >= ${maxAttempts} then s.percent else 0 end,
          lease_token = null, leased_by = null, lease_expires_at = null, updated_at = ${now}::timestamptz
        where s.id in (select id from scans where lease_expires_at < now() and status in ('leased', 'running')
                        order by lease_expires_at limit ${limit} for update skip locked)
          and s.lease_expires_at < now() and s.status in ('leased', 'running')
        returning s.id, s.status`.execute(tx),
    );
    if (rows.some((r) => r.status === 'queued')) signalWork();
    return rows.length;
  }
}

/** Why a fenced write found nothing: the scan was cancelled, or the lease is not this one. */
async function fenceError(tx: Tx, w: LeaseWorker, scanId: string) {
  const s = await tx
    .selectFrom('scans')
    .select(['status'])
    .where('id', '=', scanId)
    .where('tenant_id', '=', w.tenantId)
    .executeTakeFirst();
  if (!s) return appError('scan_not_found', "No such scan for this worker's tenant.");
  if (s.status === 'cancelled')
    return appError('scan_cancelled', 'This scan was cancelled; stop it and drop its results.');
  return appError(
    'lease_lost',
    'This lease is no longer held (it expired, was released, or the token is stale); stop the scan and drop its results.',
  );
}

export type LeaseService = ReturnType<typeof createLeaseService>;
