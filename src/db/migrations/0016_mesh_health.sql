-- Staff mesh tools: the daily histogram and indexes behind the mesh health rollup, and
-- the table of stored "ask operations" answers (written by the service role only; staff read
-- them through it).
-- Answers are a record of what was asked and answered: nothing updates or deletes them.

-- Daily duration histogram of outbound attempts, kept by triggers on svc_outbound_events: one row
-- per (peer, UTC day, exact duration) with its attempt and success counts. The rollup reads the
-- window's whole days from here (exact counts, sums and nearest-rank p95 follow from a histogram
-- of exact values) and only the two partial edge days from the events themselves, so a 30-day
-- window reads a few hundred thousand rows instead of every attempt. Durations are whole
-- milliseconds as the client records them, so a day holds at most a few thousand distinct values
-- per peer. Statement-level triggers with transition tables: one grouped upsert per statement
-- (a bulk insert or a retention delete stays one statement), keys in a fixed order so concurrent
-- multi-row statements cannot deadlock.
create table svc_outbound_daily (
  peer text not null,
  day date not null,
  duration_ms real not null,
  attempts integer not null check (attempts > 0),
  successes integer not null check (successes between 0 and attempts),
  primary key (peer, day, duration_ms)
);

create function svc_outbound_daily_apply() returns trigger language plpgsql as $$
begin
  if tg_op in ('DELETE', 'UPDATE') then
    with o as (
      select peer, (created_at at time zone 'UTC')::date as day, duration_ms, count(*)::int as n, (count(*) filter (where ok))::int as s
      from old_rows group by 1, 2, 3
    ), gone as (
      delete from svc_outbound_daily d using o
      where d.peer = o.peer and d.day = o.day and d.duration_ms = o.duration_ms and d.attempts <= o.n
    )
    update svc_outbound_daily d set attempts = d.attempts - o.n, successes = greatest(0, d.successes - o.s)
    from o where d.peer = o.peer and d.day = o.day and d.duration_ms = o.duration_ms and d.attempts > o.n;
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    insert into svc_outbound_daily as d (peer, day, duration_ms, attempts, successes)
    select peer, (created_at at time zone 'UTC')::date, duration_ms, count(*)::int, (count(*) filter (where ok))::int
    from new_rows group by 1, 2, 3 order by 1, 2, 3
    on conflict (peer, day, duration_ms) do update set attempts = d.attempts + excluded.attempts, successes = d.successes + excluded.successes;
  end if;
  return null;
end $$;

create function svc_outbound_daily_clear() returns trigger language plpgsql as $$
begin
  truncate svc_outbound_daily;
  return null;
end $$;

create trigger svc_outbound_daily_insert after insert on svc_outbound_events
  referencing new table as new_rows for each statement execute function svc_outbound_daily_apply();
create trigger svc_outbound_daily_delete after delete on svc_outbound_events
  referencing old table as old_rows for each statement execute function svc_outbound_daily_apply();
create trigger svc_outbound_daily_update after update on svc_outbound_events
  referencing old table as old_rows new table as new_rows for each statement execute function svc_outbound_daily_apply();
create trigger svc_outbound_daily_truncate after truncate on svc_outbound_events
  for each statement execute function svc_outbound_daily_clear();

-- What is on record already.
insert into svc_outbound_daily (peer, day, duration_ms, attempts, successes)
select peer, (created_at at time zone 'UTC')::date, duration_ms, count(*)::int, (count(*) filter (where ok))::int
from svc_outbound_events group by 1, 2, 3;

-- Like the svc_* tables: the service role only (its inserts and retention deletes of events
-- maintain the histogram through the triggers, which run with its rights).
alter table svc_outbound_daily enable row level security;
alter table svc_outbound_daily force row level security;
create policy svc_outbound_daily_service on svc_outbound_daily for all to rampart_service using (true) with check (true);
grant select, insert, update, delete on svc_outbound_daily to rampart_service;

-- Recent failures per peer: failures are few, so this partial index stays small and costs
-- nothing on successful attempts.
create index svc_outbound_events_failures_idx on svc_outbound_events (peer, created_at desc) where not ok;

-- Last verified inbound call per caller, without reading the whole window.
create index svc_inbound_events_caller_idx on svc_inbound_events (caller, received_at desc) where verified;

create table mesh_ask_answers (
  id uuid primary key default gen_random_uuid(),
  question text not null check (char_length(question) between 1 and 4000),
  window_days integer not null check (window_days in (1, 7, 30)),
  evidence jsonb not null default '[]'::jsonb,
  markdown text not null,
  model text,
  duration_ms integer not null check (duration_ms >= 0),
  created_by uuid references "user" (id) on delete set null,
  created_at timestamptz not null default now()
);
create index mesh_ask_answers_created_idx on mesh_ask_answers (created_at desc, id desc);

-- Platform table (no tenant), like the svc_* tables of 0003_mesh.sql: only the service role has
-- a policy and grants; the app role has none, so no client path can read or write it.
alter table mesh_ask_answers enable row level security;
alter table mesh_ask_answers force row level security;
create policy mesh_ask_answers_service on mesh_ask_answers for all to rampart_service using (true) with check (true);
grant select, insert on mesh_ask_answers to rampart_service;
