// Errors the worker client raises. The server answers `{error, message[, details]}` with a stable
// code (docs/errors.md); the client keeps the code so callers can act on it (a 409 lease_lost
// drops a scan, a 401 worker_unauthorized means the worker must enroll again).

/** The server refused a request (any non-2xx answer). */
export class WorkerApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  /** Worth retrying: 5xx, 429. */
  readonly retryable: boolean;
  readonly retryAfterMs: number | null;
  constructor(
    status: number,
    code: string,
    message: string,
    opts: { details?: unknown; retryAfterMs?: number | null } = {},
  ) {
    super(message);
    this.name = 'WorkerApiError';
    this.status = status;
    this.code = code;
    this.details = opts.details;
    this.retryable = status >= 500 || status === 429;
    this.retryAfterMs = opts.retryAfterMs ?? null;
  }
}

/** The server could not be reached or did not answer in time. Always retryable. */
export class WorkerNetworkError extends Error {
  readonly retryable = true;
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.name = 'WorkerNetworkError';
  }
}

/** A lease the worker holds is gone: the lease was lost (re-queued, stale token) or the scan cancelled. */
export const LEASE_GONE_CODES = new Set(['lease_lost', 'scan_cancelled']);

export const isLeaseGone = (e: unknown): boolean =>
  e instanceof WorkerApiError && e.status === 409 && LEASE_GONE_CODES.has(e.code);

export const isAbortError = (e: unknown): boolean =>
  e instanceof Error && (e.name === 'AbortError' || e.name === 'TimeoutError') && !(e instanceof WorkerNetworkError);

/** A one-line description of any error, for logs and the CLI (never includes secrets). */
export function describeError(e: unknown): string {
  if (e instanceof WorkerApiError) return `${e.message} (${e.code}, HTTP ${e.status})`;
  if (e instanceof Error) {
    const cause = e.cause instanceof Error ? `: ${e.cause.message}` : '';
    return `${e.message}${cause}`;
  }
  return String(e);
}
