// Reads the tenant home page in one tenant transaction (RLS applies; every query also filters by
// tenant). Counts are computed at read time: nothing here is stored or cached.
import { sql, type Kysely } from 'kysely';
import { addDays, dayOf, daysBetween, effectiveStatus, EXPIRY_DAY } from '../cmmc/cmmc-program-state.ts';
import { cmmcRepo } from '../cmmc/cmmc-repo.ts';
import type { Clock } from '../lib/clock.ts';
import type { DB } from '../db/schema.ts';
import { type Caller, withTenantAccess } from '../db/tenant.ts';
import { SEVERITIES, TERMINAL_STATUSES } from '../scans/scans-schemas.ts';
import { selectScans, toScanDto } from '../scans/scans-service.ts';
import { withWaitReasons } from '../scans/scans-waiting.ts';
import { OVERVIEW_LIST_LIMIT, TREND_DAYS, type Overview } from './overview-schemas.ts';

/** Statuses counted as queued on the home page; every other unfinished one is running. */
const QUEUED = ['queued', 'chunking'];

export function createOverviewService(deps: { db: Kysely<DB>; clock: Clock }) {
  const { db, clock } = deps;

  return {
    async get(tenantId: string, caller: Caller): Promise<Overview> {
      const now = clock.now();
      const today = dayOf(now);
      const firstDay = addDays(today, -(TREND_DAYS - 1));
      return withTenantAccess(db, tenantId, caller, async (tx) => {
        const open = await tx
          .selectFrom('findings as f')
          .innerJoin('assets as a', 'a.id', 'f.asset_id')
          .where('f.tenant_id', '=', tenantId)
          .where('f.status', '=', 'open')
          .where('a.archived_at', 'is', null)
          .select(['f.severity'])
          .select((eb) => [
            eb.fn.countAll<string>().as('n'),
            sql<string>`count(*) filter (where f.sla_due_at < ${now})`.as('overdue'),
          ])
          .groupBy('f.severity')
          .execute();
        const counts = Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Overview['findings']['open'];
        let overdue = 0;
        for (const r of open) {
          counts[r.severity] = Number(r.n);
          overdue += Number(r.overdue);
        }

        const since = new Date(`${firstDay}T00:00:00Z`);
        const { rows: opened } = await sql<{ day: string; n: number }>`
          select to_char(first_seen_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*)::int as n
            from findings where tenant_id = ${tenantId} and first_seen_at >= ${since}
           group by 1`.execute(tx);
        const { rows: fixed } = await sql<{ day: string; n: number }>`
          select to_char(at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*)::int as n
            from finding_events
           where tenant_id = ${tenantId} and at >= ${since}
             and (event = 'fixed' or (event = 'status_changed' and to_status = 'fixed'))
           group by 1`.execute(tx);
        const openedBy = new Map(opened.map((r) => [r.day, Number(r.n)]));
        const fixedBy = new Map(fixed.map((r) => [r.day, Number(r.n)]));
        const trend = Array.from({ length: TREND_DAYS }, (_, i) => {
          const day = addDays(firstDay, i);
          return { day, opened: openedBy.get(day) ?? 0, fixed: fixedBy.get(day) ?? 0 };
        });

        const unfinished = tx
          .selectFrom('scans')
          .where('tenant_id', '=', tenantId)
          .where('parent_id', 'is', null)
          .where('status', 'not in', TERMINAL_STATUSES as never[]);
        const scanCounts = await unfinished
          .select([
            sql<number>`count(*) filter (where status in (${sql.join(QUEUED)}))::int`.as('queued'),
            sql<number>`count(*) filter (where status not in (${sql.join(QUEUED)}))::int`.as('running'),
          ])
          .executeTakeFirstOrThrow();
        const activeRows = await selectScans(tx)
          .where('s.tenant_id', '=', tenantId)
          .where('s.parent_id', 'is', null)
          .where('s.status', 'not in', TERMINAL_STATUSES as never[])
          .orderBy('s.created_at', 'desc')
          .orderBy('s.id', 'desc')
          .limit(OVERVIEW_LIST_LIMIT)
          .execute();
        const active = await withWaitReasons(tx, tenantId, activeRows.map(toScanDto), now);

        const assetCounts = await tx
          .selectFrom('assets')
          .where('tenant_id', '=', tenantId)
          .where('archived_at', 'is', null)
          .select([
            sql<number>`count(*)::int`.as('total'),
            sql<number>`count(*) filter (where verification_status = 'pending')::int`.as('pending'),
          ])
          .executeTakeFirstOrThrow();
        const pending = await tx
          .selectFrom('assets')
          .where('tenant_id', '=', tenantId)
          .where('archived_at', 'is', null)
          .where('verification_status', '=', 'pending')
          .select(['id', 'name', 'target', 'kind'])
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(OVERVIEW_LIST_LIMIT)
          .execute();

        const profile = await cmmcRepo.profileByTenant(tx, tenantId);
        let cmmc: Overview['cmmc'] = null;
        if (profile) {
          const statusDate = dayOf(profile.status_date);
          const nextDue = statusDate ? addDays(statusDate, EXPIRY_DAY) : null;
          cmmc = {
            status: effectiveStatus(profile, today),
            statusDate,
            nextDue,
            daysUntilDue: nextDue ? daysBetween(today, nextDue) : null,
          };
        }

        return {
          findings: {
            open: counts,
            openTotal: Object.values(counts).reduce((a, b) => a + b, 0),
            overdue,
            trend,
          },
          scans: { running: Number(scanCounts.running), queued: Number(scanCounts.queued), active },
          assets: { total: Number(assetCounts.total), awaitingProof: Number(assetCounts.pending), pending },
          cmmc,
        };
      });
    },
  };
}
export type OverviewService = ReturnType<typeof createOverviewService>;
