// A browser-like client over app.inject(): keeps cookies, sends Origin, and adds the CSRF token
// from /api/v1/me to writes.
import type { LightMyRequestResponse } from 'fastify';
import type { App } from '../../src/server/app.ts';
import { TEST_BASE_URL } from './app.ts';

export const PASSWORD = 'correct horse battery staple';

const octet = () => 1 + Math.floor(Math.random() * 254);
const randomIp = () => `10.${octet()}.${octet()}.${octet()}`;

export class Client {
  readonly app: App;
  readonly cookies = new Map<string, string>();
  csrf: string | null = null;
  ip: string;
  /** Each client gets its own address by default: per-address throttles are shared through the database. */
  constructor(app: App, ip = randomIp()) {
    this.app = app;
    this.ip = ip;
  }

  async request(
    method: string,
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<LightMyRequestResponse> {
    const h: Record<string, string> = { origin: TEST_BASE_URL, ...headers };
    if (this.cookies.size) h.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (method !== 'GET' && this.csrf && !('x-csrf-token' in headers)) h['x-csrf-token'] = this.csrf;
    const res = await this.app.inject({
      method: method as 'GET',
      url,
      headers: h,
      remoteAddress: this.ip,
      ...(body === undefined ? {} : { payload: body as object }),
    });
    for (const c of res.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]) {
      const expired = c.maxAge === 0 || (c.expires && c.expires.getTime() < Date.now()) || c.value === '';
      if (expired) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    return res;
  }

  get = (url: string, headers?: Record<string, string>) => this.request('GET', url, undefined, headers);
  post = (url: string, body: unknown = {}, headers?: Record<string, string>) =>
    this.request('POST', url, body, headers);
  put = (url: string, body: unknown, headers?: Record<string, string>) => this.request('PUT', url, body, headers);
  delete = (url: string, headers?: Record<string, string>) => this.request('DELETE', url, undefined, headers);

  async me(): Promise<Me> {
    const res = await this.get('/api/v1/me');
    if (res.statusCode !== 200) throw new Error(`GET /api/v1/me → ${res.statusCode} ${res.body}`);
    const me = res.json() as Me;
    this.csrf = me.csrfToken;
    return me;
  }

  async signUp(email: string, name = 'Test User', password = PASSWORD): Promise<Me> {
    const res = await this.post('/api/auth/sign-up/email', { email, name, password });
    if (res.statusCode !== 200) throw new Error(`sign-up → ${res.statusCode} ${res.body}`);
    return this.me();
  }

  async signIn(email: string, password = PASSWORD): Promise<LightMyRequestResponse> {
    return this.post('/api/auth/sign-in/email', { email, password });
  }

  async createTenant(name: string): Promise<string> {
    const slug = `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${Math.random().toString(36).slice(2, 8)}`;
    const res = await this.post('/api/auth/organization/create', { name, slug });
    if (res.statusCode !== 200) throw new Error(`create tenant → ${res.statusCode} ${res.body}`);
    return (res.json() as { id: string }).id;
  }
}

export interface Me {
  user: { id: string; name: string; email: string; emailVerified: boolean; twoFactorEnabled: boolean };
  csrfToken: string;
  activeTenantId: string | null;
  tenants: { id: string; name: string; slug: string; role: string }[];
  staff: boolean;
  superAdmin: boolean;
  platformRole: string | null;
}
