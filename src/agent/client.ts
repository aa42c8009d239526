// HTTP client for the worker protocol (docs/worker-protocol.md). Every route but `enroll` and the
// upload PUT is a signed POST: the body carries `sentAt` and a fresh `nonce`, and
// X-Rampart-Signature is the HMAC-SHA256 of the exact bytes sent. Transient failures (network,
// 5xx, 429) are retried with exponential backoff and full jitter, each attempt signed anew with a
// new nonce (the server remembers nonces, so a resent body would be refused as a replay); other
// 4xx answers are final.
// Over 500 lines on purpose: the whole worker protocol client (signing, retries, every route of docs/worker-
// protocol.md) in one place, route by route as the document lists them.
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, openAsBlob } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  signBody,
  WORKER_API_PREFIX,
  type EnrollResult,
  type FailResult,
  type FinalizeResult,
  type HeartbeatResult,
  type HeldLease,
  type InitUploadResult,
  type InteractionsResult,
  type Lease,
  type OkResult,
  type ProgressResult,
  type WorkerReportFormat,
} from '../lib/worker-wire.ts';
import { WorkerApiError, WorkerNetworkError } from './errors.ts';

// The wire types are the server's response schemas (src/lib/worker-wire.ts), under the worker's names.
export type { HeldLease, Lease, LeaseState } from '../lib/worker-wire.ts';
import type { ScanKind } from '../lib/scan-kinds.ts';
export type { ScanKind };
export type ReportFormat = WorkerReportFormat;

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseDelayMs: 500, maxDelayMs: 30_000 };

export interface WorkerClientConfig {
  /** Rampart's base URL, e.g. https://rampart.example.com */
  serverUrl: string;
  /** The worker token from enrollment. */
  token: string;
  /** The tenant's webhook signing secret, or a function answering the current one (asked per request, so a rotation needs no restart). */
  signingSecret: string | (() => Promise<string>);
  /** Sent as the User-Agent. */
  userAgent?: string;
  retry?: Partial<RetryPolicy>;
  /** Per-request timeout for everything but the lease long poll (default 30 s). */
  timeoutMs?: number;
  /** Injected for tests; defaults to the global fetch (undici). */
  fetch?: typeof fetch;
  /** Injected for tests; defaults to an abortable setTimeout. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
}

/** 16 random bytes as base64url: 22 URL-safe characters. */
export const newNonce = (): string => randomBytes(16).toString('base64url');

export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason instanceof Error ? signal.reason : abortError());
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason instanceof Error ? signal!.reason : abortError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function abortError(message = 'The operation was aborted'): Error {
  const e = new Error(message);
  e.name = 'AbortError';
  return e;
}

/** Retry-After as seconds or an HTTP date; null when absent or unreadable. Capped at 5 minutes. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  const v = value.trim();
  const ms = /^\d+$/.test(v) ? Number(v) * 1000 : Date.parse(v) - now;
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), 300_000) : null;
}

/** Exponential backoff with full jitter: a random delay in [0, min(max, base·2^n)]. */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.round(random() * ceiling);
}

/** Turns an answer that is not 2xx into a WorkerApiError carrying the server's code. */
async function apiError(res: Response): Promise<WorkerApiError> {
  let code = `http_${res.status}`;
  let message = `The server answered HTTP ${res.status}`;
  let details: unknown;
  try {
    const body = (await res.json()) as Record<string, unknown>;
    // Rampart answers {error: code, message, details?}; accept {error: {code, message}} too.
    const err = body.error;
    if (typeof err === 'string') code = err;
    else if (err && typeof err === 'object' && typeof (err as Record<string, unknown>).code === 'string') {
      code = (err as Record<string, string>).code!;
      if (typeof (err as Record<string, unknown>).message === 'string')
        message = (err as Record<string, string>).message!;
    }
    if (typeof body.message === 'string') message = body.message;
    details = body.details;
  } catch {
    /* not JSON: keep the status line */
  }
  return new WorkerApiError(res.status, code, message.slice(0, 1_000), {
    details,
    retryAfterMs: parseRetryAfter(res.headers.get('retry-after')),
  });
}

interface SendOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Attempts for this call (default from the policy). */
  attempts?: number;
}

function baseRequester(cfg: {
  fetch?: typeof fetch;
  sleep?: WorkerClientConfig['sleep'];
  random?: () => number;
  retry?: Partial<RetryPolicy>;
  timeoutMs?: number;
  userAgent?: string;
}) {
  const doFetch = cfg.fetch ?? fetch;
  const sleep = cfg.sleep ?? abortableSleep;
  const random = cfg.random ?? Math.random;
  const policy: RetryPolicy = { ...DEFAULT_RETRY, ...cfg.retry };
  const timeoutMs = cfg.timeoutMs ?? 30_000;

  /** Runs `attempt` (which builds a fresh request each time) with the retry policy. */
  async function withRetry<T>(
    what: string,
    attempt: (signal: AbortSignal) => Promise<Response>,
    parse: (res: Response) => Promise<T>,
    opts: SendOptions = {},
  ): Promise<T> {
    const attempts = Math.max(1, opts.attempts ?? policy.attempts);
    for (let n = 0; ; n += 1) {
      if (opts.signal?.aborted) throw opts.signal.reason instanceof Error ? opts.signal.reason : abortError();
      const timeout = AbortSignal.timeout(opts.timeoutMs ?? timeoutMs);
      const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
      let failure: WorkerApiError | WorkerNetworkError;
      try {
        const res = await attempt(signal);
        if (res.ok) return await parse(res);
        failure = await apiError(res);
      } catch (e) {
        if (opts.signal?.aborted) throw opts.signal.reason instanceof Error ? opts.signal.reason : abortError();
        if (e instanceof WorkerApiError) throw e;
        failure = timeout.aborted
          ? new WorkerNetworkError(`${what}: no answer within ${Math.round((opts.timeoutMs ?? timeoutMs) / 1000)} s`, {
              cause: e,
            })
          : new WorkerNetworkError(`${what}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
      }
      if (!failure.retryable || n + 1 >= attempts) throw failure;
      const wait =
        failure instanceof WorkerApiError && failure.retryAfterMs !== null
          ? failure.retryAfterMs
          : backoffDelay(n, policy, random);
      await sleep(wait, opts.signal);
    }
  }

  const headers = (extra: Record<string, string>) => ({
    ...(cfg.userAgent ? { 'user-agent': cfg.userAgent } : {}),
    ...extra,
  });
  return { withRetry, doFetch, headers };
}

/** Resolves `path` under the server's base URL (a base with a path prefix keeps it). */
export function apiUrl(serverUrl: string, path: string): string {
  const base = serverUrl.endsWith('/') ? serverUrl : `${serverUrl}/`;
  return new URL(path.replace(/^\//, ''), base).toString();
}

export function validateServerUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error(`Not a URL: ${JSON.stringify(raw)}; give the server's address such as https://rampart.example.com`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:')
    throw new Error(`The server URL must be http(s), not ${u.protocol}`);
  if (u.username || u.password) throw new Error('The server URL must not carry credentials');
  u.search = '';
  u.hash = '';
  return u.toString().replace(/\/$/, '');
}

/** Public enrollment: trades a one-time code for a worker token (shown once). */
export async function enrollWorker(
  input: { serverUrl: string; code: string; name: string; platform: string; version: string },
  opts: Pick<WorkerClientConfig, 'fetch' | 'sleep' | 'random' | 'retry' | 'timeoutMs' | 'userAgent'> & {
    signal?: AbortSignal;
  } = {},
): Promise<EnrollResult> {
  const { withRetry, doFetch, headers } = baseRequester(opts);
  const body = JSON.stringify({ code: input.code, name: input.name, platform: input.platform, version: input.version });
  return withRetry(
    'enroll',
    (signal) =>
      doFetch(apiUrl(input.serverUrl, `${WORKER_API_PREFIX}/enroll`), {
        method: 'POST',
        body,
        headers: headers({ 'content-type': 'application/json' }),
        signal,
      }),
    async (res) => (await res.json()) as EnrollResult,
    { ...(opts.signal ? { signal: opts.signal } : {}), attempts: 3 },
  );
}

export interface UploadInput {
  scanId: string;
  leaseToken: string;
  /** The report file on disk. */
  path: string;
  size: number;
  sha256: string;
  format?: ReportFormat;
  contentType?: string;
  fileName?: string;
}

export function createWorkerClient(cfg: WorkerClientConfig) {
  const serverUrl = validateServerUrl(cfg.serverUrl);
  const { withRetry, doFetch, headers } = baseRequester(cfg);
  const secretOf =
    typeof cfg.signingSecret === 'function' ? cfg.signingSecret : async () => cfg.signingSecret as string;

  /** A signed POST; the envelope (sentAt, nonce) and signature are made afresh for every attempt. */
  async function signed<T>(
    path: string,
    payload: Record<string, unknown>,
    opts: SendOptions = {},
    parse: (res: Response) => Promise<T> = async (res) => (await res.json()) as T,
  ): Promise<T> {
    return withRetry(
      path,
      async (signal) => {
        const secret = await secretOf();
        const body = JSON.stringify({ ...payload, sentAt: new Date().toISOString(), nonce: newNonce() });
        return doFetch(apiUrl(serverUrl, `${WORKER_API_PREFIX}/${path}`), {
          method: 'POST',
          body,
          headers: headers({
            'content-type': 'application/json',
            authorization: `Bearer ${cfg.token}`,
            'x-rampart-signature': signBody(secret, body),
          }),
          signal,
        });
      },
      parse,
      opts,
    );
  }

  /**
   * Where to PUT a report. Built-in storage URLs are Rampart's own (under PUBLIC_BASE_URL); they
   * are sent to the server URL this worker is configured with, which is how it reaches Rampart
   * (the public name may not resolve from inside the network the worker runs in).
   */
  function uploadTarget(init: InitUploadResult): string {
    if (init.storage !== 'builtin') return init.url;
    const u = new URL(init.url);
    return apiUrl(serverUrl, `${u.pathname}${u.search}`);
  }

  return {
    serverUrl,

    /** Long poll for a scan of one of `kinds`; null when none came within waitSeconds. */
    async lease(
      kinds: readonly ScanKind[],
      opts: { waitSeconds?: number; signal?: AbortSignal } = {},
    ): Promise<Lease | null> {
      const waitSeconds = Math.min(25, Math.max(0, Math.floor(opts.waitSeconds ?? 25)));
      const res = await signed<{ lease: Lease | null }>(
        'lease',
        { kinds, waitSeconds },
        { timeoutMs: (waitSeconds + 15) * 1000, ...(opts.signal ? { signal: opts.signal } : {}) },
      );
      return res.lease;
    },

    heartbeat(
      leases: HeldLease[] = [],
      opts: { version?: string; signal?: AbortSignal } = {},
    ): Promise<HeartbeatResult> {
      return signed<HeartbeatResult>(
        'heartbeat',
        {
          ...(opts.version ? { version: opts.version } : {}),
          ...(leases.length ? { leases: leases.slice(0, 64) } : {}),
        },
        opts.signal ? { signal: opts.signal } : {},
      );
    },

    progress(
      scanId: string,
      leaseToken: string,
      percent: number,
      message?: string,
      opts: { signal?: AbortSignal } = {},
    ): Promise<ProgressResult> {
      const p = Math.min(100, Math.max(0, Math.round(percent * 10) / 10));
      return signed(
        `scans/${encodeURIComponent(scanId)}/progress`,
        { leaseToken, percent: p, ...(message ? { message: message.slice(0, 500) } : {}) },
        { attempts: 2, ...(opts.signal ? { signal: opts.signal } : {}) },
      );
    },

    /** Out-of-band callbacks the server received for a leased template scan, after the id `after`. */
    interactions(
      scanId: string,
      leaseToken: string,
      after: string,
      opts: { signal?: AbortSignal } = {},
    ): Promise<InteractionsResult> {
      return signed(
        `scans/${encodeURIComponent(scanId)}/interactions`,
        { leaseToken, after },
        { attempts: 2, ...(opts.signal ? { signal: opts.signal } : {}) },
      );
    },

    release(scanId: string, leaseToken: string, reason?: string): Promise<OkResult> {
      return signed(
        `scans/${encodeURIComponent(scanId)}/release`,
        { leaseToken, ...(reason ? { reason: reason.slice(0, 500) } : {}) },
        { attempts: 3 },
      );
    },

    fail(scanId: string, leaseToken: string, error: string, retryable: boolean): Promise<FailResult> {
      return signed(`scans/${encodeURIComponent(scanId)}/fail`, {
        leaseToken,
        error: error.trim().slice(0, 2_000) || 'The scanner failed',
        retryable,
      });
    },

    /**
     * The uploaded image archive of a leased container scan, written to `dest` and checked against
     * the digest the server names (X-Rampart-Sha256). A mismatch or a cut-off download leaves no file.
     */
    async downloadArchive(
      scanId: string,
      leaseToken: string,
      dest: string,
      opts: { signal?: AbortSignal } = {},
    ): Promise<{ path: string; size: number; sha256: string }> {
      return signed(
        `scans/${encodeURIComponent(scanId)}/archive`,
        { leaseToken },
        // Large archives: the timeout covers the whole transfer.
        { timeoutMs: 30 * 60_000, attempts: 3, ...(opts.signal ? { signal: opts.signal } : {}) },
        async (res) => {
          const expected = res.headers.get('x-rampart-sha256')?.toLowerCase() ?? '';
          if (!res.body) throw new Error('The server sent no archive bytes');
          const hash = createHash('sha256');
          let size = 0;
          const tap = new Transform({
            transform(chunk: Buffer, _enc, cb) {
              hash.update(chunk);
              size += chunk.length;
              cb(null, chunk);
            },
          });
          try {
            await pipeline(
              Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>),
              tap,
              createWriteStream(dest),
            );
          } catch (e) {
            await rm(dest, { force: true });
            throw e;
          }
          const sha256 = hash.digest('hex');
          if (expected && sha256 !== expected) {
            await rm(dest, { force: true });
            throw new WorkerApiError(
              502,
              'archive_mismatch',
              `The downloaded archive's SHA-256 is ${sha256}, not the ${expected} the server named`,
            );
          }
          return { path: dest, size, sha256 };
        },
      );
    },

    /** Two-phase upload: init (declares size and hash) → PUT with exactly the returned headers → finalize. */
    async uploadReport(input: UploadInput, opts: { signal?: AbortSignal } = {}): Promise<FinalizeResult> {
      const sendOpts = opts.signal ? { signal: opts.signal } : {};
      const init = await signed<InitUploadResult>(
        'report/init',
        {
          scanId: input.scanId,
          leaseToken: input.leaseToken,
          size: input.size,
          sha256: input.sha256,
          ...(input.contentType ? { contentType: input.contentType } : {}),
          ...(input.format ? { format: input.format } : {}),
          ...(input.fileName ? { fileName: input.fileName } : {}),
        },
        sendOpts,
      );
      const target = uploadTarget(init);
      // fetch sets Content-Length from the file-backed Blob (the same number init declared);
      // every other header goes as given, since a presigned URL signs them.
      const putHeaders: Record<string, string> = {};
      for (const [k, v] of Object.entries(init.headers))
        if (!['content-length', 'host'].includes(k.toLowerCase())) putHeaders[k] = v;
      await withRetry(
        'report upload',
        async (signal) => {
          const blob = await openAsBlob(input.path);
          if (blob.size !== input.size)
            throw new Error(`The report file changed size (${blob.size} bytes, declared ${input.size})`);
          return doFetch(target, { method: init.method, body: blob, headers: headers(putHeaders), signal });
        },
        async (res) => {
          await res.arrayBuffer().catch(() => undefined);
          return true;
        },
        { timeoutMs: Math.max(60_000, Math.ceil(input.size / 1_000_000) * 10_000), ...sendOpts },
      );
      return signed<FinalizeResult>(
        'report/finalize',
        { uploadId: init.uploadId, leaseToken: input.leaseToken },
        sendOpts,
      );
    },
  };
}

export type WorkerClient = ReturnType<typeof createWorkerClient>;
