// The HTTP client every web-facing scanner (template, webapp, edge) sends its requests through.
// It owns the rules a scanner must not get wrong on its own: nothing outside the scan's scope is
// contacted (a redirect off scope is returned, not followed), a request rate and a concurrency cap
// per scan, timeouts, a body cap, cancellation, and self-signed targets readable (the scanner
// judges certificates itself; it must still see the page behind a bad one).
import http from 'node:http';
import https from 'node:https';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { guardedAgents, type EgressPolicy } from '../../../lib/egress.ts';

export interface HttpExchange {
  method: string;
  /** The URL finally answered (after in-scope redirects). */
  url: string;
  status: number;
  /** Header names lower-cased; repeated headers joined with ", " (set-cookie: see `setCookies`). */
  headers: Record<string, string>;
  setCookies: string[];
  /** The response head as sent: status line and headers, CRLF-separated (nuclei's `header` part). */
  head: string;
  body: Buffer;
  /** True when the body was longer than the cap and cut. */
  truncated: boolean;
  /** In-scope redirects followed, in order (the URLs redirected from). */
  redirects: string[];
  /** A redirect that was not followed because it left the scope. */
  blockedRedirect?: string;
  durationMs: number;
  /** The request as sent, for evidence (headers and the first 2 KiB of the body). */
  requestText: string;
  /** The address the answer came from. */
  remoteAddress?: string;
  /** True when the connection closed before the whole body arrived (kept with `keepPartial`). */
  incomplete?: boolean;
  /** With `keepHops`: the redirect answers before this one, first first. */
  hops?: HttpHop[];
}

/** One answer of a redirect chain. */
export type HttpHop = Omit<HttpExchange, 'hops' | 'redirects' | 'blockedRedirect'>;

/** Cookies kept across requests (and redirect hops) by a caller, e.g. a template's cookie jar. */
export interface CookieStore {
  /** The Cookie header value for a request to this URL, if any. */
  header(url: URL): string | undefined;
  store(url: URL, setCookies: readonly string[]): void;
}

export interface HttpRequest {
  url: string | URL;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Redirects to follow while they stay in scope (default 0: return the 3xx). */
  maxRedirects?: number;
  /** Overrides the client's body cap for this request. */
  maxBodyBytes?: number;
  /**
   * The request target (path and query) sent as written instead of the URL's normalised form, for
   * the first hop; it must start with `/` and hold no whitespace or control characters.
   */
  target?: string;
  /** A body cut short by the peer (less than its Content-Length) is kept, flagged `incomplete`. */
  keepPartial?: boolean;
  /** Keep every answer of a redirect chain (`hops`), not only the last. */
  keepHops?: boolean;
  cookies?: CookieStore;
}

export interface ScopedHttpOptions {
  /** True for a URL the scan may contact. Checked for every request and every redirect hop. */
  inScope: (url: URL) => boolean;
  signal: AbortSignal;
  /** Per request, connect to last byte (default 10 s). */
  timeoutMs?: number;
  /** Response body cap (default 1 MiB); the rest is discarded unread. */
  maxBodyBytes?: number;
  /** Requests started per second (default 150, nuclei's default). */
  ratePerSecond?: number;
  /** Requests in flight at once (default 25). */
  concurrency?: number;
  userAgent?: string;
  /** The hosted worker's policy: every connection (every redirect hop) is resolved and checked. */
  egress?: EgressPolicy;
}

/** A request the scope forbids; scanners treat it as a bug in their own URL building. */
export class OutOfScopeError extends Error {
  readonly url: string;
  constructor(url: string) {
    super(`Refusing to contact ${url}: it is outside the scan's scope`);
    this.name = 'OutOfScopeError';
    this.url = url;
  }
}

/** A request that failed below HTTP (refused, reset, timed out, bad TLS handshake). */
export class HttpTransportError extends Error {
  readonly code: string;
  constructor(message: string, code: string, opts: { cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.name = 'HttpTransportError';
    this.code = code;
  }
}

export const DEFAULT_USER_AGENT = 'Mozilla/5.0 (compatible; rampart-worker; +https://rampart.invalid/scanner)';

/** Same scheme, host and port as `base`: the default scope of a scan of one web origin. */
export function sameOrigin(base: string | URL): (url: URL) => boolean {
  const origin = new URL(base).origin;
  return (url) => url.origin === origin;
}

/** Same host (any port and http/https): the scope of a scan of a host or domain asset. */
export function sameHost(host: string): (url: URL) => boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return (url) =>
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1') === h;
}

/** Requests a scan may have in flight from its start; more are allowed as shown below. */
const START_CONCURRENCY = 12;
/** How often the cap may grow, and the event-loop utilisation under which it does. */
const GROW_EVERY_MS = 5;
const GROW_BELOW_UTILISATION = 0.9;
/** The shortest wait a timer can make. */
const TIMER_RESOLUTION_MS = 1;

/**
 * Spaces request starts `1000 / rate` ms apart and caps how many run at once. The cap starts at
 * START_CONCURRENCY and doubles, up to `concurrency`, while requests wait for a slot and this
 * process has CPU to spare: then the target's latency, not our own work, limits the rate, and more
 * requests in flight help. Against a fast target (loopback, a LAN) the process is the limit, the
 * cap stays low, and a scan reuses a few keep-alive connections instead of opening `concurrency`
 * of them: each new connection costs more CPU than a request on an open one, and is one more the
 * target has to accept.
 */
export function createPacer(
  ratePerSecond: number,
  concurrency: number,
  signal: AbortSignal,
  /** The clock request starts are spaced by (tests give a fake one). */
  clock: () => number = () => performance.now(),
) {
  const gap = 1000 / ratePerSecond;
  let next = 0;
  let active = 0;
  let limit = Math.min(START_CONCURRENCY, concurrency);
  let checkedAt = performance.now();
  let loopBefore = performance.eventLoopUtilization();
  const waiting: (() => void)[] = [];
  const abortError = () => signal.reason ?? new DOMException('The scan was cancelled', 'AbortError');
  /** Raises the cap when requests wait and the event loop was mostly idle since the last look. */
  const maybeGrow = () => {
    const now = performance.now();
    if (limit >= concurrency || now - checkedAt < GROW_EVERY_MS) return;
    const loopNow = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(loopNow, loopBefore).utilization;
    checkedAt = now;
    loopBefore = loopNow;
    if (busy >= GROW_BELOW_UTILISATION) return;
    limit = Math.min(concurrency, limit * 2);
    while (waiting.length && active < limit) {
      active += 1; // taken on behalf of the waiter woken here
      waiting.shift()!();
    }
  };
  // While requests wait, look again every GROW_EVERY_MS: a slow target may not answer for seconds.
  let growTimer: NodeJS.Timeout | null = null;
  const scheduleGrow = () => {
    if (growTimer || limit >= concurrency) return;
    growTimer = setTimeout(() => {
      growTimer = null;
      maybeGrow();
      if (waiting.length) scheduleGrow();
    }, GROW_EVERY_MS);
    growTimer.unref();
  };
  return {
    async acquire(): Promise<void> {
      if (signal.aborted) throw abortError();
      if (active >= limit) maybeGrow();
      if (active >= limit) {
        scheduleGrow();
        await new Promise<void>((resolve) => waiting.push(resolve));
      } else active += 1;
      // Fractional milliseconds: with a whole-millisecond clock every second request of the same
      // millisecond looked due in the future, and a timer cannot fire sooner than 1 ms, so a scan
      // with no limit stalled a millisecond at a time with nothing in flight. A start due less than
      // a timer's resolution from now goes now; `next` still advances by `gap` from its due time, so
      // the average rate is kept and no start is more than 1 ms early.
      const now = clock();
      const at = Math.max(now, next);
      next = at + gap;
      if (at - now >= TIMER_RESOLUTION_MS) await new Promise((r) => setTimeout(r, at - now));
      if (signal.aborted) {
        this.release();
        throw abortError();
      }
    },
    release(): void {
      // A waiter inherits the finished request's slot, so `active` stays as it is.
      const wake = waiting.shift();
      if (wake) wake();
      else active -= 1;
    },
  };
}

function decoded(res: http.IncomingMessage): Readable {
  const enc = String(res.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  if (enc === 'gzip' || enc === 'x-gzip') return res.pipe(createGunzip());
  if (enc === 'deflate') return res.pipe(createInflate());
  if (enc === 'br') return res.pipe(createBrotliDecompress());
  return res;
}

export function createScopedHttp(opts: ScopedHttpOptions) {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const maxBody = opts.maxBodyBytes ?? 1024 * 1024;
  const concurrency = opts.concurrency ?? 25;
  const pace = createPacer(opts.ratePerSecond ?? 150, concurrency, opts.signal);
  const userAgent = opts.userAgent ?? DEFAULT_USER_AGENT;
  // Keep-alive agents: template and crawl scans send thousands of small requests to one origin.
  const agentOptions = {
    http: { keepAlive: true, maxSockets: concurrency },
    https: { keepAlive: true, maxSockets: concurrency, rejectUnauthorized: false },
  };
  const agents = opts.egress
    ? guardedAgents(opts.egress, agentOptions)
    : { http: new http.Agent(agentOptions.http), https: new https.Agent(agentOptions.https) };
  let sent = 0;
  // Requests under way, ended together when the scan is cancelled.
  const inFlight = new Set<http.ClientRequest>();
  const onAbort = () => {
    const reason = opts.signal.reason ?? new DOMException('The scan was cancelled', 'AbortError');
    for (const req of inFlight) req.destroy(reason instanceof Error ? reason : new Error(String(reason)));
  };
  opts.signal.addEventListener('abort', onAbort, { once: true });

  type Once = { target?: string | undefined; keepPartial?: boolean | undefined };
  function once(
    url: URL,
    method: string,
    headers: Record<string, string>,
    body: Buffer | undefined,
    cap: number,
    o: Once = {},
  ): Promise<Omit<HttpExchange, 'redirects' | 'blockedRedirect' | 'durationMs' | 'url' | 'method'>> {
    const isHttps = url.protocol === 'https:';
    const reqHeaders: Record<string, string> = {
      'user-agent': userAgent,
      accept: '*/*',
      'accept-encoding': 'gzip, deflate, br',
      ...lower(headers),
    };
    if (body && reqHeaders['content-length'] === undefined) reqHeaders['content-length'] = String(body.length);
    const path = o.target ?? `${url.pathname}${url.search}`;
    const requestText = `${method} ${path} HTTP/1.1\r\nHost: ${reqHeaders.host ?? url.host}\r\n${Object.entries(
      reqHeaders,
    )
      .filter(([k]) => k !== 'host')
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n')}\r\n\r\n${body ? body.subarray(0, 2048).toString('utf8') : ''}`;
    return new Promise((resolve, reject) => {
      // Plain options rather than the URL (no conversion per request), and one deadline for the
      // whole exchange rather than a socket idle timer as well: an idle spell as long as the
      // deadline can only end after it. Cancellation goes through one listener for the client.
      const req = (isHttps ? https : http).request({
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: url.port || (isHttps ? 443 : 80),
        method,
        path,
        headers: reqHeaders,
        agent: isHttps ? agents.https : agents.http,
        ...(isHttps ? { servername: /^[\d.]+$|:/.test(url.hostname) ? undefined : url.hostname } : {}),
      });
      inFlight.add(req);
      const deadline = setTimeout(
        () =>
          req.destroy(
            new HttpTransportError(`No complete answer from ${url.origin} within ${timeoutMs} ms`, 'timeout'),
          ),
        timeoutMs,
      );
      req.once('close', () => inFlight.delete(req));
      req.on('error', (e) => {
        clearTimeout(deadline);
        if (e instanceof HttpTransportError || opts.signal.aborted)
          return reject(opts.signal.aborted ? (opts.signal.reason ?? e) : e);
        const code = (e as NodeJS.ErrnoException).code ?? 'network';
        reject(
          new HttpTransportError(
            `${method} ${url.origin}${url.pathname} failed: ${code === 'ECONNREFUSED' ? 'connection refused' : e.message}`,
            code,
            { cause: e },
          ),
        );
      });
      req.on('response', (res) => {
        // Read now: a kept-alive socket goes back to the pool before the body is done.
        const remoteAddress = res.socket?.remoteAddress;
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        const stream = decoded(res);
        let incomplete = false;
        const finish = () => {
          clearTimeout(deadline);
          const headersOut: Record<string, string> = {};
          const setCookies: string[] = [];
          const headLines = [`HTTP/${res.httpVersion} ${res.statusCode} ${res.statusMessage ?? ''}`.trimEnd()];
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            const name = res.rawHeaders[i]!;
            const value = res.rawHeaders[i + 1]!;
            headLines.push(`${name}: ${value}`);
            const key = name.toLowerCase();
            if (key === 'set-cookie') setCookies.push(value);
            else headersOut[key] = key in headersOut ? `${headersOut[key]}, ${value}` : value;
          }
          resolve({
            status: res.statusCode ?? 0,
            headers: headersOut,
            setCookies,
            head: headLines.join('\r\n'),
            body: Buffer.concat(chunks),
            truncated,
            requestText,
            ...(incomplete ? { incomplete } : {}),
            ...(remoteAddress ? { remoteAddress } : {}),
          });
        };
        stream.on('data', (c: Buffer) => {
          if (truncated) return;
          const room = cap - size;
          if (c.length > room) {
            if (room > 0) chunks.push(c.subarray(0, room));
            size = cap;
            truncated = true;
            // Enough read: drop the connection rather than download the rest.
            res.destroy();
            finish();
            return;
          }
          chunks.push(c);
          size += c.length;
        });
        stream.on('end', () => !truncated && finish());
        let settled = false;
        const cutShort = (e: Error) => {
          if (truncated || settled) return;
          settled = true;
          if (o.keepPartial) {
            incomplete = true;
            return finish();
          }
          clearTimeout(deadline);
          reject(e);
        };
        stream.on('error', (e) => {
          if (truncated || settled) return;
          if (o.keepPartial && stream === res) return cutShort(e);
          clearTimeout(deadline);
          // A body that fails to decompress is still an answer: keep what arrived.
          if ((e as NodeJS.ErrnoException).code?.startsWith('Z_')) return finish();
          reject(
            new HttpTransportError(`Reading the answer from ${url.origin} failed: ${e.message}`, 'body', { cause: e }),
          );
        });
        res.on('aborted', () =>
          cutShort(new HttpTransportError(`${url.origin} closed the connection mid-answer`, 'aborted')),
        );
      });
      req.end(body);
    });
  }

  return {
    /** Requests started so far (for progress and rate figures). */
    get sent(): number {
      return sent;
    },
    inScope: opts.inScope,
    /** The policy this client's connections go through (raw TCP requests of a scan reuse it). */
    egress: opts.egress,
    async request(r: HttpRequest): Promise<HttpExchange> {
      let url = new URL(r.url);
      if (!opts.inScope(url)) throw new OutOfScopeError(url.href);
      const method = (r.method ?? 'GET').toUpperCase();
      const body = r.body === undefined ? undefined : Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body, 'utf8');
      const redirects: string[] = [];
      const hops: HttpHop[] = [];
      const maxRedirects = r.maxRedirects ?? 0;
      const started = performance.now();
      let currentMethod = method;
      let currentBody = body;
      for (;;) {
        await pace.acquire();
        let res;
        const hopStarted = performance.now();
        try {
          sent += 1;
          let headers = r.headers ?? {};
          const cookie = r.cookies?.header(url);
          if (cookie) {
            // A request's own Cookie header comes first, the stored cookies after it (Go's jar).
            const own = Object.keys(headers).find((k) => k.toLowerCase() === 'cookie');
            const rest = Object.fromEntries(Object.entries(headers).filter(([k]) => k !== own));
            headers = { ...rest, cookie: own ? `${headers[own]}; ${cookie}` : cookie };
          }
          res = await once(url, currentMethod, headers, currentBody, r.maxBodyBytes ?? maxBody, {
            target: redirects.length ? undefined : r.target,
            keepPartial: r.keepPartial,
          });
        } finally {
          pace.release();
        }
        if (res.setCookies.length) r.cookies?.store(url, res.setCookies);
        // With a written target, the first answer's URL keeps it as sent.
        const hopUrl = !redirects.length && r.target ? `${url.origin}${r.target}` : url.href;
        const done = (extra: Partial<HttpExchange> = {}): HttpExchange => ({
          ...res,
          method: currentMethod,
          url: hopUrl,
          redirects,
          durationMs: Math.round(performance.now() - started),
          ...(r.keepHops ? { hops } : {}),
          ...extra,
        });
        const location = res.status >= 300 && res.status < 400 ? res.headers.location : undefined;
        if (!location || redirects.length >= maxRedirects) return done();
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          return done();
        }
        if (!opts.inScope(next)) return done({ blockedRedirect: next.href });
        if (r.keepHops)
          hops.push({
            ...res,
            method: currentMethod,
            url: hopUrl,
            durationMs: Math.round(performance.now() - hopStarted),
          });
        redirects.push(hopUrl);
        // 303 (and 301/302 after a POST, as browsers do) turn into a GET without a body.
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && currentMethod === 'POST')) {
          currentMethod = 'GET';
          currentBody = undefined;
        }
        url = next;
      }
    },
    close(): void {
      opts.signal.removeEventListener('abort', onAbort);
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

export type ScopedHttp = ReturnType<typeof createScopedHttp>;

function lower(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}
