-- Findings: one row per distinct issue per asset, identified by a fingerprint of identifying
-- fields only (docs/decisions.md, "Finding fingerprints"). Rescans update, close and reopen rows;
-- finding_events keeps the history; finding_scan_ingests makes ingestion idempotent per scan.

-- SLA days per severity (tenant setting; DefectDojo's defaults 7/30/90/120). Info has no SLA.
alter table tenant_settings
  add column sla_critical_days integer not null default 7 check (sla_critical_days between 1 and 3650),
  add column sla_high_days integer not null default 30 check (sla_high_days between 1 and 3650),
  add column sla_medium_days integer not null default 90 check (sla_medium_days between 1 and 3650),
  add column sla_low_days integer not null default 120 check (sla_low_days between 1 and 3650);

create table findings (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references "organization" (id) on delete cascade,
  asset_id uuid not null references assets (id) on delete cascade,
  -- The last scan that reported it, and the first.
  scan_id uuid references scans (id) on delete set null,
  first_scan_id uuid references scans (id) on delete set null,
  scanner text not null check (scanner in ('port', 'template', 'webapp', 'container', 'edge')),
  rule_id text not null,
  title text not null,
  description text,
  severity text not null check (severity in ('info', 'low', 'medium', 'high', 'critical')),
  severity_rank smallint generated always as (
    case severity when 'critical' then 4 when 'high' then 3 when 'medium' then 2 when 'low' then 1 else 0 end) stored,
  cvss_score numeric(3, 1) check (cvss_score between 0 and 10),
  cvss_vector text,
  cwe_ids integer[] not null default '{}',
  cve_ids text[] not null default '{}',
  location jsonb not null default '{}'::jsonb,
  location_text text not null,
  -- Lower-cased title, rule id, location and CVE ids: what the list's text search reads (one
  -- LIKE per row; row-level security keeps non-leakproof operators from using indexes anyway).
  search_text text not null default '',
  -- Port and URL path of the location: what a port-slice chunk's closing is judged by.
  port integer,
  path text,
  evidence jsonb not null default '{}'::jsonb,
  remediation text,
  reference_urls text[] not null default '{}',
  fingerprint text not null,
  -- The slice of work that last reported it ('full', 'ports:1-1000', ...): see findings-scope.ts.
  scope_key text not null,
  status text not null default 'open' check (status in ('open', 'fixed', 'accepted_risk', 'false_positive')),
  status_reason text,
  status_expires_at timestamptz,
  status_changed_by uuid references "user" (id) on delete set null,
  status_changed_by_email text,
  status_changed_at timestamptz,
  first_seen_at timestamptz not null,
  last_seen_at timestamptz not null,
  fixed_at timestamptz,
  reopened_count integer not null default 0,
  sla_due_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (tenant_id, fingerprint),
  check (status = 'accepted_risk' or status_expires_at is null),
  check (status <> 'accepted_risk' or status_expires_at is not null)
);
-- One index per sort order of the list: keyset pagination walks it, the keyset is an index
-- condition, and the common filters (status, severity, text) are checked on the included columns,
-- so a page's ids come from the index alone. Row-level security keeps the planner from estimating
-- the text filter (a non-leakproof operator), so the narrow index is what keeps searches cheap.
create index findings_sort_severity_idx on findings (tenant_id, severity_rank desc, last_seen_at desc, id desc) include (status, severity, search_text);
create index findings_sort_first_seen_idx on findings (tenant_id, first_seen_at desc, id desc) include (status, severity, search_text);
create index findings_sort_last_seen_idx on findings (tenant_id, last_seen_at desc, id desc) include (status, severity, search_text);
create index findings_sort_sla_idx on findings (tenant_id, (coalesce(sla_due_at, 'infinity'::timestamptz)), id) include (status, severity, search_text, sla_due_at);
-- Severity counts for the list's filters, answered from the index alone (the included columns
-- are the filters); and the per-asset views (asset filter, rescan closing).
create index findings_counts_idx on findings (tenant_id, status, severity) include (scanner, asset_id, sla_due_at, first_seen_at, cwe_ids, cve_ids, search_text);
create index findings_asset_idx on findings (asset_id, scanner, status);
create index findings_cwe_idx on findings using gin (cwe_ids);
create index findings_cve_idx on findings using gin (cve_ids);
create index findings_accepted_expiry_idx on findings (tenant_id, status_expires_at) where status = 'accepted_risk';

create table finding_events (
  id bigint generated always as identity primary key,
  tenant_id uuid not null references "organization" (id) on delete cascade,
  finding_id uuid not null references findings (id) on delete cascade,
  at timestamptz not null default now(),
  event text not null check (event in ('created', 'fixed', 'reopened', 'status_changed', 'severity_changed', 'risk_expired')),
  from_status text,
  to_status text,
  scan_id uuid references scans (id) on delete set null,
  reason text,
  detail jsonb,
  actor_user_id uuid references "user" (id) on delete set null,
  actor_email text
);
create index finding_events_finding_idx on finding_events (finding_id, id desc);

-- One row per ingested scan: a second ingest of the same scan replays the recorded summary.
create table finding_scan_ingests (
  scan_id uuid primary key references scans (id) on delete cascade,
  tenant_id uuid not null references "organization" (id) on delete cascade,
  scope_key text not null,
  summary jsonb not null default '{}'::jsonb,
  ingested_at timestamptz not null default now()
);

alter table findings enable row level security;
alter table findings force row level security;
grant select, update on findings to rampart_app;
create policy findings_tenant on findings for all to rampart_app using (tenant_id = app_tenant_id()) with check (tenant_id = app_tenant_id());
grant select, insert, update on findings to rampart_service;
create policy findings_service on findings for all to rampart_service using (true) with check (true);

alter table finding_events enable row level security;
alter table finding_events force row level security;
grant select, insert on finding_events to rampart_app;
create policy finding_events_tenant_read on finding_events for select to rampart_app using (tenant_id = app_tenant_id());
create policy finding_events_tenant_write on finding_events for insert to rampart_app with check (tenant_id = app_tenant_id());
grant select, insert on finding_events to rampart_service;
create policy finding_events_service on finding_events for all to rampart_service using (true) with check (true);

alter table finding_scan_ingests enable row level security;
alter table finding_scan_ingests force row level security;
grant select on finding_scan_ingests to rampart_app;
create policy finding_scan_ingests_tenant on finding_scan_ingests for select to rampart_app using (tenant_id = app_tenant_id());
grant select, insert, update on finding_scan_ingests to rampart_service;
create policy finding_scan_ingests_service on finding_scan_ingests for all to rampart_service using (true) with check (true);
