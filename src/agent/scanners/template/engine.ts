// Runs validated templates against one base URL through the scoped HTTP client: each template's
// requests in order, matchers and extractors on every answer, one result per fired named matcher
// (nuclei's rule). Identical GETs without a body (same URL, headers and redirect budget) are sent
// once per scan and shared: many templates probe the same few paths, so this saves requests
// without changing any answer a template sees.
import { resolveCname } from 'node:dns/promises';
import { isIP } from 'node:net';
import { posix } from 'node:path';
import type { HttpExchange, HttpHop, ScopedHttp } from '../http/scoped-http.ts';
import { CookieJar } from './cookies.ts';
import { executeTemplate } from './execute-http.ts';
import { executeNetworkBlock } from './network.ts';
import { executeSslBlock } from './ssl.ts';
import type { RequestBlock, Template } from './model.ts';
import type { OobClient, OobInteraction } from './oob.ts';
import { resultsOf, runOperators } from './operators.ts';
import type { BuiltRequest } from './raw.ts';
import { responseData } from './response.ts';

/** Responses kept for sharing, in body bytes; past this, answers are still shared while in flight. */
const CACHE_BYTES = 64 * 1024 * 1024;

/** Cookies a shared answer set, into the jar of a template that reads it. */
function keepCookies(ex: HttpExchange, jar: CookieJar): HttpExchange {
  for (const hop of [...(ex.hops ?? []), ex]) if (hop.setCookies.length) jar.store(new URL(hop.url), hop.setCookies);
  return ex;
}

export interface TemplateMatch {
  template: Template;
  /** The named matcher that fired (absent for an `and` block or unnamed matchers). */
  matcher?: string;
  /** The named extractor of a result without matchers (nuclei's extractor-name). */
  extractor?: string;
  /** The URL of the answer that matched (nuclei's matched-at): a redirect hop's own URL. */
  url: string;
  exchange: HttpHop & { redirects?: string[] };
  /** The request as the template built it (for the curl line). */
  request: { method: string; url: string; headers: Record<string, string>; body?: string };
  extracted: string[];
}

export interface EngineStats {
  templates: number;
  requests: number;
  cacheHits: number;
  errors: number;
  /** The first few request failures, for the scan's details. */
  errorSamples: string[];
  /** Requests not sent because they would leave the scan's scope (self-contained templates). */
  skipped: number;
  skippedSamples: string[];
}

export interface RunTemplatesOptions {
  baseUrl: URL;
  templates: readonly Template[];
  http: ScopedHttp;
  signal: AbortSignal;
  /** Templates run at once (default 25). */
  concurrency?: number;
  onProgress?: (done: number, total: number) => void;
  /** Network template connect and read timeout (default 10 s). */
  timeoutMs?: number;
  /** CNAME lookup of the target's name (default: the system resolver). */
  resolveCname?: (host: string) => Promise<string[]>;
  /** Out-of-band callbacks (`{{interactsh-url}}`); without, requests naming it are not sent. */
  oob?: OobClient;
  /** The scan's values for names templates leave open (nuclei's -var); they override template variables. */
  variables?: Readonly<Record<string, string>>;
  /** Answers already fetched (the probe of the site's root), keyed like the engine's own cache. */
  cache?: Map<string, Promise<HttpExchange>>;
}

/** The variables of a URL as nuclei defines them (BaseURL without its trailing slash). */
export function templateVariables(base: URL): Record<string, string> {
  const scheme = base.protocol.replace(/:$/, '');
  const path = base.pathname.replace(/\/+$/, '');
  const dir = posix.dirname(path || '/');
  const host = base.hostname.replace(/^\[(.*)\]$/, '$1');
  const labels = /^[\d.]+$|:/.test(host) ? [] : host.split('.');
  const dns: Record<string, string> =
    labels.length >= 2
      ? { RDN: labels.slice(-2).join('.'), DN: labels.at(-2)!, TLD: labels.at(-1)!, SD: labels.slice(0, -2).join('.') }
      : {};
  return {
    BaseURL: `${base.origin}${path}`,
    RootURL: base.origin,
    Hostname: base.host,
    Host: base.hostname,
    Port: base.port || (scheme === 'https' ? '443' : '80'),
    Scheme: scheme,
    Path: dir === '.' || dir === '/' ? (path ? '/' : '') : dir,
    File: posix.basename(path),
    Query: '',
    Input: `${base.origin}${path}`,
    FQDN: host,
    ...dns,
  };
}

async function targetCname(host: string, resolve: (host: string) => Promise<string[]>): Promise<string | undefined> {
  const name = host.replace(/^\[(.*)\]$/, '$1');
  if (isIP(name)) return undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<string[]>((r) => (timer = setTimeout(() => r([]), 3_000)));
    return (await Promise.race([resolve(name), timeout]))[0];
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** The cache key of a shareable request, or null for one that must be sent on its own. */
export function cacheKey(
  method: string,
  url: string,
  headers: Record<string, string>,
  maxRedirects: number,
  body: string | Buffer | undefined,
): string | null {
  if (method !== 'GET' || body !== undefined) return null;
  const h = Object.entries(headers)
    .map(([k, v]) => [k.toLowerCase(), v])
    .sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
  return JSON.stringify([url, h, maxRedirects]);
}

/** Matcher names to report for one answer (legacy helper for single-answer checks): null for no result. */
export function evaluateBlock(block: RequestBlock, ex: HttpHop): { names: string[]; extracted: string[] } | null {
  const results = resultsOf(
    block,
    runOperators(block, responseData(ex), () => undefined),
  );
  if (!results.length) return null;
  return {
    names: results.flatMap((r) => (r.matcher ? [r.matcher] : [])),
    extracted: [...new Set(results.flatMap((r) => r.extracted))],
  };
}

export async function runTemplates(
  opts: RunTemplatesOptions,
): Promise<{ matches: TemplateMatch[]; stats: EngineStats }> {
  const { http, signal } = opts;
  const vars = templateVariables(opts.baseUrl);
  // nuclei's `cname` (takeover checks): the target name's CNAME, when it has one.
  const cname = await targetCname(opts.baseUrl.hostname, opts.resolveCname ?? resolveCname);
  if (cname) vars.cname = cname;
  const cache = opts.cache ?? new Map<string, Promise<HttpExchange>>();
  let cachedBytes = 0;
  const stats: EngineStats = {
    templates: opts.templates.length,
    requests: 0,
    cacheHits: 0,
    errors: 0,
    errorSamples: [],
    skipped: 0,
    skippedSamples: [],
  };
  const matches: TemplateMatch[] = [];
  const sentBefore = http.sent;

  const failed = (message: string) => {
    stats.errors += 1;
    if (stats.errorSamples.length < 5) stats.errorSamples.push(message);
  };

  /** Sends one request; a GET without a body from a template with no cookies yet may be shared. */
  function send(req: BuiltRequest, jar: CookieJar | null): Promise<HttpExchange> {
    const base = {
      url: req.url,
      method: req.method,
      headers: req.headers,
      maxRedirects: req.maxRedirects,
      target: req.target,
      keepPartial: true,
      keepHops: true,
    };
    const key =
      !jar || jar.size === 0
        ? cacheKey(req.method, `${req.url.origin}${req.target}`, req.headers, req.maxRedirects, req.body)
        : null;
    if (key === null)
      return http.request({
        ...base,
        ...(req.body !== undefined ? { body: req.body } : {}),
        ...(jar ? { cookies: jar } : {}),
      });
    const hit = cache.get(key);
    if (hit) {
      stats.cacheHits += 1;
      return hit.then((ex) => (jar ? keepCookies(ex, jar) : ex));
    }
    // A fresh jar gives the chain the cookies its own hops set, exactly as the template's empty jar would.
    const p = http.request({ ...base, cookies: new CookieJar() });
    cache.set(key, p);
    p.then(
      (ex) => {
        cachedBytes += ex.body.length + (ex.hops ?? []).reduce((n, h) => n + h.body.length, 0);
        if (cachedBytes > CACHE_BYTES) cache.delete(key);
      },
      () => undefined,
    );
    return p.then((ex) => (jar ? keepCookies(ex, jar) : ex));
  }

  // Answers waiting for callbacks, by callback id; a request reports at most once.
  const waiting = new Map<string, (i: OobInteraction) => boolean>();
  const oob = opts.oob;

  // Network and ssl blocks reach the scanned host itself, not a URL; their answers are reported
  // like an HTTP exchange with the socket's address as its URL.
  const host = opts.baseUrl.hostname.replace(/^\[(.*)\]$/, '$1');
  const socketOpts = {
    timeoutMs: opts.timeoutMs ?? 10_000,
    signal,
    ...(opts.http.egress ? { egress: opts.http.egress } : {}),
  };
  // nuclei's ssl requests on a plain-HTTP input go to 443, the TLS port, not the web port.
  const sslVars = opts.baseUrl.protocol === 'https:' ? vars : { ...vars, Port: '443' };
  const pushSocketMatch = (
    t: Template,
    method: string,
    url: string,
    r: { extracted: string[]; matcher?: string; extractor?: string },
    request: string,
    answer: string,
  ) => {
    const exchange: HttpHop = {
      method,
      url,
      status: 0,
      headers: {},
      setCookies: [],
      head: '',
      body: Buffer.from(answer, 'latin1'),
      truncated: false,
      durationMs: 0,
      requestText: request,
    };
    matches.push({
      template: t,
      url,
      exchange,
      request: { method, url, headers: {}, body: request },
      extracted: r.extracted,
      ...(r.matcher ? { matcher: r.matcher } : {}),
      ...(r.extractor ? { extractor: r.extractor } : {}),
    });
  };

  const runTemplate = (t: Template) =>
    executeTemplate(
      t,
      opts.baseUrl,
      vars,
      opts.variables ?? {},
      {
        inScope: (url) => http.inScope(url),
        send: (req, _block, jar) => send(req, jar),
        failed,
        skipped: (message) => {
          stats.skipped += 1;
          if (stats.skippedSamples.length < 5) stats.skippedSamples.push(message);
        },
        network: async (block, scope) => {
          const { results, errors } = await executeNetworkBlock(block, host, vars, scope, socketOpts);
          for (const e of errors) failed(`${t.id}: ${e}`);
          for (const r of results) pushSocketMatch(t, 'TCP', `tcp://${r.address}`, r, r.request, r.data);
          return results.length > 0;
        },
        ssl: async (block, scope) => {
          const { results, errors } = await executeSslBlock(block, host, sslVars, scope, socketOpts);
          for (const e of errors) failed(`${t.id}: ${e}`);
          for (const r of results) pushSocketMatch(t, 'TLS', `tls://${r.address}`, r, '', r.response);
          return results.length > 0;
        },
        ...(oob
          ? {
              oobCallback: () => oob.next(),
              defer: (id: string, judge: (i: OobInteraction) => boolean) => void waiting.set(id, judge),
            }
          : {}),
        result: (r) => {
          const request = {
            method: r.request.method,
            url: `${r.request.url.origin}${r.request.target}`,
            headers: r.request.headers,
            ...(r.request.body ? { body: r.request.body.toString('latin1') } : {}),
          };
          matches.push({
            template: t,
            url: r.hop.url,
            exchange: r.hop,
            request,
            extracted: r.extracted,
            ...(r.matcher ? { matcher: r.matcher } : {}),
            ...(r.extractor ? { extractor: r.extractor } : {}),
          });
        },
      },
      signal,
    );

  const queue = [...opts.templates];
  let done = 0;
  const worker = async () => {
    for (let t = queue.shift(); t; t = queue.shift()) {
      if (signal.aborted) throw signal.reason ?? new DOMException('The scan was cancelled', 'AbortError');
      await runTemplate(t);
      done += 1;
      opts.onProgress?.(done, opts.templates.length);
    }
  };
  const workers = Array.from({ length: Math.max(1, Math.min(opts.concurrency ?? 25, queue.length)) }, worker);
  const settled = await Promise.allSettled(workers);
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) throw failure.reason;
  if (oob && waiting.size) await awaitCallbacks(oob, waiting, signal);
  stats.requests = http.sent - sentBefore;
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  matches.sort(
    (a, b) =>
      cmp(a.template.id, b.template.id) ||
      cmp(a.url, b.url) ||
      cmp(a.matcher ?? a.extractor ?? '', b.matcher ?? b.extractor ?? ''),
  );
  return { matches, stats };
}

/** Reads callbacks for up to `waitMs` after the last request, judging each waiting answer once. */
async function awaitCallbacks(
  oob: OobClient,
  waiting: Map<string, (i: OobInteraction) => boolean>,
  signal: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + oob.waitMs;
  for (;;) {
    if (signal.aborted) throw signal.reason ?? new DOMException('The scan was cancelled', 'AbortError');
    for (const i of await oob.poll()) {
      const judge = waiting.get(i.id);
      if (judge?.(i)) waiting.delete(i.id);
    }
    const left = deadline - Date.now();
    if (!waiting.size || left <= 0) return;
    await new Promise((r) => setTimeout(r, Math.min(1_000, left)));
  }
}
