-- Result-file explainer history (src/llm): the explanations a user asked for, private to that user.
-- Only the answer and a few facts about the file are kept (name, format, counts by severity); the
-- uploaded file and the prompt sent to the model are never stored. Rows belong to a tenant AND a
-- user: the app role sees a row only inside its tenant and only as its author (app.user_id, set
-- by withTenant / withTenantMember), so another member of the same tenant cannot list, read or
-- delete it. The service never needs these rows; rampart_service has no grant.

create table llm_explanations (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references "organization" (id) on delete cascade,
  user_id uuid not null references "user" (id) on delete cascade,
  file_name text not null check (char_length(file_name) between 1 and 255),
  format text not null,
  -- 'model' when a language model wrote the answer, 'offline' for the offline analysis.
  source text not null check (source in ('model', 'offline')),
  model text,
  -- {"critical": n, "high": n, "medium": n, "low": n, "info": n, "total": n}
  counts jsonb not null default '{}',
  answer text not null check (char_length(answer) <= 200000),
  created_at timestamptz not null default now()
);
create index llm_explanations_user_idx on llm_explanations (tenant_id, user_id, created_at desc, id desc);

alter table llm_explanations enable row level security;
alter table llm_explanations force row level security;

grant select, insert, delete on llm_explanations to rampart_app;
create policy llm_explanations_owner on llm_explanations for all to rampart_app
  using (tenant_id = app_tenant_id() and user_id = app_user_id())
  with check (tenant_id = app_tenant_id() and user_id = app_user_id());
