-- Scan admission and leasing as database functions (docs/decisions.md, "Leases in one round trip").
--
-- scan_admission() is the one decision of whether a scan may be queued (phase 'queue'), may start
-- (phase 'lease'), or whether its asset can be scanned at all (phase 'check', no locks, no
-- counts). src/scans/scans-admission.ts calls it and turns its verdict into messages; lease_scan()
-- calls it for each candidate. Concurrency: transaction-scoped advisory
-- locks serialise admissions per tenant (queue phase: the daily quota) and per asset
-- (concurrency), always tenant first; the counts are read by the NEXT statement, which in a
-- volatile function under READ COMMITTED takes a fresh snapshot that includes every scan committed
-- by whoever held the locks before us.
--
-- p_fits maps an asset kind to the scan kinds that apply to it (KINDS_FOR_ASSET in TypeScript, the
-- one source of that rule).
-- A top-level scan's place among its day's scans, stamped at queue time under the tenant's lock
-- (used + 1). Refunds (a cancelled scan that never started) only lower a later scan's real rank, so
-- quota_seq <= quota proves the lease-time quota check without counting; beyond it, it counts.
alter table scans add column quota_seq integer;

create or replace function scan_admission(
  p_tenant uuid, p_asset uuid, p_kind text, p_phase text, p_scan uuid, p_day date, p_wait boolean, p_fits jsonb,
  p_default_quota integer, p_default_per_asset integer,
  out verdict text, out used integer, out daily_quota integer, out active integer, out per_asset integer, out asset_kind text
)
language plpgsql volatile as $$
declare
  got boolean := true;
  f record;
begin
  if p_phase = 'queue' then
    if p_wait then
      perform pg_advisory_xact_lock(hashtextextended('rampart.scan-quota:' || p_tenant, 0));
      perform pg_advisory_xact_lock(hashtextextended('rampart.scan-asset:' || p_asset, 0));
    else
      got := pg_try_advisory_xact_lock(hashtextextended('rampart.scan-quota:' || p_tenant, 0))
             and pg_try_advisory_xact_lock(hashtextextended('rampart.scan-asset:' || p_asset, 0));
    end if;
  elsif p_phase = 'lease' then
    -- The lease-time quota check is this scan's rank among the scans queued on its day, which
    -- concurrent leases cannot change: leases of one tenant need no tenant lock.
    if p_wait then
      perform pg_advisory_xact_lock(hashtextextended('rampart.scan-asset:' || p_asset, 0));
    else
      got := pg_try_advisory_xact_lock(hashtextextended('rampart.scan-asset:' || p_asset, 0));
    end if;
  end if;
  if not got then
    verdict := 'busy'; used := 0; daily_quota := 0; active := 0; per_asset := 0;
    return;
  end if;

  -- A separate statement from the locks: a fresh snapshot.
  if p_phase = 'lease' then
    select a.kind, a.verification_status, a.archived_at is not null as archived,
           coalesce(ts.daily_scan_quota, p_default_quota)::int as quota,
           coalesce(ts.per_asset_concurrent_scans, p_default_per_asset)::int as limit_,
           -- This scan (or, for a chunk, its parent) must rank within the quota of the day it was
           -- queued on: a lowered quota holds back the scans beyond it. quota_seq answers without
           -- counting while it is within the quota (see above).
           case when me.quota_seq is not null and me.quota_seq <= coalesce(ts.daily_scan_quota, p_default_quota) then me.quota_seq - 1
                else (select count(*) from scans q where q.tenant_id = p_tenant and me.quota_day is not null
                        and q.quota_day = me.quota_day and (q.created_at, q.id) < (me.created_at, me.id))::int end as used_,
           -- Other top-level scans of the asset working on the target now; chunks share their
           -- parent's slot, and an ingesting scan is done with the target.
           (select count(*) from scans c where c.asset_id = a.id and c.parent_id is null and c.id <> me.id
              and c.status in ('leased', 'running', 'aggregating'))::int as active_
      into f
      from (select t.id, t.created_at, t.quota_day, t.quota_seq
              from scans s join scans t on t.id = coalesce(s.parent_id, s.id)
             where s.id = p_scan and s.tenant_id = p_tenant) me
      join assets a on a.id = p_asset and a.tenant_id = p_tenant
      left join tenant_settings ts on ts.tenant_id = a.tenant_id;
  else
    select a.kind, a.verification_status, a.archived_at is not null as archived,
           coalesce(ts.daily_scan_quota, p_default_quota)::int as quota,
           coalesce(ts.per_asset_concurrent_scans, p_default_per_asset)::int as limit_,
           case when p_phase = 'queue' then
             (select count(*) from scans q where q.tenant_id = p_tenant and q.quota_day = p_day)::int else 0 end as used_,
           -- Queue time: every unfinished top-level scan of the asset, queued ones included (an
           -- ingesting scan is done with the target).
           case when p_phase = 'queue' then
             (select count(*) from scans c where c.asset_id = a.id and c.parent_id is null
                and c.status not in ('ingesting', 'succeeded', 'failed', 'cancelled'))::int else 0 end as active_
      into f
      from assets a left join tenant_settings ts on ts.tenant_id = a.tenant_id
     where a.id = p_asset and a.tenant_id = p_tenant;
  end if;

  used := 0; daily_quota := 0; active := 0; per_asset := 0; asset_kind := f.kind;
  if f is null or f.kind is null then
    verdict := 'asset_not_found';
  elsif f.archived then
    verdict := 'asset_archived';
  elsif f.verification_status not in ('verified', 'bypassed') then
    verdict := 'asset_not_verified';
  elsif p_kind is not null and not coalesce((p_fits -> f.kind) ? p_kind, false) then
    verdict := 'scan_kind_mismatch';
  else
    used := f.used_; daily_quota := f.quota; active := f.active_; per_asset := f.limit_;
    if p_phase <> 'check' and f.used_ >= f.quota then
      verdict := 'quota_exceeded';
    elsif p_phase <> 'check' and f.active_ >= f.limit_ then
      verdict := 'asset_scan_limit';
    else
      verdict := 'admitted';
    end if;
  end if;
end $$;

-- One lease attempt for a worker, in one statement (one round trip, its own transaction): up to
-- 8 candidates are taken FOR UPDATE SKIP LOCKED (two replicas never look at the same row at once),
-- each is admitted with scan_admission(phase 'lease', no waiting for a busy asset lock), and the
-- first admitted one is claimed with a compare-and-set on status = 'queued'.
-- Rows returned: at most one 'leased' (the lease), plus 'stale' for candidates whose ownership
-- proof is older than p_fresh_after (the caller re-checks them by DNS and tries again) and
-- 'refused' for candidates whose asset can no longer be scanned (the caller fails them with the
-- reason). Lease times are the database's clock, one clock for every replica.
create or replace function lease_scan(
  p_tenant uuid, p_worker uuid, p_kinds text[], p_token uuid, p_lease_seconds integer, p_day date,
  p_fresh_after timestamptz, p_fits jsonb, p_default_quota integer, p_default_per_asset integer
) returns table (
  outcome text, scan_id uuid, asset_id uuid, reason text, lease_expires_at timestamptz, attempts integer, kind text,
  options jsonb, chunk_index integer, chunk_spec jsonb, chunk_count integer, asset_kind text, target text, asset_name text
)
language plpgsql volatile as $$
declare
  c record;
  v record;
begin
  for c in
    select s.id, s.asset_id, s.kind,
           (a.verification_status = 'verified' and p.id is not null
             and (p.last_checked_at is null or p.last_checked_at < p_fresh_after)) as proof_stale
      from scans s
      join assets a on a.id = s.asset_id
      left join assets p on p.id = case a.verified_via when 'txt' then a.id when 'covered' then a.covered_by end
      left join tenant_settings ts on ts.tenant_id = s.tenant_id
     where s.tenant_id = p_tenant and s.status = 'queued' and s.kind = any(p_kinds)
       and (s.not_before is null or s.not_before <= now())
       -- Skip assets already at their concurrency limit, so their waiting scans do not hide other
       -- assets' work behind them (scan_admission stays the authority).
       and (select count(*) from scans r
             where r.asset_id = s.asset_id and r.parent_id is null and r.id <> coalesce(s.parent_id, s.id)
               and r.status in ('leased', 'running', 'aggregating')) < coalesce(ts.per_asset_concurrent_scans, p_default_per_asset)
     order by s.created_at, s.chunk_index nulls first, s.id
     -- A constant: with a parameter here the cached generic plan sorts every queued scan of the
     -- tenant instead of walking scans_ready_idx (twice the cost of a lease).
     limit 8
     for update of s skip locked
  loop
    if c.proof_stale then
      return query select 'stale'::text, c.id, c.asset_id, null::text, null::timestamptz, null::int, null::text, null::jsonb, null::int, null::jsonb, null::int, null::text, null::text, null::text;
      continue;
    end if;
    v := scan_admission(p_tenant, c.asset_id, c.kind, 'lease', c.id, p_day, false, p_fits, p_default_quota, p_default_per_asset);
    if v.verdict = 'admitted' then
      return query
        with leased as (
          update scans u set status = 'leased', lease_token = p_token, leased_by = p_worker,
                 lease_expires_at = now() + make_interval(secs => p_lease_seconds),
                 attempts = u.attempts + 1, not_before = null, error = null,
                 started_at = coalesce(u.started_at, now()), updated_at = now()
           where u.id = c.id and u.status = 'queued'
          returning u.id, u.asset_id, u.lease_expires_at, u.attempts, u.kind, u.options, u.chunk_index, u.chunk_spec, u.parent_id
        )
        select 'leased'::text, l.id, l.asset_id, null::text, l.lease_expires_at, l.attempts, l.kind, l.options, l.chunk_index, l.chunk_spec,
               (select pp.chunk_count from scans pp where pp.id = l.parent_id), a.kind, a.target, a.name
          from leased l join assets a on a.id = l.asset_id;
      return;
    elsif v.verdict not in ('busy', 'quota_exceeded', 'asset_scan_limit') then
      return query select 'refused'::text, c.id, c.asset_id, v.verdict, null::timestamptz, null::int, c.kind, null::jsonb, null::int, null::jsonb, null::int, v.asset_kind, null::text, null::text;
    end if;
  end loop;
end $$;

grant execute on function scan_admission(uuid, uuid, text, text, uuid, date, boolean, jsonb, integer, integer) to rampart_app, rampart_service;
grant execute on function lease_scan(uuid, uuid, text[], uuid, integer, date, timestamptz, jsonb, integer, integer) to rampart_service;

-- The lease-time quota rank counts a tenant's scans of one day queued before this one: an
-- index-only range scan with the order in the index (it was a heap visit per scan).
drop index scans_quota_idx;
create index scans_quota_idx on scans (tenant_id, quota_day, created_at, id) where quota_day is not null;
