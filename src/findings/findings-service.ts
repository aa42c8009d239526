// Findings as tenant members see them: the filtered, keyset-paginated list with severity counts,
// one finding with its history, bulk status changes (audited) and the rows behind the exports.
// Everything runs inside withTenantMember (RLS) and filters by tenant too.
import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { AuditService } from '../audit/index.ts';
import type { DB, FindingsTable } from '../db/schema.ts';
import { type Caller, isTenantAdmin, type Tx, tenantAccess } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { AppError, appError } from '../lib/errors.ts';
import { expireAcceptedRisks } from './findings-ingest.ts';
import {
  MAX_ACCEPT_DAYS,
  SEVERITIES,
  type BulkStatusBody,
  type FindingDetail,
  type FindingEvent,
  type FindingFilters,
  type FindingList,
  type FindingSort,
  type FindingSummary,
  type ListFindingsQuery,
  type Severity,
} from './findings-schemas.ts';

const DAY_MS = 86_400_000;
/** A finding's detail carries its latest events, newest first. */
const HISTORY_LIMIT = 200;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

type Row = Selectable<FindingsTable> & {
  asset_name: string;
  asset_target: string;
  asset_kind: string;
  c_first: string;
  c_last: string;
  c_sla: string;
};

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
const utcMicros = (col: string) =>
  sql<string>`to_char(${sql.ref(col)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

interface SortSpec {
  /** Key columns, compared as a row for the keyset. */
  keys: RawBuilder<unknown>[];
  defaultDir: 'asc' | 'desc';
  /** The row's key values, in the cursor's string form. */
  values(r: Row): (string | number)[];
  /** Casts applied to cursor values when compared. */
  casts: string[];
}

const SORTS: Record<FindingSort, SortSpec> = {
  severity: {
    keys: [sql`f.severity_rank`, sql`f.last_seen_at`, sql`f.id`],
    defaultDir: 'desc',
    values: (r) => [r.severity_rank, r.c_last, r.id],
    casts: ['smallint', 'timestamptz', 'uuid'],
  },
  first_seen: {
    keys: [sql`f.first_seen_at`, sql`f.id`],
    defaultDir: 'desc',
    values: (r) => [r.c_first, r.id],
    casts: ['timestamptz', 'uuid'],
  },
  last_seen: {
    keys: [sql`f.last_seen_at`, sql`f.id`],
    defaultDir: 'desc',
    values: (r) => [r.c_last, r.id],
    casts: ['timestamptz', 'uuid'],
  },
  sla_due: {
    keys: [sql`coalesce(f.sla_due_at, 'infinity'::timestamptz)`, sql`f.id`],
    defaultDir: 'asc',
    values: (r) => [r.c_sla, r.id],
    casts: ['timestamptz', 'uuid'],
  },
};

const badCursor = () =>
  new AppError('validation_failed', 'Pass nextCursor from the previous page unchanged, with the same sort.', {
    details: [{ path: 'querystring.cursor', message: 'Not a cursor of this sort.' }],
  });

export function encodeCursor(sort: FindingSort, dir: string, values: (string | number)[]): string {
  return Buffer.from(JSON.stringify([sort, dir, ...values])).toString('base64url');
}

function decodeCursor(cursor: string, sort: FindingSort, dir: string): (string | number)[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  const spec = SORTS[sort];
  if (!Array.isArray(parsed) || parsed.length !== spec.keys.length + 2 || parsed[0] !== sort || parsed[1] !== dir)
    throw badCursor();
  const values = parsed.slice(2) as unknown[];
  values.forEach((v, i) => {
    const cast = spec.casts[i];
    const ok =
      cast === 'uuid'
        ? typeof v === 'string' && UUID_RE.test(v)
        : cast === 'smallint'
          ? Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 4
          : typeof v === 'string' && (TS_RE.test(v) || (sort === 'sla_due' && v === 'infinity'));
    if (!ok) throw badCursor();
  });
  return values as (string | number)[];
}

/** The WHERE conditions of a filter set; `skipSeverity` for the per-severity counts. */
function conditions(tenantId: string, f: FindingFilters, now: Date, skipSeverity = false): RawBuilder<boolean> {
  const c: RawBuilder<unknown>[] = [sql`f.tenant_id = ${tenantId}`];
  if (f.severity && !skipSeverity) c.push(sql`f.severity in (${sql.join(f.severity)})`);
  if (f.status) c.push(sql`f.status in (${sql.join(f.status)})`);
  if (f.assetId) c.push(sql`f.asset_id = ${f.assetId}`);
  if (f.scanner) c.push(sql`f.scanner = ${f.scanner}`);
  if (f.scanId) c.push(sql`f.scan_id = ${f.scanId}`);
  if (f.ruleId) c.push(sql`lower(f.rule_id) = ${f.ruleId.toLowerCase()}`);
  if (f.cwe !== undefined) c.push(sql`f.cwe_ids @> array[${f.cwe}]::integer[]`);
  if (f.cve) c.push(sql`f.cve_ids @> array[${f.cve}]::text[]`);
  if (f.q) c.push(sql`f.search_text like ${`%${f.q.toLowerCase().replace(/[%_\\]/g, '\\$&')}%`}`);
  if (f.overdue === true) c.push(sql`f.status = 'open' and f.sla_due_at < ${now}`);
  if (f.overdue === false) c.push(sql`(f.status <> 'open' or f.sla_due_at is null or f.sla_due_at >= ${now})`);
  if (f.firstSeenFrom) c.push(sql`f.first_seen_at >= ${f.firstSeenFrom}::timestamptz`);
  if (f.firstSeenTo) c.push(sql`f.first_seen_at <= ${f.firstSeenTo}::timestamptz`);
  return sql<boolean>`${sql.join(c, sql` and `)}`;
}

function toSummary(r: Row, now: Date): FindingSummary {
  return {
    id: r.id,
    title: r.title,
    severity: r.severity,
    status: r.status,
    scanner: r.scanner,
    ruleId: r.rule_id,
    asset: { id: r.asset_id, name: r.asset_name, target: r.asset_target, kind: r.asset_kind },
    locationText: r.location_text,
    cvssScore: r.cvss_score === null ? null : Number(r.cvss_score),
    cweIds: r.cwe_ids,
    cveIds: r.cve_ids,
    firstSeenAt: iso(r.first_seen_at)!,
    lastSeenAt: iso(r.last_seen_at)!,
    fixedAt: iso(r.fixed_at),
    slaDueAt: iso(r.sla_due_at),
    overdue: r.status === 'open' && r.sla_due_at !== null && new Date(r.sla_due_at).getTime() < now.getTime(),
    statusReason: r.status_reason,
    statusExpiresAt: iso(r.status_expires_at),
    reopenedCount: r.reopened_count,
  };
}

/** What an export row carries: the finding without raw request/response evidence. */
export type ExportRow = FindingSummary & {
  description: string | null;
  cvssVector: string | null;
  location: Record<string, unknown>;
  remediation: string | null;
  references: string[];
  fingerprint: string;
  evidenceSummary: string | null;
};

/**
 * Planner costs for findings reads, local to the transaction. The default random_page_cost (4)
 * prices index pages as if read from spinning disks; with it, a search walks the whole table and
 * sorts rather than read the sort index (whose included columns answer the filters) and stop at a
 * page. 1.1 is the usual value for SSD and memory-resident data.
 */
const readCosts = (tx: Tx) => sql`select set_config('random_page_cost', '1.1', true)`.execute(tx);

export function createFindingsService(deps: { db: Kysely<DB>; audit: AuditService; clock: Clock }) {
  const { db, audit, clock } = deps;

  const { asMember } = tenantAccess(db);

  const selectRows = (tx: Tx) =>
    tx
      .selectFrom('findings as f')
      .innerJoin('assets as a', 'a.id', 'f.asset_id')
      .selectAll('f')
      .select(['a.name as asset_name', 'a.target as asset_target', 'a.kind as asset_kind'])
      .select([
        utcMicros('f.first_seen_at').as('c_first'),
        utcMicros('f.last_seen_at').as('c_last'),
        sql<string>`coalesce(${utcMicros('f.sla_due_at')}, 'infinity')`.as('c_sla'),
      ]);

  /**
   * One page in the given order, after `cursor`; fetches limit + 1 to know whether more follow.
   * Two steps: the page's ids from findings alone (walking the sort's index, the keyset as an
   * index condition, filters on its included columns), then those rows with their assets. Joined
   * in one step, the planner misjudges how many rows row-level security leaves and sorts every
   * match instead.
   */
  async function page(
    tx: Tx,
    tenantId: string,
    q: {
      filters: FindingFilters;
      sort: FindingSort;
      dir: 'asc' | 'desc';
      limit: number;
      after: (string | number)[] | null;
    },
    now: Date,
  ) {
    const spec = SORTS[q.sort];
    const keys = sql.join(spec.keys);
    let ids = tx
      .selectFrom('findings as f')
      .select('f.id')
      .where(conditions(tenantId, q.filters, now))
      .limit(q.limit + 1);
    if (q.after) {
      const values = sql.join(q.after.map((v, i) => sql`${v}::${sql.raw(spec.casts[i]!)}`));
      ids = ids.where(q.dir === 'desc' ? sql<boolean>`(${keys}) < (${values})` : sql<boolean>`(${keys}) > (${values})`);
    }
    for (const k of spec.keys) ids = ids.orderBy(k, q.dir);
    let query = selectRows(tx).where('f.tenant_id', '=', tenantId).where('f.id', 'in', ids);
    for (const k of spec.keys) query = query.orderBy(k, q.dir);
    const rows = (await query.execute()) as Row[];
    const more = rows.length > q.limit;
    const pageRows = rows.slice(0, q.limit);
    const last = pageRows.at(-1);
    return { rows: pageRows, next: more && last ? spec.values(last) : null };
  }

  return {
    async list(tenantId: string, caller: Caller, q: ListFindingsQuery): Promise<FindingList> {
      const dir = q.dir ?? SORTS[q.sort].defaultDir;
      const after = q.cursor ? decodeCursor(q.cursor, q.sort, dir) : null;
      return asMember(tenantId, caller, async (tx) => {
        const now = clock.now();
        await expireAcceptedRisks(tx, tenantId, now);
        await readCosts(tx);
        const { rows, next } = await page(tx, tenantId, { filters: q, sort: q.sort, dir, limit: q.limit, after }, now);
        // Counting is the expensive half of a page; later pages of the same filters skip it.
        let counts: Record<Severity, number> | null = null;
        let total: number | null = null;
        if (!after) {
          const countRows = await tx
            .selectFrom('findings as f')
            .select(['f.severity', sql<number>`count(*)::int`.as('n')])
            .where(conditions(tenantId, q, now, true))
            .groupBy('f.severity')
            .execute();
          counts = Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Record<Severity, number>;
          for (const c of countRows) counts[c.severity] = c.n;
          const chosen: readonly Severity[] = q.severity ?? SEVERITIES;
          total = chosen.reduce((a, s) => a + counts![s], 0);
        }
        return {
          findings: rows.map((r) => toSummary(r, now)),
          nextCursor: next ? encodeCursor(q.sort, dir, next) : null,
          counts,
          total,
        };
      });
    },

    async get(tenantId: string, caller: Caller, findingId: string): Promise<FindingDetail> {
      return asMember(tenantId, caller, async (tx) => {
        const now = clock.now();
        await expireAcceptedRisks(tx, tenantId, now);
        const r = (await selectRows(tx)
          .where('f.tenant_id', '=', tenantId)
          .where('f.id', '=', findingId)
          .executeTakeFirst()) as Row | undefined;
        if (!r) throw appError('finding_not_found', 'No such finding in this tenant.');
        const events = await tx
          .selectFrom('finding_events')
          .selectAll()
          .where('tenant_id', '=', tenantId)
          .where('finding_id', '=', findingId)
          .orderBy('id', 'desc')
          .limit(HISTORY_LIMIT)
          .execute();
        const history: FindingEvent[] = events.map((e) => ({
          id: e.id,
          at: iso(e.at)!,
          event: e.event,
          fromStatus: e.from_status,
          toStatus: e.to_status,
          scanId: e.scan_id,
          reason: e.reason,
          detail: e.detail,
          actorEmail: e.actor_email,
        }));
        // Creation is not stored as an event (decision 27): it is the row's first sighting, shown
        // once the history reaches back that far. Its severity is the one before the earliest
        // change, or today's.
        if (events.length < HISTORY_LIMIT) {
          const firstChange = events.findLast((e) => e.event === 'severity_changed');
          const from = (firstChange?.detail as { from?: unknown } | null)?.from;
          history.push({
            id: 0,
            at: iso(r.first_seen_at)!,
            event: 'created',
            fromStatus: null,
            toStatus: 'open',
            scanId: r.first_scan_id,
            reason: null,
            detail: { severity: typeof from === 'string' ? from : r.severity },
            actorEmail: null,
          });
        }
        return {
          finding: {
            ...toSummary(r, now),
            description: r.description,
            cvssVector: r.cvss_vector,
            location: r.location,
            evidence: r.evidence,
            remediation: r.remediation,
            references: r.reference_urls,
            fingerprint: r.fingerprint,
            scopeKey: r.scope_key,
            scanId: r.scan_id,
            firstScanId: r.first_scan_id,
            statusChangedAt: iso(r.status_changed_at),
            statusChangedBy: r.status_changed_by_email,
          },
          history,
        };
      });
    },

    /** Sets the status of up to 500 findings at once; all or none. Accepting a risk needs owner or admin. */
    async bulkStatus(tenantId: string, caller: Caller, body: BulkStatusBody) {
      const now = clock.now();
      let expiresAt: Date | null = null;
      if (body.status === 'accepted_risk') {
        expiresAt = new Date(body.expiresAt!);
        const problem =
          expiresAt.getTime() <= now.getTime()
            ? 'The expiry must be in the future.'
            : expiresAt.getTime() > now.getTime() + MAX_ACCEPT_DAYS * DAY_MS
              ? `Accept a risk for at most ${MAX_ACCEPT_DAYS} days, then review it again.`
              : null;
        if (problem)
          throw new AppError('validation_failed', problem, { details: [{ path: 'body.expiresAt', message: problem }] });
      }
      return asMember(tenantId, caller, async (tx, role) => {
        if (body.status === 'accepted_risk' && !isTenantAdmin(role))
          throw appError('tenant_forbidden', 'Accepting a risk needs the owner or admin role in this tenant.');
        const before = await tx
          .selectFrom('findings')
          .select(['id', 'status'])
          .where('tenant_id', '=', tenantId)
          .where('id', 'in', body.ids)
          .forUpdate()
          .execute();
        if (before.length !== body.ids.length) {
          const found = new Set(before.map((r) => r.id));
          const missing = body.ids.filter((id) => !found.has(id));
          throw appError(
            'finding_not_found',
            `${missing.length} of the findings do not exist in this tenant; nothing was changed.`,
            { details: { missing } },
          );
        }
        await sql`
          update findings set status = ${body.status}, status_reason = ${body.reason ?? null}, status_expires_at = ${expiresAt},
            status_changed_by = ${caller.userId}, status_changed_by_email = ${caller.email}, status_changed_at = ${now}, updated_at = ${now},
            fixed_at = case when ${body.status} = 'fixed' then coalesce(case when status = 'fixed' then fixed_at end, ${now}::timestamptz) else null end,
            reopened_count = reopened_count + case when ${body.status} = 'open' and status = 'fixed' then 1 else 0 end
          where tenant_id = ${tenantId} and id = any(${body.ids}::uuid[])`.execute(tx);
        await tx
          .insertInto('finding_events')
          .values(
            before.map((r) => ({
              tenant_id: tenantId,
              finding_id: r.id,
              at: now,
              event: 'status_changed' as const,
              from_status: r.status,
              to_status: body.status,
              reason: body.reason ?? null,
              detail: expiresAt ? JSON.stringify({ expiresAt: expiresAt.toISOString() }) : null,
              actor_user_id: caller.userId,
              actor_email: caller.email,
            })),
          )
          .execute();
        await audit.record(
          {
            tenantId,
            actorUserId: caller.userId,
            actorEmail: caller.email,
            action: 'finding.status_changed',
            targetType: 'finding',
            targetId: body.ids.length === 1 ? body.ids[0]! : null,
            details: {
              status: body.status,
              reason: body.reason ?? null,
              expiresAt: expiresAt?.toISOString() ?? null,
              count: body.ids.length,
              ids: body.ids,
            },
          },
          tx,
        );
        return { updated: body.ids.length, status: body.status };
      });
    },

    /**
     * The export's rows, page by page in one order. Membership is checked before the first page
     * (so a refusal is an ordinary JSON error) and again for every page.
     */
    async openExport(
      tenantId: string,
      caller: Caller,
      q: { filters: FindingFilters; sort: FindingSort; dir?: 'asc' | 'desc' | undefined },
      pageSize = 1_000,
    ) {
      const dir = q.dir ?? SORTS[q.sort].defaultDir;
      const now = clock.now();
      const fetch = (after: (string | number)[] | null) =>
        asMember(tenantId, caller, async (tx) => {
          if (!after) await expireAcceptedRisks(tx, tenantId, now);
          await readCosts(tx);
          return page(tx, tenantId, { filters: q.filters, sort: q.sort, dir, limit: pageSize, after }, now);
        });
      const first = await fetch(null);
      const toExport = (r: Row): ExportRow => ({
        ...toSummary(r, now),
        description: r.description,
        cvssVector: r.cvss_vector,
        location: r.location,
        remediation: r.remediation,
        references: r.reference_urls,
        fingerprint: r.fingerprint,
        evidenceSummary: typeof r.evidence.summary === 'string' ? r.evidence.summary : null,
      });
      async function* rows(): AsyncGenerator<ExportRow> {
        let current = first;
        for (;;) {
          for (const r of current.rows) yield toExport(r);
          if (!current.next) return;
          current = await fetch(current.next);
        }
      }
      return { generatedAt: now, rows: rows() };
    },
  };
}

export type FindingsService = ReturnType<typeof createFindingsService>;
