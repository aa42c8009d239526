// Ingestion of a scan's findings (called by the workers module's ingestion runner as a report is
// parsed): begin → batch()* → finish(). Each batch is its own short transaction as the service
// role that upserts by fingerprint, reopens what came back, records the history and enqueues
// finding.critical reports through the outbox in the same transaction (so they exist exactly when
// the findings do). New findings are written with COPY (findings-copy.ts): on the embedded
// database straight into findings (blobStatement), on PostgreSQL through a temporary table
// (copyIn). finish() closes what the result covered and no longer reports (findings-closing.ts)
// and records the summary; a second ingest of the same scan replays it.
// Over 500 lines on purpose: begin → batch → finish is one protocol over the same upsert, reopen and close statements;
// split, its SQL would be read apart.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { withService, type Tx } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { criticalFindingReport, type Reporter } from '../reporter/reporter.ts';
import {
  ingestFindingsSchema,
  type FindingStatus,
  type IngestScope,
  type NormalizedFinding,
  type NormalizedFindingInput,
  type Scanner,
  type Severity,
} from './findings-schemas.ts';
import { COPY_COLUMNS, encodeFindingRows, type CopyFindingRow } from './findings-copy.ts';
import { checkClassOf, coverageCondition, SHARED_TOOLS_ONLY, type ClosingCoverage } from './findings-coverage.ts';
import { resolveScope, scopeCondition, scopeKey, scopeOfScan } from './findings-scope.ts';
import { findingFingerprint, normaliseLocation } from './fingerprint.ts';

export interface IngestSummary {
  scanId: string;
  scopeKey: string;
  /** Findings in the report, and after folding in-report duplicates. */
  received: number;
  distinct: number;
  created: number;
  /** Already known and seen again (any status). */
  seen: number;
  reopened: number;
  fixed: number;
  riskExpired: number;
  criticalReported: number;
  replayed: boolean;
}

export type SlaDays = Record<Exclude<Severity, 'info'>, number>;
export const DEFAULT_SLA_DAYS: SlaDays = { critical: 7, high: 30, medium: 90, low: 120 };
const DAY_MS = 86_400_000;

/** first seen + the tenant's days for the severity; info findings have no due date. */
export function slaDueAt(firstSeen: Date, severity: Severity, days: SlaDays): Date | null {
  return severity === 'info' ? null : new Date(firstSeen.getTime() + days[severity] * DAY_MS);
}

export async function tenantSlaDays(tx: Tx, tenantId: string): Promise<SlaDays> {
  const row = await tx
    .selectFrom('tenant_settings')
    .select(['sla_critical_days', 'sla_high_days', 'sla_medium_days', 'sla_low_days'])
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return row
    ? { critical: row.sla_critical_days, high: row.sla_high_days, medium: row.sla_medium_days, low: row.sla_low_days }
    : DEFAULT_SLA_DAYS;
}

/**
 * Accepted risks past their expiry are open again. Applied whenever a tenant's findings are read
 * or ingested, so no scheduler is needed; the partial index keeps the no-op case cheap.
 */
export async function expireAcceptedRisks(tx: Tx, tenantId: string, now: Date): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    with expired as (
      update findings set status = 'open', status_reason = null, status_expires_at = null, status_changed_at = ${now},
        status_changed_by = null, status_changed_by_email = null, updated_at = ${now}
      where tenant_id = ${tenantId} and status = 'accepted_risk' and status_expires_at <= ${now}
      returning id, tenant_id
    ), logged as (
      insert into finding_events (tenant_id, finding_id, at, event, from_status, to_status)
      select tenant_id, id, ${now}, 'risk_expired', 'accepted_risk', 'open' from expired
      returning 1
    )
    select count(*)::int as n from logged`.execute(tx);
  return rows[0]?.n ?? 0;
}

/** Reported findings of a scan that the management peer hears about one by one; more are summed up. */
export const MAX_CRITICAL_REPORTS_PER_INGEST = 100;

interface Prepared {
  f: NormalizedFinding;
  checkClass: string | null;
  fingerprint: string;
  location: ReturnType<typeof normaliseLocation>;
}

const rank: Record<Severity, number> = { info: 0, low: 1, medium: 2, high: 3, critical: 4 };

/** In-report duplicates fold into one: the worst severity, all CWE/CVE ids. */
function fold(a: Prepared, b: Prepared): Prepared {
  const worse = rank[b.f.severity] > rank[a.f.severity] ? b : a;
  const cwe = [...new Set([...(a.f.cwe ?? []), ...(b.f.cwe ?? [])])].sort((x, y) => x - y);
  const cve = [...new Set([...(a.f.cve ?? []), ...(b.f.cve ?? [])])].sort();
  return { ...worse, f: { ...worse.f, cwe, cve } };
}

type Existing = {
  id: string;
  fingerprint: string;
  status: FindingStatus;
  severity: Severity;
  first_seen_at: Date | string;
  scan_id: string | null;
  cwe_ids: number[];
  cve_ids: string[];
};

/**
 * The tenant's findings with these fingerprints, one unique-index probe per fingerprint. Written
 * as a lateral lookup on purpose: with `tenant_id = … and fingerprint = any(…)` and no statistics
 * (the embedded database has no autovacuum until its maintenance first analyzes the table) the
 * planner scanned every finding of the tenant per batch, which made a 100,000-finding import
 * quadratic (measured: 114 ms per 2,000-row batch at 50,000 findings, 11 ms this way).
 */
export const findingsByFingerprintQuery = (tenantId: string, fingerprints: string[]) => sql<Existing>`
  select f.* from unnest(${fingerprints}::text[]) as u(fp)
  cross join lateral (
    select id, fingerprint, status, severity, first_seen_at, scan_id, cwe_ids, cve_ids from findings
    where tenant_id = ${tenantId} and fingerprint = u.fp limit 1
  ) f`;

async function findingsByFingerprint(tx: Tx, tenantId: string, fingerprints: string[]): Promise<Existing[]> {
  return (await findingsByFingerprintQuery(tenantId, fingerprints).execute(tx)).rows;
}

/** What the list's text search matches: title, rule id, location and CVE ids, lower-cased. */
export const searchText = (p: Prepared) =>
  [p.f.title, p.f.ruleId, p.location.text, ...(p.f.cve ?? [])].join(' ').toLowerCase();

/** The tool namespace an importer attached to a finding (ImportedFinding.tool), if any. */
const toolOf = (f: NormalizedFinding): string | null => {
  const t = (f as { tool?: unknown }).tool;
  return typeof t === 'string' && t.trim() ? t.trim().toLowerCase().slice(0, 100) : null;
};

const content = (p: Prepared) => ({
  rule_id: p.f.ruleId,
  tool: toolOf(p.f),
  check_class: p.checkClass,
  title: p.f.title,
  description: p.f.description ?? null,
  severity: p.f.severity,
  cvss_score: p.f.cvss ? Math.round(p.f.cvss.score * 10) / 10 : null,
  cvss_vector: p.f.cvss?.vector ?? null,
  cwe_ids: p.f.cwe ?? [],
  cve_ids: p.f.cve ?? [],
  location: p.location.stored,
  location_text: p.location.text,
  search_text: searchText(p),
  port: p.location.port,
  path: p.location.path,
  evidence: p.f.evidence ?? {},
  remediation: p.f.remediation ?? null,
  reference_urls: p.f.references ?? [],
  fingerprint: p.fingerprint,
});

/** The record a batch's JSON rows are read as: the columns content() fills, with their types. */
export const CONTENT_RECORD = `rule_id text, tool text, check_class text, title text, description text, severity text, cvss_score numeric, cvss_vector text, cwe_ids integer[], cve_ids text[],
  location jsonb, location_text text, search_text text, port integer, path text, evidence jsonb, remediation text, reference_urls text[], fingerprint text`;
const CONTENT_COLUMNS = sql.raw(CONTENT_RECORD);
const COPY_COLUMN_NAMES = COPY_COLUMNS.join(', ');
const COPY_COLUMN_LIST = sql.raw(COPY_COLUMN_NAMES);

// ---- the session ----------------------------------------------------------------------------
//
// Each batch is its own short transaction that upserts by fingerprint and stamps the rows with this scan, so a
// crash leaves some batches committed and a re-run converges: a finding created by the first run
// already carries this scan and is merely "seen" by the second (not created twice, no second
// critical report); a reopen or severity change already applied is not applied again.
// finish() does what needs the whole report: it closes what the scan's scope no longer shows,
// records the summary in finding_scan_ingests (which makes the scan's ingestion final and any
// later run a replay), and counts the summary from the rows and events, so a re-run after a crash
// reports the same numbers as an uninterrupted run.

/** What finish() is told about the result. */
export interface FinishOptions {
  /** False: close nothing (a partial or inconclusive result, or one that said nothing of this asset). */
  closeMissing?: boolean;
  /**
   * What the result covered (findings-coverage.ts): only open findings inside it, and inside the
   * scan's scope, that the result did not report are closed. Absent: the findings of shared rule
   * namespaces (Rampart's own scanners without a coverage record).
   */
  coverage?: ClosingCoverage;
}

export interface BatchIngestSession {
  readonly scanId: string;
  readonly scopeKey: string;
  /** True when this scan's ingestion had already finished: batches are ignored, finish() replays. */
  readonly replayed: boolean;
  /** Upserts findings (at most MAX_FINDINGS_PER_INGEST per call) in one short transaction. */
  batch(findings: NormalizedFindingInput[]): Promise<void>;
  /**
   * Closes what the scope no longer shows (unless `closeMissing` is false: a partial report) and
   * records the summary; idempotent.
   */
  finish(opts?: FinishOptions): Promise<IngestSummary>;
}

/**
 * Runs `statement` on the connection of the transaction in progress with `data` as PGlite's
 * /dev/blob (the embedded database only: Database.pglite.copyFrom).
 */
export type BlobStatement = (statement: string, data: Uint8Array) => Promise<void>;

/** Runs COPY … FROM STDIN with `data` on the connection of `q` (PostgreSQL: Database.copyIn). */
export type CopyIn = (q: Kysely<DB>, statement: string, data: Uint8Array) => Promise<number>;

/** A database's bulk paths for new findings (Database.blobStatement, Database.copyIn), as the ingest takes them. */
export const bulkWritesOf = (d: { blobStatement?: BlobStatement | undefined; copyIn?: CopyIn | undefined }) => ({
  ...(d.blobStatement ? { blobStatement: d.blobStatement } : {}),
  ...(d.copyIn ? { copyIn: d.copyIn } : {}),
});

const isUniqueViolation = (e: unknown) => (e as { code?: unknown } | null)?.code === '23505';

export function createBatchedFindingsIngest(deps: {
  db: Kysely<DB>;
  reporter: Reporter;
  clock: Clock;
  /** Present on the embedded database: new findings are written with one COPY per batch. */
  blobStatement?: BlobStatement;
  /** Present on PostgreSQL: new findings are copied into a temporary table, then inserted from it. */
  copyIn?: CopyIn;
}) {
  const { db, reporter, clock, blobStatement, copyIn } = deps;

  async function begin(
    scanId: string,
    opts: { scope?: IngestScope; validate?: boolean } = {},
  ): Promise<BatchIngestSession> {
    const start = await withService(db, async (tx) => {
      const scan = await tx
        .selectFrom('scans as s')
        .innerJoin('assets as a', 'a.id', 's.asset_id')
        .select(['s.id', 's.tenant_id', 's.asset_id', 's.kind', 's.parent_id', 's.chunk_spec', 's.options', 'a.target'])
        .where('s.id', '=', scanId)
        .executeTakeFirst();
      if (!scan) throw new Error(`begin: no scan ${scanId}`);
      const prior = await tx
        .selectFrom('finding_scan_ingests')
        .select('summary')
        .where('scan_id', '=', scanId)
        .executeTakeFirst();
      if (prior)
        return { scan, prior: prior.summary as unknown as IngestSummary, riskExpired: 0, sla: DEFAULT_SLA_DAYS };
      const riskExpired = await expireAcceptedRisks(tx, scan.tenant_id, clock.now());
      return { scan, prior: null, riskExpired, sla: await tenantSlaDays(tx, scan.tenant_id) };
    });
    const { scan, sla } = start;
    const scanner = scan.kind as Scanner;
    const scope = opts.scope ? resolveScope(opts.scope) : scopeOfScan(scan);
    const key = scopeKey(scope);
    const lockKey = `findings:${scan.asset_id}:${scanner}`;
    // Only the first run's expiries are counted in memory; a re-run finds none left to expire.
    const riskExpired = start.riskExpired;
    let received = 0;
    let criticalReported = 0;
    let criticalOverflow = 0;
    // Whether the last batch found none of its findings already known (a first import of a
    // report): then the next batch inserts first and looks up only what conflicted, instead of
    // probing every fingerprint before inserting. Either order writes the same rows and events.
    let lastBatchAllNew = false;
    let finished: IngestSummary | null = start.prior ? { ...start.prior, replayed: true } : null;

    async function batch(input: NormalizedFindingInput[]): Promise<void> {
      if (finished) return;
      // Findings from the importers are already valid; re-validating costs a third of the time.
      const findings = opts.validate === false ? (input as NormalizedFinding[]) : ingestFindingsSchema.parse(input);
      received += findings.length;
      if (findings.length === 0) return;
      const byFingerprint = new Map<string, Prepared>();
      for (const f of findings) {
        const location = normaliseLocation(f.location);
        const tool = toolOf(f);
        const fingerprint = findingFingerprint({
          assetId: scan.asset_id,
          scanner,
          ruleId: f.ruleId,
          locationKey: location.key,
          discriminator: f.discriminator,
          tool,
        });
        const p: Prepared = {
          f,
          fingerprint,
          location,
          checkClass: checkClassOf(scanner, f.ruleId, tool, (f as { checkClass?: unknown }).checkClass),
        };
        const prior = byFingerprint.get(fingerprint);
        byFingerprint.set(fingerprint, prior ? fold(prior, p) : p);
      }
      // Sorted: concurrent writers of overlapping rows lock them in the same order.
      const prepared = [...byFingerprint.values()].sort((a, b) => (a.fingerprint < b.fingerprint ? -1 : 1));
      const now = clock.now();
      // COPY cannot skip a conflicting row: a batch that meets a fingerprint written meanwhile (a
      // concurrent batch of this session) is rolled back whole and written again by the insert.
      try {
        await write(prepared, byFingerprint, now, blobStatement);
      } catch (e) {
        if (!blobStatement || !isUniqueViolation(e)) throw e;
        await write(prepared, byFingerprint, now, undefined);
      }
    }

    async function write(
      prepared: Prepared[],
      byFingerprint: Map<string, Prepared>,
      now: Date,
      copy: BlobStatement | undefined,
    ): Promise<void> {
      await withService(db, async (tx) => {
        // Shared: batches of this session may be written concurrently (the ingestion runner runs
        // one session per asset and scanner at a time); the closing step takes the lock
        // exclusively, so it never interleaves with batches.
        await sql`select pg_advisory_xact_lock_shared(hashtextextended(${lockKey}, 0))`.execute(tx);
        // Finished meanwhile (another runner of the same scan): change nothing.
        const done = await tx
          .selectFrom('finding_scan_ingests')
          .select('scan_id')
          .where('scan_id', '=', scan.id)
          .executeTakeFirst();
        if (done) return;
        const existing = new Map<string, Existing>();
        if (!lastBatchAllNew)
          for (const r of await findingsByFingerprint(
            tx,
            scan.tenant_id,
            prepared.map((p) => p.fingerprint),
          ))
            existing.set(r.fingerprint, r);

        type EventRow = {
          finding_id: string;
          event: string;
          from_status: string | null;
          to_status: string | null;
          detail: Record<string, unknown> | null;
        };
        const events: EventRow[] = [];
        const critical: { id: string; p: Prepared }[] = [];

        let fresh = prepared.filter((p) => !existing.has(p.fingerprint));
        // Rows as COPY reads them. Ids are made here: COPY returns nothing.
        const copyRows = (): CopyFindingRow[] =>
          fresh.map((p) => ({
            ...content(p),
            id: randomUUID(),
            tenant_id: scan.tenant_id,
            asset_id: scan.asset_id,
            scan_id: scan.id,
            first_scan_id: scan.id,
            scanner,
            scope_key: key,
            status: 'open',
            first_seen_at: now,
            last_seen_at: now,
            sla_due_at: slaDueAt(now, p.f.severity, sla),
          }));
        if (fresh.length && copy) {
          // No 'created' events, as below.
          const rows = copyRows();
          await copy('select copy_findings_from_blob()', encodeFindingRows(rows));
          rows.forEach((r, i) => {
            if (r.severity === 'critical') critical.push({ id: r.id as string, p: fresh[i]! });
          });
        } else if (fresh.length) {
          let inserted: { id: string; fingerprint: string; critical: boolean }[];
          if (copyIn) {
            // PostgreSQL: the rows go into a temporary table by COPY (COPY FROM refuses a table with
            // row-level security) and from there into findings by the same insert as below.
            await sql`create temp table if not exists finding_rows on commit delete rows as
              select ${COPY_COLUMN_LIST} from findings with no data`.execute(tx);
            await copyIn(
              tx,
              `copy pg_temp.finding_rows (${COPY_COLUMN_NAMES}) from stdin`,
              encodeFindingRows(copyRows()),
            );
            ({ rows: inserted } = await sql<{ id: string; fingerprint: string; critical: boolean }>`
              insert into findings (${COPY_COLUMN_LIST}) select ${COPY_COLUMN_LIST} from pg_temp.finding_rows
              on conflict (tenant_id, fingerprint) do nothing
              returning id, fingerprint, severity = 'critical' as critical`.execute(tx));
          } else {
            const json = JSON.stringify(
              fresh.map((p) => ({
                ...content(p),
                sla_due_at: slaDueAt(now, p.f.severity, sla)?.toISOString() ?? null,
              })),
            );
            // json (not jsonb) to recordset: the document is read once, lazily, instead of being built
            // into a jsonb tree first (a third faster on PGlite). No 'created' events: the history
            // derives them from the row (decision 27; writing them was a sixth of a large import).
            ({ rows: inserted } = await sql<{ id: string; fingerprint: string; critical: boolean }>`
              insert into findings (tenant_id, asset_id, scan_id, first_scan_id, scanner, scope_key, status, first_seen_at, last_seen_at,
                rule_id, title, description, severity, cvss_score, cvss_vector, cwe_ids, cve_ids, location, location_text, search_text, port, path,
                evidence, remediation, reference_urls, fingerprint, tool, check_class, sla_due_at)
              select ${scan.tenant_id}, ${scan.asset_id}, ${scan.id}, ${scan.id}, ${scanner}, ${key}, 'open', ${now}, ${now},
                r.rule_id, r.title, r.description, r.severity, r.cvss_score, r.cvss_vector, r.cwe_ids, r.cve_ids, r.location, r.location_text, r.search_text, r.port, r.path,
                r.evidence, r.remediation, r.reference_urls, r.fingerprint, r.tool, r.check_class, r.sla_due_at
              from json_to_recordset(${json}::json) as r(${CONTENT_COLUMNS}, sla_due_at timestamptz)
              -- A concurrent batch of this session may hold the same fingerprint (a duplicate
              -- across batches), or the finding was known and not looked up first: the existing
              -- row wins, and ours is folded into it below as a known one.
              on conflict (tenant_id, fingerprint) do nothing
              returning id, fingerprint, severity = 'critical' as critical`.execute(tx));
          }
          const written = new Set<string>();
          for (const r of inserted) {
            written.add(r.fingerprint);
            if (r.critical) critical.push({ id: r.id, p: byFingerprint.get(r.fingerprint)! });
          }
          const lost = fresh.filter((p) => !written.has(p.fingerprint));
          if (lost.length) {
            for (const r of await findingsByFingerprint(
              tx,
              scan.tenant_id,
              lost.map((p) => p.fingerprint),
            ))
              existing.set(r.fingerprint, r);
            fresh = fresh.filter((p) => written.has(p.fingerprint));
          }
        }

        const known = prepared.filter((p) => existing.has(p.fingerprint));
        lastBatchAllNew = known.length === 0;
        if (known.length) {
          const rows = known.map((p0) => {
            const e = existing.get(p0.fingerprint)!;
            let p = p0;
            // Reported earlier in this scan (an earlier batch, or the crashed run): fold as within a batch.
            if (e.scan_id === scan.id) {
              const worse = rank[e.severity] > rank[p.f.severity] ? e.severity : p.f.severity;
              const cwe = [...new Set([...(e.cwe_ids ?? []), ...(p.f.cwe ?? [])])].sort((x, y) => x - y);
              const cve = [...new Set([...(e.cve_ids ?? []), ...(p.f.cve ?? [])])].sort();
              p = { ...p, f: { ...p.f, severity: worse, cwe, cve } };
            }
            const status: FindingStatus = e.status === 'fixed' ? 'open' : e.status;
            const reopen = e.status === 'fixed';
            if (reopen)
              events.push({
                finding_id: e.id,
                event: 'reopened',
                from_status: 'fixed',
                to_status: 'open',
                detail: null,
              });
            if (e.severity !== p.f.severity)
              events.push({
                finding_id: e.id,
                event: 'severity_changed',
                from_status: null,
                to_status: null,
                detail: { from: e.severity, to: p.f.severity },
              });
            if (p.f.severity === 'critical' && status === 'open' && (reopen || e.severity !== 'critical'))
              critical.push({ id: e.id, p });
            return {
              ...content(p),
              id: e.id,
              status,
              reopen,
              sla_due_at: slaDueAt(new Date(e.first_seen_at), p.f.severity, sla)?.toISOString() ?? null,
            };
          });
          await sql`
            update findings f set scan_id = ${scan.id}, scope_key = ${key}, last_seen_at = ${now}, updated_at = ${now},
              rule_id = r.rule_id, title = r.title, description = r.description, severity = r.severity, cvss_score = r.cvss_score,
              cvss_vector = r.cvss_vector, cwe_ids = r.cwe_ids, cve_ids = r.cve_ids, location = r.location, location_text = r.location_text, search_text = r.search_text,
              port = r.port, path = r.path, evidence = r.evidence, remediation = r.remediation, reference_urls = r.reference_urls,
              sla_due_at = r.sla_due_at, status = r.status, check_class = r.check_class,
              fixed_at = case when r.reopen then null else f.fixed_at end,
              reopened_count = f.reopened_count + case when r.reopen then 1 else 0 end,
              status_reason = case when r.reopen then null else f.status_reason end,
              status_changed_at = case when r.reopen then ${now} else f.status_changed_at end,
              status_changed_by = case when r.reopen then null else f.status_changed_by end,
              status_changed_by_email = case when r.reopen then null else f.status_changed_by_email end
            from json_to_recordset(${JSON.stringify(rows)}::json) as r(${CONTENT_COLUMNS}, id uuid, status text, reopen boolean, sla_due_at timestamptz)
            where f.id = r.id and f.tenant_id = ${scan.tenant_id}`.execute(tx);
        }

        if (events.length) {
          await sql`
            insert into finding_events (tenant_id, finding_id, at, event, from_status, to_status, scan_id, detail)
            select ${scan.tenant_id}, e.finding_id, ${now}, e.event, e.from_status, e.to_status, ${scan.id}, e.detail
            from jsonb_to_recordset(${JSON.stringify(events)}::jsonb) as e(finding_id uuid, event text, from_status text, to_status text, detail jsonb)`.execute(
            tx,
          );
        }
        // Reports join the batch's transaction: they exist exactly when the change they announce does.
        for (const c of critical) {
          if (criticalReported >= MAX_CRITICAL_REPORTS_PER_INGEST) {
            criticalOverflow += 1;
            continue;
          }
          const outcome = await reporter.report(
            criticalFindingReport({
              tenantId: scan.tenant_id,
              findingId: c.id,
              assetId: scan.asset_id,
              title: `${c.p.f.title} on ${scan.target}`,
              dedupeKey: c.p.fingerprint,
            }),
            tx,
          );
          if (outcome.sent) criticalReported += 1;
        }
      });
    }

    async function finish(fo: FinishOptions = {}): Promise<IngestSummary> {
      if (finished) return finished;
      const now = clock.now();
      const summary = await withService(db, async (tx) => {
        await sql`select pg_advisory_xact_lock(hashtextextended(${lockKey}, 0))`.execute(tx);
        const claimed = await tx
          .insertInto('finding_scan_ingests')
          .values({ scan_id: scan.id, tenant_id: scan.tenant_id, scope_key: key })
          .onConflict((c) => c.column('scan_id').doNothing())
          .returning('scan_id')
          .executeTakeFirst();
        if (!claimed) {
          const prior = await tx
            .selectFrom('finding_scan_ingests')
            .select('summary')
            .where('scan_id', '=', scan.id)
            .executeTakeFirstOrThrow();
          return { ...(prior.summary as unknown as IngestSummary), replayed: true };
        }
        let fixed = 0;
        const inScope = fo.closeMissing === false ? null : scopeCondition(scope);
        if (inScope) {
          const covered = coverageCondition(fo.coverage ?? SHARED_TOOLS_ONLY);
          const { rows } = await sql<{ n: number }>`
            with closed as (
              update findings set status = 'fixed', fixed_at = ${now}, status_changed_at = ${now}, status_changed_by = null,
                status_changed_by_email = null, status_reason = null, updated_at = ${now}
              where tenant_id = ${scan.tenant_id} and asset_id = ${scan.asset_id} and scanner = ${scanner} and status = 'open'
                and scan_id is distinct from ${scan.id} and ${inScope} and ${covered}
              returning id
            ), logged as (
              insert into finding_events (tenant_id, finding_id, at, event, from_status, to_status, scan_id)
              select ${scan.tenant_id}, id, ${now}, 'fixed', 'open', 'fixed', ${scan.id} from closed
              returning 1
            )
            select count(*)::int as n from logged`.execute(tx);
          fixed = rows[0]?.n ?? 0;
        }
        if (criticalOverflow > 0) {
          const outcome = await reporter.report(
            {
              kind: 'finding.critical',
              severity: 'critical',
              title: `${criticalOverflow} more critical findings on ${scan.target}`,
              fingerprint: `${scan.tenant_id}:scan:${scan.id}:more`,
              data: { tenantId: scan.tenant_id, assetId: scan.asset_id, scanId: scan.id, count: criticalOverflow },
            },
            tx,
          );
          if (outcome.sent) criticalReported += 1;
        }
        // Counted from what the batches committed, so a re-run after a crash reports what one run would.
        const { rows } = await sql<{ distinct: number; created: number; reopened: number }>`
          select count(*) filter (where f.scan_id = ${scan.id})::int as distinct,
                 count(*) filter (where f.first_scan_id = ${scan.id})::int as created,
                 coalesce(sum((select count(*) from finding_events e where e.finding_id = f.id and e.scan_id = ${scan.id} and e.event = 'reopened')) filter (where f.scan_id = ${scan.id}), 0)::int as reopened
          from findings f
          where f.tenant_id = ${scan.tenant_id} and f.asset_id = ${scan.asset_id} and (f.scan_id = ${scan.id} or f.first_scan_id = ${scan.id})`.execute(
          tx,
        );
        const c = rows[0]!;
        const out: IngestSummary = {
          scanId: scan.id,
          scopeKey: key,
          received,
          distinct: c.distinct,
          created: c.created,
          seen: c.distinct - c.created,
          reopened: c.reopened,
          fixed,
          riskExpired,
          criticalReported,
          replayed: false,
        };
        await tx
          .updateTable('finding_scan_ingests')
          .set({ summary: JSON.stringify(out) })
          .where('scan_id', '=', scan.id)
          .execute();
        return out;
      });
      finished = summary;
      return summary;
    }

    return {
      scanId: scan.id,
      scopeKey: key,
      replayed: start.prior !== null,
      batch,
      finish,
    };
  }

  return { begin };
}

export type BatchedFindingsIngest = ReturnType<typeof createBatchedFindingsIngest>;
