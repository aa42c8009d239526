-- upgrade: rolling
-- CMMC device coverage: Scope declares how many computers are in scope, and owners or admins
-- attest a computer that cannot send a device-check run (docs/cmmc.md, Scoring).
--
-- declared_device_count is the denominator of device coverage: a requirement with device checks
-- is MET only when that many computers are covered. Null on profiles saved before it was asked
-- (then one covered computer is enough, as before), so older replicas keep working.
alter table compliance_profiles add column declared_device_count integer
  check (declared_device_count is null or declared_device_count between 1 and 10000);
-- [{hostname, statement, at, by, byEmail}]: the latest attestation per computer (case-insensitive
-- hostname); it counts for 30 days, as a run does. The tenant role already updates its profile row.
alter table compliance_profiles add column device_attestations jsonb not null default '[]'
  check (jsonb_typeof(device_attestations) = 'array');
