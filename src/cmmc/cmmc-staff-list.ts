// The staff list of the CMMC program (listCmmcProfilesStaff): every profile with its device fields,
// the six tiles over every profile, filtered and searched, sorted by CAGE code.
import { sql } from 'kysely';
import { withService } from '../db/tenant.ts';
import {
  addDays,
  DAY_MS,
  dayOf,
  EXPIRY_DAY,
  iso,
  RENEWAL_DUE_DAY,
  type ProgramDeps,
  type ProgramState,
} from './cmmc-program-state.ts';
import { parseJson, type ProfileRow } from './cmmc-repo.ts';
import type { STAFF_FILTERS, StaffListResponse } from './cmmc-program-schemas.ts';
import { DEVICE_STALE_DAYS } from './cmmc-schemas.ts';

export type StaffFilter = (typeof STAFF_FILTERS)[number];

interface StaffRow {
  id: string;
  tenant_id: string;
  cage_code: string;
  company_name: string;
  status: ProfileRow['status'];
  status_date: string | Date | null;
  updated_at: Date;
  device_link_issued: boolean;
  device_count: number;
  failing_devices: number;
  pending_devices: number;
  latest_run_at: Date | null;
  total: string | number;
}

export function createCmmcStaffList(deps: ProgramDeps, state: ProgramState) {
  const { db, clock } = deps;

  return {
    async listStaff(opts: {
      filter: StaffFilter;
      q: string | null;
      limit: number;
      offset: number;
    }): Promise<StaffListResponse> {
      const t = state.today();
      const staleBefore = new Date(clock.now().getTime() - DEVICE_STALE_DAYS * DAY_MS);
      const renewBy = addDays(t, 30 - EXPIRY_DAY);
      const expiredBy = addDays(t, -EXPIRY_DAY);
      const dueBy = addDays(t, -RENEWAL_DUE_DAY);
      // One statement: the latest run per hostname (an index-only scan of endpoint_audit_runs_host_idx),
      // device counts per profile (a computer whose latest run is retired is not counted), the tiles
      // over every profile, and the page. The CTEs are materialized so each runs once (inlined, a
      // selective search made the planner repeat the device aggregate per profile).
      const like = opts.q ? `%${opts.q.replace(/[\\%_]/g, (m) => `\\${m}`)}%` : null;
      return withService(db, async (tx) => {
        const { rows } = await sql<StaffRow & { tiles: unknown }>`
          with latest as materialized (
            select distinct on (profile_id, lower(hostname)) profile_id, received_at, failing, retired_at
              from endpoint_audit_runs
             order by profile_id, lower(hostname), received_at desc
          ), dev as materialized (
            select profile_id, count(*)::int as device_count,
                   count(*) filter (where received_at < ${staleBefore})::int as pending_devices,
                   -- A stale latest run proves nothing today (scoring treats it as NOT MET), so it counts
                   -- as failing too, whatever it reported.
                   count(*) filter (where failing or received_at < ${staleBefore})::int as failing_devices,
                   max(received_at) as latest_run_at
              from latest where retired_at is null group by profile_id
          ), base as materialized (
            select p.id, p.tenant_id, p.cage_code, p.company_name, p.status_date, p.updated_at,
                   -- The status as of today (effectiveStatus), whether or not the sweep has run.
                   case when p.status in ('compliant', 'renewal_due', 'not_compliant') and p.status_date <= ${expiredBy}::date
                          then 'expired'
                        when p.status = 'compliant' and p.status_date <= ${dueBy}::date then 'renewal_due'
                        else p.status end as status,
                   p.device_token_hash is not null as device_link_issued,
                   coalesce(d.device_count, 0) as device_count,
                   coalesce(d.failing_devices, 0) as failing_devices,
                   coalesce(d.pending_devices, 0) as pending_devices,
                   d.latest_run_at,
                   (p.status in ('compliant', 'renewal_due') and p.status_date <= ${renewBy}::date
                    and p.status_date > ${expiredBy}::date) as renewing_soon,
                   (coalesce(d.device_count, 0) = 0 or coalesce(d.pending_devices, 0) > 0) as devices_pending
              from compliance_profiles p left join dev d on d.profile_id = p.id
          ), tiles as (
            select json_build_object('customers', count(*),
                   'compliant', count(*) filter (where status = 'compliant'),
                   'inProgress', count(*) filter (where status = 'in_progress'),
                   'expired', count(*) filter (where status = 'expired'),
                   'renewingSoon', count(*) filter (where renewing_soon),
                   'devicesPending', count(*) filter (where devices_pending)) as tiles
              from base
          )
          select t.tiles, page.* from tiles t left join lateral (
            select b.*, count(*) over () as total from base b
             where (${opts.filter}::text = 'all'
                    or (${opts.filter}::text = 'compliant' and b.status = 'compliant')
                    or (${opts.filter}::text = 'in_progress' and b.status = 'in_progress')
                    or (${opts.filter}::text = 'expired' and b.status = 'expired')
                    or (${opts.filter}::text = 'renewing_soon' and b.renewing_soon)
                    or (${opts.filter}::text = 'devices_pending' and b.devices_pending))
               and (${like}::text is null or b.cage_code ilike ${like}::text or b.company_name ilike ${like}::text)
             order by b.cage_code, b.id
             limit ${opts.limit} offset ${opts.offset}
          ) page on true`.execute(tx);
        const tiles = parseJson<Record<string, number>>(rows[0]!.tiles, {});
        const pageRows = rows.filter((r) => r.id !== null);
        return {
          tiles: {
            customers: Number(tiles.customers ?? 0),
            compliant: Number(tiles.compliant ?? 0),
            inProgress: Number(tiles.inProgress ?? 0),
            expired: Number(tiles.expired ?? 0),
            renewingSoon: Number(tiles.renewingSoon ?? 0),
            devicesPending: Number(tiles.devicesPending ?? 0),
          },
          total: pageRows[0] ? Number(pageRows[0].total) : 0,
          profiles: pageRows.map((r) => ({
            id: r.id,
            tenantId: r.tenant_id,
            cageCode: r.cage_code,
            companyName: r.company_name,
            status: r.status,
            statusDate: dayOf(r.status_date),
            renewalDueAt: r.status_date ? addDays(dayOf(r.status_date), EXPIRY_DAY) : null,
            device_link_issued: r.device_link_issued,
            device_count: Number(r.device_count),
            failing_devices: Number(r.failing_devices),
            pendingDevices: Number(r.pending_devices),
            latestRunAt: r.latest_run_at ? iso(r.latest_run_at) : null,
            updatedAt: iso(r.updated_at),
          })),
        };
      });
    },
  };
}
