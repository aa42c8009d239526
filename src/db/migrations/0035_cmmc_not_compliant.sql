-- upgrade: rolling
-- CMMC live status: a confirmed profile whose live score drops below 15/15 (a failing computer, an
-- answer changed to "no", a policy no longer in force) becomes not_compliant until the score is
-- 15/15 again; status_reason keeps what regressed and when, for the Score tab.
--
-- Rolling-safe: a wider check and a nullable column; older replicas never write the new status.
alter table compliance_profiles drop constraint compliance_profiles_status_check;
alter table compliance_profiles add constraint compliance_profiles_status_check
  check (status in ('in_progress', 'compliant', 'renewal_due', 'not_compliant', 'expired'));
alter table compliance_profiles add column status_reason jsonb;
