// The scanners' HTTP client against real loopback servers: scope on every hop, body cap, decoding,
// self-signed HTTPS, timeouts and cancellation.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createPacer,
  createScopedHttp,
  HttpTransportError,
  OutOfScopeError,
  sameHost,
  sameOrigin,
} from './scoped-http.ts';

let base = '';
let other = '';
let tlsBase = '';
let certDir = '';
const servers: { close(): unknown; closeAllConnections?(): void }[] = [];
const hits: string[] = [];

beforeAll(async () => {
  const app = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    if (req.url === '/hop') return res.writeHead(302, { location: '/landing' }).end();
    if (req.url === '/away') return res.writeHead(301, { location: `${other}/elsewhere` }).end();
    if (req.url === '/loop') return res.writeHead(302, { location: '/loop' }).end();
    if (req.url === '/post-redirect') return res.writeHead(303, { location: '/landing' }).end();
    if (req.url === '/big') return res.writeHead(200).end(Buffer.alloc(300_000, 97));
    if (req.url === '/gz')
      return res
        .writeHead(200, { 'content-encoding': 'gzip', 'set-cookie': ['a=1; HttpOnly', 'b=2'] })
        .end(gzipSync('compressed hello'));
    if (req.url === '/slow') return void setTimeout(() => res.end('late'), 2_000);
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () =>
      res.writeHead(200, { 'x-method': req.method ?? '', 'x-dup': ['1', '2'] }).end(`landed ${body}`),
    );
  });
  const away = http.createServer((req, res) => {
    hits.push(`OTHER ${req.url}`);
    res.end('should never be asked');
  });
  certDir = mkdtempSync(join(tmpdir(), 'rampart-http-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      join(certDir, 'k.pem'),
      '-out',
      join(certDir, 'c.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
    ],
    { stdio: 'ignore' },
  );
  const secure = https.createServer(
    { key: readFileSync(join(certDir, 'k.pem')), cert: readFileSync(join(certDir, 'c.pem')) },
    (_req, res) => res.end('secret page'),
  );
  for (const s of [app, away, secure]) {
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    servers.push(s);
  }
  base = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  other = `http://127.0.0.1:${(away.address() as AddressInfo).port}`;
  tlsBase = `https://127.0.0.1:${(secure.address() as AddressInfo).port}`;
});

afterAll(() => {
  for (const s of servers) {
    s.closeAllConnections?.();
    s.close();
  }
  rmSync(certDir, { recursive: true, force: true });
});

const client = (extra: Partial<Parameters<typeof createScopedHttp>[0]> = {}) =>
  createScopedHttp({ inScope: sameOrigin(base), signal: new AbortController().signal, ratePerSecond: 1000, ...extra });

describe('scoped HTTP client', () => {
  it('follows redirects inside the scope and returns one that leaves it without asking the other host', async () => {
    const c = client();
    const followed = await c.request({ url: `${base}/hop`, maxRedirects: 3 });
    expect(followed.status).toBe(200);
    expect(followed.url).toBe(`${base}/landing`);
    expect(followed.redirects).toEqual([`${base}/hop`]);

    const blocked = await c.request({ url: `${base}/away`, maxRedirects: 3 });
    expect(blocked.status).toBe(301);
    expect(blocked.blockedRedirect).toBe(`${other}/elsewhere`);
    expect(hits.some((h) => h.startsWith('OTHER'))).toBe(false);

    const notFollowed = await c.request({ url: `${base}/hop` });
    expect(notFollowed.status).toBe(302);
    expect(notFollowed.redirects).toEqual([]);

    const loop = await c.request({ url: `${base}/loop`, maxRedirects: 4 });
    expect(loop.status).toBe(302);
    expect(loop.redirects).toHaveLength(4);
    c.close();
  });

  it('refuses a request outside the scope before connecting', async () => {
    const c = client();
    await expect(c.request({ url: `${other}/x` })).rejects.toBeInstanceOf(OutOfScopeError);
    await expect(c.request({ url: 'file:///etc/passwd' })).rejects.toBeInstanceOf(OutOfScopeError);
    expect(hits.some((h) => h.startsWith('OTHER'))).toBe(false);
    c.close();
  });

  it('sends method, headers and body, turns a 303 into a GET, and reports headers as sent', async () => {
    const c = client();
    const post = await c.request({ url: `${base}/echo`, method: 'post', headers: { 'X-Test': 'yes' }, body: 'a=1' });
    expect(post.body.toString()).toBe('landed a=1');
    expect(post.headers['x-method']).toBe('POST');
    expect(post.headers['x-dup']).toBe('1, 2');
    expect(post.head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(post.requestText).toContain('x-test: yes');
    const seeOther = await c.request({ url: `${base}/post-redirect`, method: 'POST', body: 'x', maxRedirects: 1 });
    expect(seeOther.method).toBe('GET');
    expect(seeOther.body.toString()).toBe('landed ');
    c.close();
  });

  it('caps the body, decodes gzip and keeps each set-cookie apart', async () => {
    const c = client({ maxBodyBytes: 1_000 });
    const big = await c.request({ url: `${base}/big` });
    expect(big.body.length).toBe(1_000);
    expect(big.truncated).toBe(true);
    const gz = await c.request({ url: `${base}/gz` });
    expect(gz.body.toString()).toBe('compressed hello');
    expect(gz.setCookies).toEqual(['a=1; HttpOnly', 'b=2']);
    c.close();
  });

  it('reads a page behind a self-signed certificate; sameHost allows both schemes and any port of the host', async () => {
    const c = createScopedHttp({ inScope: sameHost('127.0.0.1'), signal: new AbortController().signal });
    expect((await c.request({ url: `${tlsBase}/` })).body.toString()).toBe('secret page');
    expect((await c.request({ url: `${base}/echo` })).status).toBe(200);
    await expect(c.request({ url: 'http://localhost:1/' })).rejects.toBeInstanceOf(OutOfScopeError);
    c.close();
  });

  it('times out a slow answer and stops when the scan is cancelled', async () => {
    const c = client({ timeoutMs: 200 });
    const err = await c.request({ url: `${base}/slow` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpTransportError);
    expect((err as HttpTransportError).code).toBe('timeout');
    c.close();

    const ac = new AbortController();
    const d = client({ signal: ac.signal });
    const pending = d.request({ url: `${base}/slow` });
    setTimeout(() => ac.abort(new Error('cancelled by test')), 50);
    await expect(pending).rejects.toThrow('cancelled by test');
    await expect(d.request({ url: `${base}/echo` })).rejects.toThrow('cancelled by test');
    d.close();
  });

  it('reports a refused connection as a transport error', async () => {
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const c = createScopedHttp({ inScope: sameHost('127.0.0.1'), signal: new AbortController().signal });
    const err = await c.request({ url: `http://127.0.0.1:${port}/` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpTransportError);
    expect((err as HttpTransportError).code).toBe('ECONNREFUSED');
    c.close();
  });
});

describe('requests in flight', () => {
  /** A target that counts connections and requests in flight, answering each after `delay()`. */
  async function target(delay: () => Promise<void>) {
    let connections = 0;
    let inFlight = 0;
    let most = 0;
    const server = http.createServer((_req, res) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      void delay().then(() => {
        inFlight -= 1;
        res.end('ok');
      });
    });
    server.on('connection', () => (connections += 1));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const stats = () => ({ connections, most });
    const close = () => {
      server.closeAllConnections();
      server.close();
    };
    return { url, stats, close };
  }
  const scan = (url: string) =>
    createScopedHttp({
      inScope: sameOrigin(new URL(url)),
      signal: new AbortController().signal,
      ratePerSecond: 1_000_000,
      concurrency: 25,
    });

  it('grows to the concurrency asked for while a slow target keeps requests waiting', async () => {
    // Every answer waits until 25 requests are in flight at once: the scan must get there.
    const waiters: (() => void)[] = [];
    let inFlight = 0;
    const t = await target(
      () =>
        new Promise<void>((resolve) => {
          inFlight += 1;
          waiters.push(resolve);
          if (inFlight === 25) for (const w of waiters.splice(0)) w();
        }),
    );
    const c = scan(t.url);
    const answers = await Promise.all(Array.from({ length: 25 }, () => c.request({ url: t.url })));
    expect(answers.map((a) => a.status)).toEqual(Array(25).fill(200));
    expect(t.stats()).toEqual({ connections: 25, most: 25 });
    c.close();
    t.close();
  });

  it('keeps to a few reused connections while its own work, not the target, is the limit', async () => {
    const t = await target(async () => undefined);
    const c = scan(t.url);
    // 25 workers, each spending 3 ms of CPU on every answer, as a busy engine would.
    const worker = async () => {
      for (let i = 0; i < 8; i++) {
        await c.request({ url: t.url });
        const until = performance.now() + 3;
        while (performance.now() < until);
      }
    };
    await Promise.all(Array.from({ length: 25 }, worker));
    expect(t.stats().most).toBeLessThanOrEqual(12);
    expect(t.stats().connections).toBeLessThanOrEqual(12);
    expect(c.sent).toBe(200);
    c.close();
    t.close();
  });
});

describe('request pacing', () => {
  // A frozen clock: a start that waits on a timer stays waiting until the test moves time on.
  afterEach(() => vi.useRealTimers());
  const frozen = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
  const fakeNow = () => globalThis.performance.now();
  /** Whether `p` settles before the event loop's next turn, i.e. without any timer firing. */
  const settlesNow = (p: Promise<void>) =>
    Promise.race([p.then(() => true), new Promise<boolean>((r) => setImmediate(() => r(false)))]);

  it('starts requests at once when the rate allows it, even many in the same millisecond', async () => {
    frozen();
    const pace = createPacer(1_000_000, 25, new AbortController().signal, fakeNow);
    // One after another in one instant, as a scan's templates ask: none may wait for a timer.
    for (let i = 0; i < 40; i++) {
      expect(await settlesNow(pace.acquire())).toBe(true);
      pace.release();
    }
  });

  it('spaces starts 1000 / rate ms apart, none more than a millisecond early', async () => {
    frozen();
    const pace = createPacer(100, 25, new AbortController().signal, fakeNow);
    const startedAt: number[] = [];
    const all = Array.from({ length: 6 }, () =>
      pace.acquire().then(() => {
        startedAt.push(performance.now());
        pace.release();
      }),
    );
    const t0 = performance.now();
    for (let step = 0; step < 60 && startedAt.length < 6; step++) await vi.advanceTimersByTimeAsync(1);
    await Promise.all(all);
    expect(startedAt.map((t) => t - t0)).toEqual([0, 10, 20, 30, 40, 50]);

    // At 1,000 per second (a 1 ms gap, the timer's resolution) the average rate holds and
    // starts come at most 1 ms early: never more than 11 in any 10 ms.
    const fast = createPacer(1000, 25, new AbortController().signal, fakeNow);
    const times: number[] = [];
    const t1 = performance.now();
    const many = Array.from({ length: 50 }, () =>
      fast.acquire().then(() => {
        times.push(performance.now() - t1);
        fast.release();
      }),
    );
    for (let step = 0; step < 200 && times.length < 50; step++) await vi.advanceTimersByTimeAsync(0.25);
    await Promise.all(many);
    times.forEach((t, k) => expect(t).toBeGreaterThanOrEqual(k - 1));
    for (const t of times) expect(times.filter((u) => u >= t && u < t + 10).length).toBeLessThanOrEqual(11);
    expect(times.at(-1)!).toBeGreaterThanOrEqual(48);
  });
});
