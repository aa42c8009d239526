// One HTTP answer as nuclei's matchers and extractors see it: the parts (`body`, `header`/
// `all_headers`, `all`, `response`), the numbers (`status_code`, `content_length`, `duration`),
// and every response header and cookie as a variable (lower case, `-` read as `_`, repeated
// headers joined with a space). Text forms are built on first use: a shared answer is read by
// many templates.
import type { HttpHop } from '../http/scoped-http.ts';
import { bytesToString } from './dsl-functions.ts';
import type { DslValue } from './dsl.ts';

/** kval keys and header variables as nuclei names them: lower case, `-` as `_`. */
export const headerKey = (k: string) => k.trim().toLowerCase().replace(/-/g, '_');

export class ResponseData {
  readonly ex: HttpHop;
  #body?: string;
  #all?: string;
  #response?: string;
  #lower = new Map<string, string>();
  #named?: Map<string, string>;
  constructor(ex: HttpHop) {
    this.ex = ex;
  }
  get body(): string {
    return (this.#body ??= bytesToString(this.ex.body));
  }
  /**
   * Status line and headers as nuclei dumps them (Go's Response.Write): Content-Length first when
   * known, the other headers sorted by their canonical names (`x-api-version` → `X-Api-Version`),
   * then a blank line.
   */
  get header(): string {
    return (this.#header ??= dumpHead(this.ex.head, this.ex.headers));
  }
  #header?: string;
  get response(): string {
    return (this.#response ??= `${this.header}${this.body}`);
  }
  /** nuclei's `all`: the body, then the headers. */
  get all(): string {
    return (this.#all ??= `${this.body}${this.header}`);
  }
  get contentLength(): number {
    const cl = Number(this.ex.headers['content-length']);
    return Number.isInteger(cl) && cl >= 0 ? cl : this.ex.body.length;
  }
  /** Response cookies, then headers, by variable name (a header wins over a cookie of its name). */
  named(): Map<string, string> {
    if (this.#named) return this.#named;
    const m = new Map<string, string>();
    for (const c of this.ex.setCookies) {
      const eq = c.indexOf('=');
      const semi = c.indexOf(';');
      if (eq > 0 && (semi < 0 || eq < semi))
        m.set(c.slice(0, eq).trim().toLowerCase(), c.slice(eq + 1, semi < 0 ? undefined : semi).trim());
    }
    const seen = new Set<string>();
    for (const [name, value] of headerLines(this.ex.head)) {
      const k = headerKey(name);
      m.set(k, seen.has(k) ? `${m.get(k)} ${value}` : value);
      seen.add(k);
    }
    return (this.#named = m);
  }

  /** A variable of this answer, or undefined when it has none by that name. */
  get(name: string): DslValue | undefined {
    switch (name) {
      case 'body':
        return this.body;
      case 'header':
      case 'all_headers':
        return this.header;
      case 'response':
        return this.response;
      case 'status_code':
        return this.ex.status;
      case 'content_length':
        return this.contentLength;
      case 'duration':
        return this.ex.durationMs / 1000;
      case 'ip':
        return this.ex.remoteAddress?.replace(/^::ffff:/, '');
      default:
        return this.named().get(name);
    }
  }

  /** A matcher's or extractor's part; undefined when the answer has no such part. */
  part(part: string): string | undefined {
    if (part === 'all') return this.all;
    const v = this.get(part);
    return v === undefined ? undefined : String(v);
  }
  lowerPart(part: string): string | undefined {
    let v = this.#lower.get(part);
    if (v === undefined) {
      const p = this.part(part);
      if (p === undefined) return undefined;
      this.#lower.set(part, (v = p.toLowerCase()));
    }
    return v;
  }
  bytes(part: string): Buffer | undefined {
    if (part === 'body') return this.ex.body;
    const p = this.part(part);
    return p === undefined ? undefined : Buffer.from(p, 'utf8');
  }
}

function* headerLines(head: string): Generator<[string, string]> {
  const lines = head.split('\r\n');
  for (let i = 1; i < lines.length; i++) {
    const colon = lines[i]!.indexOf(':');
    if (colon > 0) yield [lines[i]!.slice(0, colon).trim(), lines[i]!.slice(colon + 1).trim()];
  }
}

/** Go's CanonicalMIMEHeaderKey: each dash-separated word capitalised; names with odd characters kept. */
export function canonicalHeader(name: string): string {
  if (!/^[A-Za-z0-9-]+$/.test(name)) return name;
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_, d: string, c: string) => d + c.toUpperCase());
}

const DUMP_SKIP = new Set(['Content-Length', 'Transfer-Encoding', 'Trailer']);

function dumpHead(head: string, headers: Record<string, string>): string {
  const status = head.slice(0, head.indexOf('\r\n') >>> 0).replace(/^HTTP\/\S+/, 'HTTP/1.1');
  const lines = [...headerLines(head)]
    .map(([k, v]) => [canonicalHeader(k), v] as const)
    .filter(([k]) => !DUMP_SKIP.has(k));
  lines.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const cl = headers['content-length'];
  const te = /chunked/i.test(headers['transfer-encoding'] ?? '');
  const first =
    cl !== undefined && /^\d+$/.test(cl.trim())
      ? `Content-Length: ${cl.trim()}\r\n`
      : te
        ? 'Transfer-Encoding: chunked\r\n'
        : '';
  return `${status}\r\n${first}${lines.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
}

// Shared answers are read by many templates: decode each once.
const views = new WeakMap<HttpHop, ResponseData>();
export function responseData(ex: HttpHop): ResponseData {
  let v = views.get(ex);
  if (!v) views.set(ex, (v = new ResponseData(ex)));
  return v;
}
