-- upgrade: rolling
-- A finding remembers the class of check that reported it (Trivy's vuln, misconfig, secret and
-- license scanners; a container scanner's package vulnerabilities and image configuration), so a
-- result closes only findings of the classes it ran: a Trivy license report never closes a
-- vulnerability. Null when the source does not say; such findings close only by a result that
-- does not narrow by class.
--
-- Rolling-safe: a nullable column without a default (no table rewrite); older replicas write null.
-- Container findings stored earlier get their class from what the ingest now derives.
alter table findings add column check_class text check (check_class is null or length(check_class) <= 40);
update findings set check_class = case
    when rule_id like 'container/%' then 'image-config'
    when tool = 'trivy' and rule_id like 'license:%' then 'license'
    when tool is null then 'vuln'
  end
  where scanner = 'container';
