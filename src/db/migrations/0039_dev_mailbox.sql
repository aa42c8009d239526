-- upgrade: rolling
-- The development mailbox: without SMTP_URL every outgoing mail (its reset, verification and
-- invitation links included) is kept here for the installation's super-admins to read under
-- Staff → Mailbox. Installation data, not tenant data: about_tenant_id only says which tenant a mail
-- was about (no foreign key: a mail outlives its tenant until pruned). The service role alone
-- reads it (tenant paths run as rampart_app, which has no grant); the mailer prunes it on every
-- insert to the newest 500 rows and 14 days.
--
-- Rolling-safe: a new table; older replicas never read or write it.
create table dev_mailbox (
  id bigint generated always as identity primary key,
  created_at timestamptz not null default now(),
  to_address text not null check (length(to_address) between 1 and 320),
  subject text not null check (length(subject) <= 1000),
  text_body text not null check (length(text_body) <= 100000),
  html_body text check (length(html_body) <= 200000),
  link text check (length(link) <= 4000),
  about_tenant_id uuid
);
create index dev_mailbox_created_idx on dev_mailbox (created_at);
alter table dev_mailbox enable row level security;
alter table dev_mailbox force row level security;
grant select, insert, delete on dev_mailbox to rampart_service;
create policy dev_mailbox_service on dev_mailbox for all to rampart_service using (true) with check (true);
