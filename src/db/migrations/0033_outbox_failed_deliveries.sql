-- upgrade: rolling
-- Failed outbox deliveries, for staff: who an event is about (company and CAGE code, or the tenant
-- of a report), when it failed for good, and each "send again". The payload becomes json (kept as
-- written) instead of jsonb (keys re-ordered): a message sent straight away and then queued under
-- the same request id must go out as the same bytes, or an idempotent peer answers
-- 409 idempotency_key_reuse.
--
-- Rolling-safe: older servers write and read the payload as JSON text either way, and the new
-- columns are nullable or have defaults.
alter table svc_outbox alter column payload type json using payload::json;
alter table svc_outbox
  add column company_name text check (company_name is null or length(company_name) <= 300),
  add column cage_code text check (cage_code is null or length(cage_code) <= 20),
  add column subject_tenant_id uuid,
  add column failed_at timestamptz,
  add column resent_at timestamptz,
  add column resend_count integer not null default 0,
  add column previous_request_ids text[] not null default '{}';
create index svc_outbox_failed_idx on svc_outbox (peer, id desc) where status = 'failed';
