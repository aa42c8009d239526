-- Scan workers (docs/worker-protocol.md): one-time enrollment codes, enrolled workers with a hashed bearer,
-- the tenant's webhook signing secret (current + previous during a rotation grace period),
-- remembered nonces, and the per-address throttle on failed enrollments. Codes, bearers and
-- nonces are written by public worker routes, which run as rampart_service; tenant pages read
-- and manage their own rows as rampart_app.

create table worker_enrollments (
  id uuid primary key,
  tenant_id uuid not null references "organization" (id) on delete cascade,
  -- sha256 of the normalised code; the code itself is shown once and never stored.
  code_hash text not null unique,
  -- Created by staff for a Rampart-hosted worker that serves this tenant.
  hosted boolean not null default false,
  created_by uuid references "user" (id) on delete set null,
  created_by_email text,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz,
  worker_id uuid
);
create index worker_enrollments_tenant_idx on worker_enrollments (tenant_id, created_at desc);

create table workers (
  id uuid primary key,
  tenant_id uuid not null references "organization" (id) on delete cascade,
  name text not null,
  platform text not null,
  version text not null,
  hosted boolean not null default false,
  -- sha256 of the bearer token; the token is shown to the worker once, at enrollment.
  token_hash text not null unique,
  enrollment_id uuid references worker_enrollments (id) on delete set null,
  enrolled_at timestamptz not null default now(),
  last_seen_at timestamptz,
  revoked_at timestamptz,
  revoked_by uuid references "user" (id) on delete set null,
  revoked_by_email text
);
create index workers_tenant_idx on workers (tenant_id, enrolled_at desc);

create table tenant_webhook_secrets (
  tenant_id uuid primary key references "organization" (id) on delete cascade,
  -- Both sealed with the secret box (AES-256-GCM under APP_ENCRYPTION_KEY).
  current_sealed text not null,
  current_created_at timestamptz not null,
  previous_sealed text,
  previous_valid_until timestamptz,
  created_at timestamptz not null default now(),
  rotated_at timestamptz,
  updated_by uuid references "user" (id) on delete set null
);

-- A nonce is remembered 10 minutes: longer than the ±5 minute sentAt window, so a replay is
-- refused by one check or the other, on every replica.
create table worker_nonces (
  worker_id uuid not null references workers (id) on delete cascade,
  nonce text not null,
  tenant_id uuid not null references "organization" (id) on delete cascade,
  seen_at timestamptz not null,
  primary key (worker_id, nonce)
);
create index worker_nonces_seen_idx on worker_nonces (seen_at);

-- Failed enrollment attempts per client address and minute, shared by every replica.
create table enroll_attempts (
  address text not null,
  window_start timestamptz not null,
  failures integer not null default 0,
  primary key (address, window_start)
);

alter table worker_enrollments enable row level security;
alter table worker_enrollments force row level security;
alter table workers enable row level security;
alter table workers force row level security;
alter table tenant_webhook_secrets enable row level security;
alter table tenant_webhook_secrets force row level security;
alter table worker_nonces enable row level security;
alter table worker_nonces force row level security;
alter table enroll_attempts enable row level security;
alter table enroll_attempts force row level security;

grant select, insert, update on worker_enrollments to rampart_app;
create policy worker_enrollments_tenant on worker_enrollments for all to rampart_app
  using (tenant_id = app_tenant_id()) with check (tenant_id = app_tenant_id());
grant select, insert, update on worker_enrollments to rampart_service;
create policy worker_enrollments_service on worker_enrollments for all to rampart_service using (true) with check (true);

grant select, update on workers to rampart_app;
create policy workers_tenant on workers for all to rampart_app
  using (tenant_id = app_tenant_id()) with check (tenant_id = app_tenant_id());
grant select, insert, update on workers to rampart_service;
create policy workers_service on workers for all to rampart_service using (true) with check (true);

grant select, insert, update on tenant_webhook_secrets to rampart_app;
create policy tenant_webhook_secrets_tenant on tenant_webhook_secrets for all to rampart_app
  using (tenant_id = app_tenant_id()) with check (tenant_id = app_tenant_id());
-- Worker requests are verified as the service role; it reads secrets, never changes them.
grant select on tenant_webhook_secrets to rampart_service;
create policy tenant_webhook_secrets_service on tenant_webhook_secrets for select to rampart_service using (true);

-- Tenants only clear a revoked worker's nonces.
grant select, delete on worker_nonces to rampart_app;
create policy worker_nonces_tenant on worker_nonces for all to rampart_app
  using (tenant_id = app_tenant_id()) with check (tenant_id = app_tenant_id());
grant select, insert, delete on worker_nonces to rampart_service;
create policy worker_nonces_service on worker_nonces for all to rampart_service using (true) with check (true);

grant select, insert, update, delete on enroll_attempts to rampart_service;
create policy enroll_attempts_service on enroll_attempts for all to rampart_service using (true) with check (true);

