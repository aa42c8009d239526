// The mesh CLI against real HTTP peers on loopback (node:http, port 0). Peers check our signature
// with their own inline node:crypto code, not with mesh-signing.ts. One test spawns the real process.
import { spawn } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { closeAllPeers, closedPort, startPeer, type Handler, type Received } from '../../test/helpers/loopback-peer.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../lib/config.ts';
import { runMeshCli } from './mesh-cli.ts';

const DISPATCH = '/api/public/svc/dispatch';
const SECRET_TO = 'to-billing-secret-8d2e51'; // our SVC_SECRET_TO_BILLING == billing's inbound secret for rampart
const SECRET_FROM = 'from-billing-secret-c47a09';
const ROOT = join(import.meta.dirname, '../..');

// ---- loopback peers ----------------------------------------------------------------------------

afterEach(closeAllPeers);

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

function html(res: ServerResponse, status: number): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  res.end('<!doctype html><html><body>Welcome</body></html>');
}

/** The peer's own check: sha256 of the raw body, HMAC over caller\ntimestamp\nPOST\npath\nbodyHash. */
function peerCheck(r: Received, secret = SECRET_TO): string | null {
  const caller = r.headers['x-svc-caller'];
  const ts = r.headers['x-svc-timestamp'];
  const sig = r.headers['x-svc-signature'];
  if (typeof caller !== 'string' || typeof ts !== 'string') return 'missing_svc_headers';
  if (typeof sig !== 'string') return 'missing_signature';
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(ts)) return 'bad_timestamp';
  if (Math.abs(Date.parse(ts) - Date.now()) > 300_000) return 'stale_timestamp';
  const bodyHash = createHash('sha256').update(r.body).digest('hex');
  const expected = createHmac('sha256', secret)
    .update(`${caller}\n${ts}\nPOST\n${DISPATCH}\n${bodyHash}`)
    .digest('hex');
  return expected === sig ? null : 'bad_signature';
}

/** A dispatch route that verifies, answers ping, and otherwise says unknown_flow. */
const verifyingPeer =
  (secret = SECRET_TO): Handler =>
  (r, res) => {
    const failed = peerCheck(r, secret);
    if (failed) return json(res, 401, { error: failed, message: 'refused' });
    const { flow, payload } = JSON.parse(r.body.toString('utf8')) as { flow: string; payload: { nonce?: unknown } };
    if (flow !== 'ping') return json(res, 400, { error: 'unknown_flow', message: 'no' });
    json(res, 200, {
      requestId: r.headers['x-svc-request-id'],
      pong: true,
      self: 'billing',
      flow,
      nonce: payload.nonce ?? null,
    });
  };

// ---- running the CLI ---------------------------------------------------------------------------

async function run(argv: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runMeshCli(argv, { config: loadConfig(env), out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const billingEnv = (url: string, extra: Record<string, string> = {}) => ({
  SVC_PEER_URL_BILLING: url,
  SVC_SECRET_TO_BILLING: SECRET_TO,
  SVC_SECRET_FROM_BILLING: SECRET_FROM,
  ...extra,
});

function expectNoSecrets(...texts: string[]): void {
  for (const t of texts) {
    expect(t).not.toContain(SECRET_TO);
    expect(t).not.toContain(SECRET_FROM);
  }
}

// ---- call --------------------------------------------------------------------------------------

describe('call', () => {
  it('makes a signed call the peer verifies independently, and prints status, request id, duration and the body', async () => {
    const peer = await startPeer(verifyingPeer());
    const r = await run(['call', 'billing', 'ping', '{"nonce":"n-1"}'], billingEnv(peer.origin));

    expect(r.code).toBe(0);
    expect(peer.received).toHaveLength(1);
    const got = peer.received[0]!;
    expect(got.method).toBe('POST');
    expect(got.url).toBe(DISPATCH);
    expect(got.headers['x-svc-caller']).toBe('rampart');
    expect(got.body.toString('utf8')).toBe('{"flow":"ping","payload":{"nonce":"n-1"}}');
    expect(peerCheck(got)).toBeNull();

    const requestId = got.headers['x-svc-request-id'] as string;
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.out).toContain('status: 200');
    expect(r.out).toContain(`requestId: ${requestId}`);
    expect(r.out).toMatch(/duration: \d+ ms \(1 attempt\)/);
    expect(r.out).toContain('"pong": true'); // pretty-printed
    expect(r.out).toContain('"nonce": "n-1"');
    expect(r.err).toMatch(/attempt 1: status 200, error -, \d+ ms/);
    expectNoSecrets(r.out, r.err);
  });

  it('sends --request-id as x-svc-request-id', async () => {
    const peer = await startPeer(verifyingPeer());
    const r = await run(['call', 'billing', 'ping', '--request-id', 'cli-req-1'], billingEnv(peer.origin));
    expect(r.code).toBe(0);
    expect(peer.received[0]!.headers['x-svc-request-id']).toBe('cli-req-1');
    expect(peer.received[0]!.body.toString('utf8')).toBe('{"flow":"ping","payload":{}}');
    expect(r.out).toContain('requestId: cli-req-1');
    expect(r.out).toContain('"requestId": "cli-req-1"');
  });

  it('retries a 503 with the same request id, signed afresh, and prints every attempt', async () => {
    const peer = await startPeer((r, res, n) =>
      n === 1 ? json(res, 503, { error: 'busy', message: 'later' }) : verifyingPeer()(r, res, n),
    );
    const r = await run(['call', 'billing', 'ping', '{}', '--request-id', 'retry-1'], billingEnv(peer.origin));
    expect(r.code).toBe(0);
    expect(peer.received).toHaveLength(2);
    for (const got of peer.received) {
      expect(got.headers['x-svc-request-id']).toBe('retry-1');
      expect(peerCheck(got)).toBeNull();
    }
    expect(r.err).toMatch(/attempt 1: status 503, error busy, \d+ ms/);
    expect(r.err).toMatch(/attempt 2: status 200, error -, \d+ ms/);
    expect(r.out).toMatch(/\(2 attempts\)/);
  });

  it('exits 1 on a refusal: one attempt for a 4xx, the peer error code, and a hint on the secret', async () => {
    const peer = await startPeer(verifyingPeer('the-peer-holds-another-secret'));
    const r = await run(['call', 'billing', 'ping'], billingEnv(peer.origin));
    expect(r.code).toBe(1);
    expect(peer.received).toHaveLength(1);
    expect(r.out).toContain('status: 401');
    expect(r.out).toContain('error: bad_signature');
    expect(r.out).toContain('"error": "bad_signature"');
    expect(r.err).toContain('SVC_SECRET_TO_BILLING');
    expect(r.err).toContain('SVC_SECRET_FROM_RAMPART');
    expectNoSecrets(r.out, r.err);
  });

  it('exits 1 when the peer answers 200 with an HTML page: route not deployed', async () => {
    const peer = await startPeer((_r, res) => html(res, 200));
    const r = await run(['call', 'billing', 'ping'], billingEnv(peer.origin));
    expect(r.code).toBe(1);
    expect(peer.received).toHaveLength(1); // not retried
    expect(r.out).toContain('error: route_not_deployed');
    expect(r.err).toContain('not deployed');
  });

  it('exits 1 when the peer is unreachable, after the client retries', async () => {
    const port = await closedPort();
    const r = await run(['call', 'billing', 'ping'], billingEnv(`http://127.0.0.1:${port}`));
    expect(r.code).toBe(1);
    expect(r.out).toContain('status: none');
    expect(r.out).toContain('error: network_error');
    expect(r.err).toMatch(/attempt 4: status -, error network_error \(ECONNREFUSED\)/);
  });

  it('exits 78 for a peer that lacks its URL or outbound secret', async () => {
    const noSecret = await run(['call', 'billing', 'ping'], { SVC_PEER_URL_BILLING: 'http://127.0.0.1:9' });
    expect(noSecret.code).toBe(78);
    expect(noSecret.err).toContain('SVC_SECRET_TO_BILLING is not set');
    const noUrl = await run(['call', 'billing', 'ping'], { SVC_SECRET_TO_BILLING: SECRET_TO });
    expect(noUrl.code).toBe(78);
    expect(noUrl.err).toContain('SVC_PEER_URL_BILLING is not set');
  });
});

// ---- probe -------------------------------------------------------------------------------------

describe('probe', () => {
  it('calls a route that refuses the unsigned probe with JSON 401 live (exit 0)', async () => {
    const peer = await startPeer((r, res) =>
      json(res, 401, { error: peerCheck(r) ?? 'ok', message: 'Send the signing headers.' }),
    );
    const r = await run(['probe', 'billing'], billingEnv(peer.origin));
    expect(r.code).toBe(0);
    expect(r.out).toContain('status: 401');
    expect(r.out).toContain('content-type: application/json; charset=utf-8');
    expect(r.out).toMatch(/duration: \d+ ms/);
    expect(r.out).toContain(
      'verdict: dispatch route is live (refused the unsigned probe as it should): missing_svc_headers',
    );
    const got = peer.received[0]!;
    expect(got.method).toBe('POST');
    expect(got.url).toBe(DISPATCH);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.body.toString('utf8')).toBe('{}');
    expect(Object.keys(got.headers).filter((h) => h.startsWith('x-svc-'))).toEqual([]);
  });

  it('probes the complete transport URL when the peer URL carries another path', async () => {
    const peer = await startPeer((_r, res) => json(res, 401, { error: 'missing_signature', message: 'no' }));
    const r = await run(['probe', 'billing'], billingEnv(`${peer.origin}/mesh/in?key=abc`));
    expect(r.code).toBe(0);
    expect(peer.received[0]!.url).toBe('/mesh/in?key=abc');
    expect(r.out).toContain(`url: ${peer.origin}/mesh/in?key=redacted`);
  });

  it('says "route not deployed" for an HTML page, whatever the status (exit 1)', async () => {
    for (const status of [200, 404]) {
      const peer = await startPeer((_r, res) => html(res, status));
      const r = await run(['probe', 'billing'], billingEnv(peer.origin));
      expect(r.code, String(status)).toBe(1);
      expect(r.out).toContain(`status: ${status}`);
      expect(r.out).toContain('content-type: text/html; charset=utf-8');
      expect(r.out).toContain('verdict: route not deployed: the answer is an HTML page');
    }
  });

  it('flags a route that answers an unsigned call with JSON 2xx (exit 1)', async () => {
    const peer = await startPeer((_r, res) => json(res, 200, { ok: true }));
    const r = await run(['probe', 'billing'], billingEnv(peer.origin));
    expect(r.code).toBe(1);
    expect(r.out).toContain('verdict: answered an unsigned call: the route does not check signatures!');
  });

  it('says unreachable for a closed port (exit 1)', async () => {
    const port = await closedPort();
    const r = await run(['probe', 'billing'], billingEnv(`http://127.0.0.1:${port}`));
    expect(r.code).toBe(1);
    expect(r.out).toContain('verdict: unreachable (ECONNREFUSED)');
  });

  it('describes other answers: an edge 525 page, a JSON 404 (exit 1)', async () => {
    const edge = await startPeer((_r, res) => {
      res.writeHead(525, { 'content-type': 'text/plain' });
      res.end('error code: 525');
    });
    const r525 = await run(['probe', 'billing'], billingEnv(edge.origin));
    expect(r525.code).toBe(1);
    expect(r525.out).toMatch(/verdict: edge error 525: the TLS handshake .*no secret change/);

    const missing = await startPeer((_r, res) => json(res, 404, { error: 'route_not_found', message: 'no' }));
    const r404 = await run(['probe', 'billing'], billingEnv(missing.origin));
    expect(r404.code).toBe(1);
    expect(r404.out).toContain('verdict: no route at this URL (404 route_not_found)');
  });
});

// ---- peers and usage ---------------------------------------------------------------------------

describe('peers', () => {
  it('lists peers with presence only, never a secret value', async () => {
    const r = await run(['peers'], {
      ...billingEnv('https://billing.example/api/public/svc/dispatch'),
      SVC_PEER_FLOWS_BILLING: 'ping,health_check,event_report',
      SVC_PEER_URL_OPS_CENTRAL: 'https://ops.example',
      SVC_SECRET_TO_OPS_CENTRAL: 'ops-outbound-secret-771',
      SVC_SECRET_FROM_BID_PORTAL: 'bid-inbound-secret-552',
      SVC_MANAGEMENT_PEER: 'ops-central',
      SVC_BID_PEER: 'bid-portal',
    });
    expect(r.code).toBe(0);
    expect(r.out).toContain('self: rampart');
    const line = (name: string) => r.out.split('\n').find((l) => l.startsWith(`${name} `)) ?? '';
    expect(line('billing').split(/\s{2,}/)).toEqual([
      'billing',
      'BILLING',
      'dispatch',
      'set',
      'set',
      'ping,health_check,event_report',
      '-',
    ]);
    expect(line('ops-central').split(/\s{2,}/)).toEqual([
      'ops-central',
      'OPS_CENTRAL',
      'origin',
      'set',
      'unset',
      'ping,health_check',
      'management',
    ]);
    expect(line('bid-portal').split(/\s{2,}/)).toEqual([
      'bid-portal',
      'BID_PORTAL',
      'unset',
      'unset',
      'set',
      'ping,health_check',
      'bid',
    ]);
    for (const secret of [SECRET_TO, SECRET_FROM, 'ops-outbound-secret-771', 'bid-inbound-secret-552']) {
      expect(r.out).not.toContain(secret);
      expect(r.err).not.toContain(secret);
    }
  });

  it('warns when a role names no configured peer', async () => {
    const r = await run(['peers'], { SVC_MANAGEMENT_PEER: 'ghost' });
    expect(r.code).toBe(0);
    expect(r.out).toContain('no peers configured');
    expect(r.err).toContain('SVC_MANAGEMENT_PEER=ghost names no configured peer');
  });
});

describe('usage errors exit 64 with the usage text', () => {
  const cases: [string, string[], string][] = [
    ['no command', [], 'no command given'],
    ['unknown command', ['launch'], 'unknown command "launch"'],
    ['call without peer', ['call'], 'call needs <peer> and <flow>'],
    ['call without flow', ['call', 'billing'], 'call needs <peer> and <flow>'],
    ['bad JSON payload', ['call', 'billing', 'ping', '{nonce:1}'], 'payload-json is not valid JSON'],
    ['payload not an object', ['call', 'billing', 'ping', '[1,2]'], 'payload-json must be a JSON object'],
    ['unquoted payload', ['call', 'billing', 'ping', '{}', 'extra'], 'unexpected argument "extra"'],
    ['unknown peer', ['call', 'nobody', 'ping'], 'unknown peer "nobody" (configured: billing;'],
    ['bad request id', ['call', 'billing', 'ping', '--request-id', 'has space'], '--request-id must be'],
    ['unknown option', ['call', 'billing', 'ping', '--bogus'], "Unknown option '--bogus'"],
    ['probe without peer', ['probe'], 'probe needs <peer>'],
    ['probe unknown peer', ['probe', 'nobody'], 'unknown peer "nobody"'],
    ['request id outside call', ['probe', 'billing', '--request-id', 'x'], '--request-id applies to call only'],
    ['peers with an argument', ['peers', 'billing'], 'unexpected argument "billing"'],
  ];
  it.each(cases)('%s', async (_name, argv, message) => {
    const r = await run(argv, billingEnv('http://127.0.0.1:9'));
    expect(r.code).toBe(64);
    expect(r.err).toContain(message);
    expect(r.err).toContain('usage: npm run mesh -- call <peer> <flow>');
    expect(r.out).toBe('');
  });

  it('prints the usage on --help and help, exit 0', async () => {
    for (const argv of [['--help'], ['help'], ['-h']]) {
      const r = await run(argv);
      expect(r.code).toBe(0);
      expect(r.out).toContain('usage: npm run mesh -- call');
      expect(r.out).toContain('not stored in svc_outbound_events');
    }
  });
});

// ---- the real process --------------------------------------------------------------------------

function spawnCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // A clean environment: nothing from this shell's SVC_* or DATABASE_URL leaks in.
    const child = spawn(process.execPath, ['src/mesh/mesh-cli.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('entry point', () => {
  it('runs as `node src/mesh/mesh-cli.ts call ...` with peers from the environment', async () => {
    const peer = await startPeer(verifyingPeer());
    const r = await spawnCli(['call', 'billing', 'ping', '{"nonce":"spawned"}', '--request-id', 'spawn-1'], {
      SVC_PEER_URL_BILLING: peer.origin,
      SVC_SECRET_TO_BILLING: SECRET_TO,
    });
    expect(r.stderr).toMatch(/attempt 1: status 200, error -, \d+ ms/);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('status: 200');
    expect(r.stdout).toContain('requestId: spawn-1');
    expect(r.stdout).toContain('"pong": true');
    expect(r.stdout).toContain('"nonce": "spawned"');
    expect(peerCheck(peer.received[0]!)).toBeNull();
    expect(peer.received[0]!.headers['x-svc-request-id']).toBe('spawn-1');
  });

  it('exits 78 with the message on invalid configuration', async () => {
    const r = await spawnCli(['peers'], { SVC_PEER_URL_BILLING: 'ftp://billing.example' });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('SVC_PEER_URL_BILLING: must be an http(s) URL');
  });
});
