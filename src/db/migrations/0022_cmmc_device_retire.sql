-- upgrade: rolling
-- CMMC device checks: retiring a computer, and the reason codes of unknown results.
--
-- A retired or replaced computer would otherwise block MET for ever (its latest run ages into
-- "pending" after 30 days). Retiring marks the hostname's latest run: scoring, the device counts
-- and the staff dashboard then leave that computer out. A new run from the same hostname is a new
-- row, not retired, so the computer counts again (the run proves it is in use); un-retiring
-- clears the mark.
alter table endpoint_audit_runs add column retired_at timestamptz;
alter table endpoint_audit_runs add column retired_by uuid references "user" (id) on delete set null;
alter table endpoint_audit_runs add column retired_by_email text check (retired_by_email is null or length(retired_by_email) <= 320);
alter table endpoint_audit_runs add column retired_note text check (retired_note is null or length(retired_note) <= 500);

-- {"<check id>": "<reason code>"} for unknown results the script could explain (e.g.
-- "third_party_av" for win.scan_recent); the service accepts only the codes of the catalogue.
alter table endpoint_audit_runs add column reasons jsonb not null default '{}';

-- The staff dashboard's latest-run scan stays index-only with the retire mark.
drop index endpoint_audit_runs_host_idx;
create index endpoint_audit_runs_host_idx on endpoint_audit_runs (profile_id, lower(hostname), received_at desc) include (failing, hostname, retired_at);

-- Owners and admins retire and un-retire from the tenant page (rampart_app, RLS): only the
-- retire columns may change, only on their tenant's rows.
grant update (retired_at, retired_by, retired_by_email, retired_note) on endpoint_audit_runs to rampart_app;
create policy endpoint_audit_runs_tenant_retire on endpoint_audit_runs for update to rampart_app
  using (tenant_id = app_tenant_id()) with check (tenant_id = app_tenant_id());
