-- The embedded hosted worker: a hosted worker the server runs in-process keeps its
-- bearer token here, sealed with the secret box (AES-256-GCM under APP_ENCRYPTION_KEY), because
-- the server must present it on every request like a remote worker would. workers.token_hash
-- still holds only the hash; this table is the one place a worker token can be recovered, so
-- only the service role can read it.

create table hosted_worker_credentials (
  worker_id uuid primary key references workers (id) on delete cascade,
  tenant_id uuid not null references "organization" (id) on delete cascade,
  token_sealed text not null,
  created_at timestamptz not null default now()
);
create index hosted_worker_credentials_tenant_idx on hosted_worker_credentials (tenant_id);

alter table hosted_worker_credentials enable row level security;
alter table hosted_worker_credentials force row level security;

-- Tenant segmentation standard v1 wants a tenant policy on every tenant_id table. rampart_app has
-- no grant on this table, so the policy lets it see nothing; tenants see their hosted workers in
-- the workers table, never the credential.
create policy hosted_worker_credentials_tenant on hosted_worker_credentials for select to rampart_app using (tenant_id = app_tenant_id());
grant select, insert on hosted_worker_credentials to rampart_service;
create policy hosted_worker_credentials_service on hosted_worker_credentials for all to rampart_service using (true) with check (true);
