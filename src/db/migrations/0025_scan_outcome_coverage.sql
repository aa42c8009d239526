-- upgrade: rolling
-- What a finished scan's result was worth, and what it looked at.
--
-- outcome: 'complete' (the report covered what the scan set out to cover), 'partial' (some of it
-- was not looked at: requests failed, a time budget ran out) or 'inconclusive' (nothing was looked
-- at: the target refused or timed out on every probe, a crawl fetched no page). outcome_reason
-- says why for the last two. A partial or inconclusive result closes no finding. Null until the
-- report is read (and for scans that failed or were cancelled).
-- coverage: what the report says it covered (docs/report-format.md, "coverage"), kept for the
-- coverage-based closing of findings; null when the report carried none.
--
-- Rolling-safe: three nullable columns (no rewrite) and a replaced trigger function that only
-- adds the parent's outcome; older replicas never write the columns, and their scans read as
-- outcome unknown.
alter table scans add column outcome text check (outcome is null or outcome in ('complete', 'partial', 'inconclusive'));
alter table scans add column outcome_reason text check (outcome_reason is null or length(outcome_reason) <= 1000);
alter table scans add column coverage jsonb;

-- As 0006, plus the parent's outcome once every chunk succeeded: inconclusive when every chunk
-- was, partial when any chunk was partial or inconclusive, else complete.
create or replace function scans_aggregate_children() returns trigger
language plpgsql volatile as $$
declare
  parent_status text;
  n integer;
  n_terminal integer;
  n_failed integer;
  n_cancelled integer;
  n_started integer;
  n_inconclusive integer;
  n_partial integer;
  avg_percent integer;
  next_status text;
  next_outcome text;
  next_reason text;
begin
  select status into parent_status from scans where id = new.parent_id for update;
  if parent_status is null or parent_status in ('succeeded', 'failed', 'cancelled') then
    return null;
  end if;
  select count(*),
         count(*) filter (where status in ('succeeded', 'failed', 'cancelled')),
         count(*) filter (where status = 'failed'),
         count(*) filter (where status = 'cancelled'),
         count(*) filter (where status <> 'queued' or percent > 0),
         count(*) filter (where outcome = 'inconclusive'),
         count(*) filter (where outcome = 'partial'),
         coalesce(floor(avg(case when status = 'succeeded' then 100 else percent end)), 0)::integer
    into n, n_terminal, n_failed, n_cancelled, n_started, n_inconclusive, n_partial, avg_percent
    from scans where parent_id = new.parent_id;
  if n_terminal = n then
    next_status := case when n_failed > 0 then 'failed' when n_cancelled > 0 then 'cancelled' else 'succeeded' end;
  elsif n_started > 0 or parent_status = 'aggregating' then
    next_status := 'aggregating';
  else
    next_status := 'chunking';
  end if;
  if next_status = 'succeeded' then
    if n_inconclusive = n then
      next_outcome := 'inconclusive';
      next_reason := 'every chunk was inconclusive';
    elsif n_inconclusive + n_partial > 0 then
      next_outcome := 'partial';
      next_reason := concat_ws(', ',
        case when n_inconclusive > 0 then format('%s of %s chunks inconclusive', n_inconclusive, n) end,
        case when n_partial > 0 then format('%s of %s chunks partial', n_partial, n) end);
    else
      next_outcome := 'complete';
    end if;
  end if;
  update scans set
    status = next_status,
    percent = case when next_status = 'succeeded' then 100 else avg_percent end,
    started_at = case when next_status <> 'chunking' then coalesce(started_at, now()) else started_at end,
    finished_at = case when next_status in ('succeeded', 'failed', 'cancelled') then now() else null end,
    error = case when next_status = 'failed' then coalesce(error, format('%s of %s chunks failed', n_failed, n)) else error end,
    outcome = case when next_status = 'succeeded' then next_outcome else outcome end,
    outcome_reason = case when next_status = 'succeeded' then next_reason else outcome_reason end,
    updated_at = now()
  where id = new.parent_id;
  return null;
end $$;
