// Rampart's own issue reporter: system errors, failed asset verifications, critical findings and
// the segmentation-standard confirmation go to the management peer as event_report calls, through
// the outbox, de-duplicated for 5 minutes by kind and fingerprint across every replica.
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../db/schema.ts';
import { withService, type Tx } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { sha256Hex } from '../lib/crypto.ts';
import { BRAND } from '../mesh/mesh-brand.ts';
import type { Outbox, OutboxSubject } from '../mesh/mesh-outbox.ts';

export { BRAND };
export const DEDUPE_WINDOW_MS = 5 * 60_000;

/** Every kind the reporter sends (the brand test enumerates them). */
export const REPORT_KINDS = [
  'system.error',
  'asset.verification_failed',
  'finding.critical',
  'segmentation.standard.applied',
  'mesh.delivery_failed',
] as const;
export type ReportKind = (typeof REPORT_KINDS)[number];

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface Report {
  kind: ReportKind;
  severity: 'info' | 'low' | 'medium' | 'high' | 'critical' | 'error' | 'warning';
  title: string;
  detail?: string;
  /** What makes two reports "the same" for de-duplication (e.g. error class and route). */
  fingerprint: string;
  data?: Record<string, unknown>;
  /** Who the event is about, shown to staff if its delivery fails (default: `data.tenantId`). */
  subject?: OutboxSubject;
}

export type ReportOutcome =
  { sent: true; requestId: string } | { sent: false; reason: 'duplicate' | 'no_management_peer' };

export interface Reporter {
  /**
   * Reports an issue. With `tx` the event commits (or rolls back) with its cause: pass the
   * transaction that records the failure. Never throws for delivery problems.
   */
  report(r: Report, tx?: Tx): Promise<ReportOutcome>;
}

/** What the assets module reports when a verification check cannot complete or proof has gone. */
export interface AssetVerificationFailure {
  tenantId: string;
  assetId: string;
  target: string;
  reason: string;
}

/** What the findings module reports when a critical finding appears. */
export interface CriticalFinding {
  tenantId: string;
  findingId: string;
  assetId: string;
  title: string;
  /** Stable identity of the issue (e.g. rule id + location), so repeats within 5 minutes fold. */
  dedupeKey: string;
}

export const assetVerificationFailedReport = (f: AssetVerificationFailure): Report => ({
  kind: 'asset.verification_failed',
  severity: 'high',
  title: `Ownership verification failed for ${f.target}`,
  detail: f.reason,
  fingerprint: `${f.tenantId}:${f.assetId}`,
  data: { tenantId: f.tenantId, assetId: f.assetId, target: f.target, reason: f.reason },
});

export const criticalFindingReport = (f: CriticalFinding): Report => ({
  kind: 'finding.critical',
  severity: 'critical',
  title: f.title,
  fingerprint: `${f.tenantId}:${f.dedupeKey}`,
  data: { tenantId: f.tenantId, findingId: f.findingId, assetId: f.assetId },
});

/** How long a replica that learned another one sent a fingerprint asks the database again. */
export const LOCAL_RECHECK_MS = 30_000;
/** Fingerprints a replica remembers at most (beyond it, expired ones are forgotten first). */
const LOCAL_MAX_FINGERPRINTS = 10_000;

export function createReporter(deps: {
  db: Kysely<DB>;
  outbox: Outbox;
  clock: Clock;
  managementPeer: string | undefined;
  log: Pick<Logger, 'warn' | 'info'>;
}): Reporter {
  // Per-fingerprint rate limit in this process, in front of the database's de-duplication: a flood
  // of one error (every request failing the same way) costs no database write per repeat. The
  // repeats are counted and added to the database's count at the next attempt.
  const local = new Map<string, { until: number; suppressed: number }>();
  function throttled(key: string, now: number): boolean {
    const e = local.get(key);
    if (!e || e.until <= now) return false;
    e.suppressed += 1;
    return true;
  }
  function remember(key: string, until: number, now: number): void {
    if (local.size >= LOCAL_MAX_FINGERPRINTS) for (const [k, e] of local) if (e.until <= now) local.delete(k);
    if (local.size >= LOCAL_MAX_FINGERPRINTS) local.delete(local.keys().next().value!);
    local.set(key, { until, suppressed: 0 });
  }

  async function inTx(tx: Tx, r: Report, fingerprint: string, repeats: number): Promise<ReportOutcome> {
    const now = deps.clock.now();
    const won = await sql<{ suppressed: number }>`
      insert into reporter_dedupe (kind, fingerprint, last_sent_at, suppressed) values (${r.kind}, ${fingerprint}, ${now}, 0)
      on conflict (kind, fingerprint) do update set last_sent_at = excluded.last_sent_at, suppressed = 0
        where reporter_dedupe.last_sent_at <= ${new Date(now.getTime() - DEDUPE_WINDOW_MS)}
      returning (select suppressed from reporter_dedupe d where d.kind = ${r.kind} and d.fingerprint = ${fingerprint}) as suppressed`.execute(
      tx,
    );
    if (!won.rows[0]) {
      await tx
        .updateTable('reporter_dedupe')
        .set((eb) => ({ suppressed: eb('suppressed', '+', 1 + repeats) }))
        .where('kind', '=', r.kind)
        .where('fingerprint', '=', fingerprint)
        .execute();
      return { sent: false, reason: 'duplicate' };
    }
    const suppressedBefore = (won.rows[0].suppressed ?? 0) + repeats;
    const tenantId = r.data?.['tenantId'];
    const requestId = await deps.outbox.enqueue(tx, {
      peer: deps.managementPeer!,
      flow: 'event_report',
      eventType: r.kind,
      severity: r.severity,
      subject: r.subject ?? (typeof tenantId === 'string' && UUID_RE.test(tenantId) ? { tenantId } : undefined),
      payload: {
        kind: r.kind,
        severity: r.severity,
        title: r.title.slice(0, 300),
        ...(r.detail ? { detail: r.detail.slice(0, 10_000) } : {}),
        occurredAt: now.toISOString(),
        data: { ...r.data, fingerprint, ...(suppressedBefore ? { suppressedDuplicates: suppressedBefore } : {}) },
        brand: BRAND,
      },
    });
    return { sent: true, requestId };
  }

  return {
    async report(r, tx) {
      if (!deps.managementPeer) {
        deps.log.warn(
          { report: { kind: r.kind, title: r.title } },
          'issue not reported: SVC_MANAGEMENT_PEER is not set',
        );
        return { sent: false, reason: 'no_management_peer' };
      }
      const fingerprint = sha256Hex(`${r.kind}\n${r.fingerprint}`).slice(0, 32);
      const key = `${r.kind}:${fingerprint}`;
      const nowMs = deps.clock.now().getTime();
      // Only reports of their own (system errors, the flood-prone kind): one made inside a caller's
      // transaction may still roll back, and must not silence its retry.
      if (!tx && throttled(key, nowMs)) return { sent: false, reason: 'duplicate' };
      const repeats = tx ? 0 : (local.get(key)?.suppressed ?? 0);
      let outcome: ReportOutcome;
      if (tx) {
        // Join the caller's transaction as the service role, then hand it back as it was.
        const { rows } = await sql<{ role: string }>`select current_user as role`.execute(tx);
        await sql`select set_config('role', 'rampart_service', true)`.execute(tx);
        outcome = await inTx(tx, r, fingerprint, repeats);
        await sql`select set_config('role', ${rows[0]!.role}, true)`.execute(tx);
      } else {
        outcome = await withService(deps.db, (t) => inTx(t, r, fingerprint, repeats));
      }
      // Sent here: quiet for the whole window. Sent by another replica: ask again shortly, since
      // its window may end any moment.
      if (!tx) remember(key, nowMs + (outcome.sent ? DEDUPE_WINDOW_MS : LOCAL_RECHECK_MS), nowMs);
      if (outcome.sent) deps.outbox.nudge();
      return outcome;
    },
  };
}

/**
 * Tenant segmentation standard v1: every table with a tenant_id column has row-level security
 * enabled AND forced, with a policy on app_tenant_id(). Returns the tables that break it.
 */
export async function checkSegmentationStandard(db: Kysely<DB>): Promise<{ tables: string[]; violations: string[] }> {
  const { rows } = await sql<{ table: string; enabled: boolean; forced: boolean; has_policy: boolean }>`
    select c.relname as table, c.relrowsecurity as enabled, c.relforcerowsecurity as forced,
      exists (select 1 from pg_policies p where p.schemaname = 'public' and p.tablename = c.relname
              and (coalesce(p.qual, '') like '%app_tenant_id()%' or coalesce(p.with_check, '') like '%app_tenant_id()%')) as has_policy
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
    join pg_attribute a on a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped
    where c.relkind in ('r', 'p')
    order by c.relname`.execute(db);
  return {
    tables: rows.map((r) => r.table),
    violations: rows
      .filter((r) => !r.enabled || !r.forced || !r.has_policy)
      .map(
        (r) =>
          `${r.table} (${[!r.enabled && 'RLS off', !r.forced && 'not forced', !r.has_policy && 'no tenant policy'].filter(Boolean).join(', ')})`,
      ),
  };
}

/** Runs the check at start and reports the outcome. */
export async function reportSegmentationStandard(
  db: Kysely<DB>,
  reporter: Reporter,
): Promise<{ violations: string[] }> {
  const { tables, violations } = await checkSegmentationStandard(db);
  if (violations.length) {
    await reporter.report({
      kind: 'system.error',
      severity: 'critical',
      title: 'Tenant segmentation standard v1 is broken',
      detail: `Tables without forced row-level security on the tenant: ${violations.join('; ')}`,
      fingerprint: `segmentation:v1:${violations.join(',')}`,
      data: { standard: 'segmentation', version: 'v1', violations },
    });
  } else {
    await reporter.report({
      kind: 'segmentation.standard.applied',
      severity: 'info',
      title: 'Tenant segmentation standard v1 applied',
      fingerprint: `segmentation:v1:${tables.join(',')}`,
      data: { standard: 'segmentation', version: 'v1', tables },
    });
  }
  return { violations };
}
