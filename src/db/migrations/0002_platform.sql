-- Roles, tenancy and platform tables.
--
-- rampart_app:     what every tenant-scoped request runs as (withTenant). Not an owner, never a
--                  superuser, so row-level security applies to it.
-- rampart_service: service paths (auth hooks writing the audit log, staff reads, cron, mesh).
--                  Its policies name exactly what it may touch.
do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'rampart_app') then
    create role rampart_app nologin noinherit;
  end if;
exception when duplicate_object or unique_violation then null; -- another database on the same cluster raced us
end $$;
do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'rampart_service') then
    create role rampart_service nologin noinherit;
  end if;
exception when duplicate_object or unique_violation then null;
end $$;
do $$
begin
  -- The connecting role must be able to SET ROLE to them (superusers already can).
  -- Skip roles already granted (a DBA may have done it, possibly without ADMIN OPTION).
  if not (select rolsuper from pg_roles where rolname = current_user) then
    if not pg_has_role(current_user, 'rampart_app', 'MEMBER') then
      execute format('grant rampart_app to %I', current_user);
    end if;
    if not pg_has_role(current_user, 'rampart_service', 'MEMBER') then
      execute format('grant rampart_service to %I', current_user);
    end if;
  end if;
end $$;

grant usage on schema public to rampart_app, rampart_service;

-- The current tenant and user of a request, or null outside withTenant.
create or replace function app_tenant_id() returns uuid language sql stable as
$$ select nullif(current_setting('app.tenant_id', true), '')::uuid $$;
create or replace function app_user_id() returns uuid language sql stable as
$$ select nullif(current_setting('app.user_id', true), '')::uuid $$;

-- Identity tables belong to the auth subsystem (Better Auth runs as the owner). The app role may
-- read the members of its own tenant and those members' public profile, nothing else.
grant select on "organization" to rampart_app;
alter table "organization" enable row level security;
create policy organization_tenant on "organization" for select to rampart_app using (id = app_tenant_id());

grant select on "member" to rampart_app;
alter table "member" enable row level security;
create policy member_tenant on "member" for select to rampart_app using ("organizationId" = app_tenant_id());

grant select ("id", "name", "email", "emailVerified", "image", "createdAt", "twoFactorEnabled") on "user" to rampart_app;
alter table "user" enable row level security;
create policy user_same_tenant on "user" for select to rampart_app using (
  id = app_user_id()
  or exists (select 1 from "member" m where m."userId" = "user".id and m."organizationId" = app_tenant_id())
);

grant select ("id", "email", "role", "status", "expiresAt", "createdAt", "inviterId", "organizationId") on "invitation" to rampart_app;
alter table "invitation" enable row level security;
create policy invitation_tenant on "invitation" for select to rampart_app using ("organizationId" = app_tenant_id());

-- The service role reads identity to answer "which tenants is this user in" and for staff lists.
grant select on "organization", "member" to rampart_service;
grant select ("id", "name", "email", "emailVerified", "image", "createdAt", "twoFactorEnabled") on "user" to rampart_service;
create policy organization_service on "organization" for select to rampart_service using (true);
create policy member_service on "member" for select to rampart_service using (true);
create policy user_service on "user" for select to rampart_service using (true);

-- Tenant settings (enforced by the scans module).
create table tenant_settings (
  tenant_id uuid primary key references "organization" (id) on delete cascade,
  daily_scan_quota integer not null default 200 check (daily_scan_quota between 0 and 100000),
  per_asset_concurrent_scans integer not null default 1 check (per_asset_concurrent_scans between 1 and 64),
  updated_at timestamptz not null default now(),
  updated_by uuid references "user" (id) on delete set null
);
alter table tenant_settings enable row level security;
alter table tenant_settings force row level security;
grant select, insert, update on tenant_settings to rampart_app;
create policy tenant_settings_tenant on tenant_settings for all to rampart_app
  using (tenant_id = app_tenant_id()) with check (tenant_id = app_tenant_id());
grant select, insert on tenant_settings to rampart_service;
create policy tenant_settings_service on tenant_settings for all to rampart_service using (true) with check (true);

-- Platform audit log: append-only for everyone; tenants read their own rows, staff read all
-- through the service role.
create table audit_log (
  id bigint generated always as identity primary key,
  tenant_id uuid references "organization" (id) on delete set null,
  actor_user_id uuid references "user" (id) on delete set null,
  actor_email text,
  action text not null,
  target_type text,
  target_id text,
  details jsonb not null default '{}'::jsonb,
  ip_address text,
  user_agent text,
  request_id text,
  created_at timestamptz not null default now()
);
create index audit_log_created_idx on audit_log (created_at desc, id desc);
create index audit_log_tenant_idx on audit_log (tenant_id, created_at desc);
create index audit_log_action_idx on audit_log (action, created_at desc);
create index audit_log_actor_idx on audit_log (actor_user_id, created_at desc);
alter table audit_log enable row level security;
alter table audit_log force row level security;
grant select, insert on audit_log to rampart_app;
create policy audit_log_tenant_read on audit_log for select to rampart_app using (tenant_id = app_tenant_id());
create policy audit_log_tenant_write on audit_log for insert to rampart_app with check (tenant_id = app_tenant_id());
grant select, insert on audit_log to rampart_service;
create policy audit_log_service on audit_log for all to rampart_service using (true) with check (true);

-- Platform roles: staff also need an approved e-mail domain (checked in code, every time).
create table platform_roles (
  user_id uuid primary key references "user" (id) on delete cascade,
  role text not null check (role in ('staff', 'super_admin')),
  granted_by uuid references "user" (id) on delete set null,
  created_at timestamptz not null default now()
);
alter table platform_roles enable row level security;
alter table platform_roles force row level security;
grant select, insert, update, delete on platform_roles to rampart_service;
create policy platform_roles_service on platform_roles for all to rampart_service using (true) with check (true);
