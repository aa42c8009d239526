-- upgrade: rolling
-- The installation's own settings (one row): approved staff e-mail domains kept beside
-- STAFF_EMAIL_DOMAINS and editable by super-admins, and the one-time setup link with which the
-- first administrator of a self-hosted install becomes its super-admin without the admin CLI.
-- Only the setup token's hash is stored. Service role only; no tenant ever reads it.
create table installation_settings (
  id boolean primary key default true check (id),
  staff_email_domains text[] not null default '{}',
  setup_token_hash text,
  setup_created_at timestamptz,
  setup_used_at timestamptz,
  setup_used_by uuid references "user" (id) on delete set null,
  updated_at timestamptz not null default now()
);
alter table installation_settings enable row level security;
alter table installation_settings force row level security;
grant select, insert, update on installation_settings to rampart_service;
create policy installation_settings_service on installation_settings for all to rampart_service using (true) with check (true);
-- Redeeming the setup link vouches for the administrator's address (src/staff/setup-service.ts).
grant update ("emailVerified") on "user" to rampart_service;
create policy user_service_verify on "user" for update to rampart_service using (true) with check (true);
