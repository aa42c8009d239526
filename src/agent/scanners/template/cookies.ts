// A template's cookie jar: nuclei gives every template run its own jar, so cookies an answer sets
// (a session after a login request, on any redirect hop) go with the template's later requests.
// RFC 6265 rules in the parts that decide what is sent: host-only versus Domain cookies, the
// default path and path matching, Secure, Max-Age and Expires (a past date deletes), longer paths
// first. Bounded: a hostile target cannot grow it past MAX_COOKIES.
import type { CookieStore } from '../http/scoped-http.ts';

const MAX_COOKIES = 100;
const MAX_COOKIE_BYTES = 4_096;

interface Cookie {
  name: string;
  value: string;
  domain: string;
  hostOnly: boolean;
  path: string;
  secure: boolean;
  expires: number;
  created: number;
}

function defaultPath(url: URL): string {
  const p = url.pathname;
  if (!p.startsWith('/') || p.lastIndexOf('/') === 0) return '/';
  return p.slice(0, p.lastIndexOf('/'));
}

function domainMatches(host: string, domain: string): boolean {
  return host === domain || (host.endsWith(`.${domain}`) && !/^[\d.]+$|:/.test(host));
}

function pathMatches(reqPath: string, cookiePath: string): boolean {
  if (reqPath === cookiePath) return true;
  if (!reqPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || reqPath[cookiePath.length] === '/';
}

export class CookieJar implements CookieStore {
  #cookies: Cookie[] = [];
  #seq = 0;

  get size(): number {
    this.#expire();
    return this.#cookies.length;
  }

  #expire(): void {
    const now = Date.now();
    if (this.#cookies.some((c) => c.expires <= now)) this.#cookies = this.#cookies.filter((c) => c.expires > now);
  }

  header(url: URL): string | undefined {
    this.#expire();
    const host = url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
    const path = url.pathname || '/';
    const send = this.#cookies
      .filter(
        (c) =>
          (c.hostOnly ? c.domain === host : domainMatches(host, c.domain)) &&
          pathMatches(path, c.path) &&
          (!c.secure || url.protocol === 'https:'),
      )
      .sort((a, b) => b.path.length - a.path.length || a.created - b.created);
    return send.length ? send.map((c) => `${c.name}=${c.value}`).join('; ') : undefined;
  }

  store(url: URL, setCookies: readonly string[]): void {
    const host = url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
    for (const line of setCookies) {
      if (line.length > MAX_COOKIE_BYTES) continue;
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      if (eq <= 0) continue;
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const c: Cookie = {
        name,
        value,
        domain: host,
        hostOnly: true,
        path: defaultPath(url),
        secure: false,
        expires: Infinity,
        created: this.#seq++,
      };
      let maxAge: number | undefined;
      for (const a of attrs) {
        const i = a.indexOf('=');
        const key = (i < 0 ? a : a.slice(0, i)).trim().toLowerCase();
        const v = i < 0 ? '' : a.slice(i + 1).trim();
        if (key === 'domain' && v) {
          const d = v.replace(/^\./, '').toLowerCase();
          if (!domainMatches(host, d)) {
            c.name = '';
            break;
          }
          c.domain = d;
          c.hostOnly = false;
        } else if (key === 'path' && v.startsWith('/')) c.path = v;
        else if (key === 'secure') c.secure = true;
        else if (key === 'max-age' && /^-?\d+$/.test(v)) maxAge = Number(v);
        else if (key === 'expires' && maxAge === undefined) {
          const t = Date.parse(v);
          if (!Number.isNaN(t)) c.expires = t;
        }
      }
      if (!c.name) continue;
      if (maxAge !== undefined) c.expires = maxAge <= 0 ? 0 : Date.now() + maxAge * 1000;
      const same = this.#cookies.findIndex((o) => o.name === c.name && o.domain === c.domain && o.path === c.path);
      if (same >= 0) {
        c.created = this.#cookies[same]!.created;
        this.#cookies.splice(same, 1);
      }
      if (c.expires <= Date.now()) continue;
      if (this.#cookies.length >= MAX_COOKIES) this.#cookies.shift();
      this.#cookies.push(c);
    }
  }
}
