-- Report ingestion jobs: a stored raw report (a worker upload or a
-- person's "Import results") is streamed into findings by whichever replica claims the job.
-- Claims take FOR UPDATE SKIP LOCKED and a lock that runs out (locked_until), so a job of a
-- crashed replica is taken over once its lock expires; attempts bound the retries.

-- Scans made by importing a report rather than by a worker run (no quota, no lease).
alter table scans add column source text not null default 'worker' check (source in ('worker', 'import'));

create table report_ingestions (
  id uuid primary key,
  tenant_id uuid not null references "organization" (id) on delete cascade,
  scan_id uuid not null references scans (id) on delete cascade,
  -- A worker upload's report_uploads row; null for imports.
  upload_id uuid unique references report_uploads (id) on delete set null,
  source text not null check (source in ('worker', 'import')),
  storage text not null check (storage in ('builtin', 's3')),
  object_key text not null,
  size bigint not null check (size >= 0),
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  -- null until detected from the first bytes.
  format text check (format is null or format in ('native', 'nmap', 'nuclei', 'zap', 'trivy', 'sarif')),
  file_name text,
  status text not null default 'queued' check (status in ('queued', 'running', 'succeeded', 'failed')),
  bytes_read bigint not null default 0,
  findings_read integer not null default 0,
  skipped integer not null default 0,
  summary jsonb,
  error text,
  attempts integer not null default 0,
  -- The replica running it, and until when its claim holds (renewed while it runs). A queued job
  -- with locked_until in the future waits (back-off after a failed attempt).
  locked_by text,
  locked_until timestamptz,
  created_by uuid references "user" (id) on delete set null,
  created_by_email text,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  updated_at timestamptz not null default now()
);
-- The claim: oldest runnable job first (queued, or running with its lock run out).
create index report_ingestions_ready_idx on report_ingestions (created_at, id) where status in ('queued', 'running');
create index report_ingestions_tenant_idx on report_ingestions (tenant_id, created_at desc, id desc);
create index report_ingestions_scan_idx on report_ingestions (scan_id, created_at desc);

alter table report_ingestions enable row level security;
alter table report_ingestions force row level security;
-- Tenants read their jobs and queue imports (in the request's transaction); replicas run them.
grant select, insert on report_ingestions to rampart_app;
create policy report_ingestions_tenant_read on report_ingestions for select to rampart_app using (tenant_id = app_tenant_id());
create policy report_ingestions_tenant_insert on report_ingestions for insert to rampart_app with check (tenant_id = app_tenant_id() and source = 'import' and status = 'queued');
grant select, insert, update on report_ingestions to rampart_service;
create policy report_ingestions_service on report_ingestions for all to rampart_service using (true) with check (true);
