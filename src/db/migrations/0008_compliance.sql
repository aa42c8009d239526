-- Per-control evidence for the bundled framework catalogues (src/compliance). Catalogues live in
-- code; rows name a framework and a control id that the service checks against the catalogue.
-- The file bytes live in the tenant's object store under `evidence/<id>`.
create table control_evidence (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references "organization" (id) on delete cascade,
  framework text not null check (framework in ('soc2', 'gdpr', 'iso27001', 'nist-csf', 'cis-v8')),
  control_id text not null check (length(control_id) between 1 and 32),
  title text not null check (length(title) between 1 and 200),
  description text check (description is null or length(description) <= 2000),
  file_name text not null check (length(file_name) between 1 and 255),
  content_type text not null,
  size_bytes bigint not null check (size_bytes >= 0),
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  storage_kind text not null check (storage_kind in ('builtin', 's3')),
  storage_key text not null,
  -- The evidence counts from effective_date through expires_at (inclusive); no expiry = open-ended.
  effective_date date not null,
  expires_at date,
  uploaded_by uuid references "user" (id) on delete set null,
  uploaded_by_email text,
  created_at timestamptz not null default now(),
  deleted_at timestamptz,
  deleted_by uuid references "user" (id) on delete set null,
  check (expires_at is null or expires_at > effective_date)
);
create index control_evidence_control_idx on control_evidence (tenant_id, framework, control_id, created_at desc) where deleted_at is null;

alter table control_evidence enable row level security;
alter table control_evidence force row level security;
-- Rows are never removed by the app role: a delete sets deleted_at (and the object is removed).
grant select, insert, update on control_evidence to rampart_app;
create policy control_evidence_tenant on control_evidence for all to rampart_app using (tenant_id = app_tenant_id()) with check (tenant_id = app_tenant_id());
grant select, update on control_evidence to rampart_service;
create policy control_evidence_service on control_evidence for all to rampart_service using (true) with check (true);
