-- upgrade: rolling
-- CMMC policy review reminders: the daily sweep mails the Affirming Official 30 days before a
-- policy's review date and on the day. One row per policy document, threshold and review date is
-- the claim, so each reminder goes out once however often the sweep runs; a new review date
-- (the policy was reviewed) starts its own pair of reminders.
--
-- Rolling-safe: a new table that older replicas never read.
create table cmmc_policy_review_notices (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references "organization" (id) on delete cascade,
  profile_id uuid not null references compliance_profiles (id) on delete cascade,
  policy_document_id uuid not null references cmmc_policy_documents (id) on delete cascade,
  threshold text not null check (threshold in ('due_in_30_days', 'due')),
  review_date date not null,
  sent_day date not null,
  created_at timestamptz not null default now(),
  unique (policy_document_id, threshold, review_date)
);
create index cmmc_policy_review_notices_profile_idx on cmmc_policy_review_notices (profile_id, created_at desc);

alter table cmmc_policy_review_notices enable row level security;
alter table cmmc_policy_review_notices force row level security;
grant select on cmmc_policy_review_notices to rampart_app;
create policy cmmc_policy_review_notices_tenant on cmmc_policy_review_notices for select to rampart_app
  using (tenant_id = app_tenant_id());
grant select, insert on cmmc_policy_review_notices to rampart_service;
create policy cmmc_policy_review_notices_service on cmmc_policy_review_notices for all to rampart_service
  using (true) with check (true);
