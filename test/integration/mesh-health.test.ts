// Staff → mesh health (docs/mesh.md §11.1): the rollup equals a naive computation over random events (p95
// edge cases included), access rules on every new route, the sweep against real loopback peers
// (a Rampart instance, an HTML page, a 401, a closed port, a peer that never answers, an
// inbound-only peer), and no configured secret in any response or export. Names carry a per-run
// marker, so a shared PostgreSQL database works.
// Over 500 lines on purpose: one feature's cases share a single app, tenants and loopback peers set up once; splitting
// them would repeat that set-up in every file.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/lib.ts';
import { withService } from '../../src/db/tenant.ts';
import { p95NearestRank } from '../../src/staff/index.ts';
import { p95Rank, type MeshHealthService } from '../../src/staff/mesh-health-service.ts';
import { registerMeshHealthRoutes } from '../../src/staff/mesh-health-routes.ts';
import type { AuditService } from '../../src/audit/index.ts';
import type { SessionGuards } from '../../src/server/plugins/session.ts';
import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { sql } from 'kysely';
import type { HealthResponse, PeerHealth, SweepLine } from '../../src/staff/mesh-health-schemas.ts';
import {
  buildCsv,
  exportFileName,
  MESH_CHECK_COLUMNS,
  OPERATIONS_LOG_COLUMNS,
  operationsLogItems,
  operationsLogRows,
  sweepRows,
} from '../../src/web/lib/csv-export.ts';
import { createTestApp, STAFF_DOMAIN, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { closeAllPeers, closedPort, startPeer } from '../helpers/loopback-peer.ts';
import { dispatch } from '../helpers/mesh.ts';
import { bootstrapStaff } from '../helpers/staff.ts';
import { configuredSecrets } from '../helpers/configured-secrets.ts';

const RUN = Math.random().toString(36).slice(2, 8);
const sfx = (n: string) => n.toUpperCase().replace(/[^A-Z0-9]/g, '_');
const SELF = `hm-${RUN}`;
const OK = `okpeer-${RUN}`;
const HTML = `html-${RUN}`;
const DENY = `deny-${RUN}`;
const DOWN = `down-${RUN}`;
const SLOW = `slow-${RUN}`;
const INONLY = `inonly-${RUN}`;
const S = (n: string) => `s3cr3t-${n}-${RUN}-value`;
const PLATFORM = configuredSecrets(RUN);
const SECRETS = [...['ok-to', 'ok-from', 'html', 'deny', 'down', 'slow', 'inonly'].map(S), ...PLATFORM.values];

let t: TestApp;
let okApp: TestApp; // a real Rampart peer on loopback
let superAdmin: Client;
let staff: Client;
let plain: Client;
let releaseSlow: () => void = () => {};

const noSecret = (text: string, where: string) => {
  for (const s of SECRETS) expect(text.includes(s), `${where} carries a secret`).toBe(false);
};

async function health(window: string): Promise<HealthResponse> {
  const res = await superAdmin.get(`/api/v1/staff/mesh/health?window=${window}`);
  expect(res.statusCode, res.body).toBe(200);
  noSecret(res.body, `health ${window}`);
  return res.json() as HealthResponse;
}

const parseLines = (body: string) =>
  body
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as SweepLine);

beforeAll(async () => {
  const okPort = await freePort();
  const html = await startPeer((_r, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html><body>Welcome to our site</body></html>');
  });
  const deny = await startPeer((_r, res) => {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'bad_signature', message: 'Signature mismatch' }));
  });
  const slowHeld: (() => void)[] = [];
  releaseSlow = () => slowHeld.splice(0).forEach((f) => f());
  const slow = await startPeer((_r, res) => {
    slowHeld.push(() => res.destroy());
  });
  const down = await closedPort();
  t = await createTestApp({
    env: {
      SVC_SELF_NAME: SELF,
      [`SVC_PEER_URL_${sfx(OK)}`]: `http://127.0.0.1:${okPort}`,
      [`SVC_SECRET_TO_${sfx(OK)}`]: S('ok-to'),
      [`SVC_SECRET_FROM_${sfx(OK)}`]: S('ok-from'),
      [`SVC_PEER_URL_${sfx(HTML)}`]: `${html.origin}/`,
      [`SVC_SECRET_TO_${sfx(HTML)}`]: S('html'),
      [`SVC_PEER_URL_${sfx(DENY)}`]: `${deny.origin}/api/public/svc/dispatch`,
      [`SVC_SECRET_TO_${sfx(DENY)}`]: S('deny'),
      [`SVC_PEER_URL_${sfx(DOWN)}`]: `http://127.0.0.1:${down}/mesh/custom`,
      [`SVC_SECRET_TO_${sfx(DOWN)}`]: S('down'),
      [`SVC_PEER_URL_${sfx(SLOW)}`]: slow.origin,
      [`SVC_SECRET_TO_${sfx(SLOW)}`]: S('slow'),
      [`SVC_SECRET_FROM_${sfx(INONLY)}`]: S('inonly'),
      ...PLATFORM.env,
    },
    deps: PLATFORM.deps,
  });
  okApp = await createTestApp({
    env: {
      SVC_SELF_NAME: OK,
      [`SVC_SECRET_FROM_${sfx(SELF)}`]: S('ok-to'),
      [`SVC_PEER_FLOWS_${sfx(SELF)}`]: 'ping,health_check,event_report',
    },
    database: t.database,
  });
  await okApp.app.listen({ port: okPort, host: '127.0.0.1' });
  superAdmin = await bootstrapStaff(t, uniqueEmail('mh-sa', STAFF_DOMAIN), 'super_admin');
  staff = await bootstrapStaff(t, uniqueEmail('mh-staff', STAFF_DOMAIN), 'staff');
  plain = new Client(t.app);
  await plain.signUp(uniqueEmail('mh-plain'));
}, 90_000);

afterAll(async () => {
  releaseSlow();
  await closeAllPeers();
  await okApp?.app.close();
  await t?.close();
});

describe('p95NearestRank', () => {
  it('is the sample at rank ceil(0.95 n), null without samples', () => {
    expect(p95NearestRank([])).toBeNull();
    expect(p95NearestRank([42])).toBe(42);
    expect(p95NearestRank([7, 7, 7, 7])).toBe(7);
    expect(p95NearestRank([1, 1, 1, 2])).toBe(2); // n=4: rank 4
    expect(p95NearestRank(Array.from({ length: 20 }, (_, i) => 20 - i))).toBe(19); // n=20: rank 19
    expect(p95NearestRank(Array.from({ length: 100 }, (_, i) => i + 1))).toBe(95);
    expect(p95NearestRank(Array.from({ length: 101 }, (_, i) => i + 1))).toBe(96); // ceil(95.95)
    expect(p95NearestRank([3, 1, 2])).toBe(3);
  });
});

/**
 * The rollup's histogram walk (readPeerOutbound does it in SQL: the smallest duration whose
 * cumulative count reaches the rank), written out: the sample p95NearestRank picks.
 */
function p95FromHistogram(bins: readonly { value: number; count: number }[]): number | null {
  const n = bins.reduce((s, b) => s + b.count, 0);
  if (n === 0) return null;
  const rank = p95Rank(n);
  let seen = 0;
  for (const b of [...bins].sort((a, b) => a.value - b.value)) {
    seen += b.count;
    if (seen >= rank) return b.value;
  }
  return null;
}

describe('the histogram walk of the rollup', () => {
  it('is p95NearestRank of the samples the histogram describes', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.integer({ min: 0, max: 50 }),
            fc.integer({ min: 0, max: 4000 }).map((x) => x / 4),
          ),
          { maxLength: 300 },
        ),
        (samples) => {
          const counts = new Map<number, number>();
          for (const x of samples) counts.set(x, (counts.get(x) ?? 0) + 1);
          // Bins in any order.
          const bins = [...counts.entries()].map(([value, count]) => ({ value, count })).reverse();
          expect(p95FromHistogram(bins)).toBe(p95NearestRank(samples));
        },
      ),
      { numRuns: 300 },
    );
    expect(p95FromHistogram([])).toBeNull();
  });
});

describe('svc_outbound_daily (the histogram the rollup reads)', () => {
  it('equals a grouping of the events after inserts, retention deletes and updates', async () => {
    const peer = `hist-${RUN}`;
    const base = Date.UTC(2026, 0, 10, 23, 59, 0);
    const rows = Array.from({ length: 60 }, (_, i) => ({
      created_at: new Date(base + i * 7_000),
      peer,
      flow: 'ping',
      ok: i % 4 !== 0,
      http_status: 200,
      request_id: `hist-${RUN}-${i}`,
      attempt: 1,
      duration_ms: [5, 5, 7, 12.5][i % 4]!,
    }));
    await withService(t.database.db, (tx) => tx.insertInto('svc_outbound_events').values(rows.slice(0, 30)).execute());
    await withService(t.database.db, (tx) => tx.insertInto('svc_outbound_events').values(rows.slice(30)).execute());
    const compare = async () => {
      const [hist, naive] = await withService(t.database.db, async (tx) => [
        (
          await sql<{
            day: string;
            duration_ms: number;
            attempts: number;
            successes: number;
          }>`select day::text as day, duration_ms, attempts, successes from svc_outbound_daily where peer = ${peer} order by 1, 2`.execute(
            tx,
          )
        ).rows,
        (
          await sql<{
            day: string;
            duration_ms: number;
            attempts: number;
            successes: number;
          }>`select (created_at at time zone 'UTC')::date::text as day, duration_ms, count(*)::int as attempts, (count(*) filter (where ok))::int as successes from svc_outbound_events where peer = ${peer} group by 1, 2 order by 1, 2`.execute(
            tx,
          )
        ).rows,
      ]);
      expect(hist).toEqual(naive);
      return hist;
    };
    const first = await compare();
    expect(first.map((r) => r.day)).toContain('2026-01-10');
    expect(first.map((r) => r.day)).toContain('2026-01-11');
    // Retention deletes part of a day, and then all of another.
    await withService(t.database.db, (tx) =>
      tx
        .deleteFrom('svc_outbound_events')
        .where('peer', '=', peer)
        .where('created_at', '<', new Date(base + 20 * 7_000))
        .execute(),
    );
    await compare();
    // Updates (only the owner may) move counts too.
    await sql`update svc_outbound_events set ok = not ok, duration_ms = duration_ms + 1 where peer = ${peer} and request_id like ${`hist-${RUN}-4%`}`.execute(
      t.database.db,
    );
    await compare();
    await withService(t.database.db, (tx) => tx.deleteFrom('svc_outbound_events').where('peer', '=', peer).execute());
    expect(await compare()).toEqual([]);
  });
});

describe('getMeshHealthHistory rollup', () => {
  const DAY = 86_400_000;
  const WINDOW_MS: Record<string, number> = { '24h': DAY, '7d': 7 * DAY, '30d': 30 * DAY };
  let runNo = 0;

  interface Gen {
    peer: number;
    ageMs: number;
    ok: boolean;
    duration: number;
  }

  /** Durations exactly representable in float4 (integers, quarters), with ties likely. */
  const duration = fc.oneof(
    fc.constantFrom(0, 10, 10, 20, 35),
    fc.integer({ min: 0, max: 5000 }),
    fc.integer({ min: 0, max: 40_000 }).map((x) => x / 4),
  );

  it('equals a naive computation over random events (attempts, rate, avg, exact p95, days, failures, last times)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('24h', '7d', '30d'),
        fc.array(
          fc.record({
            peer: fc.integer({ min: 0, max: 3 }),
            ageMs: fc.integer({ min: 0, max: 40 * DAY }),
            ok: fc.boolean(),
            duration,
          }),
          { maxLength: 80 },
        ),
        async (window, generated: Gen[]) => {
          runNo += 1;
          const names = [0, 1, 2, 3].map((i) => `gen-${RUN}-${runNo}-${i}`);
          const now = Date.now();
          // Nothing within two minutes of the window's edge: the service reads its own clock a moment later.
          const events = generated
            .filter((g) => Math.abs(g.ageMs - WINDOW_MS[window]!) > 120_000)
            .map((g, i) => ({ ...g, at: new Date(now - g.ageMs - 5_000), id: `r-${RUN}-${runNo}-${i}` }));
          if (events.length) {
            await withService(t.database.db, (tx) =>
              tx
                .insertInto('svc_outbound_events')
                .values(
                  events.map((e) => ({
                    created_at: e.at,
                    peer: names[e.peer]!,
                    flow: 'event_report',
                    ok: e.ok,
                    http_status: e.ok ? 200 : 503,
                    request_id: e.id,
                    attempt: 1,
                    error: e.ok ? null : 'http_503',
                    duration_ms: e.duration,
                    url: null,
                  })),
                )
                .execute(),
            );
          }
          const res = await health(window);
          const fromDay = new Date(Date.parse(res.from)).toISOString().slice(0, 10);
          expect(res.days[0]).toBe(fromDay);
          for (const [i, name] of names.entries()) {
            const all = events.filter((e) => e.peer === i);
            const got = res.peers.find((p) => p.peer === name);
            if (!all.length) {
              expect(got, name).toBeUndefined();
              continue;
            }
            expect(got, name).toBeDefined();
            const p = got as PeerHealth;
            const inWin = all.filter((e) => e.ageMs < WINDOW_MS[window]!);
            const ok = inWin.filter((e) => e.ok).length;
            expect(p.configured).toBe(false);
            expect(p.attempts).toBe(inWin.length);
            expect(p.successes).toBe(ok);
            expect(p.failures).toBe(inWin.length - ok);
            expect(p.successRate).toBe(inWin.length ? ok / inWin.length : null);
            expect(p.p95DurationMs).toBe(p95NearestRank(inWin.map((e) => e.duration)));
            if (inWin.length)
              expect(p.avgDurationMs!).toBeCloseTo(inWin.reduce((s, e) => s + e.duration, 0) / inWin.length, 1);
            else expect(p.avgDurationMs).toBeNull();
            expect(p.status).toBe(
              inWin.length === 0
                ? 'idle'
                : ok / inWin.length >= 0.99
                  ? 'healthy'
                  : ok / inWin.length >= 0.9
                    ? 'degraded'
                    : 'failing',
            );
            const newest = all.reduce((a, b) => (a.at > b.at ? a : b));
            expect(p.lastOutboundAt).toBe(newest.at.toISOString());
            expect(p.lastInboundAt).toBeNull();
            expect(p.bidirectional).toBe(false);
            const perDay = new Map<string, typeof inWin>();
            for (const e of inWin)
              perDay.set(e.at.toISOString().slice(0, 10), [...(perDay.get(e.at.toISOString().slice(0, 10)) ?? []), e]);
            expect(p.days.map((d) => d.day)).toEqual(res.days);
            for (const d of p.days) {
              const es = perDay.get(d.day) ?? [];
              expect(d.attempts, d.day).toBe(es.length);
              expect(d.successes, d.day).toBe(es.filter((e) => e.ok).length);
              if (es.length)
                expect(d.avgDurationMs!).toBeCloseTo(es.reduce((s, e) => s + e.duration, 0) / es.length, 1);
            }
            const failures = inWin
              .filter((e) => !e.ok)
              .sort((a, b) => b.at.getTime() - a.at.getTime())
              .slice(0, 10);
            expect(p.recentFailures.map((f) => f.at)).toEqual(failures.map((e) => e.at.toISOString()));
          }
        },
      ),
      { numRuns: 12 },
    );
  }, 120_000);

  it('computes p95 in SQL exactly as p95NearestRank on the edge cases: one sample, ties, n = 20, 100, 101, an empty window', async () => {
    const cases: Record<string, number[]> = {
      one: [17],
      ties: [5, 5, 5, 5, 9],
      twenty: Array.from({ length: 20 }, (_, i) => (i * 37) % 20),
      hundred: Array.from({ length: 100 }, (_, i) => 100 - i),
      hundredone: Array.from({ length: 101 }, (_, i) => i * 0.25),
    };
    const at = new Date(Date.now() - 3_600_000);
    await withService(t.database.db, (tx) =>
      tx
        .insertInto('svc_outbound_events')
        .values([
          ...Object.entries(cases).flatMap(([k, vs]) =>
            vs.map((v, i) => ({
              created_at: at,
              peer: `edge-${k}-${RUN}`,
              flow: 'ping',
              ok: true,
              http_status: 200,
              request_id: `edge-${k}-${i}`,
              attempt: 1,
              duration_ms: v,
            })),
          ),
          // Only outside the 24 h window: idle there, with no p95.
          {
            created_at: new Date(Date.now() - 3 * 86_400_000),
            peer: `edge-empty-${RUN}`,
            flow: 'ping',
            ok: true,
            http_status: 200,
            request_id: `edge-empty-${RUN}`,
            attempt: 1,
            duration_ms: 4,
          },
        ])
        .execute(),
    );
    const res = await health('24h');
    for (const [k, vs] of Object.entries(cases)) {
      const p = res.peers.find((x) => x.peer === `edge-${k}-${RUN}`)!;
      expect(p.p95DurationMs, k).toBe(p95NearestRank(vs));
    }
    const empty = res.peers.find((x) => x.peer === `edge-empty-${RUN}`)!;
    expect(empty).toMatchObject({
      status: 'idle',
      attempts: 0,
      p95DurationMs: null,
      avgDurationMs: null,
      successRate: null,
      configured: false,
    });
    expect((await health('7d')).peers.find((x) => x.peer === `edge-empty-${RUN}`)).toMatchObject({
      status: 'healthy',
      attempts: 1,
      p95DurationMs: 4,
      fewSamples: true,
    });
  });

  it('lists every configured peer, the never-contacted ones as no_data, with their inbound side', async () => {
    // A verified inbound call from the ok peer (its secret towards us).
    const res0 = await dispatch(t.app, {
      caller: OK,
      secret: S('ok-from'),
      body: { flow: 'ping', payload: { nonce: 'x' } },
    });
    expect(res0.statusCode, res0.body).toBe(200);
    await expect
      .poll(async () => (await health('24h')).peers.find((p) => p.peer === OK)?.inboundCalls, { timeout: 10_000 })
      .toBe(1);
    const res = await health('24h');
    for (const name of [OK, HTML, DENY, DOWN, SLOW, INONLY])
      expect(
        res.peers.find((p) => p.peer === name),
        name,
      ).toMatchObject({ configured: true });
    const inonly = res.peers.find((p) => p.peer === INONLY)!;
    expect(inonly).toMatchObject({
      status: 'no_data',
      attempts: 0,
      lastOutboundAt: null,
      lastInboundAt: null,
      bidirectional: false,
    });
    const ok = res.peers.find((p) => p.peer === OK)!;
    expect(ok.lastInboundAt).not.toBeNull();
    expect(res.selfName).toBe(SELF);
    expect(res.windowDays).toBe(1);
  });

  it('refuses an unknown window with 400 validation_failed', async () => {
    for (const w of ['1h', '90d', '', '7D']) {
      const res = await superAdmin.get(`/api/v1/staff/mesh/health?window=${w}`);
      expect(res.statusCode, w).toBe(400);
      expect(res.json().error).toBe('validation_failed');
    }
  });
});

describe('access', () => {
  const ROUTES: { method: 'GET' | 'POST'; url: string; body?: unknown; staffAllowed?: boolean }[] = [
    { method: 'GET', url: '/api/v1/staff/mesh/health?window=24h' },
    { method: 'POST', url: '/api/v1/staff/mesh/health/sweep', body: { timeoutMs: 500 } },
    { method: 'GET', url: '/api/v1/staff/mesh/console/peers' },
    {
      method: 'POST',
      url: '/api/v1/staff/mesh/console/send',
      body: { peer: `nobody-${RUN}`, flow: 'ping', payload: {} },
    },
    { method: 'GET', url: '/api/v1/staff/mesh/self', staffAllowed: true },
  ];
  const call = (c: Client, r: (typeof ROUTES)[number]) => (r.method === 'GET' ? c.get(r.url) : c.post(r.url, r.body));

  it('answers 401 signed out, 403 staff_only to non-staff, 403 super_admin_only to staff (self: 200)', async () => {
    for (const r of ROUTES) {
      const anon = await call(new Client(t.app), r);
      expect(anon.statusCode, r.url).toBe(401);
      expect(anon.json().error).toBe('unauthenticated');
      const p = await call(plain, r);
      expect(p.statusCode, r.url).toBe(403);
      expect(p.json().error).toBe('staff_only');
      const s = await call(staff, r);
      if (r.staffAllowed) {
        expect(s.statusCode, r.url).toBe(200);
        expect(s.json()).toEqual({ selfName: SELF });
      } else {
        expect(s.statusCode, r.url).toBe(403);
        expect(s.json().error).toBe('super_admin_only');
      }
    }
  });

  it('refuses writes without the CSRF token', async () => {
    const res = await superAdmin.post(
      '/api/v1/staff/mesh/health/sweep',
      { timeoutMs: 500 },
      { 'x-csrf-token': 'nope' },
    );
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('csrf_invalid');
  });
});

describe('sweep stream that stops midway', () => {
  it('ends with an {"type":"error"} line instead of the done line, after the results already sent', async () => {
    // The service's own per-peer errors are caught; this fakes what is left (an unexpected throw)
    // to check the route's contract, the line the page shows as an error alert.
    const app = Fastify({ logger: false });
    app.setValidatorCompiler(validatorCompiler);
    app.setSerializerCompiler(serializerCompiler);
    const identity = { user: { id: '00000000-0000-4000-8000-000000000001', email: 'sa@staff.test' } };
    const audited: unknown[] = [];
    const failing: MeshHealthService = {
      health: () => Promise.reject(new Error('not used')),
      async sweep({ timeoutMs }, emit) {
        emit({ type: 'start', sweepId: 's', startedAt: new Date().toISOString(), timeoutMs, peers: ['a', 'b'] });
        emit({
          type: 'result',
          peer: 'a',
          outcome: 'ok',
          label: 'OK: pong from a',
          ok: true,
          httpStatus: 200,
          error: null,
          durationMs: 3,
          requestId: 'r1',
          at: new Date().toISOString(),
        });
        throw new Error('database went away');
      },
    };
    registerMeshHealthRoutes(app, {
      guards: {
        requireSuperAdmin: async () => identity,
        requireStaff: async () => identity,
      } as unknown as SessionGuards,
      health: failing,
      audit: {
        record: async (e: unknown) => void audited.push(e),
        list: () => Promise.reject(new Error('not used')),
      } as AuditService,
      selfName: 'x',
    });
    try {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/staff/mesh/health/sweep',
        payload: { timeoutMs: 1_000 },
      });
      expect(res.statusCode).toBe(200);
      const got = parseLines(res.body);
      expect(got.map((l) => l.type)).toEqual(['start', 'result', 'error']);
      expect(got[2]).toEqual({
        type: 'error',
        error: 'internal_error',
        message: expect.stringMatching(/^The sweep stopped unexpectedly/),
      });
      expect(res.body).not.toContain('database went away');
      expect(audited).toHaveLength(1);
    } finally {
      await app.close();
    }
  });
});

describe('runMeshHealthSweep', () => {
  let lines: SweepLine[] = [];

  it('pings every configured peer, labels each outcome, and stores each attempt as an outbound ping', async () => {
    setTimeout(() => releaseSlow(), 3_000).unref();
    const res = await superAdmin.post('/api/v1/staff/mesh/health/sweep', { timeoutMs: 1_500 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
    noSecret(res.body, 'sweep');
    lines = parseLines(res.body);
    expect(lines[0]).toMatchObject({ type: 'start', timeoutMs: 1_500 });
    expect((lines[0] as { peers: string[] }).peers).toEqual(
      expect.arrayContaining([OK, HTML, DENY, DOWN, SLOW, INONLY]),
    );
    expect(lines.at(-1)).toMatchObject({ type: 'done', total: 6, ok: 1, failed: 5 });
    const results = new Map(
      lines
        .filter((l) => l.type === 'result')
        .map((l) => [(l as { peer: string }).peer, l as Extract<SweepLine, { type: 'result' }>]),
    );
    expect(results.size).toBe(6);
    expect(results.get(OK)).toMatchObject({ outcome: 'ok', ok: true, httpStatus: 200, label: `OK: pong from ${OK}` });
    expect(results.get(HTML)).toMatchObject({
      outcome: 'route_not_deployed',
      ok: false,
      httpStatus: 200,
      error: 'route_not_deployed',
    });
    expect(results.get(HTML)!.label).toMatch(/^Route not deployed/);
    expect(results.get(DENY)).toMatchObject({ outcome: 'unauthorized', httpStatus: 401, error: 'bad_signature' });
    expect(results.get(DOWN)).toMatchObject({ outcome: 'unreachable', httpStatus: null, error: 'network_error' });
    expect(results.get(SLOW)).toMatchObject({ outcome: 'timeout', httpStatus: null, error: 'timeout' });
    // Nothing is sent to the inbound-only peer, but its ping is stored like the others.
    expect(results.get(INONLY)).toMatchObject({
      outcome: 'not_callable',
      ok: false,
      httpStatus: null,
      error: 'peer_not_configured',
    });
    expect(results.get(INONLY)!.label).toBe(
      'Not callable: no URL (SVC_PEER_URL_*) and outbound secret (SVC_SECRET_TO_*); nothing sent',
    );
    // The slow peer answers last; every other result came before it.
    const order = lines.filter((l) => l.type === 'result').map((l) => (l as { peer: string }).peer);
    expect(order.indexOf(SLOW)).toBeGreaterThan(order.indexOf(OK));

    const ids = [...results.values()].filter((r) => r.requestId).map((r) => r.requestId!);
    const stored = await withService(t.database.db, (tx) =>
      tx
        .selectFrom('svc_outbound_events')
        .select(['peer', 'flow', 'ok', 'error', 'request_id', 'attempt'])
        .where('request_id', 'in', ids)
        .execute(),
    );
    expect(ids).toHaveLength(6);
    expect(stored).toHaveLength(6);
    expect(stored.every((s) => s.flow === 'ping' && s.attempt === 1)).toBe(true);
    expect(stored.find((s) => s.peer === OK)).toMatchObject({ ok: true });
    expect(stored.find((s) => s.peer === HTML)).toMatchObject({ ok: false, error: 'route_not_deployed' });
    expect(stored.find((s) => s.peer === INONLY)).toMatchObject({
      ok: false,
      error: 'peer_not_configured',
      request_id: results.get(INONLY)!.requestId,
    });

    const audit = await superAdmin.get('/api/v1/staff/audit-log?action=mesh.health_sweep');
    expect(audit.statusCode).toBe(200);
    expect((audit.json() as { entries: unknown[] }).entries.length).toBeGreaterThan(0);
  }, 30_000);

  it('streams results over a real socket as they arrive (fast peers before the done line)', async () => {
    const port = await freePort();
    await t.app.listen({ port, host: '127.0.0.1' });
    const cookie = [...superAdmin.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/staff/mesh/health/sweep`, {
      method: 'POST',
      headers: {
        cookie,
        'x-csrf-token': superAdmin.csrf!,
        'content-type': 'application/json',
        origin: 'http://rampart.test',
      },
      body: JSON.stringify({ timeoutMs: 5_000 }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    const seen: SweepLine[] = [];
    // Read until every peer but the held one has answered: the stream is open, the sweep not done.
    while (seen.filter((l) => l.type === 'result').length < 5) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      seen.push(...parts.filter(Boolean).map((l) => JSON.parse(l) as SweepLine));
    }
    expect(seen.filter((l) => l.type === 'result').length).toBe(5);
    expect(seen.some((l) => l.type === 'done')).toBe(false);
    expect(seen.some((l) => l.type === 'result' && l.peer === SLOW)).toBe(false);
    releaseSlow(); // the held peer drops its connection: unreachable, and the sweep ends
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
    }
    const rest = parseLines(buffered);
    expect(rest.at(-1)).toMatchObject({ type: 'done', total: 6 });
  }, 30_000);

  it('shows the sweep in the rollup, and the exports built from it carry no secret', async () => {
    const res = await health('24h');
    expect(res.peers.find((p) => p.peer === OK)).toMatchObject({
      status: 'healthy',
      bidirectional: true,
      fewSamples: true,
    });
    expect(res.peers.find((p) => p.peer === HTML)).toMatchObject({ status: 'failing' });
    const html = res.peers.find((p) => p.peer === HTML)!;
    expect(html.recentFailures[0]).toMatchObject({ flow: 'ping', error: 'route_not_deployed', httpStatus: 200 });
    // The inbound-only peer's stored pings count as failed attempts, with their reason.
    const inonly = res.peers.find((p) => p.peer === INONLY)!;
    expect(inonly).toMatchObject({ configured: true, status: 'failing', successes: 0 });
    expect(inonly.recentFailures[0]).toMatchObject({ flow: 'ping', error: 'peer_not_configured', httpStatus: null });

    const results = lines.filter((l) => l.type === 'result') as Extract<SweepLine, { type: 'result' }>[];
    const csv = buildCsv(MESH_CHECK_COLUMNS, sweepRows(results));
    const json = JSON.stringify(results);
    noSecret(csv, 'mesh check CSV');
    noSecret(json, 'mesh check JSON');
    expect(csv.startsWith('\uFEFF')).toBe(true);
    expect(exportFileName(SELF, 'mesh-check-results', 'csv', new Date('2026-11-25T12:34:56Z'))).toBe(
      `${SELF}-mesh-check-results-20261125-123456.csv`,
    );

    const outbound = await superAdmin.get('/api/v1/staff/mesh/outbound?limit=200');
    const inbound = await superAdmin.get('/api/v1/staff/mesh/inbound?limit=200');
    const received = await superAdmin.get('/api/v1/staff/mesh/received-events?limit=200');
    for (const [r, where] of [
      [outbound, 'outbound records'],
      [inbound, 'inbound records'],
      [received, 'received events'],
    ] as const)
      noSecret(r.body, where);
    const log = operationsLogRows({
      outbound: outbound.json().entries,
      inbound: inbound.json().entries,
      received: received.json().entries,
    });
    const csvLog = buildCsv(OPERATIONS_LOG_COLUMNS, log);
    noSecret(csvLog, 'operations log CSV');
    // The JSON export as the page builds it: the records without an attempt's URL.
    const jsonLog = JSON.stringify([
      ...operationsLogItems('outbound', outbound.json().entries),
      ...operationsLogItems('inbound', inbound.json().entries),
      ...operationsLogItems('received', received.json().entries),
    ]);
    noSecret(jsonLog, 'operations log JSON');
    const pingOut = (outbound.json() as { entries: { peer: string; url?: string | null }[] }).entries.find(
      (e) => e.peer === HTML,
    )!;
    // Peer configuration is presence-only: the staff records carry no peer URL at all.
    expect(pingOut).not.toHaveProperty('url');
    expect(outbound.body).not.toContain('127.0.0.1');
    for (const doc of [csvLog, jsonLog]) {
      expect(doc).toContain(HTML);
      expect(doc).not.toContain('127.0.0.1');
    }
    expect(jsonLog).not.toContain('"url"');
  });
});
