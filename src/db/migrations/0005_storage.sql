-- Tenant-owned S3-compatible buckets (Settings → Storage). Both keys are sealed with the secret
-- box (AES-256-GCM under APP_ENCRYPTION_KEY); only presence ever leaves the server.
create table tenant_storage_settings (
  tenant_id uuid primary key references "organization" (id) on delete cascade,
  endpoint text not null,
  region text not null,
  bucket text not null,
  path_style boolean not null default false,
  prefix text not null default '',
  access_key_id_sealed text not null,
  secret_access_key_sealed text not null,
  enabled boolean not null default true,
  last_tested_at timestamptz,
  last_test_ok boolean,
  last_test_error text,
  last_test_message text,
  updated_at timestamptz not null default now(),
  updated_by uuid references "user" (id) on delete set null
);
alter table tenant_storage_settings enable row level security;
alter table tenant_storage_settings force row level security;
grant select, insert, update, delete on tenant_storage_settings to rampart_app;
create policy tenant_storage_settings_tenant on tenant_storage_settings for all to rampart_app
  using (tenant_id = app_tenant_id()) with check (tenant_id = app_tenant_id());
-- Service paths (workers, reports) resolve a tenant's store; they never change its settings.
grant select on tenant_storage_settings to rampart_service;
create policy tenant_storage_settings_service on tenant_storage_settings for select to rampart_service using (true);

-- Container images uploaded as archives (docker save / OCI layout tar, optionally gzipped).
-- The archive is the target (`archive:sha256:<digest>`); the tenant uploaded it, so ownership
-- holds by construction: verified via 'upload'.
alter table assets drop constraint assets_verified_via_check;
alter table assets add constraint assets_verified_via_check check (verified_via in ('txt', 'covered', 'bypass', 'upload'));
alter table assets add column source text not null default 'reference' check (source in ('reference', 'archive'));
alter table assets add column archive_file_name text;
alter table assets add column archive_size bigint;
alter table assets add column archive_sha256 text;
alter table assets add column archive_format text check (archive_format in ('tar', 'tar+gzip'));
alter table assets add column archive_storage_key text;
alter table assets add column archive_uploaded_at timestamptz;
alter table assets add constraint assets_archive_shape check (
  (source = 'reference' and archive_storage_key is null)
  or (source = 'archive' and kind = 'container_image' and archive_storage_key is not null and archive_sha256 is not null and archive_size is not null));
