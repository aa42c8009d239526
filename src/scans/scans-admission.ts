// Scan admission: the one place that decides whether a scan may be queued or started. Used at
// queue time, chunked-queue time and (by the workers' lease path) at lease time.
//
// Correct under concurrency on PostgreSQL (research/workers.md §(a)): transaction-scoped advisory
// locks serialise admissions per tenant (the daily quota) and per asset (concurrency), always in
// that order so two admissions cannot deadlock; the counts are read by the NEXT statement, which
// under READ COMMITTED takes a fresh snapshot and so sees every scan committed by whoever held the
// locks before us. Counting in the statement that waited would see a stale snapshot and overshoot.
// The locks are released at commit, after our own insert is visible. On PGlite (one connection)
// the locks are trivially granted and the same SQL holds.
//
// Accounting (docs/decisions.md, "Scans"): the quota counts top-level scans per UTC day — a
// chunked scan is one scan however many chunks it has. Per-asset concurrency counts unfinished
// top-level scans; the chunks of one scan share their parent's slot and may run in parallel.
import { sql } from 'kysely';
import type { Tx } from '../db/tenant.ts';
import { appError, type AppError } from '../lib/errors.ts';
import { KINDS_FOR_ASSET, type ScanKind } from './scans-schemas.ts';

export const DEFAULT_DAILY_SCAN_QUOTA = 200;
export const DEFAULT_PER_ASSET_CONCURRENT_SCANS = 1;

/** Statuses of a top-level scan that has started work (holds its asset slot at lease time). */
const NOT_STARTED_OR_FINISHED = `('queued', 'chunking', 'succeeded', 'failed', 'cancelled')`;

export interface AdmissionRequest {
  tenantId: string;
  assetId: string;
  /** The scanner kind; checked against the asset's kind when given. */
  kind?: ScanKind;
  /**
   * queue: a new scan (chunked or not) asks for one quota unit and one asset slot.
   * lease: an already-queued scan (a standalone scan or a chunk) asks to start; pass scanId.
   */
  phase: 'queue' | 'lease';
  scanId?: string;
  now: Date;
  /** false: do not wait for the locks (lease path); a busy lock answers reason 'busy'. Default true. */
  wait?: boolean;
}

export type AdmissionRefusal = 'asset_not_found' | 'asset_archived' | 'asset_not_verified' | 'scan_kind_mismatch' | 'quota_exceeded' | 'asset_scan_limit';

export type AdmissionResult =
  | { admitted: true; quotaDay: string; used: number; dailyScanQuota: number; active: number; perAssetConcurrentScans: number }
  | { admitted: false; reason: AdmissionRefusal | 'busy'; message: string; quotaDay: string; retryAfterSeconds?: number };

/** The UTC calendar day a moment falls on, as YYYY-MM-DD. */
export const utcDay = (now: Date): string => now.toISOString().slice(0, 10);
/** Seconds until the next UTC midnight (when a spent quota refills). */
export const secondsToUtcMidnight = (now: Date): number => {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
};

interface Facts {
  asset_kind: string | null;
  verification_status: string | null;
  archived: boolean | null;
  daily_scan_quota: number;
  per_asset_concurrent_scans: number;
  used: number;
  active: number;
}

/** Takes the tenant then the asset lock. Returns false when `wait` is off and a lock is taken. */
async function lock(tx: Tx, tenantId: string, assetId: string, wait: boolean): Promise<boolean> {
  const tenantKey = `rampart.scan-quota:${tenantId}`;
  const assetKey = `rampart.scan-asset:${assetId}`;
  if (wait) {
    await sql`select pg_advisory_xact_lock(hashtextextended(${tenantKey}, 0)), pg_advisory_xact_lock(hashtextextended(${assetKey}, 0))`.execute(tx);
    return true;
  }
  const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(hashtextextended(${tenantKey}, 0)) and pg_try_advisory_xact_lock(hashtextextended(${assetKey}, 0)) as ok`.execute(tx);
  return rows[0]?.ok === true;
}

/**
 * Decides one admission inside the caller's transaction (tenant or service role). Admitted
 * queue-time callers insert their scan in the same transaction, stamped with `quotaDay`.
 * Refusals change nothing.
 */
export async function admitScan(tx: Tx, req: AdmissionRequest): Promise<AdmissionResult> {
  const quotaDay = utcDay(req.now);
  if (req.phase === 'lease' && !req.scanId) throw new Error('admitScan: the lease phase needs scanId');
  if (!(await lock(tx, req.tenantId, req.assetId, req.wait ?? true))) return { admitted: false, reason: 'busy', message: 'Another admission for this tenant or asset is in progress.', quotaDay };

  // A separate statement from the lock: a fresh snapshot (see the header).
  const { rows } =
    req.phase === 'queue'
      ? await sql<Facts>`
          select a.kind as asset_kind, a.verification_status, a.archived_at is not null as archived,
                 coalesce(ts.daily_scan_quota, ${DEFAULT_DAILY_SCAN_QUOTA})::int as daily_scan_quota,
                 coalesce(ts.per_asset_concurrent_scans, ${DEFAULT_PER_ASSET_CONCURRENT_SCANS})::int as per_asset_concurrent_scans,
                 (select count(*) from scans q where q.tenant_id = ${req.tenantId} and q.quota_day = ${quotaDay}::date)::int as used,
                 (select count(*) from scans c where c.asset_id = a.id and c.parent_id is null
                    and c.status not in ('succeeded', 'failed', 'cancelled'))::int as active
            from assets a left join tenant_settings ts on ts.tenant_id = a.tenant_id
           where a.id = ${req.assetId} and a.tenant_id = ${req.tenantId}`.execute(tx)
      : await sql<Facts>`
          with me as (
            select t.id, t.created_at, t.quota_day
              from scans s join scans t on t.id = coalesce(s.parent_id, s.id)
             where s.id = ${req.scanId!} and s.tenant_id = ${req.tenantId}
          )
          select a.kind as asset_kind, a.verification_status, a.archived_at is not null as archived,
                 coalesce(ts.daily_scan_quota, ${DEFAULT_DAILY_SCAN_QUOTA})::int as daily_scan_quota,
                 coalesce(ts.per_asset_concurrent_scans, ${DEFAULT_PER_ASSET_CONCURRENT_SCANS})::int as per_asset_concurrent_scans,
                 -- Lease time: this scan must rank within the quota of the day it was queued on
                 -- (a lowered quota holds back the scans beyond it).
                 (select count(*) from scans q, me where q.tenant_id = ${req.tenantId} and me.quota_day is not null
                    and q.quota_day = me.quota_day and (q.created_at, q.id) < (me.created_at, me.id))::int as used,
                 -- Other top-level scans of the asset that have started. This scan's own parent is
                 -- excluded: chunks share their parent's slot.
                 (select count(*) from scans c, me where c.asset_id = a.id and c.parent_id is null and c.id <> me.id
                    and c.status not in ${sql.raw(NOT_STARTED_OR_FINISHED)})::int as active
            from assets a left join tenant_settings ts on ts.tenant_id = a.tenant_id
           where a.id = ${req.assetId} and a.tenant_id = ${req.tenantId} and exists (select 1 from me)`.execute(tx);

  const f = rows[0];
  const refuse = (reason: AdmissionRefusal, message: string, retryAfterSeconds?: number): AdmissionResult => ({
    admitted: false,
    reason,
    message,
    quotaDay,
    ...(retryAfterSeconds ? { retryAfterSeconds } : {}),
  });
  if (!f) return refuse('asset_not_found', req.phase === 'lease' ? 'No such scan or asset in this tenant.' : 'No such asset in this tenant.');
  const refusal = assetRefusal(f, req.kind);
  if (refusal) return refuse(...refusal);
  if (f.used >= f.daily_scan_quota)
    return refuse('quota_exceeded', `The daily scan quota of ${f.daily_scan_quota} is used up for ${quotaDay} (UTC).`, secondsToUtcMidnight(req.now));
  if (f.active >= f.per_asset_concurrent_scans)
    return refuse(
      'asset_scan_limit',
      `This asset already has ${f.active} unfinished ${f.active === 1 ? 'scan' : 'scans'}; the limit is ${f.per_asset_concurrent_scans} at a time. Wait for ${f.active === 1 ? 'it' : 'one'} to finish or cancel it.`,
    );
  return { admitted: true, quotaDay, used: f.used, dailyScanQuota: f.daily_scan_quota, active: f.active, perAssetConcurrentScans: f.per_asset_concurrent_scans };
}

/**
 * The asset checks of admission alone (exists, not archived, proof or bypass, kind fits), for
 * schedules: they are checked when a schedule is made, and again by admission at every run.
 */
export async function assertAssetScannable(tx: Tx, tenantId: string, assetId: string, kind: ScanKind): Promise<void> {
  const a = await tx.selectFrom('assets').select(['kind', 'verification_status', 'archived_at']).where('id', '=', assetId).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!a) throw appError('asset_not_found', 'No such asset in this tenant.');
  const refusal = assetRefusal({ asset_kind: a.kind, verification_status: a.verification_status, archived: a.archived_at !== null }, kind);
  if (refusal) throw appError(refusal[0], refusal[1]);
}

function assetRefusal(f: Pick<Facts, 'asset_kind' | 'verification_status' | 'archived'>, kind: ScanKind | undefined): [AdmissionRefusal, string] | null {
  if (f.asset_kind === null) return ['asset_not_found', 'No such asset in this tenant.'];
  if (f.archived) return ['asset_archived', 'This asset is archived; restore it before scanning it.'];
  if (f.verification_status !== 'verified' && f.verification_status !== 'bypassed')
    return ['asset_not_verified', 'This asset has no verified ownership proof; verify it (or a domain it falls under) before scanning it.'];
  if (kind) {
    const fits = KINDS_FOR_ASSET[f.asset_kind as keyof typeof KINDS_FOR_ASSET] as readonly ScanKind[] | undefined;
    if (!fits?.includes(kind)) return ['scan_kind_mismatch', `A ${kind} scan does not apply to a ${f.asset_kind.replace('_', ' ')} asset; use ${fits?.join(', ') ?? 'another kind'}.`];
  }
  return null;
}

/** The client-facing error for a refusal. */
export function admissionError(r: Extract<AdmissionResult, { admitted: false }>): AppError {
  if (r.reason === 'busy') return appError('service_unavailable', r.message, { headers: { 'retry-after': '1' } });
  return appError(r.reason, r.message, r.retryAfterSeconds ? { headers: { 'retry-after': String(r.retryAfterSeconds) }, details: { quotaDay: r.quotaDay } } : {});
}

/** admitScan that throws the client-facing error on refusal. */
export async function assertAdmitted(tx: Tx, req: AdmissionRequest): Promise<Extract<AdmissionResult, { admitted: true }>> {
  const r = await admitScan(tx, req);
  if (!r.admitted) throw admissionError(r);
  return r;
}
