// HTTP at the edge, through the shared scoped client (scope: the target host only): HSTS on the
// first HTTPS answer (browsers honour it on any response), security headers on the page a visitor
// lands on (same-origin redirects followed), and whether plain HTTP sends visitors to HTTPS.
import { HttpTransportError, type HttpExchange, type ScopedHttp } from '../http/scoped-http.ts';

export interface HstsReport {
  raw: string;
  maxAge?: number;
  includeSubDomains: boolean;
  preload: boolean;
}

export interface HttpsReport {
  url: string;
  status?: number;
  /** Why there is no HTTP answer (not HTTP inside TLS, refused by the HTTP client's TLS settings, ...). */
  error?: string;
  hsts?: HstsReport;
  /** The URL whose headers were judged (after same-origin redirects). */
  headersUrl?: string;
  headers?: {
    contentSecurityPolicy?: string;
    frameAncestors: boolean;
    xContentTypeOptions?: string;
    xFrameOptions?: string;
    referrerPolicy?: string;
  };
}

export interface RedirectReport {
  url: string;
  /**
   * permanent: 301/308 to https on the target host; temporary: 302/303/307 to it; other-host: to
   * https elsewhere; none: no redirect to https; closed: nothing listens; no-answer: no HTTP reply.
   */
  state: 'permanent' | 'temporary' | 'other-host' | 'none' | 'closed' | 'no-answer';
  status?: number;
  location?: string;
  error?: string;
}

export function parseHsts(raw: string): HstsReport {
  const first = raw.split(',')[0] ?? '';
  const directives = first.split(';').map((d) => d.trim().toLowerCase());
  const maxAge = directives.map((d) => /^max-age\s*=\s*"?(\d+)"?$/.exec(d)?.[1]).find((v) => v !== undefined);
  return {
    raw: first.trim().slice(0, 300),
    ...(maxAge !== undefined ? { maxAge: Number(maxAge) } : {}),
    includeSubDomains: directives.includes('includesubdomains'),
    preload: directives.includes('preload'),
  };
}

const MAX_HOPS = 3;

function errorText(e: unknown): string {
  return e instanceof Error ? e.message.slice(0, 300) : String(e);
}

/** HSTS and security headers of `origin` (https://host:port). */
export async function checkHttps(client: ScopedHttp, origin: string): Promise<HttpsReport> {
  const url = `${origin}/`;
  let res: HttpExchange;
  try {
    res = await client.request({ url, maxBodyBytes: 16_384 });
  } catch (e) {
    if (e instanceof HttpTransportError) return { url, error: errorText(e) };
    throw e;
  }
  const sts = res.headers['strict-transport-security'];
  const report: HttpsReport = { url, status: res.status, ...(sts ? { hsts: parseHsts(sts) } : {}) };
  let page = res;
  for (let hop = 0; hop < MAX_HOPS && page.status >= 300 && page.status < 400 && page.headers.location; hop += 1) {
    let next: URL;
    try {
      next = new URL(page.headers.location, page.url);
    } catch {
      break;
    }
    if (next.origin !== new URL(origin).origin) break;
    try {
      page = await client.request({ url: next.href, maxBodyBytes: 16_384 });
    } catch (e) {
      if (e instanceof HttpTransportError) break;
      throw e;
    }
  }
  const h = page.headers;
  const csp = h['content-security-policy'];
  report.headersUrl = page.url;
  report.headers = {
    ...(csp ? { contentSecurityPolicy: csp.slice(0, 500) } : {}),
    frameAncestors: /(?:^|;)\s*frame-ancestors\s/i.test(csp ?? ''),
    ...(h['x-content-type-options'] ? { xContentTypeOptions: h['x-content-type-options'] } : {}),
    ...(h['x-frame-options'] ? { xFrameOptions: h['x-frame-options'] } : {}),
    ...(h['referrer-policy'] ? { referrerPolicy: h['referrer-policy'] } : {}),
  };
  return report;
}

/** Whether plain HTTP at `url` redirects to HTTPS on `host` (plain-HTTP hops on the same origin followed). */
export async function checkRedirect(client: ScopedHttp, url: string, host: string): Promise<RedirectReport> {
  let current = url;
  for (let hop = 0; hop <= MAX_HOPS; hop += 1) {
    let res: HttpExchange;
    try {
      res = await client.request({ url: current, maxBodyBytes: 4_096 });
    } catch (e) {
      if (e instanceof HttpTransportError)
        return { url, state: e.code === 'ECONNREFUSED' ? 'closed' : 'no-answer', error: errorText(e) };
      throw e;
    }
    const location = res.status >= 300 && res.status < 400 ? res.headers.location : undefined;
    let next: URL | undefined;
    try {
      next = location ? new URL(location, current) : undefined;
    } catch {
      next = undefined;
    }
    if (!next) return { url, state: 'none', status: res.status, ...(location ? { location } : {}) };
    const sameHost = next.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase() === host.toLowerCase();
    if (next.protocol === 'https:') {
      const state = !sameHost ? 'other-host' : res.status === 301 || res.status === 308 ? 'permanent' : 'temporary';
      return { url, state, status: res.status, location: next.href };
    }
    // Another plain-HTTP port is outside the ports this scan may touch: judge the hop as it stands.
    if (next.origin !== new URL(url).origin) return { url, state: 'none', status: res.status, location: next.href };
    current = next.href;
  }
  return { url, state: 'none' };
}
