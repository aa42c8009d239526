// The worker client and CLI against a real server on loopback: enrollment, requests signed the way
// the server's worker auth verifies them, retries that re-sign with a fresh nonce (no replay), no
// retry on a 4xx, Retry-After honoured, and `enroll` / `status` end to end (config mode 0600,
// no secrets printed).
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkerClient, enrollWorker } from '../../src/agent/client.ts';
import { main } from '../../src/agent/cli.ts';
import { WorkerApiError, WorkerNetworkError } from '../../src/agent/errors.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import type { Client } from '../helpers/client.ts';
import { tenantCast } from '../helpers/tenants.ts';

let t: TestApp;
let owner: Client;
let tenant: string;
let serverUrl: string;
let secret: string;
const dir = mkdtempSync(join(tmpdir(), 'rampart-worker-cli-'));

async function newCode(): Promise<string> {
  const res = await owner.post(`/api/v1/tenants/${tenant}/worker-enrollments`);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().code;
}

beforeAll(async () => {
  t = await createTestApp();
  ({ owner, tenant } = await tenantCast(t, 'wclient'));
  const res = await owner.post(`/api/v1/tenants/${tenant}/webhook-secret`, {});
  expect(res.statusCode, res.body).toBe(201);
  secret = res.json().secret;
  serverUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A fetch that records each request and lets a test answer the first ones itself. */
function recordingFetch(script: ((n: number) => Response | Error | null)[] = []) {
  const bodies: string[] = [];
  const f: typeof fetch = async (input, init) => {
    const n = bodies.length;
    bodies.push(typeof init?.body === 'string' ? init.body : '');
    const scripted = script[n]?.(n) ?? null;
    if (scripted instanceof Error) throw scripted;
    if (scripted) return scripted;
    return fetch(input, init);
  };
  return { fetch: f, bodies };
}

describe('worker client against the server', () => {
  let token = '';
  let workerId = '';

  it('enrolls with a code and sends heartbeats the server verifies', async () => {
    const enrolled = await enrollWorker({
      serverUrl,
      code: await newCode(),
      name: 'client-test',
      platform: 'linux/x64',
      version: '0.1.0',
    });
    ({ token, workerId } = enrolled);
    expect(enrolled.tenantId).toBe(tenant);
    const client = createWorkerClient({ serverUrl, token, signingSecret: async () => secret });
    const hb = await client.heartbeat([], { version: '0.1.0' });
    expect(hb).toMatchObject({ ok: true, workerId });
    expect(Math.abs(Date.parse(hb.serverTime) - Date.now())).toBeLessThan(300_000);
  });

  it('refuses a wrong secret once, without retrying a 401', async () => {
    const rec = recordingFetch();
    const client = createWorkerClient({ serverUrl, token, signingSecret: 'not-the-secret', fetch: rec.fetch });
    const err = await client.heartbeat().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkerApiError);
    expect(err).toMatchObject({ status: 401, code: 'worker_signature_invalid', retryable: false });
    expect(rec.bodies).toHaveLength(1);
  });

  it('retries a 503 and a network error with a fresh nonce each time, so the server sees no replay', async () => {
    const waits: number[] = [];
    const rec = recordingFetch([
      () => new Response('{"error":"service_unavailable","message":"busy"}', { status: 503 }),
      () => new TypeError('fetch failed'),
    ]);
    const client = createWorkerClient({
      serverUrl,
      token,
      signingSecret: secret,
      fetch: rec.fetch,
      sleep: async (ms) => void waits.push(ms),
      random: () => 0.5,
    });
    const hb = await client.heartbeat();
    expect(hb.workerId).toBe(workerId);
    expect(rec.bodies).toHaveLength(3);
    const nonces = rec.bodies.map((b) => JSON.parse(b).nonce as string);
    expect(new Set(nonces).size).toBe(3);
    for (const n of nonces) expect(n).toMatch(/^[A-Za-z0-9_-]{16,128}$/);
    // Full jitter: half of base·2^n with random() = 0.5.
    expect(waits).toEqual([250, 500]);
  });

  it('waits as long as Retry-After says on a 429', async () => {
    const waits: number[] = [];
    const rec = recordingFetch([
      () =>
        new Response('{"error":"rate_limited","message":"slow down"}', {
          status: 429,
          headers: { 'retry-after': '3' },
        }),
    ]);
    const client = createWorkerClient({
      serverUrl,
      token,
      signingSecret: secret,
      fetch: rec.fetch,
      sleep: async (ms) => void waits.push(ms),
    });
    await client.heartbeat();
    expect(waits).toEqual([3_000]);
  });

  it('gives up after the attempts and says the server was unreachable', async () => {
    const client = createWorkerClient({
      serverUrl: 'http://127.0.0.1:9',
      token,
      signingSecret: secret,
      retry: { attempts: 2 },
      sleep: async () => undefined,
    });
    await expect(client.heartbeat()).rejects.toBeInstanceOf(WorkerNetworkError);
  });
});

function io(env: Record<string, string> = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d) => (out += d));
  stderr.on('data', (d) => (err += d));
  const stdin = new PassThrough();
  return { io: { stdout, stderr, stdin, env, signal: new AbortController().signal }, out: () => out, err: () => err };
}

describe('rampart-worker enroll and status', () => {
  it('enrolls, writes the config 0600, and status shows the heartbeat without secrets', async () => {
    const path = join(dir, 'cfg', 'config.json');
    const e = io();
    const code = await main(
      [
        'enroll',
        '--server',
        serverUrl,
        '--code',
        await newCode(),
        '--name',
        'cli-worker',
        '--secret',
        secret,
        '--config',
        path,
      ],
      e.io,
    );
    expect(code, e.err()).toBe(0);
    expect(e.out()).toContain('Signed heartbeat accepted');
    const cfg = JSON.parse(readFileSync(path, 'utf8'));
    expect(cfg).toMatchObject({ version: 1, serverUrl, tenantId: tenant, name: 'cli-worker', signingSecret: secret });
    if (process.platform !== 'win32') expect(statSync(path).mode & 0o777).toBe(0o600);

    const s = io();
    expect(await main(['status', '--json', '--config', path], s.io), s.err()).toBe(0);
    const status = JSON.parse(s.out());
    expect(status.server).toMatchObject({ ok: true, status: 200 });
    expect(status.heartbeat).toMatchObject({ ok: true, workerId: cfg.workerId });
    expect(typeof status.heartbeat.clockSkewMs).toBe('number');
    expect(s.out()).not.toContain(cfg.token);
    expect(s.out()).not.toContain(secret);

    const text = io();
    expect(await main(['status', '--config', path], text.io)).toBe(0);
    expect(text.out()).toMatch(/Heartbeat: +accepted; worker /);
  });

  it('exits 4 for a code the server refuses and 3 with no config', async () => {
    const e = io();
    expect(
      await main(
        ['enroll', '--server', serverUrl, '--code', 'ZZZZZZZZ', '--secret', secret, '--config', join(dir, 'x.json')],
        e.io,
      ),
    ).toBe(4);
    expect(e.err()).toContain('enrollment_code_invalid');
    const s = io();
    expect(await main(['status', '--config', join(dir, 'missing.json')], s.io)).toBe(3);
    expect(s.err()).toContain('rampart-worker enroll');
  });

  it('takes the secret from RAMPART_WORKER_SECRET and refuses a non-TTY prompt', async () => {
    const path = join(dir, 'env.json');
    const e = io({ RAMPART_WORKER_SECRET: secret });
    expect(
      await main(['enroll', '--server', serverUrl, '--code', await newCode(), '--config', path], e.io),
      e.err(),
    ).toBe(0);
    const none = io();
    expect(await main(['enroll', '--server', serverUrl, '--code', 'ABCD1234', '--config', path], none.io)).toBe(2);
    expect(none.err()).toContain('RAMPART_WORKER_SECRET');
  });
});
