// Kysely table types. Keep in step with migrations/*.sql.
// Over 500 lines on purpose: every table type of the database in one file, by design (the one DB type).
import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { SeverityCounts } from '../llm/llm-schemas.ts';
import type { EvidenceItem } from '../staff/mesh-ask-schemas.ts';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type NullableDate = ColumnType<string | null, string | null | undefined, string | null>;
type Json<T> = ColumnType<T, string, string>;
type NullableJson<T> = ColumnType<T | null, string | null | undefined, string | null>;

/** Report formats the importers read (migration 0026). */
export type ReportFormatColumn =
  'native' | 'nmap' | 'nuclei' | 'zap' | 'trivy' | 'sarif' | 'nessus' | 'openvas' | 'burp' | 'grype' | 'testssl';

export interface UserTable {
  id: Generated<string>;
  name: string;
  email: string;
  emailVerified: boolean;
  image: string | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  twoFactorEnabled: boolean | null;
}

export interface SessionTable {
  id: Generated<string>;
  expiresAt: Timestamp;
  token: string;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  ipAddress: string | null;
  userAgent: string | null;
  userId: string;
  activeOrganizationId: string | null;
}

export interface AccountTable {
  id: Generated<string>;
  userId: string;
  providerId: string;
  accountId: string;
  password: string | null;
}

export interface TwoFactorTable {
  id: Generated<string>;
  userId: string;
}

export interface OrganizationTable {
  id: Generated<string>;
  name: string;
  slug: string;
  logo: string | null;
  createdAt: Timestamp;
  metadata: string | null;
}

export interface MemberTable {
  id: Generated<string>;
  organizationId: string;
  userId: string;
  role: string;
  createdAt: Timestamp;
}

export interface InvitationTable {
  id: Generated<string>;
  organizationId: string;
  email: string;
  role: string | null;
  status: string;
  expiresAt: Timestamp;
  createdAt: Timestamp;
  inviterId: string;
}

export interface TenantSettingsTable {
  tenant_id: string;
  daily_scan_quota: Generated<number>;
  per_asset_concurrent_scans: Generated<number>;
  sla_critical_days: Generated<number>;
  sla_high_days: Generated<number>;
  sla_medium_days: Generated<number>;
  sla_low_days: Generated<number>;
  updated_at: Timestamp;
  updated_by: string | null;
}

export interface AuditLogTable {
  id: Generated<number>;
  tenant_id: string | null;
  actor_user_id: string | null;
  actor_email: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  details: JSONColumnType<Record<string, unknown>, string | undefined, string>;
  ip_address: string | null;
  user_agent: string | null;
  request_id: string | null;
  created_at: Timestamp;
}

export interface PlatformRolesTable {
  user_id: string;
  role: 'staff' | 'super_admin';
  granted_by: string | null;
  created_at: Timestamp;
}

export interface SvcIdempotencyTable {
  caller: string;
  request_id: string;
  fingerprint: string;
  flow: string;
  status: 'in_flight' | 'completed';
  claimed_at: Timestamp;
  completed_at: Timestamp | null;
  response: JSONColumnType<Record<string, unknown> | null, string | null, string | null>;
  expires_at: Timestamp;
}

export interface SvcInboundEventsTable {
  id: Generated<number>;
  received_at: Timestamp;
  caller: string | null;
  flow: string | null;
  status: number;
  error_code: string | null;
  duration_ms: number;
  request_id: string | null;
  verified: boolean;
  replayed: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface SvcOutboundEventsTable {
  id: Generated<number>;
  created_at: Timestamp;
  peer: string;
  flow: string;
  event_type: string | null;
  severity: string | null;
  ok: boolean;
  http_status: number | null;
  request_id: string;
  attempt: number;
  error: string | null;
  response: JSONColumnType<object | null, string | null, string | null>;
  duration_ms: number;
  url: string | null;
}

export interface SvcReceivedEventsTable {
  id: Generated<string>;
  received_at: Timestamp;
  caller: string;
  request_id: string;
  kind: string;
  severity: string;
  title: string;
  detail: string | null;
  occurred_at: Timestamp | null;
  brand: string | null;
  data: JSONColumnType<Record<string, unknown>, string | undefined, string>;
}

export interface SvcOutboxTable {
  id: Generated<number>;
  created_at: Timestamp;
  peer: string;
  flow: string;
  payload: JSONColumnType<Record<string, unknown>, string, string>;
  event_type: string | null;
  severity: string | null;
  request_id: string;
  status: ColumnType<
    'pending' | 'delivered' | 'failed',
    'pending' | 'delivered' | 'failed' | undefined,
    'pending' | 'delivered' | 'failed'
  >;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Timestamp;
  locked_until: Timestamp | null;
  last_error: string | null;
  delivered_at: Timestamp | null;
  /** Who the event is about, for staff (migration 0033). */
  company_name: string | null;
  cage_code: string | null;
  subject_tenant_id: string | null;
  failed_at: Timestamp | null;
  resent_at: Timestamp | null;
  resend_count: ColumnType<number, number | undefined, number>;
  previous_request_ids: ColumnType<string[], string[] | undefined, string[]>;
}

export interface ReporterDedupeTable {
  kind: string;
  fingerprint: string;
  last_sent_at: Timestamp;
  suppressed: ColumnType<number, number | undefined, number>;
}

export interface AssetsTable {
  id: Generated<string>;
  tenant_id: string;
  kind: 'domain' | 'host' | 'webapp' | 'container_image';
  target: string;
  dns_name: string | null;
  name: string;
  tags: ColumnType<string[], string[] | undefined, string[]>;
  owner: string | null;
  notes: string | null;
  verification_status: ColumnType<
    'pending' | 'verified' | 'bypassed',
    'pending' | 'verified' | 'bypassed' | undefined,
    'pending' | 'verified' | 'bypassed'
  >;
  verified_via: 'txt' | 'covered' | 'bypass' | 'upload' | null;
  covered_by: string | null;
  verification_token: string;
  verified_at: Timestamp | null;
  last_checked_at: Timestamp | null;
  last_result: 'verified' | 'pending' | 'failed' | null;
  last_error: string | null;
  bypass_reason: string | null;
  bypassed_by: string | null;
  bypassed_by_email: string | null;
  bypassed_at: Timestamp | null;
  archived_at: Timestamp | null;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** 0005: a container image from a registry reference or an uploaded archive */
  source: ColumnType<'reference' | 'archive', 'reference' | 'archive' | undefined, 'reference' | 'archive'>;
  archive_file_name: string | null;
  archive_size: ColumnType<string | null, number | null | undefined, number | null>;
  archive_sha256: string | null;
  archive_format: 'tar' | 'tar+gzip' | null;
  archive_storage_key: string | null;
  archive_uploaded_at: Timestamp | null;
}

export interface TenantStorageSettingsTable {
  tenant_id: string;
  endpoint: string;
  region: string;
  bucket: string;
  path_style: boolean;
  prefix: string;
  access_key_id_sealed: string;
  secret_access_key_sealed: string;
  enabled: boolean;
  last_tested_at: Timestamp | null;
  last_test_ok: boolean | null;
  last_test_error: string | null;
  last_test_message: string | null;
  updated_at: Timestamp;
  updated_by: string | null;
}

export interface AssetVerificationLogTable {
  id: Generated<number>;
  tenant_id: string;
  asset_id: string;
  at: Timestamp;
  event: string;
  detail: string | null;
  actor_user_id: string | null;
  actor_email: string | null;
}

export type ScanKind = 'port' | 'template' | 'webapp' | 'container' | 'edge';
export type ScanOutcome = 'complete' | 'partial' | 'inconclusive';
export type ScanStatus =
  'queued' | 'leased' | 'running' | 'ingesting' | 'chunking' | 'aggregating' | 'succeeded' | 'failed' | 'cancelled';

export interface InstallationSettingsTable {
  id: Generated<boolean>;
  staff_email_domains: ColumnType<string[], string[] | undefined, string[]>;
  setup_token_hash: string | null;
  setup_created_at: Timestamp | null;
  setup_used_at: Timestamp | null;
  setup_used_by: string | null;
  updated_at: Timestamp;
}

export interface ScansTable {
  id: Generated<string>;
  tenant_id: string;
  asset_id: string;
  kind: ScanKind;
  options: JSONColumnType<Record<string, unknown>, string | undefined, string>;
  status: ColumnType<ScanStatus, ScanStatus | undefined, ScanStatus>;
  percent: ColumnType<number, number | undefined, number>;
  parent_id: string | null;
  chunk_index: number | null;
  chunk_count: number | null;
  chunk_spec: JSONColumnType<Record<string, unknown> | null, string | null, string | null>;
  schedule_id: string | null;
  requested_by: string | null;
  quota_day: ColumnType<string | null, string | null | undefined, string | null>;
  error: string | null;
  /** Callback prefix of a template scan's out-of-band checks, set when first leased. */
  oob_prefix: Generated<string | null>;
  lease_token: string | null;
  leased_by: string | null;
  lease_expires_at: Timestamp | null;
  attempts: ColumnType<number, number | undefined, number>;
  not_before: Timestamp | null;
  quota_seq: number | null;
  /** When the lease last found this scan beyond its day's quota (0027): later leases look past it for a while. */
  quota_held_at: Timestamp | null;
  /** 'import': made from a person's imported report (no quota, no lease). */
  source: ColumnType<'worker' | 'import', 'worker' | 'import' | undefined, 'worker' | 'import'>;
  /** What the finished result was worth; null until its report is read (0025). */
  outcome: ColumnType<ScanOutcome | null, ScanOutcome | null | undefined, ScanOutcome | null>;
  outcome_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** What the report says it covered (docs/report-format.md "coverage"). */
  coverage: JSONColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
  updated_at: Timestamp;
}

export interface ScanSchedulesTable {
  id: Generated<string>;
  tenant_id: string;
  asset_id: string;
  name: string;
  kind: ScanKind;
  options: JSONColumnType<Record<string, unknown>, string | undefined, string>;
  chunk_count: number | null;
  cron: string;
  time_zone: string;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  next_run_at: Timestamp | null;
  last_run_at: Timestamp | null;
  last_scan_id: string | null;
  last_error: string | null;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface OobInteractionsTable {
  id: Generated<string>;
  scan_id: string;
  tenant_id: string;
  token: string;
  protocol: 'http' | 'dns';
  remote_address: string;
  raw_request: string;
  received_at: Generated<Date>;
}

export interface ScanTemplatesTable {
  id: Generated<string>;
  tenant_id: string;
  template_id: string;
  name: string;
  severity: 'info' | 'low' | 'medium' | 'high' | 'critical';
  tags: ColumnType<string[], string[] | undefined, string[]>;
  yaml: string;
  /** Payload files uploaded with the template: path → text (JSON text when written). */
  payload_files: JSONColumnType<Record<string, string>, string | undefined, string>;
  size: number;
  sha256: string;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type FindingSeverity = 'info' | 'low' | 'medium' | 'high' | 'critical';
export type FindingStatus = 'open' | 'fixed' | 'accepted_risk' | 'false_positive';

export interface FindingsTable {
  id: Generated<string>;
  tenant_id: string;
  asset_id: string;
  scan_id: string | null;
  first_scan_id: string | null;
  scanner: ScanKind;
  rule_id: string;
  title: string;
  description: string | null;
  severity: FindingSeverity;
  severity_rank: ColumnType<number, never, never>;
  /** numeric(3,1): read as a string. */
  cvss_score: ColumnType<string | null, number | null | undefined, number | null>;
  cvss_vector: string | null;
  cwe_ids: ColumnType<number[], number[] | undefined, number[]>;
  cve_ids: ColumnType<string[], string[] | undefined, string[]>;
  location: JSONColumnType<Record<string, unknown>, string | undefined, string>;
  location_text: string;
  search_text: ColumnType<string, string | undefined, string>;
  port: number | null;
  path: string | null;
  evidence: JSONColumnType<Record<string, unknown>, string | undefined, string>;
  remediation: string | null;
  reference_urls: ColumnType<string[], string[] | undefined, string[]>;
  fingerprint: string;
  /** The tool whose rule namespace the finding belongs to (imports); null when the rule id is shared. */
  tool: ColumnType<string | null, string | null | undefined, string | null>;
  /** The class of check that reported it (Trivy's vuln, misconfig, secret, license ...); null when unknown. */
  check_class: ColumnType<string | null, string | null | undefined, string | null>;
  scope_key: string;
  status: ColumnType<FindingStatus, FindingStatus | undefined, FindingStatus>;
  status_reason: string | null;
  status_expires_at: Timestamp | null;
  status_changed_by: string | null;
  status_changed_by_email: string | null;
  status_changed_at: Timestamp | null;
  first_seen_at: Timestamp;
  last_seen_at: Timestamp;
  fixed_at: Timestamp | null;
  reopened_count: ColumnType<number, number | undefined, number>;
  sla_due_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface FindingEventsTable {
  id: Generated<number>;
  tenant_id: string;
  finding_id: string;
  at: Timestamp;
  event: 'fixed' | 'reopened' | 'status_changed' | 'severity_changed' | 'risk_expired';
  from_status: string | null;
  to_status: string | null;
  scan_id: string | null;
  reason: string | null;
  detail: JSONColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  actor_user_id: string | null;
  actor_email: string | null;
}

export interface FindingScanIngestsTable {
  scan_id: string;
  tenant_id: string;
  scope_key: string;
  summary: JSONColumnType<Record<string, unknown>, string | undefined, string>;
  ingested_at: Timestamp;
}

export interface ControlEvidenceTable {
  id: string;
  tenant_id: string;
  framework: 'soc2' | 'gdpr' | 'iso27001' | 'nist-csf' | 'cis-v8';
  control_id: string;
  title: string;
  description: string | null;
  file_name: string;
  content_type: string;
  /** bigint: read as a number (db/client.ts parses int8). */
  size_bytes: number;
  sha256: string;
  storage_kind: 'builtin' | 's3';
  storage_key: string;
  /** date columns: the service selects them as ::text (YYYY-MM-DD). */
  effective_date: ColumnType<Date | string, string, string>;
  expires_at: ColumnType<Date | string | null, string | null | undefined, string | null>;
  uploaded_by: string | null;
  uploaded_by_email: string | null;
  created_at: Timestamp;
  deleted_at: Timestamp | null;
  deleted_by: string | null;
}

export interface WorkerEnrollmentsTable {
  id: string;
  tenant_id: string;
  code_hash: string;
  hosted: boolean;
  created_by: string | null;
  created_by_email: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  worker_id: string | null;
}

export interface WorkersTable {
  id: string;
  tenant_id: string;
  name: string;
  platform: string;
  version: string;
  hosted: boolean;
  token_hash: string;
  enrollment_id: string | null;
  enrolled_at: Timestamp;
  last_seen_at: Timestamp | null;
  revoked_at: Timestamp | null;
  revoked_by: string | null;
  revoked_by_email: string | null;
}

export interface TenantWebhookSecretsTable {
  tenant_id: string;
  current_sealed: string;
  current_created_at: Timestamp;
  previous_sealed: string | null;
  previous_valid_until: Timestamp | null;
  created_at: Timestamp;
  rotated_at: Timestamp | null;
  updated_by: string | null;
}

/** The sealed bearer of a hosted worker this server runs in-process (service role only). */
export interface HostedWorkerCredentialsTable {
  worker_id: string;
  tenant_id: string;
  token_sealed: string;
  created_at: Timestamp;
}

export interface WorkerNoncesTable {
  worker_id: string;
  nonce: string;
  tenant_id: string;
  seen_at: Timestamp;
}

export interface ReportUploadsTable {
  id: string;
  tenant_id: string;
  scan_id: string;
  worker_id: string | null;
  lease_token: string | null;
  storage: 'builtin' | 's3';
  object_key: string;
  /** bigint: read as a string by node-postgres, a number by PGlite; use Number(). */
  size: ColumnType<string | number, number, number>;
  sha256: string;
  content_type: string | null;
  format: ReportFormatColumn | null;
  file_name: string | null;
  status: 'pending' | 'finalized';
  expires_at: Timestamp;
  created_at: Timestamp;
  finalized_at: Timestamp | null;
  ingestion_id: string | null;
}

export interface ReportIngestionsTable {
  id: string;
  tenant_id: string;
  scan_id: string;
  upload_id: string | null;
  source: 'worker' | 'import';
  storage: 'builtin' | 's3';
  /** Host and directory of the replica-local built-in storage holding the report; null when shared. */
  storage_node: ColumnType<string | null, string | null | undefined, string | null>;
  object_key: string;
  /** bigint: read as a string by node-postgres, a number by PGlite; use Number(). */
  size: ColumnType<string | number, number, number>;
  sha256: string;
  format: ReportFormatColumn | null;
  file_name: string | null;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  bytes_read: ColumnType<string | number, number | undefined, number>;
  findings_read: ColumnType<number, number | undefined, number>;
  skipped: ColumnType<number, number | undefined, number>;
  summary: ColumnType<unknown, string | null | undefined, string | null>;
  error: string | null;
  attempts: ColumnType<number, number | undefined, number>;
  locked_by: string | null;
  locked_until: Timestamp | null;
  created_by: string | null;
  created_by_email: string | null;
  created_at: Timestamp;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
  updated_at: Timestamp;
}

export interface EnrollAttemptsTable {
  address: string;
  window_start: Timestamp;
  failures: number;
}

export interface SchemaMigrationsTable {
  version: string;
  name: string;
  checksum: string;
  applied_at: Timestamp;
}

/** Staff "ask operations" answers with the evidence they cite (migration 0016). */
export interface MeshAskAnswersTable {
  id: Generated<string>;
  question: string;
  window_days: number;
  evidence: JSONColumnType<EvidenceItem[]>;
  markdown: string;
  model: string | null;
  duration_ms: number;
  created_by: string | null;
  created_at: Generated<Date>;
}

/** The explainer's history: one answer per upload (the language-model module). */
export interface LlmExplanationsTable {
  id: Generated<string>;
  tenant_id: string;
  user_id: string;
  file_name: string;
  format: string;
  source: 'model' | 'offline';
  /** The model that wrote it, for operators reading the database; never in an answer or page. */
  model: string | null;
  counts: JSONColumnType<SeverityCounts>;
  answer: string;
  created_at: Generated<Date>;
}
/** The uploaded result file of an explanation (migration 0023), gzip-compressed. */
export interface LlmExplanationFilesTable {
  explanation_id: string;
  tenant_id: string;
  user_id: string;
  /** Bytes as uploaded. */
  size: number;
  sha256: string;
  encoding: Generated<'gzip'>;
  data: Buffer;
}

/** Mails kept instead of sent when there is no SMTP (src/auth/mailbox.ts); super-admins read them. */
export interface DevMailboxTable {
  id: Generated<number>;
  created_at: Generated<Date>;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string | null;
  link: string | null;
  /** The tenant a mail was about (not tenancy: installation data, service role only). */
  about_tenant_id: string | null;
}

// CMMC Level 1 program (migration 0017 and later).
export interface DeviceScriptInfo {
  os: 'windows' | 'macos';
  fileName: string;
  sha256: string;
  version: string;
}

/** An owner or admin vouches for a computer that cannot send a device-check run. */
export interface DeviceAttestation {
  hostname: string;
  statement: string;
  at: string;
  by: string;
  byEmail: string;
}

/** Why a confirmed profile became not_compliant: its NOT MET requirements at that moment. */
export interface StatusReason {
  at: string;
  requirements: { requirementId: string; title: string; reasons: string[] }[];
}

export interface ComplianceProfilesTable {
  id: Generated<string>;
  tenant_id: string;
  cage_code: string;
  additional_cage_codes: string[];
  company_name: string;
  company_address: string | null;
  company_phone: string | null;
  company_website: string | null;
  uei: string | null;
  scope_description: string | null;
  bidding_users: Json<{ name: string; email: string; role: string | null }[]>;
  mail_platform: 'm365' | 'google';
  affirming_official_name: string;
  affirming_official_title: string;
  affirming_official_email: string;
  status: Generated<'in_progress' | 'compliant' | 'renewal_due' | 'not_compliant' | 'expired'>;
  /** What regressed when the status became not_compliant (migration 0035). */
  status_reason: NullableJson<StatusReason>;
  status_date: NullableDate;
  status_changed_at: Timestamp;
  device_token_hash: string | null;
  device_token_issued_at: NullableTimestamp;
  device_token_issued_by: string | null;
  device_scripts: NullableJson<DeviceScriptInfo[]>;
  /** The Scope's number of in-scope computers (migration 0036); null when not declared. */
  declared_device_count: ColumnType<number | null, number | null | undefined, number | null>;
  /** Owner or admin attestations of computers that send no run (migration 0036). */
  device_attestations: ColumnType<DeviceAttestation[], string | undefined, string>;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface EndpointAuditRunsTable {
  id: Generated<string>;
  tenant_id: string;
  profile_id: string;
  hostname: string;
  os: 'windows' | 'macos';
  os_version: string | null;
  results: Json<Record<string, 'pass' | 'fail' | 'unknown'>>;
  details: Json<Record<string, string>>;
  script_version: string;
  client_address: string | null;
  received_at: Timestamp;
  /** Reason codes of unknown results (migration 0022). */
  reasons: ColumnType<Record<string, string>, string | undefined, string>;
  /** Set on the hostname's latest run when an owner or admin retires the computer. */
  retired_at: NullableTimestamp;
  retired_by: string | null;
  retired_by_email: string | null;
  retired_note: string | null;
}

export interface AttestationsTable {
  id: Generated<string>;
  tenant_id: string;
  profile_id: string;
  requirement_id: string;
  item_id: string;
  answer: 'yes' | 'no' | 'not_applicable';
  note: string | null;
  answered_by: string | null;
  answered_by_email: string | null;
  answered_at: Timestamp;
}

export interface AttestationEvidenceTable {
  id: Generated<string>;
  tenant_id: string;
  profile_id: string;
  attestation_id: string | null;
  requirement_id: string;
  item_id: string;
  file_name: string;
  content_type: string;
  size_bytes: ColumnType<string | number, number, number>;
  sha256: string;
  storage_kind: 'builtin' | 's3';
  storage_key: string;
  effective_date: NullableDate;
  expires_at: NullableDate;
  uploaded_by: string | null;
  uploaded_by_email: string | null;
  created_at: Timestamp;
  deleted_at: NullableTimestamp;
  deleted_by: string | null;
}

export interface PolicyDocumentsTable {
  id: Generated<string>;
  tenant_id: string;
  profile_id: string;
  kind: string;
  version: number;
  title: string;
  body_markdown: string;
  status: Generated<'draft' | 'approved'>;
  approved_by: string | null;
  approved_by_email: string | null;
  approved_at: NullableTimestamp;
  effective_date: NullableDate;
  next_review_date: NullableDate;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface HandoffsTable {
  id: Generated<string>;
  tenant_id: string;
  profile_id: string;
  cmmc_level: Generated<'LEVEL_1_SELF'>;
  status_date: ColumnType<string, string, string>;
  scope_description: string;
  cage_codes: string[];
  overall_result: 'MET' | 'NOT_MET';
  requirement_results: Json<Record<string, 'MET' | 'NOT_MET' | 'NA'>>;
  na_justifications: Json<Record<string, string>>;
  affirming_official_name: string;
  affirming_official_title: string;
  affirming_official_email: string;
  affirmation_text_version: string;
  affirmed_in_sprs_on: ColumnType<string, string, string>;
  confirmed_by: string | null;
  confirmed_by_email: string | null;
  confirmed_at: Timestamp;
  client_address: string | null;
  user_agent: string | null;
  assessment_snapshot_sha256: string;
  assessment_snapshot: NullableJson<unknown>;
  sprs_proof_storage_kind: 'builtin' | 's3' | null;
  sprs_proof_storage_key: string | null;
  sprs_proof_file_name: string | null;
  sprs_proof_sha256: string | null;
  next_due: ColumnType<string, string, string>;
  reminder_at: ColumnType<string, string, string>;
}

export interface HandoffLinksTable {
  id: Generated<string>;
  token_hash: string;
  caller: string;
  request_id: string | null;
  payload: Json<Record<string, unknown>>;
  cage_code: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  consumed_at: NullableTimestamp;
  consumed_by: string | null;
  tenant_id: string | null;
}

export interface RenewalNoticesTable {
  id: Generated<string>;
  tenant_id: string;
  profile_id: string;
  kind: 'renewal_due' | 'expired' | 'compliant' | 'reminder';
  day: ColumnType<string, string, string>;
  event_id: string | null;
  created_at: Timestamp;
}

/** One reminder per policy document, threshold and review date (migration 0037). */
export interface PolicyReviewNoticesTable {
  id: Generated<string>;
  tenant_id: string;
  profile_id: string;
  policy_document_id: string;
  threshold: 'due_in_30_days' | 'due';
  review_date: ColumnType<string, string, string>;
  sent_day: ColumnType<string, string, string>;
  created_at: Timestamp;
}

/** One row per daily job and UTC day: the claim that the job ran (migration 0032). */
export interface DailyJobRunsTable {
  job: string;
  day: ColumnType<string, string, string>;
  ran_at: Timestamp;
}

export interface DB {
  user: UserTable;
  session: SessionTable;
  account: AccountTable;
  twoFactor: TwoFactorTable;
  organization: OrganizationTable;
  member: MemberTable;
  invitation: InvitationTable;
  tenant_settings: TenantSettingsTable;
  audit_log: AuditLogTable;
  platform_roles: PlatformRolesTable;
  schema_migrations: SchemaMigrationsTable;
  svc_idempotency: SvcIdempotencyTable;
  svc_inbound_events: SvcInboundEventsTable;
  svc_outbound_events: SvcOutboundEventsTable;
  svc_received_events: SvcReceivedEventsTable;
  svc_outbox: SvcOutboxTable;
  reporter_dedupe: ReporterDedupeTable;
  assets: AssetsTable;
  asset_verification_log: AssetVerificationLogTable;
  tenant_storage_settings: TenantStorageSettingsTable;
  scans: ScansTable;
  installation_settings: InstallationSettingsTable;
  scan_schedules: ScanSchedulesTable;
  scan_templates: ScanTemplatesTable;
  oob_interactions: OobInteractionsTable;
  findings: FindingsTable;
  finding_events: FindingEventsTable;
  finding_scan_ingests: FindingScanIngestsTable;
  control_evidence: ControlEvidenceTable;
  worker_enrollments: WorkerEnrollmentsTable;
  workers: WorkersTable;
  tenant_webhook_secrets: TenantWebhookSecretsTable;
  worker_nonces: WorkerNoncesTable;
  hosted_worker_credentials: HostedWorkerCredentialsTable;
  enroll_attempts: EnrollAttemptsTable;
  report_uploads: ReportUploadsTable;
  report_ingestions: ReportIngestionsTable;
  mesh_ask_answers: MeshAskAnswersTable;
  llm_explanations: LlmExplanationsTable;
  llm_explanation_files: LlmExplanationFilesTable;
  dev_mailbox: DevMailboxTable;
  compliance_profiles: ComplianceProfilesTable;
  endpoint_audit_runs: EndpointAuditRunsTable;
  compliance_control_attestations: AttestationsTable;
  compliance_attestation_evidence: AttestationEvidenceTable;
  cmmc_policy_documents: PolicyDocumentsTable;
  compliance_handoffs: HandoffsTable;
  cmmc_handoff_links: HandoffLinksTable;
  cmmc_renewal_notices: RenewalNoticesTable;
  cmmc_policy_review_notices: PolicyReviewNoticesTable;
  daily_job_runs: DailyJobRunsTable;
}
