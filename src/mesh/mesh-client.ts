// Outbound mesh client (docs/mesh.md §6).
//
// One logical call = one body (serialised once, the same bytes on every attempt) and one request id
// (`x-svc-request-id`, reused on every attempt). Each attempt takes a fresh timestamp from the clock
// and is signed again over the logical path. Retries: network errors, timeouts, 5xx (520–527
// included) and 429, with capped exponential backoff and full jitter, or the peer's Retry-After.
// Other answers are final. Every attempt is handed to recordAttempt exactly once.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../lib/clock.ts';
import type { createPeerRegistry } from './mesh-peers.ts';
import { DISPATCH_PATH, formatTimestamp, signDispatch } from './mesh-signing.ts';

export interface OutboundAttempt {
  peer: string;
  flow: string;
  eventType: string | null;
  severity: string | null;
  requestId: string;
  attempt: number;
  ok: boolean;
  status: number | null;
  error: string | null;
  response: unknown;
  durationMs: number;
  url: string;
}

export interface MeshCallOptions {
  requestId?: string;
  eventType?: string;
  severity?: string;
  maxAttempts?: number;
  timeoutMs?: number;
}

export interface MeshCallResult {
  ok: boolean;
  status: number | null;
  body: unknown;
  requestId: string;
  attempts: number;
  durationMs: number;
  error: string | null;
  routeNotDeployed: boolean;
  headers: Record<string, string>;
}

export interface MeshClientDeps {
  selfName: string;
  peers: ReturnType<typeof createPeerRegistry>;
  clock: Clock;
  recordAttempt(a: OutboundAttempt): Promise<void>;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** default 4 */
  maxAttempts?: number;
  /** default 250 */
  baseDelayMs?: number;
  /** default 5000 */
  maxDelayMs?: number;
  /** default 10000 */
  timeoutMs?: number;
  newRequestId?: () => string;
}

export interface MeshClient {
  call(
    peerName: string,
    flow: string,
    payload: Record<string, unknown>,
    opts?: MeshCallOptions,
  ): Promise<MeshCallResult>;
}

/** Characters of a non-JSON answer kept in attempt records and results. */
export const RESPONSE_EXCERPT_CHARS = 500;

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function isJsonContentType(value: string | null): boolean {
  if (!value) return false;
  const media = value.split(';')[0]!.trim().toLowerCase();
  return media === 'application/json' || /^application\/[^/]+\+json$/.test(media);
}

const isRetryableStatus = (status: number): boolean => status >= 500 || status === 429;

/** Delay asked for by a Retry-After header, in ms: delay-seconds or an HTTP-date. Null when absent or unusable. */
export function parseRetryAfter(value: string | null, now: Date): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  // An HTTP-date always names a weekday and GMT; Date.parse alone would take "1.5" or "2" as dates.
  if (!/[a-z]{3}/i.test(v)) return null;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now.getTime());
}

/** A URL fit to record or print: no userinfo, query values replaced (they may carry gateway keys); '' if unparseable. */
export function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    url.username = '';
    url.password = '';
    if (url.search) {
      const redacted = new URLSearchParams();
      for (const key of url.searchParams.keys()) redacted.append(key, 'redacted');
      url.search = redacted.toString();
    }
    return url.toString();
  } catch {
    return '';
  }
}

function errorCause(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const text =
    (typeof cause?.code === 'string' && cause.code) ||
    (typeof cause?.message === 'string' && cause.message) ||
    (err instanceof Error ? err.message : String(err));
  return text.slice(0, 200);
}

interface AttemptOutcome {
  ok: boolean;
  status: number | null;
  error: string | null;
  body: unknown;
  headers: Record<string, string>;
  routeNotDeployed: boolean;
  retryable: boolean;
  retryAfterMs: number | null;
}

export function createMeshClient(deps: MeshClientDeps): MeshClient {
  const doFetch = deps.fetch ?? fetch;
  const sleep = deps.sleep ?? defaultSleep;
  const random = deps.random ?? Math.random;
  const baseDelayMs = deps.baseDelayMs ?? 250;
  const maxDelayMs = deps.maxDelayMs ?? 5000;
  const newRequestId = deps.newRequestId ?? randomUUID;

  async function record(a: OutboundAttempt): Promise<void> {
    try {
      await deps.recordAttempt(a);
    } catch {
      // Recording must never break a call.
    }
  }

  async function attemptOnce(
    url: string,
    headers: Record<string, string>,
    body: Uint8Array<ArrayBuffer>,
    timeoutMs: number,
  ): Promise<AttemptOutcome> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    try {
      // The timeout covers the whole exchange, body included. Redirects are not followed: a signed
      // POST must not be replayed elsewhere (or turned into a GET).
      const res = await doFetch(url, { method: 'POST', headers, body, signal: controller.signal, redirect: 'manual' });
      const text = await res.text();
      const resHeaders: Record<string, string> = {};
      res.headers.forEach((value, key) => {
        resHeaders[key] = value;
      });
      const json = isJsonContentType(res.headers.get('content-type'));
      let parsed: unknown = undefined;
      let parseFailed = false;
      if (json) {
        try {
          parsed = JSON.parse(text);
        } catch {
          parseFailed = true;
        }
      }
      const excerpt = text.slice(0, RESPONSE_EXCERPT_CHARS);
      const shown = json && !parseFailed ? parsed : excerpt;
      const base = { status: res.status, headers: resHeaders, body: shown, retryAfterMs: null };
      if (res.status >= 200 && res.status < 300) {
        if (!json) return { ...base, ok: false, error: 'route_not_deployed', routeNotDeployed: true, retryable: false };
        if (parseFailed)
          return { ...base, ok: false, error: 'invalid_response', routeNotDeployed: false, retryable: false };
        return { ...base, ok: true, error: null, routeNotDeployed: false, retryable: false };
      }
      const peerCode =
        parsed !== null && typeof parsed === 'object' && typeof (parsed as { error?: unknown }).error === 'string'
          ? (parsed as { error: string }).error.slice(0, 100) || null
          : null;
      const retryable = isRetryableStatus(res.status);
      const retryAfter = retryable ? res.headers.get('retry-after') : null;
      return {
        ...base,
        ok: false,
        error: peerCode ?? `http_${res.status}`,
        routeNotDeployed: false,
        retryable,
        retryAfterMs: retryAfter === null ? null : parseRetryAfter(retryAfter, deps.clock.now()),
      };
    } catch (err) {
      return {
        ok: false,
        status: null,
        error: timedOut ? 'timeout' : 'network_error',
        body: timedOut ? null : { cause: errorCause(err) },
        headers: {},
        routeNotDeployed: false,
        retryable: true,
        retryAfterMs: null,
      };
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async call(peerName, flow, payload, opts = {}) {
      const started = performance.now();
      const requestId = opts.requestId ?? newRequestId();
      const maxAttempts = Math.max(1, Math.floor(opts.maxAttempts ?? deps.maxAttempts ?? 4));
      const timeoutMs = Math.max(1, opts.timeoutMs ?? deps.timeoutMs ?? 10_000);
      const common = { flow, eventType: opts.eventType ?? null, severity: opts.severity ?? null, requestId };
      const peer = deps.peers.byName(peerName);

      if (!peer || !peer.transportUrl || !peer.secretTo) {
        await record({
          ...common,
          peer: peer?.name ?? peerName,
          attempt: 1,
          ok: false,
          status: null,
          error: 'peer_not_configured',
          response: null,
          durationMs: 0,
          url: peer?.transportUrl ? redactUrl(peer.transportUrl) : '',
        });
        return {
          ok: false,
          status: null,
          body: null,
          requestId,
          attempts: 1,
          durationMs: Math.round(performance.now() - started),
          error: 'peer_not_configured',
          routeNotDeployed: false,
          headers: {},
        };
      }

      const url = peer.transportUrl;
      const recordedUrl = redactUrl(url);
      const secret = peer.secretTo;
      const bodyText = JSON.stringify({ flow, payload });
      const bodyBytes = new TextEncoder().encode(bodyText); // signed and sent as these exact bytes

      let outcome: AttemptOutcome | undefined;
      let attempt = 0;
      while (attempt < maxAttempts) {
        attempt += 1;
        const timestamp = formatTimestamp(deps.clock.now());
        const signature = signDispatch(secret, {
          caller: deps.selfName,
          timestamp,
          method: 'POST',
          path: DISPATCH_PATH,
          body: bodyBytes,
        });
        const headers = {
          'content-type': 'application/json',
          'x-svc-caller': deps.selfName,
          'x-svc-timestamp': timestamp,
          'x-svc-signature': signature,
          'x-svc-request-id': requestId,
        };
        const attemptStarted = performance.now();
        outcome = await attemptOnce(url, headers, bodyBytes, timeoutMs);
        await record({
          ...common,
          peer: peer.name,
          attempt,
          ok: outcome.ok,
          status: outcome.status,
          error: outcome.error,
          response: outcome.body ?? null,
          durationMs: Math.round(performance.now() - attemptStarted),
          url: recordedUrl,
        });
        if (!outcome.retryable || attempt >= maxAttempts) break;
        const computed = random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
        const delay = outcome.retryAfterMs !== null ? Math.min(outcome.retryAfterMs, maxDelayMs * 4) : computed;
        await sleep(Math.max(0, Math.round(delay)));
      }

      const last = outcome!;
      return {
        ok: last.ok,
        status: last.status,
        body: last.body ?? null,
        requestId,
        attempts: attempt,
        durationMs: Math.round(performance.now() - started),
        error: last.error,
        routeNotDeployed: last.routeNotDeployed,
        headers: last.headers,
      };
    },
  };
}
