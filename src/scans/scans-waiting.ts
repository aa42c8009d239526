// Why a queued scan waits, in words a person can act on. The quota and per-asset answers come
// from scan_admission() in its 'explain' phase (migration 0029): the rule the lease applies, read
// without locks. Before those, the two things no lease can happen without: a worker of the tenant
// that is asking for work, and the tenant's webhook signing secret its requests are signed with.
import { sql } from 'kysely';
import type { Tx } from '../db/tenant.ts';
import {
  DEFAULT_DAILY_SCAN_QUOTA,
  DEFAULT_PER_ASSET_CONCURRENT_SCANS,
  KIND_FITS_JSON,
  refusalMessage,
  utcDay,
  type AdmissionVerdict,
} from './scans-admission.ts';
import type { ScanDto, ScanKind, WaitReason } from './scans-schemas.ts';

/** A worker seen this recently is asking for work (a waiting lease request comes every 25 s or sooner). */
export const WORKER_ACTIVE_SECONDS = 120;

const WAITING = new Set(['queued', 'chunking', 'aggregating']);

interface Row extends AdmissionVerdict {
  id: string;
  not_before: Date | string | null;
  queued_chunks: number;
  chunk_count: number | null;
}

/** The wait reasons of the scans given (top-level or chunks), keyed by id; scans not waiting have none. */
export async function waitReasons(
  tx: Tx,
  tenantId: string,
  scans: readonly Pick<ScanDto, 'id' | 'status' | 'kind'>[],
  now: Date,
): Promise<Map<string, WaitReason>> {
  const out = new Map<string, WaitReason>();
  const waiting = scans.filter((s) => WAITING.has(s.status));
  if (waiting.length === 0) return out;
  const {
    rows: [tenant],
  } = await sql<{ secret: boolean; workers: number; active: number }>`
    select exists (select 1 from tenant_webhook_secrets where tenant_id = ${tenantId}) as secret,
           (select count(*) from workers where tenant_id = ${tenantId} and revoked_at is null)::int as workers,
           (select count(*) from workers where tenant_id = ${tenantId} and revoked_at is null
              and last_seen_at > now() - make_interval(secs => ${WORKER_ACTIVE_SECONDS}))::int as active`.execute(tx);
  const { rows } = await sql<Row>`
    select s.id, s.not_before, s.chunk_count,
           (select count(*) from scans c where c.parent_id = s.id and c.status = 'queued')::int as queued_chunks, v.*
      from scans s
      cross join lateral scan_admission(s.tenant_id, s.asset_id, s.kind, 'explain', s.id, ${utcDay(now)}::date, false, ${KIND_FITS_JSON}::jsonb,
                                        ${DEFAULT_DAILY_SCAN_QUOTA}::int, ${DEFAULT_PER_ASSET_CONCURRENT_SCANS}::int) v
     where s.tenant_id = ${tenantId} and s.id = any(${waiting.map((s) => s.id)}::uuid[])`.execute(tx);
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const s of waiting) {
    const r = byId.get(s.id);
    if (!r) continue;
    const reason = reasonFor(s, r, tenant!, now);
    if (reason) out.set(s.id, reason);
  }
  return out;
}

/** A wait reason (its codes are the scan's `waitReason.code`, not error codes). */
const wait = (code: WaitReason['code'], message: string): WaitReason => ({ code, message });

function reasonFor(
  s: Pick<ScanDto, 'status' | 'kind'>,
  r: Row,
  tenant: { secret: boolean; workers: number; active: number },
  now: Date,
): WaitReason | null {
  // A chunked scan that has started waits only for its chunks.
  if (s.status === 'aggregating') {
    if (r.queued_chunks === 0) return null;
    return wait(
      'waiting_for_chunks',
      `${r.queued_chunks} of ${r.chunk_count} chunks are waiting for a worker; the others have started.`,
    );
  }
  if (!tenant.secret)
    return wait(
      'no_signing_secret',
      'This tenant has no webhook signing secret, so no worker can sign its requests. An owner or admin generates one under Workers.',
    );
  if (tenant.workers === 0)
    return wait(
      'no_worker',
      "This tenant has no worker to run scans. Enroll one under Workers, or ask your installation's administrators for a hosted worker.",
    );
  if (tenant.active === 0)
    return wait(
      'no_active_worker',
      `None of this tenant's workers asked for work in the last ${WORKER_ACTIVE_SECONDS / 60} minutes. Start a worker (rampart-worker run), or check Workers for one that stopped.`,
    );
  if (r.verdict !== 'admitted' && r.verdict !== 'busy')
    return wait(r.verdict, refusalMessage(r, { kind: s.kind as ScanKind, phase: 'lease', quotaDay: utcDay(now) }));
  if (r.not_before && new Date(r.not_before).getTime() > now.getTime())
    return wait(
      'retry_backoff',
      `The previous attempt failed; it is tried again after ${new Date(r.not_before).toISOString().slice(11, 19)} UTC.`,
    );
  return wait(
    'waiting_for_worker',
    'Waiting for a worker to take it: every worker of this tenant is busy or about to ask for work.',
  );
}

/** The DTOs with their wait reasons filled in. */
export async function withWaitReasons<T extends ScanDto>(
  tx: Tx,
  tenantId: string,
  scans: T[],
  now: Date,
): Promise<T[]> {
  const reasons = await waitReasons(tx, tenantId, scans, now);
  return scans.map((s) => ({ ...s, waitReason: reasons.get(s.id) ?? null }));
}
