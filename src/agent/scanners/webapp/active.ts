// Light active checks (profile "full" only): for the query parameters of crawled URLs and the
// fields of GET and POST forms in scope, a harmless marker (reflected XSS), a foreign redirect
// target (open redirect, never followed), and a quote / array-style name (database and stack
// trace errors). A few requests per parameter, a cap per scan, all through the scoped client.
import { randomBytes } from 'node:crypto';
import type { HttpExchange, ScopedHttp } from '../http/scoped-http.ts';
import type { CrawledPage, FormRecord } from './crawl.ts';
import { isHtml } from './crawl.ts';
import { applicationError, sqlError, type Alert } from './rules.ts';

export const REDIRECT_PROBE = 'https://rampart-redirect.invalid/';
const REDIRECT_PARAM =
  /^(?:next|url|redirect|redirect_?ur[il]|return|return_?to|return_?url|goto|dest|destination|continue|target|forward|out|to|r|u|link|rurl)$/i;
const MAX_ENDPOINTS = 50;
const MAX_PARAMS_PER_ENDPOINT = 10;
export const MAX_ACTIVE_REQUESTS = 400;
const SNIPPET = 4_096;

interface Endpoint {
  method: 'GET' | 'POST';
  /** The URL without the parameters under test (the query of a GET is rebuilt each time). */
  url: string;
  params: [string, string][];
  /** The crawl's answer for the unmodified request, when there is one. */
  baseline?: HttpExchange;
}

export interface ActiveSettings {
  http: ScopedHttp;
  origin: string;
  pages: CrawledPage[];
  forms: FormRecord[];
  /** Stop sending when this returns true (time budget, cancellation). */
  stopped(): boolean;
}

export interface ActiveResult {
  alerts: Alert[];
  requests: number;
  endpoints: number;
}

function endpoints(pages: CrawledPage[], forms: FormRecord[], origin: string): Endpoint[] {
  const out: Endpoint[] = [];
  const seen = new Set<string>();
  const push = (e: Endpoint) => {
    const key = `${e.method} ${e.url} ${e.params
      .map(([k]) => k)
      .sort()
      .join(',')}`;
    if (seen.has(key) || !e.params.length) return;
    seen.add(key);
    out.push(e);
  };
  for (const p of pages) {
    const u = new URL(p.url);
    if (!u.search) continue;
    const params = [...u.searchParams.entries()];
    u.search = '';
    push({ method: 'GET', url: u.href, params, baseline: p.res });
  }
  for (const f of forms) {
    const u = new URL(f.action);
    if (u.origin !== origin) continue;
    const params = f.fields
      .filter((x) => !['submit', 'button', 'image', 'file', 'reset'].includes(x.type))
      .map((x): [string, string] => [
        x.name,
        x.value || (x.type === 'email' ? 'rampart@example.com' : x.type === 'number' ? '1' : 'rampart'),
      ]);
    const method = f.method === 'POST' ? 'POST' : 'GET';
    if (method === 'GET') u.search = '';
    push({ method, url: u.href, params });
  }
  return out.slice(0, MAX_ENDPOINTS);
}

export async function activeChecks(s: ActiveSettings): Promise<ActiveResult> {
  const alerts: Alert[] = [];
  let requests = 0;
  const list = endpoints(s.pages, s.forms, s.origin);

  async function send(
    e: Endpoint,
    params: [string, string][],
  ): Promise<{ res: HttpExchange; url: string } | undefined> {
    if (s.stopped() || requests >= MAX_ACTIVE_REQUESTS) return undefined;
    requests += 1;
    const body = new URLSearchParams(params).toString();
    const url = e.method === 'GET' ? `${e.url}${body ? `?${body}` : ''}` : e.url;
    try {
      const res = await s.http.request(
        e.method === 'GET'
          ? { url, maxBodyBytes: 512 * 1024 }
          : {
              url,
              method: 'POST',
              body,
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              maxBodyBytes: 512 * 1024,
            },
      );
      return { res, url };
    } catch {
      return undefined;
    }
  }
  const evidenceOf = (r: { res: HttpExchange }) => ({
    request: r.res.requestText,
    response: `${r.res.head}\r\n\r\n${r.res.body.subarray(0, SNIPPET).toString('utf8')}`,
  });

  for (const e of list) {
    if (s.stopped() || requests >= MAX_ACTIVE_REQUESTS) break;
    const baseline = e.baseline ?? (await send(e, e.params))?.res;
    const baseBody = baseline?.body.toString('utf8') ?? '';
    for (const [i, [name, value]] of e.params.slice(0, MAX_PARAMS_PER_ENDPOINT).entries()) {
      const withValue = (v: string): [string, string][] => e.params.map((p, j) => (j === i ? [name, v] : p));
      const record = (ruleId: string, r: { res: HttpExchange; url: string }, evidence: string) =>
        alerts.push({ ruleId, url: r.url, param: name, evidence, method: e.method, ...evidenceOf(r) });

      // Reflected input: the marker's quotes and angle brackets come back unescaped in HTML.
      const marker = `rmp${randomBytes(4).toString('hex')}`;
      const reflected = await send(e, withValue(`${marker}"'<>`));
      if (
        reflected &&
        isHtml(reflected.res) &&
        new RegExp(`${marker}["']{0,2}<>`).test(reflected.res.body.toString('utf8'))
      ) {
        record('40012', reflected, `The value ${marker}"'<> of "${name}" is echoed unescaped in the HTML page`);
      }

      // Open redirect: a foreign URL ends up in Location (not followed: maxRedirects is 0).
      if (REDIRECT_PARAM.test(name) || /^(?:https?:)?\/\//i.test(value)) {
        const r = await send(e, withValue(REDIRECT_PROBE));
        const location = r && r.res.status >= 300 && r.res.status < 400 ? r.res.headers.location : undefined;
        let host: string | undefined;
        try {
          host = location ? new URL(location, r!.url).hostname : undefined;
        } catch {
          host = undefined;
        }
        if (r && host === 'rampart-redirect.invalid')
          record('20019', r, `"${name}" set to ${REDIRECT_PROBE} answered ${r.res.status} with Location: ${location}`);
      }

      // A quote: database errors (SQL injection) and stack traces absent from the baseline.
      const quoted = await send(e, withValue(`${value}'`));
      if (quoted) {
        const body = quoted.res.body.toString('utf8');
        const sql = sqlError(body);
        if (sql && !sqlError(baseBody))
          record('40018', quoted, `A quote in "${name}" produced a ${sql[0]} error: ${sql[1].slice(0, 300)}`);
        else {
          const err = applicationError(body);
          if (err && !applicationError(baseBody))
            record('90022', quoted, `A quote in "${name}" produced a ${err[0]}: ${err[1].slice(0, 300)}`);
        }
      }

      // An array-style name (name[]=) trips type assumptions in many frameworks.
      const arrayed = await send(
        e,
        e.params.map((p, j) => (j === i ? [`${name}[]`, value] : p)),
      );
      if (arrayed) {
        const err = applicationError(arrayed.res.body.toString('utf8'));
        if (err && !applicationError(baseBody))
          record('90022', arrayed, `Sending "${name}[]" produced a ${err[0]}: ${err[1].slice(0, 300)}`);
      }
    }
  }
  return { alerts, requests, endpoints: list.length };
}
