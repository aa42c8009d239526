// Runs validated templates against one base URL through the scoped HTTP client: each template's
// requests in order, matchers and extractors on every answer, one result per fired named matcher
// (nuclei's rule). Identical GETs without a body (same URL, headers and redirect budget) are sent
// once per scan and shared: many templates probe the same few paths, so this saves requests
// without changing any answer a template sees.
import { HttpTransportError, OutOfScopeError, type HttpExchange, type ScopedHttp } from '../http/scoped-http.ts';
import { DSL_VARIABLES, evaluateDsl, type DslValue } from './dsl.ts';
import { kvalKey, type Extractor, type Matcher, type RequestBlock, type Template } from './model.ts';

/** Responses kept for sharing, in body bytes; past this, answers are still shared while in flight. */
const CACHE_BYTES = 64 * 1024 * 1024;
const MAX_EXTRACTED = 50;

export interface TemplateMatch {
  template: Template;
  /** The named matcher that fired (absent for an `and` block or unnamed matchers). */
  matcher?: string;
  /** The URL requested (nuclei's matched-at). */
  url: string;
  exchange: HttpExchange;
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
}

export interface RunTemplatesOptions {
  baseUrl: URL;
  templates: readonly Template[];
  http: ScopedHttp;
  signal: AbortSignal;
  /** Templates run at once (default 25). */
  concurrency?: number;
  onProgress?: (done: number, total: number) => void;
  /** Answers already fetched (the probe of the site's root), keyed like the engine's own cache. */
  cache?: Map<string, Promise<HttpExchange>>;
}

/** The variables of a URL as nuclei defines them. */
export function templateVariables(base: URL): Record<string, string> {
  const scheme = base.protocol.replace(/:$/, '');
  const path = base.pathname.replace(/\/+$/, '');
  return {
    BaseURL: `${base.origin}${path}`,
    RootURL: base.origin,
    Hostname: base.host,
    Host: base.hostname,
    Port: base.port || (scheme === 'https' ? '443' : '80'),
    Scheme: scheme,
    Path: path,
  };
}

const expand = (s: string, vars: Record<string, string>) => s.replace(/\{\{\s*([A-Za-z]+)\s*\}\}/g, (_, name: string) => vars[name] ?? '');

/** The cache key of a shareable request, or null for one that must be sent on its own. */
export function cacheKey(method: string, url: string, headers: Record<string, string>, maxRedirects: number, body: string | undefined): string | null {
  if (method !== 'GET' || body !== undefined) return null;
  const h = Object.entries(headers)
    .map(([k, v]) => [k.toLowerCase(), v])
    .sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
  return JSON.stringify([url, h, maxRedirects]);
}

/** One answer as matchers see it; text forms are built on first use. */
class ResponseView {
  readonly ex: HttpExchange;
  #body?: string;
  #all?: string;
  #vars?: Record<string, DslValue>;
  #lower = new Map<string, string>();
  #headerVars?: Map<string, string>;
  constructor(ex: HttpExchange) {
    this.ex = ex;
  }
  get body(): string {
    return (this.#body ??= this.ex.body.toString('utf8'));
  }
  headerVar(name: string): string {
    if (!this.#headerVars) {
      this.#headerVars = new Map();
      for (const [k, v] of Object.entries(this.ex.headers)) this.#headerVars.set(kvalKey(k), v);
      if (this.ex.setCookies.length) this.#headerVars.set('set_cookie', this.ex.setCookies.join(', '));
    }
    return this.#headerVars.get(name) ?? '';
  }
  get all(): string {
    return (this.#all ??= `${this.ex.head}\r\n\r\n${this.body}`);
  }
  vars(): Record<string, DslValue> {
    if (this.#vars) return this.#vars;
    const cl = Number(this.ex.headers['content-length']);
    return (this.#vars = {
      status_code: this.ex.status,
      content_length: Number.isInteger(cl) && cl >= 0 ? cl : this.ex.body.length,
      body: this.body,
      header: this.ex.head,
      all_headers: this.ex.head,
      response: this.all,
      content_type: this.ex.headers['content-type'] ?? '',
    });
  }
  part(part: string): string {
    if (part === 'body') return this.body;
    if (part === 'header') return this.ex.head;
    if (part === 'all') return this.all;
    if (part in DSL_VARIABLES) return String(this.vars()[part]);
    return this.headerVar(part);
  }
  lowerPart(part: string): string {
    let v = this.#lower.get(part);
    if (v === undefined) this.#lower.set(part, (v = this.part(part).toLowerCase()));
    return v;
  }
  bytes(part: string): Buffer {
    return part === 'body' ? this.ex.body : Buffer.from(this.part(part), 'utf8');
  }
}

// Shared answers are read by many templates: decode each once.
const views = new WeakMap<HttpExchange, ResponseView>();
function viewOf(ex: HttpExchange): ResponseView {
  let v = views.get(ex);
  if (!v) views.set(ex, (v = new ResponseView(ex)));
  return v;
}

function matchOne(m: Matcher, view: ResponseView): boolean {
  const all = m.condition === 'and';
  let hit: boolean;
  switch (m.type) {
    case 'status':
      hit = m.status.includes(view.ex.status);
      break;
    case 'size':
      hit = m.size.includes(view.ex.body.length);
      break;
    case 'word': {
      const text = m.caseInsensitive ? view.lowerPart(m.part) : view.part(m.part);
      hit = all ? m.words.every((w) => text.includes(w)) : m.words.some((w) => text.includes(w));
      break;
    }
    case 'regex': {
      const text = view.part(m.part);
      hit = all ? m.regexes.every((r) => r.test(text)) : m.regexes.some((r) => r.test(text));
      break;
    }
    case 'binary': {
      const bytes = view.bytes(m.part);
      hit = all ? m.binary.every((b) => bytes.includes(b)) : m.binary.some((b) => bytes.includes(b));
      break;
    }
    case 'dsl': {
      const ctx = { vars: view.vars(), header: (n: string) => view.headerVar(n) };
      hit = all ? m.dsl.every((d) => evaluateDsl(d, ctx)) : m.dsl.some((d) => evaluateDsl(d, ctx));
      break;
    }
  }
  return m.negative ? !hit : hit;
}

function extract(x: Extractor, view: ResponseView, out: Set<string>): void {
  if (x.type === 'kval') {
    for (const k of x.keys) {
      const v = view.headerVar(k);
      if (v) out.add(v.slice(0, 1_024));
    }
    return;
  }
  const text = view.part(x.part);
  for (const re of x.regexes) {
    re.lastIndex = 0;
    for (const m of text.matchAll(re)) {
      const v = m[x.group];
      if (v) out.add(v.slice(0, 1_024));
      if (out.size >= MAX_EXTRACTED) return;
    }
  }
}

/** Matcher names to report for one answer: [] for a plain match, null for no match. */
export function evaluateBlock(block: RequestBlock, ex: HttpExchange): { names: string[]; extracted: string[] } | null {
  const view = viewOf(ex);
  let names: string[] = [];
  if (block.matchers.length) {
    if (block.matchersCondition === 'and') {
      if (!block.matchers.every((m) => matchOne(m, view))) return null;
    } else {
      const fired = block.matchers.filter((m) => matchOne(m, view));
      if (!fired.length) return null;
      names = [...new Set(fired.flatMap((m) => (m.name ? [m.name] : [])))];
    }
  }
  const found = new Set<string>();
  for (const x of block.extractors) {
    if (x.internal) continue;
    extract(x, view, found);
  }
  if (!block.matchers.length && !found.size) return null;
  return { names, extracted: [...found] };
}

export async function runTemplates(opts: RunTemplatesOptions): Promise<{ matches: TemplateMatch[]; stats: EngineStats }> {
  const { http, signal } = opts;
  const vars = templateVariables(opts.baseUrl);
  const origin = opts.baseUrl.origin;
  const cache = opts.cache ?? new Map<string, Promise<HttpExchange>>();
  let cachedBytes = 0;
  const stats: EngineStats = { templates: opts.templates.length, requests: 0, cacheHits: 0, errors: 0, errorSamples: [] };
  const matches: TemplateMatch[] = [];
  const sentBefore = http.sent;

  const failed = (message: string) => {
    stats.errors += 1;
    if (stats.errorSamples.length < 5) stats.errorSamples.push(message);
  };

  function send(method: string, url: string, headers: Record<string, string>, body: string | undefined, maxRedirects: number): Promise<HttpExchange> {
    const key = cacheKey(method, url, headers, maxRedirects, body);
    if (key === null) return http.request({ url, method, headers, body, maxRedirects });
    const hit = cache.get(key);
    if (hit) {
      stats.cacheHits += 1;
      return hit;
    }
    const p = http.request({ url, method, headers, maxRedirects });
    cache.set(key, p);
    p.then(
      (ex) => {
        cachedBytes += ex.body.length;
        if (cachedBytes > CACHE_BYTES) cache.delete(key);
      },
      () => undefined,
    );
    return p;
  }

  async function runTemplate(t: Template): Promise<void> {
    for (const block of t.requests) {
      const headers = Object.fromEntries(Object.entries(block.headers).map(([k, v]) => [k, expand(v, vars)]));
      const body = block.body === undefined ? undefined : expand(block.body, vars);
      for (const path of block.paths) {
        const url = expand(path, vars);
        let parsed: URL;
        try {
          parsed = new URL(url);
        } catch {
          failed(`${t.id}: ${url.slice(0, 200)} is not a valid URL`);
          continue;
        }
        // Validation keeps paths under the origin; this is the belt to that braces.
        if (parsed.origin !== origin) {
          failed(`${t.id}: ${url.slice(0, 200)} leaves ${origin}`);
          continue;
        }
        let ex: HttpExchange;
        try {
          ex = await send(block.method, parsed.href, headers, body, block.maxRedirects);
        } catch (e) {
          if (signal.aborted) throw signal.reason ?? e;
          if (e instanceof HttpTransportError || e instanceof OutOfScopeError) {
            failed(`${t.id}: ${e.message}`);
            continue;
          }
          throw e;
        }
        const result = evaluateBlock(block, ex);
        if (!result) continue;
        const request = { method: block.method, url: parsed.href, headers, ...(body !== undefined ? { body } : {}) };
        const base = { template: t, url: parsed.href, exchange: ex, request, extracted: result.extracted };
        if (result.names.length) for (const matcher of result.names) matches.push({ ...base, matcher });
        else matches.push(base);
        if (block.stopAtFirstMatch) return;
      }
    }
  }

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
  stats.requests = http.sent - sentBefore;
  matches.sort((a, b) => (a.template.id < b.template.id ? -1 : a.template.id > b.template.id ? 1 : a.url < b.url ? -1 : a.url > b.url ? 1 : (a.matcher ?? '') < (b.matcher ?? '') ? -1 : 1));
  return { matches, stats };
}
