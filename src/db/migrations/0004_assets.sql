-- Assets a tenant registers, their ownership proof, and the verification audit log.
create table assets (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references "organization" (id) on delete cascade,
  kind text not null check (kind in ('domain', 'host', 'webapp', 'container_image')),
  target text not null,
  -- The DNS name ownership is judged by: the domain itself, a host's or URL's host name, an
  -- image's registry host. Null when there is none (an IP address, a Docker Hub image).
  dns_name text,
  name text not null,
  tags text[] not null default '{}',
  owner text,
  notes text,
  verification_status text not null default 'pending' check (verification_status in ('pending', 'verified', 'bypassed')),
  verified_via text check (verified_via in ('txt', 'covered', 'bypass')),
  covered_by uuid references assets (id) on delete set null,
  verification_token text not null,
  verified_at timestamptz,
  last_checked_at timestamptz,
  last_result text check (last_result in ('verified', 'pending', 'failed')),
  last_error text,
  bypass_reason text,
  bypassed_by uuid references "user" (id) on delete set null,
  bypassed_by_email text,
  bypassed_at timestamptz,
  archived_at timestamptz,
  created_by uuid references "user" (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (tenant_id, kind, target)
);
create index assets_tenant_created_idx on assets (tenant_id, created_at desc, id desc);
create index assets_dns_name_idx on assets (tenant_id, dns_name);
create index assets_recheck_idx on assets (last_checked_at) where kind = 'domain' and archived_at is null;

create table asset_verification_log (
  id bigint generated always as identity primary key,
  tenant_id uuid not null references "organization" (id) on delete cascade,
  asset_id uuid not null references assets (id) on delete cascade,
  at timestamptz not null default now(),
  event text not null,
  detail text,
  actor_user_id uuid references "user" (id) on delete set null,
  actor_email text
);
create index asset_verification_log_asset_idx on asset_verification_log (asset_id, id desc);

alter table assets enable row level security;
alter table assets force row level security;
grant select, insert, update on assets to rampart_app;
create policy assets_tenant on assets for all to rampart_app using (tenant_id = app_tenant_id()) with check (tenant_id = app_tenant_id());
grant select, update on assets to rampart_service;
create policy assets_service on assets for all to rampart_service using (true) with check (true);

alter table asset_verification_log enable row level security;
alter table asset_verification_log force row level security;
grant select, insert on asset_verification_log to rampart_app;
create policy asset_verification_log_tenant_read on asset_verification_log for select to rampart_app using (tenant_id = app_tenant_id());
create policy asset_verification_log_tenant_write on asset_verification_log for insert to rampart_app with check (tenant_id = app_tenant_id());
grant select, insert on asset_verification_log to rampart_service;
create policy asset_verification_log_service on asset_verification_log for all to rampart_service using (true) with check (true);
