// Staff read the service-mesh records: received events, inbound calls, outbound attempts and the
// outbox. Records come from signed dispatch calls and from a second instance calling this one on
// loopback; every filter names values unique to this run, so a shared PostgreSQL database works.
// Over 500 lines on purpose: one feature's cases share a single app, tenants and loopback peers set up once; splitting
// them would repeat that set-up in every file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/lib.ts';
import { withService } from '../../src/db/tenant.ts';
import { createTestApp, STAFF_DOMAIN, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { bootstrapStaff } from '../helpers/staff.ts';
import { Client } from '../helpers/client.ts';
import { dispatch } from '../helpers/mesh.ts';

const RUN = Math.random().toString(36).slice(2, 8);
const sfx = (n: string) => n.toUpperCase().replace(/[^A-Z0-9]/g, '_');
/** Calls us signed (through the helper) and, as a second instance, through the mesh client. */
const PEER = `peer-${RUN}`;
const SELF = `mgmt-${RUN}`;
const SECRET = `mesh-secret-${RUN}`;
const TIE = `tie-${RUN}`;
const LOST = `lost-${RUN}`;

let t: TestApp; // this instance: receives calls, staff read its records
let peer: TestApp; // a second instance on the same database, calling t on loopback
let staff: Client;
let plain: Client;

interface Page<E> {
  entries: E[];
  nextBefore: string | number | null;
}
type Received = {
  id: string;
  receivedAt: string;
  caller: string;
  requestId: string;
  kind: string;
  severity: string;
  title: string;
  detail: string | null;
  occurredAt: string | null;
  brand: string | null;
  data: Record<string, unknown>;
};
type Inbound = {
  id: number;
  receivedAt: string;
  caller: string | null;
  flow: string | null;
  status: number;
  errorCode: string | null;
  durationMs: number;
  requestId: string | null;
  verified: boolean;
  replayed: boolean;
};
type Outbound = {
  id: number;
  createdAt: string;
  peer: string;
  flow: string;
  eventType: string | null;
  severity: string | null;
  ok: boolean;
  httpStatus: number | null;
  requestId: string;
  attempt: number;
  error: string | null;
  response: unknown;
  durationMs: number;
};
type Outbox = {
  id: number;
  createdAt: string;
  peer: string;
  flow: string;
  eventType: string | null;
  severity: string | null;
  requestId: string;
  status: string;
  attempts: number;
  nextAttemptAt: string;
  lastError: string | null;
  deliveredAt: string | null;
};

async function read<E>(path: string, query: Record<string, string | number | boolean>): Promise<Page<E>> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
  const res = await staff.get(`${path}?${qs}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Page<E>;
}

/** Every entry, page by page, with the given page size. */
async function readAll<E>(
  path: string,
  query: Record<string, string | number | boolean>,
  limit: number,
): Promise<{ entries: E[]; pages: number }> {
  const entries: E[] = [];
  let before: string | number | null = null;
  let pages = 0;
  do {
    const p: Page<E> = await read<E>(path, { ...query, limit, ...(before === null ? {} : { before }) });
    expect(p.entries.length).toBeLessThanOrEqual(limit);
    entries.push(...p.entries);
    before = p.nextBefore;
    pages += 1;
    expect(pages).toBeLessThan(100);
  } while (before !== null);
  return { entries, pages };
}

const report = (kind: string, title: string, extra: Record<string, unknown> = {}) => ({
  flow: 'event_report',
  payload: { kind, severity: 'high', title, ...extra },
});

beforeAll(async () => {
  const port = await freePort();
  t = await createTestApp({
    env: {
      SVC_SELF_NAME: SELF,
      [`SVC_SECRET_FROM_${sfx(PEER)}`]: SECRET,
      [`SVC_PEER_FLOWS_${sfx(PEER)}`]: 'ping,event_report',
    },
  });
  await t.app.listen({ port, host: '127.0.0.1' });
  peer = await createTestApp({
    env: {
      SVC_SELF_NAME: PEER,
      SVC_MANAGEMENT_PEER: SELF,
      [`SVC_PEER_URL_${sfx(SELF)}`]: `http://127.0.0.1:${port}`,
      [`SVC_SECRET_TO_${sfx(SELF)}`]: SECRET,
    },
    database: t.database,
  });
  staff = await bootstrapStaff(t, uniqueEmail('meshstaff', STAFF_DOMAIN), 'staff');
  plain = new Client(t.app);
  await plain.signUp(uniqueEmail('meshplain'));

  // Signed calls from PEER: five event reports, a ping, and one with a wrong signature.
  for (let i = 1; i <= 5; i++) {
    const kind = i <= 3 ? `test.${RUN}.alpha` : `test.${RUN}.beta`;
    const res = await dispatch(t.app, {
      caller: PEER,
      secret: SECRET,
      requestId: `rep-${RUN}-${i}`,
      body: report(kind, `event ${i}`, { detail: `detail ${i}`, data: { n: i }, brand: 'rampart' }),
    });
    expect(res.statusCode, res.body).toBe(200);
  }
  expect(
    (
      await dispatch(t.app, {
        caller: PEER,
        secret: SECRET,
        requestId: `ping-${RUN}`,
        body: { flow: 'ping', payload: { nonce: RUN } },
      })
    ).statusCode,
  ).toBe(200);
  expect(
    (
      await dispatch(t.app, {
        caller: PEER,
        secret: 'wrong secret',
        requestId: `bad-${RUN}`,
        body: { flow: 'ping', payload: {} },
      })
    ).statusCode,
  ).toBe(401);
  // A replay of the first report (same request id and body).
  expect(
    (
      await dispatch(t.app, {
        caller: PEER,
        secret: SECRET,
        requestId: `rep-${RUN}-1`,
        body: report(`test.${RUN}.alpha`, 'event 1', { detail: 'detail 1', data: { n: 1 }, brand: 'rampart' }),
      })
    ).statusCode,
  ).toBe(200);

  // Outbound from the second instance: a direct ping and a report through the outbox.
  const pong = await peer.app.services.mesh.client.call(
    SELF,
    'ping',
    { nonce: `out-${RUN}` },
    { requestId: `out-ping-${RUN}` },
  );
  expect(pong.ok).toBe(true);
  const sent = await peer.app.services.reporter.report({
    kind: 'finding.critical',
    severity: 'critical',
    title: `outbox ${RUN}`,
    fingerprint: `fp-${RUN}`,
  });
  expect(sent.sent).toBe(true);
  await peer.app.services.mesh.outbox.deliverDue();

  await withService(t.database.db, async (tx) => {
    // Three received events at one instant (keyset ties), and two a few microseconds apart.
    const at = new Date(Date.now() - 3_600_000).toISOString().replace('Z', '456Z');
    const earlier = at.replace('456Z', '400Z');
    await tx
      .insertInto('svc_received_events')
      .values([
        ...[1, 2, 3].map((i) => ({
          received_at: at,
          caller: TIE,
          request_id: `tie-${RUN}-${i}`,
          kind: 'test.tie',
          severity: 'info',
          title: `tie ${i}`,
          data: '{}',
        })),
        {
          received_at: earlier,
          caller: TIE,
          request_id: `tie-${RUN}-4`,
          kind: 'test.tie',
          severity: 'low',
          title: 'tie 4',
          data: '{}',
        },
        {
          received_at: earlier,
          caller: TIE,
          request_id: `tie-${RUN}-5`,
          kind: 'test.tie',
          severity: 'low',
          title: 'tie 5',
          data: '{}',
        },
      ])
      .execute();
    // An outbox row that gave up, towards a peer nobody delivers to; its payload must never show.
    await tx
      .insertInto('svc_outbox')
      .values({
        peer: LOST,
        flow: 'event_report',
        payload: JSON.stringify({ kind: 'x', title: `payload-marker-${RUN}` }),
        event_type: 'mesh.test',
        severity: 'high',
        request_id: `lost-${RUN}`,
        status: 'failed',
        attempts: 8,
        last_error: 'network_error',
      })
      .execute();
  });
}, 60_000);

afterAll(async () => {
  await peer?.app.close();
  await t?.close();
});

const PATHS = [
  '/api/v1/staff/mesh/received-events',
  '/api/v1/staff/mesh/inbound',
  '/api/v1/staff/mesh/outbound',
  '/api/v1/staff/mesh/outbox',
];

describe('access', () => {
  it('is for staff only: 401 signed out, 403 staff_only for ordinary users', async () => {
    for (const p of PATHS) {
      expect((await new Client(t.app).get(p)).statusCode, p).toBe(401);
      const res = await plain.get(p);
      expect(res.statusCode, p).toBe(403);
      expect(res.json()).toMatchObject({ error: 'staff_only' });
      expect((await staff.get(p)).statusCode, p).toBe(200);
    }
  });

  it('refuses invalid query parameters with 400 validation_failed', async () => {
    const bad = [
      ...PATHS.flatMap((p) => [
        `${p}?limit=0`,
        `${p}?limit=201`,
        `${p}?limit=ten`,
        `${p}?before=abc`,
        `${p}?before=-1`,
      ]),
      '/api/v1/staff/mesh/received-events?caller=',
      '/api/v1/staff/mesh/received-events?severity=%20%20',
      '/api/v1/staff/mesh/received-events?from=yesterday',
      '/api/v1/staff/mesh/received-events?to=2025-01-01',
      '/api/v1/staff/mesh/received-events?before=12',
      '/api/v1/staff/mesh/received-events?before=2025-01-31T12:00:00.123Z_00000000-0000-4000-8000-000000000000',
      '/api/v1/staff/mesh/received-events?before=2025-02-31T12:00:00.123456Z_00000000-0000-4000-8000-000000000000',
      `/api/v1/staff/mesh/received-events?kind=${'k'.repeat(101)}`,
      '/api/v1/staff/mesh/inbound?status=abc',
      '/api/v1/staff/mesh/inbound?status=99',
      '/api/v1/staff/mesh/inbound?from=2025-13-01T00:00:00Z',
      '/api/v1/staff/mesh/outbound?ok=yes',
      '/api/v1/staff/mesh/outbound?ok=1',
      '/api/v1/staff/mesh/outbound?requestId=',
      '/api/v1/staff/mesh/outbox?status=sent',
      '/api/v1/staff/mesh/outbox?before=1.5',
    ];
    for (const url of bad) {
      const res = await staff.get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toMatchObject({ error: 'validation_failed' });
    }
  });
});

describe('received events', () => {
  it('lists what peers reported, newest first, with every field', async () => {
    // Five signed reports, then the second instance's report delivered through its outbox.
    const page = await read<Received>('/api/v1/staff/mesh/received-events', { caller: PEER });
    expect(page.entries.map((e) => e.title)).toEqual([
      `outbox ${RUN}`,
      'event 5',
      'event 4',
      'event 3',
      'event 2',
      'event 1',
    ]);
    expect(page.entries[0]).toMatchObject({ kind: 'finding.critical', severity: 'critical', brand: 'rampart' });
    expect(page.nextBefore).toBeNull();
    expect(page.entries.at(-1)).toMatchObject({
      caller: PEER,
      requestId: `rep-${RUN}-1`,
      kind: `test.${RUN}.alpha`,
      severity: 'high',
      detail: 'detail 1',
      brand: 'rampart',
      data: { n: 1 },
      occurredAt: null,
    });
    expect(page.entries[0]!.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(page.entries[0]!.receivedAt).toISOString()).toBe(page.entries[0]!.receivedAt);
  });

  it('filters by kind prefix, exact severity and time range', async () => {
    const alpha = await read<Received>('/api/v1/staff/mesh/received-events', {
      caller: PEER,
      kind: `test.${RUN}.alpha`,
    });
    expect(alpha.entries.map((e) => e.title)).toEqual(['event 3', 'event 2', 'event 1']);
    const all = await read<Received>('/api/v1/staff/mesh/received-events', { kind: `test.${RUN}.` });
    expect(all.entries).toHaveLength(5);
    // LIKE wildcards in the prefix are literal.
    expect((await read<Received>('/api/v1/staff/mesh/received-events', { kind: `test.${RUN}%` })).entries).toEqual([]);
    expect(
      (await read<Received>('/api/v1/staff/mesh/received-events', { caller: PEER, severity: 'low' })).entries,
    ).toEqual([]);
    expect(
      (await read<Received>('/api/v1/staff/mesh/received-events', { caller: PEER, severity: 'critical' })).entries.map(
        (e) => e.title,
      ),
    ).toEqual([`outbox ${RUN}`]);
    expect(
      (await read<Received>('/api/v1/staff/mesh/received-events', { caller: TIE, severity: 'low' })).entries
        .map((e) => e.title)
        .sort(),
    ).toEqual(['tie 4', 'tie 5']);
    const newest = (await read<Received>('/api/v1/staff/mesh/received-events', { caller: PEER })).entries[0]!;
    const from = await read<Received>('/api/v1/staff/mesh/received-events', { caller: PEER, from: newest.receivedAt });
    expect(from.entries.map((e) => e.title)).toEqual([`outbox ${RUN}`]);
    const to = await read<Received>('/api/v1/staff/mesh/received-events', {
      caller: PEER,
      to: new Date(Date.now() - 86_400_000).toISOString(),
    });
    expect(to.entries).toEqual([]);
  });

  it('pages with a keyset cursor on (received_at, id): ties and microseconds neither skipped nor repeated', async () => {
    for (const limit of [1, 2, 4]) {
      const { entries, pages } = await readAll<Received>('/api/v1/staff/mesh/received-events', { caller: TIE }, limit);
      expect(
        entries
          .map((e) => e.title)
          .slice(0, 3)
          .sort(),
      ).toEqual(['tie 1', 'tie 2', 'tie 3']);
      expect(
        entries
          .map((e) => e.title)
          .slice(3)
          .sort(),
      ).toEqual(['tie 4', 'tie 5']);
      expect(new Set(entries.map((e) => e.id)).size).toBe(5);
      expect(pages).toBe(Math.ceil(5 / limit));
    }
    const first = await read<Received>('/api/v1/staff/mesh/received-events', { caller: TIE, limit: 1 });
    expect(first.nextBefore).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}456Z_[0-9a-f-]{36}$/);
    const { entries } = await readAll<Received>('/api/v1/staff/mesh/received-events', { caller: PEER }, 2);
    expect(entries.map((e) => e.title)).toEqual([
      `outbox ${RUN}`,
      'event 5',
      'event 4',
      'event 3',
      'event 2',
      'event 1',
    ]);
  });
});

describe('inbound calls', () => {
  // Five reports, a ping, a badly signed ping, a replay, and the second instance's ping and report.
  it('records every dispatch call, verified or not, and filters them', async () => {
    // Inbound records are written in batches; wait for the flush.
    await expect
      .poll(
        async () => (await read<Inbound>('/api/v1/staff/mesh/inbound', { caller: PEER, limit: 200 })).entries.length,
        { timeout: 5_000 },
      )
      .toBe(10);
    const all = (await read<Inbound>('/api/v1/staff/mesh/inbound', { caller: PEER, limit: 200 })).entries;
    expect(all.map((e) => e.id)).toEqual([...all.map((e) => e.id)].sort((a, b) => b - a));
    const bad = all.find((e) => e.requestId === `bad-${RUN}`);
    expect(bad).toMatchObject({
      caller: PEER,
      status: 401,
      errorCode: 'bad_signature',
      verified: false,
      replayed: false,
    });
    expect(
      all
        .filter((e) => e.requestId === `rep-${RUN}-1`)
        .map((e) => e.replayed)
        .sort(),
    ).toEqual([false, true]);
    expect(all.find((e) => e.requestId === `out-ping-${RUN}`)).toMatchObject({
      flow: 'ping',
      status: 200,
      verified: true,
      errorCode: null,
    });
    expect(typeof all[0]!.durationMs).toBe('number');

    const failed = await read<Inbound>('/api/v1/staff/mesh/inbound', { caller: PEER, status: 401 });
    expect(failed.entries.map((e) => e.requestId)).toEqual([`bad-${RUN}`]);
    const byCode = await read<Inbound>('/api/v1/staff/mesh/inbound', { caller: PEER, errorCode: 'bad_signature' });
    expect(byCode.entries.map((e) => e.requestId)).toEqual([`bad-${RUN}`]);
    const pings = await read<Inbound>('/api/v1/staff/mesh/inbound', { caller: PEER, flow: 'ping', status: 200 });
    expect(pings.entries.map((e) => e.requestId).sort()).toEqual([`out-ping-${RUN}`, `ping-${RUN}`]);
    expect(
      (
        await read<Inbound>('/api/v1/staff/mesh/inbound', {
          caller: PEER,
          to: new Date(Date.now() - 86_400_000).toISOString(),
        })
      ).entries,
    ).toEqual([]);
    expect(
      (
        await read<Inbound>('/api/v1/staff/mesh/inbound', {
          caller: PEER,
          from: new Date(Date.now() - 600_000).toISOString(),
          limit: 200,
        })
      ).entries,
    ).toHaveLength(10);
  });

  it('pages by id', async () => {
    const { entries, pages } = await readAll<Inbound>('/api/v1/staff/mesh/inbound', { caller: PEER }, 4);
    expect(entries).toHaveLength(10);
    expect(pages).toBe(3);
    expect(new Set(entries.map((e) => e.id)).size).toBe(10);
  });
});

describe('outbound attempts', () => {
  it('records every attempt with its answer, without secrets', async () => {
    const page = await read<Outbound>('/api/v1/staff/mesh/outbound', { peer: SELF });
    expect(page.entries).toHaveLength(2);
    const ping = page.entries.find((e) => e.requestId === `out-ping-${RUN}`);
    expect(ping).toMatchObject({
      peer: SELF,
      flow: 'ping',
      ok: true,
      httpStatus: 200,
      attempt: 1,
      error: null,
      eventType: null,
      response: { pong: true, self: SELF, nonce: `out-${RUN}` },
    });
    // Peer configuration is presence-only for staff: no attempt carries where it went.
    for (const e of page.entries) expect(Object.keys(e)).not.toContain('url');
    expect(JSON.stringify(page)).not.toContain('127.0.0.1');
    const report = page.entries.find((e) => e.flow === 'event_report');
    expect(report).toMatchObject({
      eventType: 'finding.critical',
      severity: 'critical',
      ok: true,
      httpStatus: 200,
      response: { accepted: true },
    });
    expect(JSON.stringify(page)).not.toContain(SECRET);
  });

  it('filters by flow, ok, request id and time, and pages by id', async () => {
    expect(
      (await read<Outbound>('/api/v1/staff/mesh/outbound', { peer: SELF, flow: 'ping' })).entries.map(
        (e) => e.requestId,
      ),
    ).toEqual([`out-ping-${RUN}`]);
    expect((await read<Outbound>('/api/v1/staff/mesh/outbound', { peer: SELF, ok: true })).entries).toHaveLength(2);
    expect((await read<Outbound>('/api/v1/staff/mesh/outbound', { peer: SELF, ok: false })).entries).toEqual([]);
    expect(
      (await read<Outbound>('/api/v1/staff/mesh/outbound', { requestId: `out-ping-${RUN}` })).entries.map(
        (e) => e.peer,
      ),
    ).toEqual([SELF]);
    expect(
      (
        await read<Outbound>('/api/v1/staff/mesh/outbound', {
          peer: SELF,
          from: new Date(Date.now() + 60_000).toISOString(),
        })
      ).entries,
    ).toEqual([]);
    const { entries, pages } = await readAll<Outbound>('/api/v1/staff/mesh/outbound', { peer: SELF }, 1);
    expect(entries).toHaveLength(2);
    expect(pages).toBe(2);
    expect(entries[0]!.id).toBeGreaterThan(entries[1]!.id);
  });
});

describe('outbox', () => {
  it('lists rows without their payload and filters by status and peer', async () => {
    const delivered = await read<Outbox>('/api/v1/staff/mesh/outbox', { peer: SELF });
    expect(delivered.entries).toHaveLength(1);
    expect(delivered.entries[0]).toMatchObject({
      peer: SELF,
      flow: 'event_report',
      eventType: 'finding.critical',
      severity: 'critical',
      status: 'delivered',
      attempts: 1,
      lastError: null,
    });
    expect(delivered.entries[0]!.deliveredAt).not.toBeNull();
    expect(delivered.entries[0]).not.toHaveProperty('payload');

    const lost = await read<Outbox>('/api/v1/staff/mesh/outbox', { peer: LOST, status: 'failed' });
    expect(lost.entries).toHaveLength(1);
    expect(lost.entries[0]).toMatchObject({
      requestId: `lost-${RUN}`,
      status: 'failed',
      attempts: 8,
      lastError: 'network_error',
      deliveredAt: null,
    });
    expect(JSON.stringify(lost)).not.toContain('payload-marker');
    expect((await read<Outbox>('/api/v1/staff/mesh/outbox', { peer: LOST, status: 'pending' })).entries).toEqual([]);
    expect((await read<Outbox>('/api/v1/staff/mesh/outbox', { peer: SELF, status: 'failed' })).entries).toEqual([]);
  });

  it('pages by id', async () => {
    const first = await read<Outbox>('/api/v1/staff/mesh/outbox', { status: 'failed', limit: 1 });
    expect(first.entries).toHaveLength(1);
    if (first.nextBefore !== null) {
      const next = await read<Outbox>('/api/v1/staff/mesh/outbox', {
        status: 'failed',
        limit: 1,
        before: first.nextBefore,
      });
      expect(next.entries[0]!.id).toBeLessThan(first.entries[0]!.id);
    }
    const { entries } = await readAll<Outbox>('/api/v1/staff/mesh/outbox', { peer: LOST }, 1);
    expect(entries.map((e) => e.requestId)).toEqual([`lost-${RUN}`]);
  });
});
