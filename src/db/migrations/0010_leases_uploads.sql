-- Leasing and report uploads (docs/worker-protocol.md).
-- A scan a worker has finished and uploaded is `ingesting` until its findings are in; the lease
-- ends at finalize, so no lease expiry can re-queue a scan whose report is being read.
alter table scans drop constraint scans_status_check;
alter table scans add constraint scans_status_check
  check (status in ('queued', 'leased', 'running', 'ingesting', 'chunking', 'aggregating', 'succeeded', 'failed', 'cancelled'));
drop index scans_asset_active_idx;
create index scans_asset_active_idx on scans (asset_id) where status in ('queued', 'leased', 'running', 'ingesting', 'chunking', 'aggregating');

-- A re-queued scan waits before its next attempt (back-off after a failed or expired lease).
alter table scans add column not_before timestamptz;
-- Set when a worker leases the scan, for the workers list ("current scan").
create index scans_leased_by_idx on scans (leased_by) where leased_by is not null;
-- The lease query: a tenant's oldest queued work first (chunks in order).
create index scans_ready_idx on scans (tenant_id, created_at, chunk_index nulls first, id) where status = 'queued';
-- The reaper: leases that ran out.
create index scans_lease_expiry_idx on scans (lease_expires_at) where lease_expires_at is not null;

-- Raw reports uploaded by workers: two phases (init → PUT → finalize) or the legacy single shot.
create table report_uploads (
  id uuid primary key,
  tenant_id uuid not null references "organization" (id) on delete cascade,
  scan_id uuid not null references scans (id) on delete cascade,
  worker_id uuid references workers (id) on delete set null,
  lease_token uuid,
  storage text not null check (storage in ('builtin', 's3')),
  object_key text not null,
  size bigint not null check (size >= 0),
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  content_type text,
  format text check (format is null or format in ('native', 'nmap', 'nuclei', 'zap', 'trivy', 'sarif')),
  file_name text,
  status text not null default 'pending' check (status in ('pending', 'finalized')),
  -- The upload URL's expiry; a pending upload is reaped an hour after it.
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  finalized_at timestamptz,
  ingestion_id uuid
);
create index report_uploads_scan_idx on report_uploads (scan_id, created_at desc);
create index report_uploads_pending_idx on report_uploads (expires_at) where status = 'pending';

alter table report_uploads enable row level security;
alter table report_uploads force row level security;
grant select on report_uploads to rampart_app;
create policy report_uploads_tenant on report_uploads for select to rampart_app using (tenant_id = app_tenant_id());
grant select, insert, update, delete on report_uploads to rampart_service;
create policy report_uploads_service on report_uploads for all to rampart_service using (true) with check (true);
