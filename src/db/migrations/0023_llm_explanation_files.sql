-- upgrade: rolling
-- (Old replicas keep working: they never read the new table, their new explanations simply have
-- no kept file, which the new code reports as "not kept"; the unique constraint is on a small table.)
-- Result-file explainer history keeps the uploaded result file with its explanation (spec:
-- "private per user, holds the uploaded result and its explanation"). The file lives in its own
-- table, in the database rather than object storage, so that:
--   * the same row-level security as the explanation (tenant AND user) guards it: a tenant's own
--     bucket would be readable by anyone holding the bucket's keys, not only by the author;
--   * deleting the explanation (or the user, or the tenant) deletes the file in the same
--     transaction (foreign key, on delete cascade): no orphaned objects;
--   * listing the history never reads the file bytes (they stay in this table).
-- The bytes are gzip-compressed by the service (scanner output compresses well); `size` and
-- `sha256` describe the file as uploaded (at most 32 MB, the explainer's upload limit). Entries
-- made before this migration have no row here.

-- The file row must belong to the same tenant and user as its explanation.
alter table llm_explanations add constraint llm_explanations_owner_key unique (id, tenant_id, user_id);

create table llm_explanation_files (
  explanation_id uuid primary key,
  tenant_id uuid not null,
  user_id uuid not null,
  size integer not null check (size between 1 and 33554432),
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  encoding text not null default 'gzip' check (encoding in ('gzip')),
  data bytea not null,
  foreign key (explanation_id, tenant_id, user_id) references llm_explanations (id, tenant_id, user_id) on delete cascade
);

alter table llm_explanation_files enable row level security;
alter table llm_explanation_files force row level security;

grant select, insert, delete on llm_explanation_files to rampart_app;
create policy llm_explanation_files_owner on llm_explanation_files for all to rampart_app
  using (tenant_id = app_tenant_id() and user_id = app_user_id())
  with check (tenant_id = app_tenant_id() and user_id = app_user_id());
