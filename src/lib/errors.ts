// Every error a client can see is `{error, message}` with a stable code from this table.
// docs/errors.md documents each code; a test fails on an undocumented one.

export const ERROR_STATUS = {
  // generic
  validation_failed: 400,
  invalid_json: 400,
  invalid_characters: 400,
  json_too_deep: 400,
  unauthenticated: 401,
  forbidden: 403,
  csrf_invalid: 403,
  tenant_forbidden: 403,
  staff_only: 403,
  super_admin_only: 403,
  tenant_not_found: 404,
  not_found: 404,
  route_not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  too_many_concurrent: 429,
  server_busy: 429,
  internal_error: 500,
  service_unavailable: 503,
  // auth proxy (Better Auth answers are re-coded into this family)
  auth_failed: 400,
  auth_invalid_credentials: 401,
  auth_email_not_verified: 403,
  auth_user_exists: 422,
  auth_weak_password: 400,
  auth_invalid_token: 400,
  auth_invalid_two_factor_code: 401,
  auth_signup_disabled: 403,
  // assets
  asset_not_found: 404,
  asset_exists: 409,
  invalid_image_archive: 400,
  // storage (built-in and tenant S3 buckets)
  invalid_object_key: 400,
  object_not_found: 404,
  upload_mismatch: 422,
  storage_not_configured: 404,
  storage_auth_failed: 502,
  storage_access_denied: 502,
  storage_bucket_not_found: 502,
  storage_unreachable: 502,
  storage_error: 502,
  // scans and schedules
  scan_not_found: 404,
  scan_not_cancellable: 409,
  schedule_not_found: 404,
  asset_not_verified: 409,
  asset_archived: 409,
  scan_kind_mismatch: 422,
  asset_scan_limit: 409,
  quota_exceeded: 429,
  // tenant scan templates
  template_not_found: 404,
  template_exists: 409,
  template_limit_reached: 409,
  // findings
  finding_not_found: 404,
  // compliance frameworks and evidence
  framework_not_found: 404,
  control_not_found: 404,
  evidence_not_found: 404,
  evidence_file_missing: 400,
  evidence_type_not_allowed: 415,
  evidence_content_mismatch: 415,
  // platform roles
  role_not_found: 404,
  setup_link_invalid: 400,
  setup_done: 409,
  user_not_found: 404,
  // metrics
  metrics_token_invalid: 401,
  // service mesh dispatch (docs/errors.md gives the order of checks)
  missing_svc_headers: 401,
  missing_signature: 401,
  bad_timestamp: 401,
  stale_timestamp: 401,
  bad_signature: 401,
  invalid_body: 400,
  invalid_request_id: 400,
  invalid_payload: 400,
  unknown_flow: 400,
  flow_not_allowed: 403,
  flow_unavailable: 503,
  idempotency_key_reuse: 409,
  request_in_progress: 409,
  handler_failed: 500,
  // workers: enrollment and signed worker requests (docs/worker-protocol.md)
  worker_not_found: 404,
  enrollment_code_invalid: 401,
  worker_unauthorized: 401,
  worker_signature_invalid: 401,
  worker_request_expired: 401,
  worker_replay: 409,
  // leases and report uploads
  lease_lost: 409,
  scan_cancelled: 409,
  upload_not_found: 404,
  upload_url_invalid: 403,
  upload_url_expired: 403,
  upload_incomplete: 409,
  // report imports
  import_file_missing: 400,
  report_format_unknown: 422,
  report_format_mismatch: 422,
  import_not_found: 404,
  // language-model helpers (src/llm)
  llm_busy: 503,
  llm_credits_exhausted: 503,
  llm_timeout: 504,
  llm_unavailable: 502,
  llm_bad_response: 502,
  llm_file_missing: 400,
  llm_too_many_files: 413,
  llm_files_too_large: 413,
  llm_word_document: 415,
  llm_file_type_not_supported: 415,
  llm_result_file_unreadable: 422,
  llm_result_file_too_complex: 422,
  llm_explanation_not_found: 404,
  llm_cancelled: 499,
  llm_device_check_no_results: 422,
  llm_device_output_unreadable: 422,
  llm_explanation_file_not_kept: 404,
  // CMMC Level 1 (src/cmmc)
  cmmc_profile_not_found: 404,
  cmmc_device_token_invalid: 401,
  cmmc_verify_rate_limited: 429,
  cmmc_signing_unavailable: 503,
  cmmc_item_not_found: 404,
  cmmc_evidence_not_found: 404,
  cmmc_policy_not_found: 404,
  cmmc_policy_not_draft: 409,
  cmmc_not_all_met: 409,
  cmmc_confirmation_not_found: 404,
  cmmc_handoff_invalid: 404,
  cmmc_handoff_used: 410,
  cmmc_handoff_expired: 410,
  cmmc_device_not_found: 404,
  cmmc_device_retire_conflict: 409,
  cmmc_retire_reason_required: 400,
  cmmc_not_affirming_official: 403,
  cmmc_cage_code_invalid: 409,
  cmmc_policy_not_approved: 409,
  cmmc_policies_not_approvable: 409,
  // cron hooks and relay
  Unauthorized: 401,
  management_peer_not_configured: 503,
  // staff mesh tools
  mesh_peer_not_found: 404,
  mesh_ask_answer_not_found: 404,
  outbox_entry_not_found: 404,
  outbox_entry_not_failed: 409,
  // staff mailbox
  mail_not_found: 404,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: unknown;
  readonly headers: Record<string, string> | undefined;
  constructor(
    code: ErrorCode,
    message: string,
    opts: { details?: unknown; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = opts.details;
    this.headers = opts.headers;
  }
}

export const appError = (
  code: ErrorCode,
  message: string,
  opts?: ConstructorParameters<typeof AppError>[2],
): AppError => new AppError(code, message, opts);

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
