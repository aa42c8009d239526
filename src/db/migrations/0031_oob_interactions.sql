-- upgrade: rolling
-- Out-of-band checks of template scans (nuclei's {{interactsh-url}}): a template scan gets a
-- random callback prefix when leased; targets that call back at <PUBLIC_BASE_URL>/oob/<prefix>…
-- (or query <prefix>….<OOB_DNS_DOMAIN>) are recorded here while the scan is leased or running,
-- and the worker holding the lease reads them. Rows go with their scan.
--
-- Rolling-safe: a nullable column without a default and a new table.
alter table scans add column oob_prefix text check (oob_prefix is null or oob_prefix ~ '^[a-z0-9]{12}$');
create unique index scans_oob_prefix on scans (oob_prefix) where oob_prefix is not null;

create table oob_interactions (
  id bigint generated always as identity primary key,
  scan_id uuid not null references scans (id) on delete cascade,
  tenant_id uuid not null,
  token text not null check (token ~ '^[a-z0-9]{12,40}$'),
  protocol text not null check (protocol in ('http', 'dns')),
  remote_address text not null check (length(remote_address) <= 100),
  raw_request text not null check (length(raw_request) <= 16384),
  received_at timestamptz not null default now()
);
create index oob_interactions_scan on oob_interactions (scan_id, id);

alter table oob_interactions enable row level security;
alter table oob_interactions force row level security;
grant select on oob_interactions to rampart_app;
create policy oob_interactions_tenant on oob_interactions for select to rampart_app using (tenant_id = app_tenant_id());
grant select, insert, delete on oob_interactions to rampart_service;
create policy oob_interactions_service on oob_interactions for all to rampart_service using (true) with check (true);
