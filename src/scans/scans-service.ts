// Scans: queue (through admission), list, detail with chunks, cancel, today's usage. Tenant
// operations run inside withTenantMember (RLS); the schedule tick queues through queueScan as the
// service role.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { AuditService } from '../audit/index.ts';
import type { DB, ScansTable } from '../db/schema.ts';
import type { ReportCoverage } from '../findings/index.ts';
import { type Caller, type Tx, tenantAccess } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { AppError, appError } from '../lib/errors.ts';
import {
  admissionError,
  admitScan,
  DEFAULT_DAILY_SCAN_QUOTA,
  DEFAULT_PER_ASSET_CONCURRENT_SCANS,
  utcDay,
} from './scans-admission.ts';
import { withWaitReasons } from './scans-waiting.ts';
import { ChunkPlanError, planScan, type ScanDefinition, type ScanPlan } from './scans-chunks.ts';
import {
  redactScanOptions,
  TERMINAL_STATUSES,
  type ChunkSpec,
  type CreateScanBody,
  type ScanDto,
  type ScanStatus,
} from './scans-schemas.ts';
import type { z } from 'zod';
import type { listScansQuerySchema } from './scans-schemas.ts';

type ScanRow = Selectable<ScansTable> & {
  asset_name: string;
  asset_target: string;
  asset_kind: string;
  requested_email: string | null;
};

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
const TERMINAL = TERMINAL_STATUSES as ScanStatus[];

export function toScanDto(r: ScanRow): ScanDto {
  return {
    id: r.id,
    kind: r.kind,
    source: r.source,
    status: r.status,
    percent: r.percent,
    asset: { id: r.asset_id, name: r.asset_name, target: r.asset_target, kind: r.asset_kind },
    options: redactScanOptions(r.options),
    parentId: r.parent_id,
    chunkIndex: r.chunk_index,
    chunkCount: r.chunk_count,
    chunkSpec: (r.chunk_spec as ChunkSpec | null) ?? null,
    scheduleId: r.schedule_id,
    requestedBy: r.requested_by && r.requested_email ? { id: r.requested_by, email: r.requested_email } : null,
    error: r.error,
    outcome: r.outcome,
    outcomeReason: r.outcome_reason,
    attempts: r.attempts,
    waitReason: null,
    createdAt: iso(r.created_at)!,
    startedAt: iso(r.started_at),
    finishedAt: iso(r.finished_at),
    updatedAt: iso(r.updated_at)!,
  };
}

/** Scans with the asset and requester columns the DTO needs. */
export const selectScans = (tx: Tx) =>
  tx
    .selectFrom('scans as s')
    .innerJoin('assets as a', 'a.id', 's.asset_id')
    .leftJoin('user as u', 'u.id', 's.requested_by')
    .selectAll('s')
    .select(['a.name as asset_name', 'a.target as asset_target', 'a.kind as asset_kind', 'u.email as requested_email']);

/** The plan for a request, with a bad chunk count reported as a validation error on its field. */
export function planOrThrow(body: ScanDefinition): ScanPlan {
  try {
    return planScan(body);
  } catch (e) {
    if (e instanceof ChunkPlanError)
      throw new AppError('validation_failed', e.message, { details: [{ path: e.path, message: e.message }] });
    throw e;
  }
}

export interface QueueInput {
  tenantId: string;
  assetId: string;
  plan: ScanPlan;
  requestedBy: string | null;
  scheduleId: string | null;
  now: Date;
  /** The new scan's id, when the caller needs it before queueing (to audit first). */
  id?: string;
  /**
   * Schedules: an asset at its concurrency limit whose scans have all started still takes this
   * scan, which waits behind them (the lease holds it until a slot frees). One waiting scan per
   * asset at most, so a long scan never piles up a backlog of runs.
   */
  queueBehindBusyAsset?: boolean;
}

/**
 * Admits and inserts a scan (a parent plus its chunks when chunked) in the caller's transaction.
 * Throws the admission refusal as an AppError; nothing is written then. The admission locks are
 * held until the caller commits, so callers keep the work after this call short: the parent and
 * its chunks go in as one statement (the self-reference is checked at its end).
 */
export async function queueScan(tx: Tx, input: QueueInput): Promise<{ id: string; rows: Selectable<ScansTable>[] }> {
  const { tenantId, assetId, plan, now } = input;
  const admitted = await admitBehind(tx, input);
  const id = input.id ?? randomUUID();
  const chunked = plan.chunks.length > 0;
  const common = {
    tenant_id: tenantId,
    asset_id: assetId,
    kind: plan.kind,
    options: JSON.stringify(plan.options),
    schedule_id: input.scheduleId,
    requested_by: input.requestedBy,
    created_at: now,
    updated_at: now,
  };
  const rows = await tx
    .insertInto('scans')
    .values([
      {
        ...common,
        id,
        status: chunked ? 'chunking' : 'queued',
        chunk_count: chunked ? plan.chunks.length : null,
        quota_day: admitted.quotaDay,
        quota_seq: admitted.used + 1,
      },
      ...plan.chunks.map((spec, i) => ({
        ...common,
        status: 'queued' as const,
        parent_id: id,
        chunk_index: i,
        chunk_count: plan.chunks.length,
        chunk_spec: JSON.stringify(spec),
      })),
    ])
    .returningAll()
    .execute();
  return { id, rows: rows.sort((a, b) => (a.chunk_index ?? -1) - (b.chunk_index ?? -1)) };
}

/** Queue-time admission, with a schedule's run let in behind scans that have all started. */
async function admitBehind(tx: Tx, input: QueueInput): Promise<{ quotaDay: string; used: number }> {
  const r = await admitScan(tx, {
    tenantId: input.tenantId,
    assetId: input.assetId,
    kind: input.plan.kind,
    phase: 'queue',
    now: input.now,
  });
  if (r.admitted) return r;
  if (r.reason !== 'asset_scan_limit' || !input.queueBehindBusyAsset) throw admissionError(r);
  // The asset's lock is held (admission): no other scan of it can be queued meanwhile.
  const waiting = await tx
    .selectFrom('scans')
    .select('id')
    .where('asset_id', '=', input.assetId)
    .where('parent_id', 'is', null)
    .where('status', 'in', ['queued', 'chunking'])
    .limit(1)
    .executeTakeFirst();
  if (waiting)
    throw appError(
      'asset_scan_limit',
      'This asset is busy and a scan of it is already waiting to start; this run was skipped.',
      { details: { waitingScanId: waiting.id } },
    );
  return r;
}

/**
 * Cancels a standalone or chunked scan. Chunks are locked (in id order) before the parent is
 * touched, the same child-then-parent order as the aggregation trigger, so a worker updating a
 * chunk at the same moment cannot deadlock with us. The quota is refunded when no work started.
 */
export async function cancelScan(tx: Tx, tenantId: string, scanId: string, now: Date): Promise<void> {
  const scan = await tx
    .selectFrom('scans')
    .select(['id', 'status', 'parent_id', 'chunk_count'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', scanId)
    .executeTakeFirst();
  if (!scan) throw appError('scan_not_found', 'No such scan in this tenant.');
  if (scan.parent_id)
    throw appError('scan_not_cancellable', 'This is one chunk of a scan; cancel the scan it belongs to.', {
      details: { parentId: scan.parent_id },
    });
  const finished = () => appError('scan_not_cancellable', 'This scan has already finished.');
  if (TERMINAL.includes(scan.status)) throw finished();
  if (scan.chunk_count) {
    const chunks = await tx
      .selectFrom('scans')
      .select(['id', 'attempts', 'status'])
      .where('tenant_id', '=', tenantId)
      .where('parent_id', '=', scanId)
      .orderBy('id')
      .forUpdate()
      .execute();
    const untouched = chunks.every((c) => c.attempts === 0 && c.status === 'queued');
    const updated = await tx
      .updateTable('scans')
      .set({ status: 'cancelled', finished_at: now, updated_at: now, ...(untouched ? { quota_day: null } : {}) })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', scanId)
      .where('status', 'not in', TERMINAL)
      .returning('id')
      .executeTakeFirst();
    if (!updated) throw finished();
    // The parent is terminal now, so the trigger leaves it alone while its chunks follow.
    await tx
      .updateTable('scans')
      .set({ status: 'cancelled', finished_at: now, updated_at: now, lease_token: null, lease_expires_at: null })
      .where('tenant_id', '=', tenantId)
      .where('parent_id', '=', scanId)
      .where('status', 'not in', TERMINAL)
      .execute();
    return;
  }
  const updated = await tx
    .updateTable('scans')
    .set({
      status: 'cancelled',
      finished_at: now,
      updated_at: now,
      lease_token: null,
      lease_expires_at: null,
      quota_day: sql<string | null>`case when attempts = 0 then null else quota_day end`,
    })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', scanId)
    .where('status', 'not in', TERMINAL)
    .returning('id')
    .executeTakeFirst();
  if (!updated) throw finished();
}

export function createScansService(deps: { db: Kysely<DB>; audit: AuditService; clock: Clock }) {
  const { db, audit, clock } = deps;

  const { asMember } = tenantAccess(db);

  async function load(tx: Tx, tenantId: string, scanId: string) {
    const row = await selectScans(tx).where('s.id', '=', scanId).where('s.tenant_id', '=', tenantId).executeTakeFirst();
    if (!row) throw appError('scan_not_found', 'No such scan in this tenant.');
    return row as ScanRow;
  }

  async function detail(tx: Tx, tenantId: string, scanId: string) {
    const scan = await load(tx, tenantId, scanId);
    const children = scan.chunk_count
      ? ((await selectScans(tx)
          .where('s.parent_id', '=', scanId)
          .where('s.tenant_id', '=', tenantId)
          .orderBy('s.chunk_index')
          .execute()) as ScanRow[])
      : [];
    const [dto, ...chunks] = await withWaitReasons(
      tx,
      tenantId,
      [toScanDto(scan), ...children.map(toScanDto)],
      clock.now(),
    );
    return { scan: dto!, children: chunks, coverage: (scan.coverage as ReportCoverage | null) ?? null };
  }

  return {
    async list(tenantId: string, caller: Caller, q: z.output<typeof listScansQuerySchema>) {
      return asMember(tenantId, caller, async (tx) => {
        let query = selectScans(tx)
          .select(
            sql<string>`to_char(s.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('cursor_at'),
          )
          .where('s.tenant_id', '=', tenantId)
          .where('s.parent_id', 'is', null)
          .orderBy('s.created_at', 'desc')
          .orderBy('s.id', 'desc')
          .limit(q.limit + 1);
        if (q.status) query = query.where('s.status', '=', q.status);
        if (q.active !== undefined) query = query.where('s.status', q.active ? 'not in' : 'in', TERMINAL);
        if (q.kind) query = query.where('s.kind', '=', q.kind);
        if (q.assetId) query = query.where('s.asset_id', '=', q.assetId);
        if (q.scheduleId) query = query.where('s.schedule_id', '=', q.scheduleId);
        if (q.before) {
          const [at, id] = q.before.split('_') as [string, string];
          if (Number.isNaN(Date.parse(at)))
            throw appError('validation_failed', 'Pass nextBefore from the previous page unchanged.');
          query = query.where(sql<boolean>`(s.created_at, s.id) < (${at}::timestamptz, ${id}::uuid)`);
        }
        const rows = await query.execute();
        const page = rows.slice(0, q.limit);
        const last = page.at(-1);
        const scans = await withWaitReasons(
          tx,
          tenantId,
          page.map((r) => toScanDto(r as ScanRow)),
          clock.now(),
        );
        return { scans, nextBefore: rows.length > q.limit && last ? `${last.cursor_at}_${last.id}` : null };
      });
    },

    async create(tenantId: string, caller: Caller, body: CreateScanBody) {
      const plan = planOrThrow(body);
      return asMember(tenantId, caller, async (tx) => {
        // Everything but the admission and the insert happens before queueScan takes the
        // tenant's admission lock, so concurrent requests of one tenant wait as little as
        // possible; a refusal rolls the audit entry back with the rest.
        const id = randomUUID();
        const asset = await tx
          .selectFrom('assets')
          .select(['name', 'target', 'kind'])
          .where('id', '=', body.assetId)
          .where('tenant_id', '=', tenantId)
          .executeTakeFirst();
        await audit.record(
          {
            tenantId,
            actorUserId: caller.userId,
            actorEmail: caller.email,
            action: 'scan.queued',
            targetType: 'scan',
            targetId: id,
            details: { assetId: body.assetId, kind: plan.kind, chunkCount: plan.chunks.length || null },
          },
          tx,
        );
        const { rows } = await queueScan(tx, {
          tenantId,
          assetId: body.assetId,
          plan,
          requestedBy: caller.userId,
          scheduleId: null,
          now: clock.now(),
          id,
        });
        // Admitted, so the asset exists.
        const withAsset = rows.map((r) =>
          toScanDto({
            ...r,
            asset_name: asset!.name,
            asset_target: asset!.target,
            asset_kind: asset!.kind,
            requested_email: caller.email,
          }),
        );
        return { scan: withAsset[0]!, children: withAsset.slice(1), coverage: null };
      });
    },

    async get(tenantId: string, caller: Caller, scanId: string) {
      return asMember(tenantId, caller, (tx) => detail(tx, tenantId, scanId));
    },

    async cancel(tenantId: string, caller: Caller, scanId: string) {
      return asMember(tenantId, caller, async (tx) => {
        const before = await load(tx, tenantId, scanId);
        await cancelScan(tx, tenantId, scanId, clock.now());
        await audit.record(
          {
            tenantId,
            actorUserId: caller.userId,
            actorEmail: caller.email,
            action: 'scan.cancelled',
            targetType: 'scan',
            targetId: scanId,
            details: { assetId: before.asset_id, kind: before.kind, previousStatus: before.status },
          },
          tx,
        );
        return detail(tx, tenantId, scanId);
      });
    },

    /** Today's quota use (UTC) and the tenant's limits, for the scan form. */
    async usage(tenantId: string, caller: Caller) {
      return asMember(tenantId, caller, async (tx) => {
        const now = clock.now();
        const day = utcDay(now);
        const { rows } = await sql<{ used: number; quota: number | null; per_asset: number | null }>`
          select (select count(*) from scans where tenant_id = ${tenantId} and quota_day = ${day}::date)::int as used,
                 ts.daily_scan_quota as quota, ts.per_asset_concurrent_scans as per_asset
            from (select 1) x left join tenant_settings ts on ts.tenant_id = ${tenantId}`.execute(tx);
        const r = rows[0]!;
        const resetsAt = new Date(
          Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1),
        ).toISOString();
        return {
          day,
          used: r.used,
          dailyScanQuota: r.quota ?? DEFAULT_DAILY_SCAN_QUOTA,
          perAssetConcurrentScans: r.per_asset ?? DEFAULT_PER_ASSET_CONCURRENT_SCANS,
          resetsAt,
        };
      });
    },
  };
}

export type ScansService = ReturnType<typeof createScansService>;
