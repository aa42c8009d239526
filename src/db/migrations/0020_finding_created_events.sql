-- A finding's creation is no longer stored as an event: the detail's history derives it from the
-- row (first_seen_at, first_scan_id), which made a 100,000-finding import a sixth faster
-- (docs/decisions.md, decision 27). Existing 'created' rows would show twice, so they go; nothing
-- is lost (each one's time and scan are the row's first_seen_at and first_scan_id).
delete from finding_events where event = 'created';
alter table finding_events drop constraint finding_events_event_check;
alter table finding_events add constraint finding_events_event_check
  check (event in ('fixed', 'reopened', 'status_changed', 'severity_changed', 'risk_expired'));
