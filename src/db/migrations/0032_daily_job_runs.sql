-- upgrade: rolling
-- Daily jobs the server runs by itself (the CMMC renewal sweep): one row per job and UTC day is
-- the claim, inserted in the job's own transaction, so the job runs exactly once a day however
-- many replicas look for it (a failed run rolls its claim back and the next look runs it again).
-- Service role only; no tenant reads it.
create table daily_job_runs (
  job text not null check (job ~ '^[a-z0-9_]{1,60}$'),
  day date not null,
  ran_at timestamptz not null default now(),
  primary key (job, day)
);
alter table daily_job_runs enable row level security;
alter table daily_job_runs force row level security;
grant select, insert, delete on daily_job_runs to rampart_service;
create policy daily_job_runs_service on daily_job_runs for all to rampart_service using (true) with check (true);
