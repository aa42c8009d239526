// The request a block sends for one of its paths or raw requests, rendered with the run's values,
// as nuclei builds it. A raw request is parsed the way nuclei reads it (annotations skipped, the
// request line, `Key: value` headers up to a blank line, the rest as the body, minus one trailing
// CRLF) and then sent through the ordinary client: its target path is merged under the scanned
// URL's path, its framing (Content-Length, Transfer-Encoding) is recomputed, and a Host header
// must name the scanned host, so no template can frame a request for another host.
import { stringBytes } from './dsl-functions.ts';
import type { RequestBlock } from './model.ts';
import { render, type CompiledText } from './render.ts';
import type { DslLookup } from './dsl.ts';

export interface BuiltRequest {
  method: string;
  /** Where the request goes (its origin decides the connection). */
  url: URL;
  /** The request target sent as written (path and query). */
  target: string;
  /** Headers to send (framing headers removed). */
  headers: Record<string, string>;
  body?: Buffer;
  maxRedirects: number;
}

export type BuildOutcome = BuiltRequest | { missing: true } | { error: string };

/** Headers the client frames itself, as nuclei's does: a template's are dropped. */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'trailer']);
const AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/**
 * The request target nuclei sends for a path: as written, except that a `%` not starting an
 * escape becomes `%25` and bytes HTTP cannot carry are percent-encoded; the fragment is not sent.
 */
export function requestTarget(path: string): string {
  let rest = path;
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  if (!rest.startsWith('/')) rest = `/${rest}`;
  rest = rest.replace(/%(?![0-9A-Fa-f]{2})/g, '%25');
  return rest.replace(/[^\x21-\x7e]+/g, (c) => encodeURIComponent(c));
}

/** nuclei's MergePath: a raw request's path under the scanned URL's path. */
export function mergePath(basePath: string, target: string): string {
  const base = basePath === '/' ? '' : basePath;
  if (target === '' || target === '/') return base || '/';
  if (target.startsWith('?')) return `${base || '/'}${target}`;
  return `${base.replace(/\/+$/, '')}${target.startsWith('/') ? '' : '/'}${target}`;
}

interface ParsedRaw {
  method: string;
  target: string;
  headers: [string, string][];
  body: string;
}

export function parseRaw(text: string): ParsedRaw | null {
  const lines = text.replace(/^\s+/, '').split('\n');
  let i = 0;
  while (i < lines.length && lines[i]!.startsWith('@')) i++;
  const parts = (lines[i++] ?? '').trim().split(/\s+/);
  if (parts.length < 2) return null;
  const target = parts.length === 2 && parts[1]!.includes('HTTP') ? '' : parts[1]!;
  const headers: [string, string][] = [];
  let multipart = false;
  for (; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) {
      i++;
      break;
    }
    const colon = line.indexOf(':');
    const key = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).trim();
    if (/content-type/i.test(key) && value.includes('multipart/')) multipart = true;
    headers.push([key, value]);
  }
  let body = lines.slice(i).join('\n');
  if (!multipart && body.endsWith('\r\n')) body = body.slice(0, -2);
  return { method: parts[0]!, target, headers, body };
}

function renderHeaders(block: RequestBlock, get: DslLookup): Record<string, string> | null {
  const out: Record<string, string> = {};
  for (const [k, c] of block.headerTexts) {
    const v = render(c, get);
    if (v === undefined) return null;
    out[k] = v;
  }
  return out;
}

/** The request for `block.texts[index]`; `missing` when a placeholder has no value (nuclei skips it). */
export function buildRequest(
  block: RequestBlock,
  index: number,
  get: DslLookup,
  base: URL,
  selfContained: boolean,
): BuildOutcome {
  const text = render(block.texts[index]!, get);
  if (text === undefined) return { missing: true };
  const extra = renderHeaders(block, get);
  if (!extra) return { missing: true };
  let method = block.method;
  let url: string;
  let path: string;
  let headers: [string, string][] = Object.entries(extra);
  let body: string | undefined;
  if (block.raw) {
    const raw = parseRaw(text);
    if (!raw) return { error: `raw request ${index + 1} has no request line` };
    method = raw.method.toUpperCase();
    headers = [
      ...raw.headers.filter(([k]) => !Object.keys(extra).some((e) => e.toLowerCase() === k.toLowerCase())),
      ...headers,
    ];
    body = raw.body || undefined;
    const absolute = AUTHORITY.exec(raw.target);
    if (absolute && selfContained) {
      url = raw.target;
      path = raw.target.slice(absolute[0].length) || '/';
    } else {
      const rel = absolute ? raw.target.slice(absolute[0].length) || '/' : raw.target;
      path = block.pathAutomerge ? mergePath(base.pathname, rel) : rel || '/';
      url = `${base.origin}${path}`;
    }
  } else {
    const authority = AUTHORITY.exec(text);
    if (!authority) return { error: `${text.slice(0, 200)} is not a URL` };
    url = text;
    path = text.slice(authority[0].length);
    if (block.body) {
      const b = render(block.body, get);
      if (b === undefined) return { missing: true };
      body = b;
    }
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { error: `${url.slice(0, 200)} is not a valid URL` };
  }
  const out: Record<string, string> = {};
  for (const [k, v] of headers) {
    if (!k || FRAMING.has(k.toLowerCase())) continue;
    if (/[\r\n\0]/.test(v) || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k))
      return { error: `the header ${JSON.stringify(k.slice(0, 60))} cannot be sent` };
    if (k.toLowerCase() === 'host') {
      const h = v.trim().toLowerCase().replace(/:\d+$/, '');
      if (h !== parsed.hostname.toLowerCase())
        return {
          error: `a Host header of ${JSON.stringify(v.slice(0, 100))} names another host than ${parsed.host}; requests only go to the scanned site`,
        };
    }
    out[k] = /[^\x20-\x7e\t]/.test(v) ? Buffer.from(v, 'utf8').toString('latin1') : v;
  }
  return {
    method,
    url: parsed,
    target: requestTarget(path),
    headers: out,
    ...(body !== undefined && body !== '' ? { body: stringBytes(body) } : {}),
    maxRedirects: block.maxRedirects,
  };
}

export type { CompiledText };
