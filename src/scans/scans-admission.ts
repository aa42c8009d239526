// Scan admission: the one place that decides whether a scan may be queued or started. Used at
// queue time, chunked-queue time and (by the workers' lease path) at lease time.
//
// The decision itself is the database function scan_admission() (migration 0012), so the
// workers' one-statement lease (lease_scan()) applies exactly the same rule; this module passes it
// the kind rule and defaults and turns verdicts into messages.
// Correct under concurrency on PostgreSQL (docs/decisions.md, scan admission): transaction-scoped advisory
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

export type AdmissionRefusal =
  | 'asset_not_found'
  | 'asset_archived'
  | 'asset_not_verified'
  | 'scan_kind_mismatch'
  | 'quota_exceeded'
  | 'asset_scan_limit';

export type AdmissionResult =
  | {
      admitted: true;
      quotaDay: string;
      used: number;
      dailyScanQuota: number;
      active: number;
      perAssetConcurrentScans: number;
    }
  | {
      admitted: false;
      reason: AdmissionRefusal | 'busy';
      message: string;
      quotaDay: string;
      retryAfterSeconds?: number;
      used: number;
    };

/** The UTC calendar day a moment falls on, as YYYY-MM-DD. */
export const utcDay = (now: Date): string => now.toISOString().slice(0, 10);
/** Seconds until the next UTC midnight (when a spent quota refills). */
export const secondsToUtcMidnight = (now: Date): number => {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
};

/** KINDS_FOR_ASSET as the database function takes it (the rule lives here, once). */
export const KIND_FITS_JSON = JSON.stringify(KINDS_FOR_ASSET);

export interface AdmissionVerdict {
  verdict: AdmissionRefusal | 'busy' | 'admitted';
  used: number;
  daily_quota: number;
  active: number;
  per_asset: number;
  asset_kind: string | null;
}

/** Runs the database's scan_admission() (locks, then counts in a fresh statement; see 0012). */
async function verdictOf(
  tx: Tx,
  req: {
    tenantId: string;
    assetId: string;
    kind?: ScanKind | undefined;
    phase: 'queue' | 'lease' | 'check';
    scanId?: string | undefined;
    day: string;
    wait: boolean;
  },
): Promise<AdmissionVerdict> {
  const { rows } = await sql<AdmissionVerdict>`
    select * from scan_admission(${req.tenantId}::uuid, ${req.assetId}::uuid, ${req.kind ?? null}::text, ${req.phase}::text, ${req.scanId ?? null}::uuid,
      ${req.day}::date, ${req.wait}::boolean, ${KIND_FITS_JSON}::jsonb, ${DEFAULT_DAILY_SCAN_QUOTA}::int, ${DEFAULT_PER_ASSET_CONCURRENT_SCANS}::int)`.execute(
    tx,
  );
  return rows[0]!;
}

/** What a refusal tells the person (or worker) who asked. */
export function refusalMessage(
  v: Pick<AdmissionVerdict, 'verdict' | 'used' | 'daily_quota' | 'active' | 'per_asset' | 'asset_kind'>,
  ctx: { kind?: ScanKind | undefined; phase: 'queue' | 'lease' | 'check'; quotaDay: string },
): string {
  switch (v.verdict) {
    case 'busy':
      return 'Another admission for this tenant or asset is in progress.';
    case 'asset_not_found':
      return ctx.phase === 'lease' ? 'No such scan or asset in this tenant.' : 'No such asset in this tenant.';
    case 'asset_archived':
      return 'This asset is archived; restore it before scanning it.';
    case 'asset_not_verified':
      return 'This asset has no verified ownership proof; verify it (or a domain it falls under) before scanning it.';
    case 'scan_kind_mismatch': {
      const fits = v.asset_kind
        ? (KINDS_FOR_ASSET[v.asset_kind as keyof typeof KINDS_FOR_ASSET] as readonly ScanKind[] | undefined)
        : undefined;
      return `A ${ctx.kind ?? 'scan'} scan does not apply to a ${(v.asset_kind ?? 'asset').replace('_', ' ')} asset; use ${fits?.join(', ') ?? 'another kind'}.`;
    }
    case 'quota_exceeded':
      return `The daily scan quota of ${v.daily_quota} is used up for ${ctx.quotaDay} (UTC).`;
    case 'asset_scan_limit':
      return `This asset already has ${v.active} unfinished ${v.active === 1 ? 'scan' : 'scans'}; the limit is ${v.per_asset} at a time. Wait for ${v.active === 1 ? 'it' : 'one'} to finish or cancel it.`;
    default:
      return '';
  }
}

/**
 * Decides one admission inside the caller's transaction (tenant or service role). Admitted
 * queue-time callers insert their scan in the same transaction, stamped with `quotaDay`.
 * Refusals change nothing.
 */
export async function admitScan(tx: Tx, req: AdmissionRequest): Promise<AdmissionResult> {
  const quotaDay = utcDay(req.now);
  if (req.phase === 'lease' && !req.scanId) throw new Error('admitScan: the lease phase needs scanId');
  const v = await verdictOf(tx, { ...req, day: quotaDay, wait: req.wait ?? true });
  if (v.verdict === 'admitted')
    return {
      admitted: true,
      quotaDay,
      used: v.used,
      dailyScanQuota: v.daily_quota,
      active: v.active,
      perAssetConcurrentScans: v.per_asset,
    };
  return {
    admitted: false,
    reason: v.verdict,
    message: refusalMessage(v, { kind: req.kind, phase: req.phase, quotaDay }),
    quotaDay,
    used: v.used,
    ...(v.verdict === 'quota_exceeded' ? { retryAfterSeconds: secondsToUtcMidnight(req.now) } : {}),
  };
}

/**
 * The asset checks of admission alone (exists, not archived, proof or bypass, kind fits), for
 * schedules: they are checked when a schedule is made, and again by admission at every run.
 */
export async function assertAssetScannable(tx: Tx, tenantId: string, assetId: string, kind: ScanKind): Promise<void> {
  const v = await verdictOf(tx, { tenantId, assetId, kind, phase: 'check', day: utcDay(new Date()), wait: false });
  if (v.verdict !== 'admitted')
    throw appError(v.verdict as AdmissionRefusal, refusalMessage(v, { kind, phase: 'check', quotaDay: '' }));
}

/** The client-facing error for a refusal. */
export function admissionError(r: Extract<AdmissionResult, { admitted: false }>): AppError {
  if (r.reason === 'busy') return appError('service_unavailable', r.message, { headers: { 'retry-after': '1' } });
  return appError(
    r.reason,
    r.message,
    r.retryAfterSeconds
      ? { headers: { 'retry-after': String(r.retryAfterSeconds) }, details: { quotaDay: r.quotaDay } }
      : {},
  );
}

/** admitScan that throws the client-facing error on refusal. */
export async function assertAdmitted(
  tx: Tx,
  req: AdmissionRequest,
): Promise<Extract<AdmissionResult, { admitted: true }>> {
  const r = await admitScan(tx, req);
  if (!r.admitted) throw admissionError(r);
  return r;
}
