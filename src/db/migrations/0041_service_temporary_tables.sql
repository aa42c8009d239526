-- upgrade: rolling
-- On PostgreSQL the ingest copies a batch's new findings into a temporary table with COPY FROM
-- STDIN and inserts them from there (findings-ingest.ts): COPY FROM refuses a table with row-level
-- security to a role subject to it. Temporary tables need the TEMPORARY privilege on the database,
-- which PostgreSQL gives PUBLIC by default; granted here by name so that an installation that
-- revoked it from PUBLIC still ingests. A temporary table is private to its session and dropped
-- with it; the privilege reaches no other table.
--
-- Rolling-safe: a grant; older replicas do not use it.
do $$
begin
  execute format('grant temporary on database %I to rampart_service', current_database());
end
$$;
