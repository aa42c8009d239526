// The outbox against real HTTP peers on loopback: payload.brand on every event type of every
// emitter, failed deliveries shown to staff and sent again, a day-long outage survived, and a
// 409 idempotency_key_reuse treated as final. The clock is controlled; no test waits on time.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CMMC_EVENT_KINDS, createCmmcEvents, type CmmcEventKind } from '../../src/cmmc/cmmc-events.ts';
import { withService } from '../../src/db/tenant.ts';
import type { Clock } from '../../src/lib/clock.ts';
import { BRAND } from '../../src/mesh/mesh-brand.ts';
import { REPORT_KINDS, type ReportKind } from '../../src/reporter/reporter.ts';
import { createTestApp, STAFF_DOMAIN, uniqueEmail, type TestApp } from '../helpers/app.ts';
import type { Client } from '../helpers/client.ts';
import { closeAllPeers, startPeer, type Received, type TestPeer } from '../helpers/loopback-peer.ts';
import { bootstrapStaff } from '../helpers/staff.ts';

const RUN = Math.random().toString(36).slice(2, 8);
const SELF = `rampart-${RUN}`;
const MGMT = `mgmt-${RUN}`;
const BID = `bid-${RUN}`;
const sfx = (n: string) => n.toUpperCase().replace(/[^A-Z0-9]/g, '_');
let now = new Date('2026-03-02T08:00:00Z');
const clock: Clock = { now: () => new Date(now) };
const HOUR = 3_600_000;

type Mode = 'ok' | 'down' | 'reuse';
const mode: Record<string, Mode> = { [MGMT]: 'ok', [BID]: 'ok' };
let mgmt: TestPeer;
let bid: TestPeer;
let t: TestApp;
let staff: Client;

function answer(name: string) {
  return (req: Received, res: ServerResponse) => {
    const send = (status: number, body: object) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const requestId = String(req.headers['x-svc-request-id']);
    if (mode[name] === 'down') return send(503, { error: 'unavailable', message: 'down for maintenance' });
    if (mode[name] === 'reuse')
      return send(409, { error: 'idempotency_key_reuse', message: 'use a new id', requestId });
    return send(200, { requestId, accepted: true, eventId: `e-${requestId}` });
  };
}

interface Sent {
  requestId: string;
  flow: string;
  payload: Record<string, unknown>;
  raw: string;
}
const bodies = (peer: TestPeer): Sent[] =>
  peer.received.map((r) => {
    const raw = r.body.toString('utf8');
    const parsed = JSON.parse(raw) as { flow: string; payload: Record<string, unknown> };
    return { requestId: String(r.headers['x-svc-request-id']), raw, ...parsed };
  });

beforeAll(async () => {
  mgmt = await startPeer((req, res) => answer(MGMT)(req, res));
  bid = await startPeer((req, res) => answer(BID)(req, res));
  t = await createTestApp({
    env: {
      SVC_SELF_NAME: SELF,
      SVC_MANAGEMENT_PEER: MGMT,
      SVC_BID_PEER: BID,
      [`SVC_PEER_URL_${sfx(MGMT)}`]: mgmt.origin,
      [`SVC_SECRET_TO_${sfx(MGMT)}`]: `to-mgmt-${RUN}`,
      [`SVC_PEER_URL_${sfx(BID)}`]: bid.origin,
      [`SVC_SECRET_TO_${sfx(BID)}`]: `to-bid-${RUN}`,
      AGENT_RELAY_SECRET: `relay-${RUN}`,
    },
    deps: { clock },
  });
  staff = await bootstrapStaff(t, uniqueEmail('outbox-staff', STAFF_DOMAIN), 'staff');
}, 60_000);
afterAll(async () => {
  await t?.close();
  await closeAllPeers();
});

const events = () =>
  createCmmcEvents({ outbox: t.app.services.mesh.outbox, clock, bidPeer: BID, managementPeer: MGMT });
const profile = (n: string) => ({
  id: `00000000-0000-4000-8000-${n.padStart(12, '0')}`,
  tenant_id: `00000000-0000-4000-9000-${n.padStart(12, '0')}`,
  cage_code: `C${n}`.slice(0, 5),
  additional_cage_codes: [],
  company_name: `Acme ${n} ${RUN}`,
});
async function emitCmmc(kind: CmmcEventKind, n: string): Promise<string[]> {
  return withService(t.database.db, (tx) => events().emit(tx, profile(n), kind, {}));
}
const deliver = () => t.app.services.mesh.outbox.deliverDue();
const row = (requestId: string) =>
  withService(t.database.db, (tx) =>
    tx.selectFrom('svc_outbox').selectAll().where('request_id', '=', requestId).executeTakeFirstOrThrow(),
  );
const rowById = (id: number) =>
  withService(t.database.db, (tx) =>
    tx.selectFrom('svc_outbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
  );

/** Files outside the web app that name the event_report flow or enqueue into the outbox. */
function emitterFiles(): string[] {
  const root = join(import.meta.dirname, '../../src');
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        if (relative(root, path) !== 'web') walk(path);
      } else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) {
        const text = readFileSync(path, 'utf8');
        if (text.includes("'event_report'") || /outbox\.enqueue\(/.test(text)) found.push(relative(root, path));
      }
    }
  };
  walk(root);
  return found.sort();
}

describe('payload.brand on every event to the management peer', () => {
  it('knows every emitter: a new one must be added to the enumeration below', () => {
    // Each file is an emitter whose event types the next test sends, or says why it is not one.
    expect(emitterFiles()).toEqual([
      'cmmc/cmmc-events.ts', // CMMC_EVENT_KINDS
      'mesh/mesh-flows.ts', // receives event_report, sends nothing
      'mesh/mesh-outbox.ts', // the outbox: stamps the brand on every event_report it stores
      'mesh/relay-routes.ts', // relay.notice
      'reporter/reporter.ts', // REPORT_KINDS
      'staff/mesh-console-schemas.ts', // the console's flow list: a super-admin types the payload
    ]);
  });

  it('carries brand on every event type of every emitter', async () => {
    mode[MGMT] = 'ok';
    mgmt.received.length = 0;
    // A Record over every kind: a new kind does not compile until it is triggered here.
    const triggers: Record<ReportKind | CmmcEventKind | 'relay.notice', () => Promise<unknown>> = {
      ...(Object.fromEntries(
        REPORT_KINDS.map((kind) => [
          kind,
          () =>
            t.app.services.reporter.report({
              kind,
              severity: 'high',
              title: `brand ${kind}`,
              fingerprint: `brand-${RUN}-${kind}`,
            }),
        ]),
      ) as Record<ReportKind, () => Promise<unknown>>),
      ...(Object.fromEntries(CMMC_EVENT_KINDS.map((kind) => [kind, () => emitCmmc(kind, '1')])) as Record<
        CmmcEventKind,
        () => Promise<unknown>
      >),
      'relay.notice': async () => {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/public/svc/relay',
          headers: { authorization: `Bearer relay-${RUN}` },
          payload: { title: 'brand relay', message: 'm', severity: 'info' },
        });
        expect(res.statusCode).toBe(200);
      },
    };
    expect(Object.keys(triggers).sort()).toEqual([...REPORT_KINDS, ...CMMC_EVENT_KINDS, 'relay.notice'].sort());
    for (const trigger of Object.values(triggers)) await trigger();
    await deliver();
    const sent = bodies(mgmt).filter((b) => b.flow === 'event_report');
    const kinds = new Set(sent.map((b) => b.payload['kind']));
    for (const kind of Object.keys(triggers)) expect(kinds.has(kind), kind).toBe(true);
    for (const b of sent) expect(b.payload['brand'], String(b.payload['kind'])).toBe(BRAND);
  });
});

describe('failed deliveries', () => {
  it('survive a day-long outage and arrive when the peer is back', async () => {
    mode[BID] = 'down';
    const [bidId] = await emitCmmc('cmmc.expired', '2');
    const start = now;
    // 24 hours of outage, looked at every 6 hours: still waiting, never given up.
    for (let h = 0; h <= 24; h += 6) {
      now = new Date(start.getTime() + h * HOUR);
      await deliver();
      expect((await row(bidId!)).status).toBe('pending');
    }
    expect((await row(bidId!)).attempts).toBeGreaterThanOrEqual(5);
    // The next delivery is due within 30 minutes, whatever the number of failures.
    expect(new Date((await row(bidId!)).next_attempt_at).getTime() - now.getTime()).toBeLessThanOrEqual(30 * 60_000);
    mode[BID] = 'ok';
    now = new Date(now.getTime() + 30 * 60_000);
    await deliver();
    expect((await row(bidId!)).status).toBe('delivered');
    expect(
      bodies(bid)
        .filter((b) => b.requestId === bidId)
        .at(-1)!.payload['brand'],
    ).toBe(BRAND);
  });

  it('are given up after 72 hours, reported with company and CAGE, listed for staff and sent again', async () => {
    mode[BID] = 'down';
    const [bidId] = await emitCmmc('cmmc.compliant', '3');
    const p = profile('3');
    const start = now;
    for (const h of [0, 24, 48, 72]) {
      now = new Date(start.getTime() + h * HOUR + 1000);
      await deliver();
    }
    const failed = await row(bidId!);
    expect(failed).toMatchObject({ status: 'failed', last_error: 'unavailable', company_name: p.company_name });

    // Staff see it with company, CAGE code, event, attempts and last error.
    const list = await staff.get(`/api/v1/staff/mesh/outbox?status=failed&peer=${BID}`);
    expect(list.statusCode).toBe(200);
    const entry = (list.json() as { entries: Record<string, unknown>[] }).entries.find((e) => e['requestId'] === bidId);
    expect(entry).toMatchObject({
      peer: BID,
      eventType: 'cmmc.compliant',
      status: 'failed',
      companyName: p.company_name,
      cageCode: p.cage_code,
      lastError: 'unavailable',
      attempts: failed.attempts,
    });
    const summary = (await staff.get('/api/v1/staff/mesh/outbox/summary')).json() as {
      peers: { peer: string; failed: number }[];
    };
    expect(summary.peers.find((x) => x.peer === BID)?.failed).toBeGreaterThanOrEqual(1);

    // The failure report to the management peer names the company and its CAGE code.
    const report = await withService(t.database.db, (tx) =>
      tx
        .selectFrom('svc_outbox')
        .select(['payload', 'company_name', 'cage_code'])
        .where('event_type', '=', 'mesh.delivery_failed')
        .where('peer', '=', MGMT)
        .where('cage_code', '=', p.cage_code)
        .executeTakeFirstOrThrow(),
    );
    expect(report.payload).toMatchObject({
      title: `Could not deliver cmmc.compliant for ${p.company_name} (CAGE ${p.cage_code}) to ${BID}`,
      brand: BRAND,
      data: { companyName: p.company_name, cageCode: p.cage_code, requestId: bidId, error: 'unavailable' },
    });

    // Sent again: same request id, delivered once the peer answers.
    mode[BID] = 'ok';
    const again = await staff.post(`/api/v1/staff/mesh/outbox/${failed.id}/resend`, {});
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ status: 'pending', requestId: bidId, resendCount: 1 });
    await deliver();
    expect((await row(bidId!)).status).toBe('delivered');
    const arrived = bodies(bid).filter((b) => b.requestId === bidId);
    expect(arrived.at(-1)!.payload).toMatchObject({ kind: 'cmmc.compliant', brand: BRAND });
    // Every try carried the same bytes under the same id.
    expect(new Set(arrived.map((b) => b.raw)).size).toBe(1);

    // Only a failed entry can be sent again; an unknown one is 404.
    expect((await staff.post(`/api/v1/staff/mesh/outbox/${failed.id}/resend`, {})).json()).toMatchObject({
      error: 'outbox_entry_not_failed',
    });
    expect((await staff.post('/api/v1/staff/mesh/outbox/999999999/resend', {})).json()).toMatchObject({
      error: 'outbox_entry_not_found',
    });
    const audit = await withService(t.database.db, (tx) =>
      tx.selectFrom('audit_log').select('details').where('action', '=', 'mesh.outbox_resend').execute(),
    );
    expect(audit.some((a) => (a.details as { requestId?: string }).requestId === bidId)).toBe(true);
  });

  it('sends every failed entry of a peer again in one go', async () => {
    mode[BID] = 'down';
    const ids = [(await emitCmmc('cmmc.renewal_due', '4'))[0]!, (await emitCmmc('cmmc.expired', '5'))[0]!];
    const start = now;
    for (const h of [0, 73]) {
      now = new Date(start.getTime() + h * HOUR);
      await deliver();
    }
    for (const id of ids) expect((await row(id)).status).toBe('failed');
    mode[BID] = 'ok';
    const res = await staff.post('/api/v1/staff/mesh/outbox/resend-failed', { peer: BID });
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as { resent: number }).resent).toBeGreaterThanOrEqual(2);
    await deliver();
    for (const id of ids) expect((await row(id)).status).toBe('delivered');
  });

  it('is staff only', async () => {
    const { Client } = await import('../helpers/client.ts');
    const user = new Client(t.app);
    await user.signUp(uniqueEmail('outbox-user'), 'Plain User', 'a long password 123');
    expect((await user.post('/api/v1/staff/mesh/outbox/resend-failed', { peer: BID })).statusCode).toBe(403);
    expect((await user.get('/api/v1/staff/mesh/outbox/summary')).statusCode).toBe(403);
  });
});

describe('409 idempotency_key_reuse', () => {
  it('is final: never retried with the same id; sent again under a new id', async () => {
    mode[BID] = 'reuse';
    const [bidId] = await emitCmmc('cmmc.compliant', '6');
    await deliver();
    const failed = await row(bidId!);
    expect(failed).toMatchObject({ status: 'failed', attempts: 1, last_error: 'idempotency_key_reuse' });
    expect(bodies(bid).filter((b) => b.requestId === bidId)).toHaveLength(1);
    now = new Date(now.getTime() + 48 * HOUR);
    await deliver();
    expect(bodies(bid).filter((b) => b.requestId === bidId)).toHaveLength(1);

    mode[BID] = 'ok';
    const again = (await staff.post(`/api/v1/staff/mesh/outbox/${failed.id}/resend`, {})).json() as {
      requestId: string;
      previousRequestIds: string[];
    };
    expect(again.requestId).not.toBe(bidId);
    expect(again.previousRequestIds).toEqual([bidId]);
    await deliver();
    expect((await rowById(failed.id)).status).toBe('delivered');
    expect(bodies(bid).filter((b) => b.requestId === again.requestId)).toHaveLength(1);
  });

  it('cannot happen to a relayed notice queued after a failed direct call: the same bytes go out', async () => {
    mode[MGMT] = 'down';
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/public/svc/relay',
      headers: { authorization: `Bearer relay-${RUN}` },
      // Keys in an order jsonb would change (it sorts by length).
      payload: { title: 'bytes', message: 'same bytes', severity: 'info', data: { zzzzzz: 1, a: 2 } },
    });
    const { requestId, queued } = res.json() as { requestId: string; queued: boolean };
    expect(queued).toBe(true);
    mode[MGMT] = 'ok';
    now = new Date(now.getTime() + HOUR);
    await deliver();
    expect((await row(requestId)).status).toBe('delivered');
    const raws = new Set(
      bodies(mgmt)
        .filter((b) => b.requestId === requestId)
        .map((b) => b.raw),
    );
    expect(raws.size).toBe(1);
  });
});

describe('relay validation order', () => {
  it('checks the bearer before the body, and the management peer last', async () => {
    const bad = { title: '', severity: 'apocalyptic' };
    const noBearer = await t.app.inject({ method: 'POST', url: '/api/public/svc/relay', payload: bad });
    expect([noBearer.statusCode, noBearer.json().error]).toEqual([401, 'Unauthorized']);
    const badBody = await t.app.inject({
      method: 'POST',
      url: '/api/public/svc/relay',
      headers: { authorization: `Bearer relay-${RUN}` },
      payload: bad,
    });
    expect([badBody.statusCode, badBody.json().error]).toEqual([400, 'validation_failed']);
  });
});
