-- upgrade: rolling
-- The embedded database's bulk path for new findings (findings-ingest.ts): one COPY of the rows the
-- server encoded, read from PGlite's /dev/blob device, instead of an insert that first parses the
-- batch as a JSON document (a fifth less of the database thread's work per finding, BENCHMARKS.md).
-- COPY from a file needs pg_read_server_files, and COPY FROM refuses tables with row-level security
-- for roles subject to it, so the function runs as its owner (PGlite's superuser). It grants the
-- service role nothing new: its policy on findings is `using (true) with check (true)`, the column
-- list is fixed here, and the only file read is the device. On PostgreSQL it is never called (the
-- server has no /dev/blob device and the ingest sends JSON there).
--
-- Rolling-safe: a new function; older replicas never call it.
create function copy_findings_from_blob() returns bigint
language plpgsql security definer set search_path = public, pg_temp as $$
declare
  n bigint;
begin
  copy findings (id, tenant_id, asset_id, scan_id, first_scan_id, scanner, scope_key, status, first_seen_at, last_seen_at,
    rule_id, tool, check_class, title, description, severity, cvss_score, cvss_vector, cwe_ids, cve_ids, location,
    location_text, search_text, port, path, evidence, remediation, reference_urls, fingerprint, sla_due_at)
  from '/dev/blob';
  get diagnostics n = row_count;
  return n;
end
$$;
revoke all on function copy_findings_from_blob() from public;
grant execute on function copy_findings_from_blob() to rampart_service;
