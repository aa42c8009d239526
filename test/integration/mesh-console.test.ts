// Staff → mesh client console (docs/mesh.md §11.3): peers as presence booleans, a signed call through the
// outbound client against a real Rampart peer on loopback (new id, same id → replayed, same id
// with another payload → 409 idempotency_key_reuse, an in-flight claim → 409
// request_in_progress), an HTML peer, a peer that cannot be called, validation, audit, and no
// configured secret in any answer.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/lib.ts';
import { withService } from '../../src/db/tenant.ts';
import type { ConsolePeers, ConsoleSendResponse } from '../../src/staff/mesh-console-schemas.ts';
import { createTestApp, STAFF_DOMAIN, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { closeAllPeers, startPeer } from '../helpers/loopback-peer.ts';
import { bootstrapStaff } from '../helpers/staff.ts';
import { configuredSecrets } from '../helpers/configured-secrets.ts';

const RUN = Math.random().toString(36).slice(2, 8);
const sfx = (n: string) => n.toUpperCase().replace(/[^A-Z0-9]/g, '_');
const SELF = `mc-${RUN}`;
const PEER = `rpeer-${RUN}`;
const HTML = `chtml-${RUN}`;
const INONLY = `cin-${RUN}`;
const S = (n: string) => `c0ns0le-${n}-${RUN}-secret`;
const PLATFORM = configuredSecrets(RUN);
const SECRETS = [...['peer-to', 'html', 'inonly'].map(S), ...PLATFORM.values];

let t: TestApp;
let peerApp: TestApp;
let admin: Client;

const noSecret = (text: string, where: string) => {
  for (const s of SECRETS) expect(text.includes(s), `${where} carries a secret`).toBe(false);
};

async function send(body: Record<string, unknown>): Promise<ConsoleSendResponse> {
  const res = await admin.post('/api/v1/staff/mesh/console/send', body);
  expect(res.statusCode, res.body).toBe(200);
  noSecret(res.body, 'console send');
  // No peer URL either (docs/mesh.md section 11): the stored attempts come without theirs.
  expect(res.body).not.toContain('127.0.0.1');
  const r = res.json() as ConsoleSendResponse;
  for (const e of r.events) expect(Object.keys(e)).not.toContain('url');
  return r;
}

beforeAll(async () => {
  const port = await freePort();
  const html = await startPeer((_r, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html><body>Not the mesh</body></html>');
  });
  t = await createTestApp({
    env: {
      SVC_SELF_NAME: SELF,
      SVC_MANAGEMENT_PEER: PEER,
      [`SVC_PEER_URL_${sfx(PEER)}`]: `http://127.0.0.1:${port}`,
      [`SVC_SECRET_TO_${sfx(PEER)}`]: S('peer-to'),
      [`SVC_PEER_URL_${sfx(HTML)}`]: `${html.origin}/custom/path`,
      [`SVC_SECRET_TO_${sfx(HTML)}`]: S('html'),
      [`SVC_PEER_FLOWS_${sfx(HTML)}`]: 'ping',
      [`SVC_SECRET_FROM_${sfx(INONLY)}`]: S('inonly'),
      ...PLATFORM.env,
    },
    deps: PLATFORM.deps,
  });
  peerApp = await createTestApp({
    env: {
      SVC_SELF_NAME: PEER,
      [`SVC_SECRET_FROM_${sfx(SELF)}`]: S('peer-to'),
      [`SVC_PEER_FLOWS_${sfx(SELF)}`]: 'ping,health_check,event_report',
    },
    database: t.database,
  });
  await peerApp.app.listen({ port, host: '127.0.0.1' });
  admin = await bootstrapStaff(t, uniqueEmail('mc-sa', STAFF_DOMAIN), 'super_admin');
}, 90_000);

afterAll(async () => {
  await closeAllPeers();
  await peerApp?.app.close();
  await t?.close();
});

describe('console peers', () => {
  it('shows each configured peer with presence booleans and the URL form, never a value', async () => {
    const res = await admin.get('/api/v1/staff/mesh/console/peers');
    expect(res.statusCode).toBe(200);
    noSecret(res.body, 'console peers');
    expect(res.body).not.toContain('127.0.0.1');
    const body = res.json() as ConsolePeers;
    expect(body.selfName).toBe(SELF);
    expect(body.knownFlows).toEqual(['ping', 'health_check', 'event_report', 'cmmc_status', 'cmmc_handoff']);
    const byName = new Map(body.peers.map((p) => [p.name, p]));
    expect(byName.get(PEER)).toEqual({
      name: PEER,
      callable: true,
      hasUrl: true,
      urlForm: 'origin',
      secretToPresent: true,
      secretFromPresent: false,
      inboundFlows: ['ping', 'health_check'],
      managementPeer: true,
      bidPeer: false,
    });
    expect(byName.get(HTML)).toMatchObject({
      callable: true,
      urlForm: 'custom',
      secretToPresent: true,
      secretFromPresent: false,
      inboundFlows: ['ping'],
    });
    expect(byName.get(INONLY)).toMatchObject({
      callable: false,
      hasUrl: false,
      urlForm: null,
      secretToPresent: false,
      secretFromPresent: true,
    });
  });
});

describe('console send', () => {
  it('sends a signed ping and shows status, headers, body, duration and the stored attempt', async () => {
    const r = await send({ peer: PEER, flow: 'ping', payload: { nonce: `n-${RUN}` } });
    expect(r).toMatchObject({
      peer: PEER,
      flow: 'ping',
      ok: true,
      outcome: 'ok',
      httpStatus: 200,
      error: null,
      replayed: false,
    });
    expect(r.body).toMatchObject({ pong: true, self: PEER, flow: 'ping', nonce: `n-${RUN}`, requestId: r.requestId });
    expect(r.headers['content-type']).toMatch(/application\/json/);
    expect(r.durationMs).toBeGreaterThanOrEqual(0);
    expect(r.events).toHaveLength(1);
    expect(r.events[0]).toMatchObject({
      peer: PEER,
      flow: 'ping',
      ok: true,
      httpStatus: 200,
      requestId: r.requestId,
      attempt: 1,
    });
  });

  it('retries with the same id: replayed; another payload on that id: 409 idempotency_key_reuse', async () => {
    const id = `console-${RUN}-1`;
    const payload = { kind: 'test.console', severity: 'info', title: `console ${RUN}` };
    const first = await send({ peer: PEER, flow: 'event_report', payload, requestId: id });
    expect(first).toMatchObject({ ok: true, requestId: id, replayed: false });
    const again = await send({ peer: PEER, flow: 'event_report', payload, requestId: id });
    expect(again).toMatchObject({ ok: true, requestId: id, replayed: true, outcome: 'ok' });
    expect(again.label).toContain('replayed');
    expect((again.body as { eventId: string }).eventId).toBe((first.body as { eventId: string }).eventId);
    expect(again.events.map((e) => e.requestId)).toEqual([id, id]);
    const reuse = await send({
      peer: PEER,
      flow: 'event_report',
      payload: { ...payload, title: 'changed' },
      requestId: id,
    });
    expect(reuse).toMatchObject({ ok: false, httpStatus: 409, error: 'idempotency_key_reuse', outcome: 'http_error' });
    expect(reuse.label).toContain('use a new id');
    expect(reuse.events).toHaveLength(3);
  });

  it('shows 409 request_in_progress while the first call with an id is still running at the peer', async () => {
    const id = `console-${RUN}-busy`;
    const payload = { kind: 'test.console', severity: 'info', title: 'busy' };
    const fingerprint = createHash('sha256')
      .update(JSON.stringify({ flow: 'event_report', payload }))
      .digest('hex');
    await withService(t.database.db, (tx) =>
      tx
        .insertInto('svc_idempotency')
        .values({
          caller: SELF,
          request_id: id,
          fingerprint,
          flow: 'event_report',
          status: 'in_flight',
          claimed_at: new Date(),
          expires_at: new Date(Date.now() + 86_400_000),
        })
        .execute(),
    );
    const r = await send({ peer: PEER, flow: 'event_report', payload, requestId: id });
    expect(r).toMatchObject({ ok: false, httpStatus: 409, error: 'request_in_progress' });
    expect(r.label).toContain('retry with the same id');
  });

  it('labels an HTML answer "route not deployed" and a peer without URL or secret "not callable"', async () => {
    const html = await send({ peer: HTML, flow: 'ping', payload: {} });
    expect(html).toMatchObject({
      ok: false,
      outcome: 'route_not_deployed',
      httpStatus: 200,
      error: 'route_not_deployed',
    });
    expect(html.headers['content-type']).toMatch(/text\/html/);
    expect(html.body).toContain('Not the mesh');
    const none = await send({ peer: INONLY, flow: 'ping', payload: {} });
    expect(none).toMatchObject({ ok: false, outcome: 'not_callable', error: 'peer_not_configured' });
  });

  it('validates the request: unknown peer 404 mesh_peer_not_found, bad flow, payload, request id → 400', async () => {
    const unknown = await admin.post('/api/v1/staff/mesh/console/send', {
      peer: `nobody-${RUN}`,
      flow: 'ping',
      payload: {},
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toBe('mesh_peer_not_found');
    const bad = [
      { peer: PEER, flow: 'Ping!', payload: {} },
      { peer: PEER, flow: 'ping', payload: [] },
      { peer: PEER, flow: 'ping', payload: 'text' },
      { peer: PEER, flow: 'ping' },
      { peer: PEER, flow: 'ping', payload: {}, requestId: 'has space' },
      { peer: PEER, flow: 'ping', payload: {}, requestId: 'x'.repeat(201) },
      { peer: PEER, flow: 'ping', payload: {}, timeoutMs: 10 },
      { peer: '', flow: 'ping', payload: {} },
      { peer: PEER, flow: 'ping', payload: { big: 'x'.repeat(300_000) } },
    ];
    for (const b of bad) {
      const res = await admin.post('/api/v1/staff/mesh/console/send', b);
      expect(res.statusCode, JSON.stringify(b).slice(0, 80)).toBe(400);
      expect(res.json().error).toBe('validation_failed');
    }
  });

  it('audits each call without its payload', async () => {
    const res = await admin.get('/api/v1/staff/audit-log?action=mesh.console_call&limit=200');
    expect(res.statusCode).toBe(200);
    const entries = (
      res.json() as { entries: { targetId: string | null; details: Record<string, unknown> }[] }
    ).entries.filter((e) => e.targetId === PEER);
    expect(entries.length).toBeGreaterThanOrEqual(4);
    expect(entries.some((e) => e.details.requestId === `console-${RUN}-1` && e.details.reusedRequestId === true)).toBe(
      true,
    );
    expect(res.body).not.toContain(`console ${RUN}`);
    noSecret(res.body, 'audit log');
  });
});
