-- upgrade: rolling
-- Why a queued scan waits, from the rule that decides it: scan_admission() gains the phase
-- 'explain', the lease-time counts (quota rank on the scan's day, the asset's running scans)
-- without taking any lock, for the scan pages (src/scans/scans-waiting.ts). The other phases are
-- unchanged. Rolling-safe: same signature, a new phase value older replicas never pass.
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
  if p_phase in ('lease', 'explain') then
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
