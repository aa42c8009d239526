-- CMMC Level 1 (FAR 52.204-21) compliance flow, the whole schema (src/cmmc). The catalogue (15
-- requirements, 59 objectives, device checks, attestation items) lives in code; rows name its ids
-- and the service checks them. One profile per tenant.
--
-- Roles: tenant pages run as rampart_app (RLS on app.tenant_id). Public routes without a user
-- session run as rampart_service: the device-check verify route (POST /api/public/compliance/verify,
-- bearer = the profile's device token, looked up by hash), the renewal sweep (cron hook), the
-- mesh flows cmmc_handoff / cmmc_status and the staff dashboard. Its policies name exactly what
-- those paths touch.

create table compliance_profiles (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null unique references "organization" (id) on delete cascade,
  -- Primary CAGE code (5 upper-case letters or digits) plus any further CAGE codes in scope
  -- (the highest-level owner and its children).
  cage_code text not null check (cage_code ~ '^[0-9A-Z]{5}$'),
  additional_cage_codes text[] not null default '{}',
  company_name text not null check (length(company_name) between 1 and 200),
  company_address text check (company_address is null or length(company_address) <= 500),
  company_phone text check (company_phone is null or length(company_phone) <= 40),
  company_website text check (company_website is null or length(company_website) <= 300),
  uei text check (uei is null or uei ~ '^[0-9A-Z]{12}$'),
  -- Assessment scope as it will be entered in SPRS (free text).
  scope_description text check (scope_description is null or length(scope_description) <= 4000),
  -- [{name, email, role?}] people who bid on / handle FCI; bounded by the service.
  bidding_users jsonb not null default '[]',
  mail_platform text not null check (mail_platform in ('m365', 'google')),
  affirming_official_name text not null check (length(affirming_official_name) between 1 and 200),
  affirming_official_title text not null check (length(affirming_official_title) between 1 and 200),
  affirming_official_email text not null check (length(affirming_official_email) between 3 and 320),
  status text not null default 'in_progress' check (status in ('in_progress', 'compliant', 'renewal_due', 'expired')),
  -- CMMC Status Date (anchors the 365-day cycle); set when the officer confirms the SPRS entry.
  status_date date,
  status_changed_at timestamptz not null default now(),
  -- Device-check bearer: only its SHA-256 (hex) is stored; re-issuing replaces (revokes) it.
  device_token_hash text unique check (device_token_hash is null or device_token_hash ~ '^[0-9a-f]{64}$'),
  device_token_issued_at timestamptz,
  device_token_issued_by uuid references "user" (id) on delete set null,
  -- Fingerprints of the scripts generated with the current token: {"windows": {"sha256", "fileName", "version"}, "macos": {...}}.
  device_scripts jsonb,
  created_by uuid references "user" (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (cardinality(additional_cage_codes) <= 50)
);
create index compliance_profiles_cage_idx on compliance_profiles (cage_code);
create index compliance_profiles_status_idx on compliance_profiles (status, status_date);

-- One row per script run received by the verify route. The latest run per hostname counts; a run
-- older than 30 days counts as pending.
create table endpoint_audit_runs (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references "organization" (id) on delete cascade,
  profile_id uuid not null references compliance_profiles (id) on delete cascade,
  hostname text not null check (length(hostname) between 1 and 253),
  os text not null check (os in ('windows', 'macos')),
  os_version text check (os_version is null or length(os_version) <= 200),
  -- {"<check id>": "pass" | "fail" | "unknown"}; ids checked against the catalogue for the OS.
  results jsonb not null,
  -- {"<check id>": "<observed value, bounded>"}
  details jsonb not null default '{}',
  script_version text not null check (length(script_version) between 1 and 40),
  client_address text,
  received_at timestamptz not null default now(),
  -- Any result other than pass (fail or unknown): the staff dashboard's failing-device count.
  failing boolean generated always as (jsonb_path_exists(results, '$.* ? (@ != "pass")')) stored
);
create index endpoint_audit_runs_rate_idx on endpoint_audit_runs (profile_id, received_at desc);
-- The latest run per hostname; hostname and failing are included so the staff dashboard reads it
-- with an index-only scan.
create index endpoint_audit_runs_host_idx on endpoint_audit_runs (profile_id, lower(hostname), received_at desc) include (failing, hostname);

-- Yes / No / N/A per attestation item of the catalogue (one current answer per item).
create table compliance_control_attestations (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references "organization" (id) on delete cascade,
  profile_id uuid not null references compliance_profiles (id) on delete cascade,
  requirement_id text not null check (requirement_id ~ '^[A-Z]{2}\.L1-b\.1\.[ivx]+$'),
  item_id text not null check (length(item_id) between 1 and 64),
  answer text not null check (answer in ('yes', 'no', 'not_applicable')),
  note text check (note is null or length(note) <= 4000),
  answered_by uuid references "user" (id) on delete set null,
  answered_by_email text,
  answered_at timestamptz not null default now(),
  unique (profile_id, item_id)
);
create index compliance_control_attestations_req_idx on compliance_control_attestations (profile_id, requirement_id);

-- Files that back an attestation answer (bytes in the tenant's object store, as control_evidence).
create table compliance_attestation_evidence (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references "organization" (id) on delete cascade,
  profile_id uuid not null references compliance_profiles (id) on delete cascade,
  attestation_id uuid references compliance_control_attestations (id) on delete set null,
  requirement_id text not null check (requirement_id ~ '^[A-Z]{2}\.L1-b\.1\.[ivx]+$'),
  item_id text not null check (length(item_id) between 1 and 64),
  file_name text not null check (length(file_name) between 1 and 255),
  content_type text not null,
  size_bytes bigint not null check (size_bytes >= 0),
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  storage_kind text not null check (storage_kind in ('builtin', 's3')),
  storage_key text not null,
  effective_date date,
  expires_at date,
  uploaded_by uuid references "user" (id) on delete set null,
  uploaded_by_email text,
  created_at timestamptz not null default now(),
  deleted_at timestamptz,
  deleted_by uuid references "user" (id) on delete set null
);
create index compliance_attestation_evidence_item_idx on compliance_attestation_evidence (profile_id, item_id, created_at desc) where deleted_at is null;

-- Generated L1 policy documents; drafts do not count as evidence, an approved version does from
-- its effective date.
create table cmmc_policy_documents (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references "organization" (id) on delete cascade,
  profile_id uuid not null references compliance_profiles (id) on delete cascade,
  kind text not null check (kind in ('system_security_plan', 'access_control', 'identification_authentication', 'media_protection', 'physical_protection', 'system_communications_protection', 'system_information_integrity', 'supporting_forms')),
  version integer not null check (version >= 1),
  title text not null check (length(title) between 1 and 200),
  body_markdown text not null check (length(body_markdown) <= 200000),
  status text not null default 'draft' check (status in ('draft', 'approved')),
  approved_by uuid references "user" (id) on delete set null,
  approved_by_email text,
  approved_at timestamptz,
  effective_date date,
  next_review_date date,
  created_by uuid references "user" (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (profile_id, kind, version),
  check (status = 'draft' or (approved_at is not null and effective_date is not null))
);

-- The officer's confirmation that the score was entered in SPRS (docs/cmmc.md). The service
-- never files; this records what the officer declares.
create table compliance_handoffs (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references "organization" (id) on delete cascade,
  profile_id uuid not null references compliance_profiles (id) on delete cascade,
  cmmc_level text not null default 'LEVEL_1_SELF' check (cmmc_level in ('LEVEL_1_SELF')),
  status_date date not null,
  scope_description text not null check (length(scope_description) between 1 and 4000),
  cage_codes text[] not null check (cardinality(cage_codes) between 1 and 51),
  overall_result text not null check (overall_result in ('MET', 'NOT_MET')),
  -- {"<requirement id>": "MET" | "NOT_MET" | "NA"}
  requirement_results jsonb not null,
  -- {"<requirement id>": "<why not applicable>"}
  na_justifications jsonb not null default '{}',
  affirming_official_name text not null,
  affirming_official_title text not null,
  affirming_official_email text not null,
  affirmation_text_version text not null,
  affirmed_in_sprs_on date not null,
  confirmed_by uuid references "user" (id) on delete set null,
  confirmed_by_email text,
  confirmed_at timestamptz not null default now(),
  client_address text,
  user_agent text,
  -- SHA-256 of the frozen scores + evidence manifest at confirmation time.
  assessment_snapshot_sha256 text not null check (assessment_snapshot_sha256 ~ '^[0-9a-f]{64}$'),
  assessment_snapshot jsonb,
  sprs_proof_storage_kind text check (sprs_proof_storage_kind is null or sprs_proof_storage_kind in ('builtin', 's3')),
  sprs_proof_storage_key text,
  sprs_proof_file_name text,
  sprs_proof_sha256 text check (sprs_proof_sha256 is null or sprs_proof_sha256 ~ '^[0-9a-f]{64}$'),
  next_due date not null,
  reminder_at date not null
);
create index compliance_handoffs_profile_idx on compliance_handoffs (profile_id, confirmed_at desc);

-- One-time links to the compliance start page, minted by the bid peer's cmmc_handoff flow
-- (30 minutes, single use). The tenant is known only once a signed-in user consumes the link.
create table cmmc_handoff_links (
  id uuid primary key default gen_random_uuid(),
  token_hash text not null unique check (token_hash ~ '^[0-9a-f]{64}$'),
  caller text not null,
  request_id text,
  payload jsonb not null default '{}',
  cage_code text check (cage_code is null or cage_code ~ '^[0-9A-Z]{5}$'),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  consumed_at timestamptz,
  consumed_by uuid references "user" (id) on delete set null,
  tenant_id uuid references "organization" (id) on delete set null,
  check (expires_at > created_at)
);
create unique index cmmc_handoff_links_request_idx on cmmc_handoff_links (caller, request_id) where request_id is not null;
create index cmmc_handoff_links_expiry_idx on cmmc_handoff_links (expires_at) where consumed_at is null;

-- Renewal sweep log: at most one notice of a kind per profile per day, so the sweep is safe to
-- run twice (the unique key is the claim).
create table cmmc_renewal_notices (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references "organization" (id) on delete cascade,
  profile_id uuid not null references compliance_profiles (id) on delete cascade,
  kind text not null check (kind in ('renewal_due', 'expired', 'compliant', 'reminder')),
  day date not null,
  event_id text,
  created_at timestamptz not null default now(),
  unique (profile_id, kind, day)
);

-- Row-level security: the app role sees its tenant's rows only.
alter table compliance_profiles enable row level security;
alter table compliance_profiles force row level security;
alter table endpoint_audit_runs enable row level security;
alter table endpoint_audit_runs force row level security;
alter table compliance_control_attestations enable row level security;
alter table compliance_control_attestations force row level security;
alter table compliance_attestation_evidence enable row level security;
alter table compliance_attestation_evidence force row level security;
alter table cmmc_policy_documents enable row level security;
alter table cmmc_policy_documents force row level security;
alter table compliance_handoffs enable row level security;
alter table compliance_handoffs force row level security;
alter table cmmc_handoff_links enable row level security;
alter table cmmc_handoff_links force row level security;
alter table cmmc_renewal_notices enable row level security;
alter table cmmc_renewal_notices force row level security;

grant select, insert, update on compliance_profiles to rampart_app;
create policy compliance_profiles_tenant on compliance_profiles for all to rampart_app
  using (tenant_id = app_tenant_id()) with check (tenant_id = app_tenant_id());
-- Runs are written by the verify route only; tenants read them.
grant select on endpoint_audit_runs to rampart_app;
create policy endpoint_audit_runs_tenant on endpoint_audit_runs for select to rampart_app using (tenant_id = app_tenant_id());
grant select, insert, update, delete on compliance_control_attestations to rampart_app;
create policy compliance_control_attestations_tenant on compliance_control_attestations for all to rampart_app
  using (tenant_id = app_tenant_id()) with check (tenant_id = app_tenant_id());
grant select, insert, update on compliance_attestation_evidence to rampart_app;
create policy compliance_attestation_evidence_tenant on compliance_attestation_evidence for all to rampart_app
  using (tenant_id = app_tenant_id()) with check (tenant_id = app_tenant_id());
grant select, insert, update, delete on cmmc_policy_documents to rampart_app;
create policy cmmc_policy_documents_tenant on cmmc_policy_documents for all to rampart_app
  using (tenant_id = app_tenant_id()) with check (tenant_id = app_tenant_id());
grant select, insert on compliance_handoffs to rampart_app;
create policy compliance_handoffs_tenant on compliance_handoffs for all to rampart_app
  using (tenant_id = app_tenant_id()) with check (tenant_id = app_tenant_id());
grant select on cmmc_handoff_links to rampart_app;
create policy cmmc_handoff_links_tenant on cmmc_handoff_links for select to rampart_app using (tenant_id = app_tenant_id());
grant select on cmmc_renewal_notices to rampart_app;
create policy cmmc_renewal_notices_tenant on cmmc_renewal_notices for select to rampart_app using (tenant_id = app_tenant_id());

-- Service role: verify route (profile by token hash, run count, run insert), renewal sweep
-- (status changes, notices), mesh flows (handoff links, status by CAGE), staff dashboard (reads).
grant select, update on compliance_profiles to rampart_service;
create policy compliance_profiles_service on compliance_profiles for all to rampart_service using (true) with check (true);
grant select, insert on endpoint_audit_runs to rampart_service;
create policy endpoint_audit_runs_service on endpoint_audit_runs for all to rampart_service using (true) with check (true);
grant select on compliance_control_attestations to rampart_service;
create policy compliance_control_attestations_service on compliance_control_attestations for select to rampart_service using (true);
grant select on compliance_attestation_evidence to rampart_service;
create policy compliance_attestation_evidence_service on compliance_attestation_evidence for select to rampart_service using (true);
grant select on cmmc_policy_documents to rampart_service;
create policy cmmc_policy_documents_service on cmmc_policy_documents for select to rampart_service using (true);
-- The SPRS confirmation runs as the service role (after the membership check) so its row, the
-- profile status and the cmmc.compliant outbox events commit together.
grant select, insert on compliance_handoffs to rampart_service;
-- The optional SPRS proof file (screenshot or PDF of the entry) is attached afterwards: only its columns change.
grant update (sprs_proof_storage_kind, sprs_proof_storage_key, sprs_proof_file_name, sprs_proof_sha256) on compliance_handoffs to rampart_service;
create policy compliance_handoffs_service on compliance_handoffs for all to rampart_service using (true) with check (true);
-- delete: the daily sweep removes links a day past their expiry.
grant select, insert, update, delete on cmmc_handoff_links to rampart_service;
create policy cmmc_handoff_links_service on cmmc_handoff_links for all to rampart_service using (true) with check (true);
grant select, insert on cmmc_renewal_notices to rampart_service;
create policy cmmc_renewal_notices_service on cmmc_renewal_notices for all to rampart_service using (true) with check (true);
