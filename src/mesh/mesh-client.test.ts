// Outbound client against real HTTP peers on loopback (node:http, port 0). Each peer checks our
// signature with its own inline node:crypto code, not with mesh-signing.ts.
// Over 500 lines on purpose: one feature's cases share a single app, tenants and loopback peers set up once; splitting
// them would repeat that set-up in every file.
import { createHash, createHmac } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { closeAllPeers, closedPort, startPeer, type Received } from '../../test/helpers/loopback-peer.ts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../lib/config.ts';
import type { Clock } from '../lib/clock.ts';
import { createMeshClient, parseRetryAfter, type MeshClientDeps, type OutboundAttempt } from './mesh-client.ts';
import { createPeerRegistry } from './mesh-peers.ts';

const DISPATCH = '/api/public/svc/dispatch';
const SECRET = 'to-peer-secret-3f9a1c'; // our SVC_SECRET_TO_PEER == the peer's SVC_SECRET_FROM_RAMPART
const SELF = 'rampart';

// ---- loopback peers ----------------------------------------------------------------------------

afterEach(closeAllPeers);

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

function html(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  res.end(text);
}

/** The peer's own check (independent of mesh-signing.ts). Returns an error code, or null when valid. */
function peerCheck(r: Received, secret = SECRET, now = Date.now()): string | null {
  const caller = r.headers['x-svc-caller'];
  const ts = r.headers['x-svc-timestamp'];
  const sig = r.headers['x-svc-signature'];
  if (typeof caller !== 'string' || typeof ts !== 'string') return 'missing_svc_headers';
  if (typeof sig !== 'string') return 'missing_signature';
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(ts)) return 'bad_timestamp';
  if (Math.abs(Date.parse(ts) - now) > 300_000) return 'stale_timestamp';
  const bodyHash = createHash('sha256').update(r.body).digest('hex');
  const expected = createHmac('sha256', secret)
    .update(`${caller}\n${ts}\nPOST\n${DISPATCH}\n${bodyHash}`)
    .digest('hex');
  return expected === sig ? null : 'bad_signature';
}

// ---- client set-up -----------------------------------------------------------------------------

function steppingClock(startIso = '2025-01-01T00:00:00.000Z', stepMs = 1000): Clock {
  let t = Date.parse(startIso);
  return {
    now: () => {
      const d = new Date(t);
      t += stepMs;
      return d;
    },
  };
}

const fixedClock = (iso: string): Clock => ({ now: () => new Date(iso) });

function setup(peerUrl: string | undefined, over: Partial<MeshClientDeps> = {}, env: Record<string, string> = {}) {
  const config = loadConfig({
    ...(peerUrl ? { SVC_PEER_URL_PEER: peerUrl } : {}),
    SVC_SECRET_TO_PEER: SECRET,
    SVC_SECRET_FROM_PEER: 'inbound-secret-never-sent',
    ...env,
  });
  const records: OutboundAttempt[] = [];
  const sleep = vi.fn(async (_ms: number) => {});
  const client = createMeshClient({
    selfName: SELF,
    peers: createPeerRegistry(config),
    clock: { now: () => new Date() },
    recordAttempt: async (a) => {
      records.push(a);
    },
    sleep,
    random: () => 0.5,
    ...over,
  });
  return { client, records, sleep };
}

function assertNoSecrets(...values: unknown[]): void {
  const text = JSON.stringify(values);
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain('inbound-secret-never-sent');
}

// ---- tests -------------------------------------------------------------------------------------

describe('signed call to a verifying peer', () => {
  it('sends the documented headers and body, and the peer verifies the signature independently', async () => {
    const peer = await startPeer((r, res) => {
      const err = peerCheck(r);
      if (err) return json(res, 401, { error: err, message: 'no' });
      const { flow, payload } = JSON.parse(r.body.toString('utf8')) as { flow: string; payload: { nonce: string } };
      json(res, 200, {
        requestId: r.headers['x-svc-request-id'],
        pong: true,
        self: 'peer',
        flow,
        nonce: payload.nonce,
      });
    });
    const { client, records } = setup(peer.origin);
    const result = await client.call('peer', 'ping', { nonce: 'n-1', note: 'Zoë 🚀' }, { requestId: 'req-1' });

    expect(result).toMatchObject({
      ok: true,
      status: 200,
      requestId: 'req-1',
      attempts: 1,
      error: null,
      routeNotDeployed: false,
      body: { requestId: 'req-1', pong: true, self: 'peer', flow: 'ping', nonce: 'n-1' },
    });
    expect(result.headers['content-type']).toMatch(/^application\/json/);
    expect(result.durationMs).toBeGreaterThanOrEqual(0);

    expect(peer.received).toHaveLength(1);
    const r = peer.received[0]!;
    expect(r.method).toBe('POST');
    expect(r.url).toBe(DISPATCH);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['x-svc-caller']).toBe(SELF);
    expect(r.headers['x-svc-request-id']).toBe('req-1');
    expect(r.headers['x-svc-timestamp']).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(r.headers['x-svc-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(r.body.toString('utf8')).toBe(JSON.stringify({ flow: 'ping', payload: { nonce: 'n-1', note: 'Zoë 🚀' } }));
    expect(peerCheck(r)).toBeNull();

    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      peer: 'peer',
      flow: 'ping',
      eventType: null,
      severity: null,
      requestId: 'req-1',
      attempt: 1,
      ok: true,
      status: 200,
      error: null,
      response: result.body,
      url: `${peer.origin}${DISPATCH}`,
    });
    assertNoSecrets(records, result);
    expect(JSON.stringify(records)).not.toContain(r.headers['x-svc-signature']);
  });

  it('a peer holding another secret answers 401 bad_signature: final, one attempt', async () => {
    const peer = await startPeer((r, res) => {
      const err = peerCheck(r, 'some-other-secret');
      if (err) return json(res, 401, { error: err, message: 'Signature mismatch' });
      json(res, 200, { ok: true });
    });
    const { client, records, sleep } = setup(peer.origin);
    const result = await client.call('peer', 'ping', {});
    expect(result).toMatchObject({
      ok: false,
      status: 401,
      error: 'bad_signature',
      attempts: 1,
      routeNotDeployed: false,
    });
    expect(result.body).toEqual({ error: 'bad_signature', message: 'Signature mismatch' });
    expect(peer.received).toHaveLength(1);
    expect(sleep).not.toHaveBeenCalled();
    expect(records.map((a) => [a.attempt, a.status, a.error])).toEqual([[1, 401, 'bad_signature']]);
  });

  it('generates a UUID request id, or uses newRequestId, once per logical call', async () => {
    const peer = await startPeer((_r, res) => json(res, 200, {}));
    const a = await setup(peer.origin).client.call('peer', 'ping', {});
    expect(a.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const b = await setup(peer.origin, { newRequestId: () => 'minted-7' }).client.call('peer', 'ping', {});
    expect(b.requestId).toBe('minted-7');
    expect(peer.received.map((r) => r.headers['x-svc-request-id'])).toEqual([a.requestId, 'minted-7']);
  });
});

describe('retries', () => {
  it('525 then 503 then 200: same request id and body, fresh timestamp and signature per attempt, jittered backoff', async () => {
    const peer = await startPeer((r, res, n) => {
      if (n === 1) return html(res, 525, '<html><body>SSL handshake failed</body></html>');
      if (n === 2) return json(res, 503, { error: 'unavailable' });
      json(res, 200, { requestId: r.headers['x-svc-request-id'], accepted: true });
    });
    const clock = steppingClock();
    const { client, records, sleep } = setup(peer.origin, { clock });
    const result = await client.call(
      'peer',
      'event_report',
      { kind: 'system.error' },
      { eventType: 'system.error', severity: 'high' },
    );

    expect(result).toMatchObject({ ok: true, status: 200, attempts: 3, error: null, body: { accepted: true } });
    const rs = peer.received;
    expect(rs).toHaveLength(3);
    const ids = new Set(rs.map((r) => r.headers['x-svc-request-id']));
    expect([...ids]).toEqual([result.requestId]);
    expect(new Set(rs.map((r) => r.body.toString('hex'))).size).toBe(1);
    expect(rs.map((r) => r.headers['x-svc-timestamp'])).toEqual([
      '2025-01-01T00:00:00.000Z',
      '2025-01-01T00:00:01.000Z',
      '2025-01-01T00:00:02.000Z',
    ]);
    expect(new Set(rs.map((r) => r.headers['x-svc-signature'])).size).toBe(3);
    for (const r of rs) expect(peerCheck(r, SECRET, Date.parse('2025-01-01T00:00:00Z'))).toBeNull();

    // full jitter: random() * min(max, base * 2^(attempt-1)) with random = 0.5, base 250
    expect(sleep.mock.calls.map((c) => c[0])).toEqual([125, 250]);

    expect(records.map((a) => [a.attempt, a.ok, a.status, a.error])).toEqual([
      [1, false, 525, 'http_525'],
      [2, false, 503, 'unavailable'],
      [3, true, 200, null],
    ]);
    expect(records[0]!.response).toBe('<html><body>SSL handshake failed</body></html>');
    for (const a of records)
      expect(a).toMatchObject({
        eventType: 'system.error',
        severity: 'high',
        requestId: result.requestId,
        flow: 'event_report',
      });
    assertNoSecrets(records, result);
    const text = JSON.stringify(records);
    for (const r of rs) expect(text).not.toContain(r.headers['x-svc-signature']);
  });

  it.each([520, 521, 522, 523, 524, 526, 527, 500, 502, 504])('retries %i', async (status) => {
    const peer = await startPeer((_r, res, n) => (n === 1 ? html(res, status, 'edge') : json(res, 200, {})));
    const { client } = setup(peer.origin);
    const result = await client.call('peer', 'ping', {});
    expect(result).toMatchObject({ ok: true, attempts: 2 });
  });

  it('500 handler_failed is retried with the same id and reports the peer code when it persists', async () => {
    const peer = await startPeer((_r, res) => json(res, 500, { error: 'handler_failed', message: 'crashed' }));
    const { client, records, sleep } = setup(peer.origin, { maxAttempts: 3 });
    const result = await client.call('peer', 'event_report', {}, { requestId: 'r-500' });
    expect(result).toMatchObject({ ok: false, status: 500, error: 'handler_failed', attempts: 3 });
    expect(peer.received.map((r) => r.headers['x-svc-request-id'])).toEqual(['r-500', 'r-500', 'r-500']);
    expect(records.map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(sleep).toHaveBeenCalledTimes(2);
  });

  it('caps the exponential backoff at maxDelayMs', async () => {
    const peer = await startPeer((_r, res) => json(res, 503, { error: 'busy' }));
    const { client, sleep } = setup(peer.origin, {
      baseDelayMs: 1000,
      maxDelayMs: 1500,
      random: () => 0.5,
      maxAttempts: 5,
    });
    await client.call('peer', 'ping', {});
    expect(sleep.mock.calls.map((c) => c[0])).toEqual([500, 750, 750, 750]);
  });

  it('honours Retry-After: 2 (seconds) instead of the computed delay', async () => {
    const peer = await startPeer((_r, res, n) =>
      n === 1 ? json(res, 503, { error: 'busy' }, { 'retry-after': '2' }) : json(res, 200, {}),
    );
    const { client, sleep } = setup(peer.origin);
    const result = await client.call('peer', 'ping', {});
    expect(result).toMatchObject({ ok: true, attempts: 2 });
    expect(sleep.mock.calls).toEqual([[2000]]);
  });

  it('retries 429 and honours an HTTP-date Retry-After', async () => {
    const now = '2025-01-01T00:00:00.000Z';
    const peer = await startPeer((_r, res, n) =>
      n === 1
        ? json(res, 429, { error: 'rate_limited' }, { 'retry-after': 'Wed, 01 Jan 2025 00:00:03 GMT' })
        : json(res, 200, {}),
    );
    const { client, sleep, records } = setup(peer.origin, { clock: fixedClock(now) });
    const result = await client.call('peer', 'ping', {});
    expect(result).toMatchObject({ ok: true, attempts: 2 });
    expect(sleep.mock.calls).toEqual([[3000]]);
    expect(records.map((a) => a.error)).toEqual(['rate_limited', null]);
  });

  it('caps Retry-After at 4 × maxDelayMs', async () => {
    const peer = await startPeer((_r, res, n) =>
      n === 1 ? json(res, 503, {}, { 'retry-after': '3600' }) : json(res, 200, {}),
    );
    const { client, sleep } = setup(peer.origin, { maxDelayMs: 5000 });
    await client.call('peer', 'ping', {});
    expect(sleep.mock.calls).toEqual([[20_000]]);
  });

  it('connection refused: network_error, retried up to maxAttempts, no HTTP status', async () => {
    const port = await closedPort();
    const { client, records, sleep } = setup(`http://127.0.0.1:${port}`);
    const result = await client.call('peer', 'ping', {}, { requestId: 'refused-1' });
    expect(result).toMatchObject({
      ok: false,
      status: null,
      error: 'network_error',
      attempts: 4,
      requestId: 'refused-1',
      headers: {},
    });
    expect(records.map((a) => [a.attempt, a.status, a.error])).toEqual([
      [1, null, 'network_error'],
      [2, null, 'network_error'],
      [3, null, 'network_error'],
      [4, null, 'network_error'],
    ]);
    expect(JSON.stringify(records[0]!.response)).toContain('ECONNREFUSED');
    expect(sleep.mock.calls.map((c) => c[0])).toEqual([125, 250, 500]);
    assertNoSecrets(records, result);
  });

  it('a hanging peer times out per attempt (AbortController) and is retried', async () => {
    const peer = await startPeer(() => {
      /* never answers */
    });
    const { client, records } = setup(peer.origin, { timeoutMs: 10_000 });
    const started = Date.now();
    const result = await client.call('peer', 'ping', {}, { timeoutMs: 150, maxAttempts: 2 });
    expect(result).toMatchObject({ ok: false, status: null, error: 'timeout', attempts: 2 });
    expect(peer.received).toHaveLength(2);
    expect(records.map((a) => [a.attempt, a.error])).toEqual([
      [1, 'timeout'],
      [2, 'timeout'],
    ]);
    for (const a of records) expect(a.durationMs).toBeGreaterThanOrEqual(100);
    expect(Date.now() - started).toBeLessThan(8000);
  });

  it('a peer that sends headers then stalls the body also times out', async () => {
    const peer = await startPeer((_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial":');
    });
    const { client } = setup(peer.origin);
    const result = await client.call('peer', 'ping', {}, { timeoutMs: 150, maxAttempts: 1 });
    expect(result).toMatchObject({ ok: false, error: 'timeout', attempts: 1 });
  });
});

describe('final answers', () => {
  it('HTML 200 means the route is not deployed: failure, not retried, text excerpt kept', async () => {
    const page = `<!doctype html><html><body>${'x'.repeat(2000)}</body></html>`;
    const peer = await startPeer((_r, res) => html(res, 200, page));
    const { client, records, sleep } = setup(peer.origin);
    const result = await client.call('peer', 'ping', {});
    expect(result).toMatchObject({
      ok: false,
      status: 200,
      error: 'route_not_deployed',
      routeNotDeployed: true,
      attempts: 1,
    });
    expect(result.body).toBe(page.slice(0, 500));
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      ok: false,
      status: 200,
      error: 'route_not_deployed',
      response: page.slice(0, 500),
    });
    expect(sleep).not.toHaveBeenCalled();
  });

  it('a JSON 200 with an unparseable body is invalid_response, not retried', async () => {
    const peer = await startPeer((_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"pong": tru');
    });
    const { client, records } = setup(peer.origin);
    const result = await client.call('peer', 'ping', {});
    expect(result).toMatchObject({
      ok: false,
      status: 200,
      error: 'invalid_response',
      routeNotDeployed: false,
      attempts: 1,
      body: '{"pong": tru',
    });
    expect(records[0]).toMatchObject({ error: 'invalid_response', response: '{"pong": tru' });
  });

  it('accepts +json media types as JSON', async () => {
    const peer = await startPeer((_r, res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.peer+json' });
      res.end('{"pong":true}');
    });
    const result = await setup(peer.origin).client.call('peer', 'ping', {});
    expect(result).toMatchObject({ ok: true, body: { pong: true } });
  });

  it.each([
    [409, { error: 'request_in_progress', message: 'busy' }, 'request_in_progress'],
    [409, { error: 'idempotency_key_reuse', message: 'reuse' }, 'idempotency_key_reuse'],
    [400, { error: 'invalid_body', message: 'bad' }, 'invalid_body'],
    [403, { error: 'flow_not_allowed', message: 'no' }, 'flow_not_allowed'],
    [404, { message: 'no code' }, 'http_404'],
    [413, 'not-json', 'http_413'],
  ])('%i is final (%j)', async (status, body, code) => {
    const peer = await startPeer((_r, res) =>
      typeof body === 'string' ? html(res, status, body) : json(res, status, body, { 'retry-after': '1' }),
    );
    const { client, records, sleep } = setup(peer.origin);
    const result = await client.call('peer', 'event_report', {});
    expect(result).toMatchObject({ ok: false, status, error: code, attempts: 1 });
    expect(peer.received).toHaveLength(1);
    expect(records).toHaveLength(1);
    expect(sleep).not.toHaveBeenCalled();
  });

  it('does not follow redirects (a signed POST is never replayed elsewhere)', async () => {
    const elsewhere = await startPeer((_r, res) => json(res, 200, { hijacked: true }));
    const peer = await startPeer((_r, res) => {
      res.writeHead(307, { location: `${elsewhere.origin}${DISPATCH}` });
      res.end();
    });
    const result = await setup(peer.origin).client.call('peer', 'ping', {});
    expect(result).toMatchObject({ ok: false, status: 307, error: 'http_307', attempts: 1 });
    expect(elsewhere.received).toHaveLength(0);
  });
});

describe('transport URL forms (signature always over the logical path)', () => {
  const forms: [string, (origin: string) => string, string][] = [
    ['bare origin', (o) => o, DISPATCH],
    ['origin with trailing slash', (o) => `${o}/`, DISPATCH],
    ['full dispatch URL', (o) => `${o}${DISPATCH}`, DISPATCH],
    ['dispatch URL with trailing slash', (o) => `${o}${DISPATCH}/`, DISPATCH],
    ['custom path', (o) => `${o}/mesh/in`, '/mesh/in'],
    ['custom path with query', (o) => `${o}/mesh/in?region=eu`, '/mesh/in?region=eu'],
  ];

  it.each(forms)('%s', async (_label, configured, expectedRequestUrl) => {
    const peer = await startPeer((r, res) => {
      if (r.url !== expectedRequestUrl) return json(res, 404, { error: 'not_found' });
      const err = peerCheck(r);
      if (err) return json(res, 401, { error: err });
      json(res, 200, { pong: true });
    });
    const { client, records } = setup(configured(peer.origin));
    const result = await client.call('peer', 'ping', { nonce: 'x' });
    expect(result).toMatchObject({ ok: true, status: 200, attempts: 1 });
    expect(peer.received.map((r) => r.url)).toEqual([expectedRequestUrl]);
    expect(records[0]!.url).toBe(`${peer.origin}${expectedRequestUrl.replace('region=eu', 'region=redacted')}`);
  });

  it('records the URL without query values or userinfo', async () => {
    const peer = await startPeer((_r, res) => json(res, 200, {}));
    const { client, records } = setup(`${peer.origin}/mesh/in?apikey=gateway-key-123&x=1`);
    await client.call('peer', 'ping', {});
    expect(peer.received[0]!.url).toBe('/mesh/in?apikey=gateway-key-123&x=1');
    expect(records[0]!.url).toBe(`${peer.origin}/mesh/in?apikey=redacted&x=redacted`);
  });
});

describe('peer_not_configured', () => {
  it.each([
    ['unknown peer', 'nobody', {}],
    ['peer without a URL', 'peer', {}],
    [
      'peer without an outbound secret',
      'other',
      { SVC_PEER_URL_OTHER: 'http://127.0.0.1:9', SVC_SECRET_FROM_OTHER: 'in-only' },
    ],
  ])('%s: no request, one recorded attempt with status null', async (_label, name, env) => {
    const peer = await startPeer((_r, res) => json(res, 200, {}));
    const { client, records, sleep } = setup(undefined, {}, env);
    const result = await client.call(name, 'ping', {}, { requestId: 'nc-1', eventType: 'x', severity: 'low' });
    expect(result).toMatchObject({
      ok: false,
      status: null,
      error: 'peer_not_configured',
      requestId: 'nc-1',
      attempts: 1,
      routeNotDeployed: false,
      body: null,
      headers: {},
    });
    expect(peer.received).toHaveLength(0);
    expect(sleep).not.toHaveBeenCalled();
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      attempt: 1,
      ok: false,
      status: null,
      error: 'peer_not_configured',
      requestId: 'nc-1',
      flow: 'ping',
      eventType: 'x',
      severity: 'low',
    });
    assertNoSecrets(records, result);
  });
});

describe('recordAttempt', () => {
  it('is awaited once per attempt, and a throwing recorder never breaks the call', async () => {
    const peer = await startPeer((_r, res, n) =>
      n < 3 ? json(res, 502, { error: 'bad_gateway' }) : json(res, 200, { ok: 1 }),
    );
    const seen: number[] = [];
    let inFlight = 0;
    const recordAttempt = vi.fn(async (a: OutboundAttempt) => {
      expect(inFlight).toBe(0);
      inFlight += 1;
      await new Promise((r) => setTimeout(r, 5));
      inFlight -= 1;
      seen.push(a.attempt);
      if (a.attempt === 1) throw new Error('database down');
    });
    const { client } = setup(peer.origin, { recordAttempt });
    const result = await client.call('peer', 'ping', {});
    expect(result).toMatchObject({ ok: true, attempts: 3 });
    expect(recordAttempt).toHaveBeenCalledTimes(3);
    expect(seen).toEqual([1, 2, 3]);
  });

  it('a recorder that rejects synchronously is swallowed too', async () => {
    const peer = await startPeer((_r, res) => json(res, 200, {}));
    const { client } = setup(peer.origin, {
      recordAttempt: () => {
        throw new Error('sync throw');
      },
    });
    await expect(client.call('peer', 'ping', {})).resolves.toMatchObject({ ok: true });
  });
});

describe('parseRetryAfter', () => {
  const now = new Date('2025-01-01T00:00:00Z');
  it.each([
    [null, null],
    ['0', 0],
    ['2', 2000],
    [' 7 ', 7000],
    ['Wed, 01 Jan 2025 00:00:10 GMT', 10_000],
    ['Tue, 31 Dec 2024 23:59:00 GMT', 0],
    ['1.5', null],
    ['-1', null],
    ['soon', null],
    ['', null],
  ])('%j → %j', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });
});
