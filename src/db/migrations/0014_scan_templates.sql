-- Tenant scan templates: nuclei-subset YAML a tenant uploads, validated by the template engine
-- (src/worker/scanners/template/model.ts) before it is stored. Template scans carry the tenant's
-- templates in their lease (options.customTemplates); leases run as rampart_service, which only
-- reads them. template_id is the YAML `id`, unique per tenant (built-in ids are refused by the
-- service, not here: the built-in list ships with the code).

create table scan_templates (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references "organization" (id) on delete cascade,
  template_id text not null,
  name text not null,
  severity text not null check (severity in ('info', 'low', 'medium', 'high', 'critical')),
  tags text[] not null default '{}',
  yaml text not null,
  -- UTF-8 bytes of yaml; the per-tenant total is bounded by the service (lease size).
  size integer not null check (size > 0),
  sha256 text not null,
  created_by uuid references "user" (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (tenant_id, template_id)
);
create index scan_templates_tenant_idx on scan_templates (tenant_id, created_at desc, id desc);

alter table scan_templates enable row level security;
alter table scan_templates force row level security;

grant select, insert, update, delete on scan_templates to rampart_app;
create policy scan_templates_tenant on scan_templates for all to rampart_app
  using (tenant_id = app_tenant_id()) with check (tenant_id = app_tenant_id());
grant select on scan_templates to rampart_service;
create policy scan_templates_service on scan_templates for select to rampart_service using (true);
