-- upgrade: rolling
-- Leases look past scans the daily quota holds back (docs/decisions.md, "Leases look past held
-- scans"). lease_scan() took the 8 oldest candidates and stopped there, so 8 scans beyond a lowered
-- quota (queued on an earlier day) hid every newer scan of the tenant from every worker for good.
--
-- Now a candidate refused for the quota is stamped quota_held_at and left out of later attempts
-- until the stamp is a minute old or the tenant's settings changed after it (a raised quota frees
-- it at once; a refund by a cancel within a minute). Within one attempt, candidates that were not
-- leased are remembered and the walk goes on with the next 8, up to 16 rounds, so one attempt gets
-- past any number of held scans stamped earlier and up to 128 unstamped ones.
--
-- Rolling-safe: a nullable column without a default; the function keeps its signature.
alter table scans add column quota_held_at timestamptz;

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
  seen uuid[] := '{}';
  found_ integer;
  rounds integer := 0;
begin
  loop
    found_ := 0;
    rounds := rounds + 1;
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
         -- Held back by the quota recently, and nothing changed since: not worth a look.
         and (s.quota_held_at is null or s.quota_held_at < now() - interval '1 minute' or s.quota_held_at < ts.updated_at)
         and s.id <> all(seen)
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
      found_ := found_ + 1;
      seen := seen || c.id;
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
                   attempts = u.attempts + 1, not_before = null, error = null, quota_held_at = null,
                   started_at = coalesce(u.started_at, now()), updated_at = now()
             where u.id = c.id and u.status = 'queued'
            returning u.id, u.asset_id, u.lease_expires_at, u.attempts, u.kind, u.options, u.chunk_index, u.chunk_spec, u.parent_id
          )
          select 'leased'::text, l.id, l.asset_id, null::text, l.lease_expires_at, l.attempts, l.kind, l.options, l.chunk_index, l.chunk_spec,
                 (select pp.chunk_count from scans pp where pp.id = l.parent_id), a.kind, a.target, a.name
            from leased l join assets a on a.id = l.asset_id;
        return;
      elsif v.verdict = 'quota_exceeded' then
        update scans set quota_held_at = now() where id = c.id;
      elsif v.verdict not in ('busy', 'asset_scan_limit') then
        return query select 'refused'::text, c.id, c.asset_id, v.verdict, null::timestamptz, null::int, c.kind, null::jsonb, null::int, null::jsonb, null::int, v.asset_kind, null::text, null::text;
      end if;
    end loop;
    exit when found_ < 8 or rounds >= 16;
  end loop;
end $$;
