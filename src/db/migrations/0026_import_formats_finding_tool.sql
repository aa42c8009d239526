-- upgrade: rolling
-- Imports read five more report formats (Nessus, OpenVAS / Greenbone, Burp Suite, grype and
-- testssl.sh), and a finding remembers the tool whose rule namespace it belongs to (a SARIF
-- producer, ZAP, Nessus, ...), which is also part of its fingerprint: findings of two tools never
-- merge. Null for rule ids that mean the same thing whoever reports them (open ports, CVEs in
-- packages, nuclei templates) and for findings stored before this version.
--
-- Rolling-safe: widened check constraints (older replicas write a subset) and a nullable column
-- without a default (no table rewrite).
alter table report_uploads drop constraint if exists report_uploads_format_check;
alter table report_uploads add constraint report_uploads_format_check
  check (format is null or format in ('native', 'nmap', 'nuclei', 'zap', 'trivy', 'sarif', 'nessus', 'openvas', 'burp', 'grype', 'testssl'));
alter table report_ingestions drop constraint if exists report_ingestions_format_check;
alter table report_ingestions add constraint report_ingestions_format_check
  check (format is null or format in ('native', 'nmap', 'nuclei', 'zap', 'trivy', 'sarif', 'nessus', 'openvas', 'burp', 'grype', 'testssl'));
alter table findings add column tool text check (tool is null or length(tool) <= 100);
