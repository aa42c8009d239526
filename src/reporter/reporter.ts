// Rampart's own issue reporter: system errors, failed asset verifications, critical findings and
// the segmentation-standard confirmation go to the management peer as event_report calls, through
// the outbox, de-duplicated for 5 minutes by kind and fingerprint across every replica.
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../db/schema.ts';
import { withService, type Tx } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { sha256Hex } from '../lib/crypto.ts';
import type { Outbox } from '../mesh/mesh-outbox.ts';

/** The brand identifier carried as payload.brand on every event to the management peer. */
export const BRAND = 'rampart';
export const DEDUPE_WINDOW_MS = 5 * 60_000;

export type ReportKind = 'system.error' | 'asset.verification_failed' | 'finding.critical' | 'segmentation.standard.applied' | 'mesh.delivery_failed';

export interface Report {
  kind: ReportKind;
  severity: 'info' | 'low' | 'medium' | 'high' | 'critical' | 'error' | 'warning';
  title: string;
  detail?: string;
  /** What makes two reports "the same" for de-duplication (e.g. error class and route). */
  fingerprint: string;
  data?: Record<string, unknown>;
}

export type ReportOutcome = { sent: true; requestId: string } | { sent: false; reason: 'duplicate' | 'no_management_peer' };

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

export function createReporter(deps: { db: Kysely<DB>; outbox: Outbox; clock: Clock; managementPeer: string | undefined; log: Pick<Logger, 'warn' | 'info'> }): Reporter {
  async function inTx(tx: Tx, r: Report): Promise<ReportOutcome> {
    const now = deps.clock.now();
    const fingerprint = sha256Hex(`${r.kind}\n${r.fingerprint}`).slice(0, 32);
    const won = await sql<{ suppressed: number }>`
      insert into reporter_dedupe (kind, fingerprint, last_sent_at, suppressed) values (${r.kind}, ${fingerprint}, ${now}, 0)
      on conflict (kind, fingerprint) do update set last_sent_at = excluded.last_sent_at, suppressed = 0
        where reporter_dedupe.last_sent_at <= ${new Date(now.getTime() - DEDUPE_WINDOW_MS)}
      returning (select suppressed from reporter_dedupe d where d.kind = ${r.kind} and d.fingerprint = ${fingerprint}) as suppressed`.execute(tx);
    if (!won.rows[0]) {
      await tx.updateTable('reporter_dedupe').set((eb) => ({ suppressed: eb('suppressed', '+', 1) })).where('kind', '=', r.kind).where('fingerprint', '=', fingerprint).execute();
      return { sent: false, reason: 'duplicate' };
    }
    const suppressedBefore = won.rows[0].suppressed ?? 0;
    const requestId = await deps.outbox.enqueue(tx, {
      peer: deps.managementPeer!,
      flow: 'event_report',
      eventType: r.kind,
      severity: r.severity,
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
        deps.log.warn({ report: { kind: r.kind, title: r.title } }, 'issue not reported: SVC_MANAGEMENT_PEER is not set');
        return { sent: false, reason: 'no_management_peer' };
      }
      let outcome: ReportOutcome;
      if (tx) {
        // Join the caller's transaction as the service role, then hand it back as it was.
        const { rows } = await sql<{ role: string }>`select current_user as role`.execute(tx);
        await sql`select set_config('role', 'rampart_service', true)`.execute(tx);
        outcome = await inTx(tx, r);
        await sql`select set_config('role', ${rows[0]!.role}, true)`.execute(tx);
      } else {
        outcome = await withService(deps.db, (t) => inTx(t, r));
      }
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
    violations: rows.filter((r) => !r.enabled || !r.forced || !r.has_policy).map((r) => `${r.table} (${[!r.enabled && 'RLS off', !r.forced && 'not forced', !r.has_policy && 'no tenant policy'].filter(Boolean).join(', ')})`),
  };
}

/** Runs the check at start and reports the outcome. */
export async function reportSegmentationStandard(db: Kysely<DB>, reporter: Reporter): Promise<{ violations: string[] }> {
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
