-- Scans: queued by tenants (or schedules), split into chunks, leased by workers; recurring
-- schedules. Admission (daily quota, per-asset concurrency) lives in src/scans/scans-admission.ts.

-- Recurring scans. next_run_at is null while disabled; the cron tick claims a due schedule by
-- moving next_run_at forward with a compare-and-set on its old value (exactly-once dispatch).
create table scan_schedules (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references "organization" (id) on delete cascade,
  asset_id uuid not null references assets (id) on delete cascade,
  name text not null,
  kind text not null check (kind in ('port', 'template', 'webapp', 'container', 'edge')),
  options jsonb not null default '{}'::jsonb,
  chunk_count integer check (chunk_count is null or chunk_count between 2 and 8),
  cron text not null,
  time_zone text not null,
  enabled boolean not null default true,
  next_run_at timestamptz,
  last_run_at timestamptz,
  last_scan_id uuid,
  last_error text,
  created_by uuid references "user" (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (enabled = (next_run_at is not null))
);
create index scan_schedules_tenant_created_idx on scan_schedules (tenant_id, created_at desc, id desc);
create index scan_schedules_due_idx on scan_schedules (next_run_at) where enabled;

-- A parent of a chunked scan carries no work itself; its children (chunk_index 0..n-1) do.
create table scans (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references "organization" (id) on delete cascade,
  asset_id uuid not null references assets (id) on delete cascade,
  kind text not null check (kind in ('port', 'template', 'webapp', 'container', 'edge')),
  options jsonb not null default '{}'::jsonb,
  status text not null default 'queued'
    check (status in ('queued', 'leased', 'running', 'chunking', 'aggregating', 'succeeded', 'failed', 'cancelled')),
  percent integer not null default 0 check (percent between 0 and 100),
  parent_id uuid references scans (id) on delete cascade,
  chunk_index integer check (chunk_index is null or chunk_index between 0 and 7),
  chunk_count integer check (chunk_count is null or chunk_count between 2 and 8),
  chunk_spec jsonb,
  schedule_id uuid references scan_schedules (id) on delete set null,
  requested_by uuid references "user" (id) on delete set null,
  -- The UTC day whose daily_scan_quota this scan uses: set on top-level scans at admission,
  -- cleared when a scan is cancelled before any work started (the quota is refunded).
  quota_day date,
  error text,
  -- Lease: fencing token, holder, expiry, attempts.
  lease_token uuid,
  leased_by uuid,
  lease_expires_at timestamptz,
  attempts integer not null default 0,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  updated_at timestamptz not null default now(),
  check ((parent_id is null) = (chunk_index is null)),
  check (quota_day is null or parent_id is null)
);
create index scans_tenant_created_idx on scans (tenant_id, created_at desc, id desc);
create index scans_parent_idx on scans (parent_id, chunk_index) where parent_id is not null;
create index scans_asset_active_idx on scans (asset_id) where status in ('queued', 'leased', 'running', 'chunking', 'aggregating');
create index scans_quota_idx on scans (tenant_id, quota_day) where quota_day is not null;
create index scans_schedule_idx on scans (schedule_id, created_at desc) where schedule_id is not null;

alter table scan_schedules add constraint scan_schedules_last_scan_fk foreign key (last_scan_id) references scans (id) on delete set null;

-- Aggregates a chunk's status and percent into its parent. Correct under concurrent child
-- updates on PostgreSQL: the parent row is locked first, and the aggregate is read by the next
-- statement, which (in a volatile function under READ COMMITTED) takes a fresh snapshot that
-- includes every sibling update committed while we waited for the lock. A count taken in the
-- statement that waited would be stale (a lost update).
-- Lock order: a child row, then its parent. Code touching several chunks of one scan locks the
-- chunks (ordered by id) before the parent.
create or replace function scans_aggregate_children() returns trigger
language plpgsql volatile as $$
declare
  parent_status text;
  n integer;
  n_terminal integer;
  n_failed integer;
  n_cancelled integer;
  n_started integer;
  avg_percent integer;
  next_status text;
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
         coalesce(floor(avg(case when status = 'succeeded' then 100 else percent end)), 0)::integer
    into n, n_terminal, n_failed, n_cancelled, n_started, avg_percent
    from scans where parent_id = new.parent_id;
  if n_terminal = n then
    next_status := case when n_failed > 0 then 'failed' when n_cancelled > 0 then 'cancelled' else 'succeeded' end;
  elsif n_started > 0 or parent_status = 'aggregating' then
    next_status := 'aggregating';
  else
    next_status := 'chunking';
  end if;
  update scans set
    status = next_status,
    percent = case when next_status = 'succeeded' then 100 else avg_percent end,
    started_at = case when next_status <> 'chunking' then coalesce(started_at, now()) else started_at end,
    finished_at = case when next_status in ('succeeded', 'failed', 'cancelled') then now() else null end,
    error = case when next_status = 'failed' then coalesce(error, format('%s of %s chunks failed', n_failed, n)) else error end,
    updated_at = now()
  where id = new.parent_id;
  return null;
end $$;

create trigger scans_aggregate_children
  after update of status, percent on scans
  for each row
  when (new.parent_id is not null and (old.status is distinct from new.status or old.percent is distinct from new.percent))
  execute function scans_aggregate_children();

alter table scans enable row level security;
alter table scans force row level security;
grant select, insert, update on scans to rampart_app;
create policy scans_tenant on scans for all to rampart_app using (tenant_id = app_tenant_id()) with check (tenant_id = app_tenant_id());
grant select, insert, update on scans to rampart_service;
create policy scans_service on scans for all to rampart_service using (true) with check (true);

alter table scan_schedules enable row level security;
alter table scan_schedules force row level security;
grant select, insert, update, delete on scan_schedules to rampart_app;
create policy scan_schedules_tenant on scan_schedules for all to rampart_app using (tenant_id = app_tenant_id()) with check (tenant_id = app_tenant_id());
grant select, update on scan_schedules to rampart_service;
create policy scan_schedules_service on scan_schedules for all to rampart_service using (true) with check (true);
