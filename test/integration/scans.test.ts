// Scans: queueing through admission (proof, kind, quota, per-asset concurrency), chunk plans,
// the aggregation trigger, cancel, listing, tenant isolation. PGlite, and PostgreSQL with
// DATABASE_URL. The concurrency guarantees are in scans-concurrency.test.ts.
// Over 500 lines on purpose: one feature's cases share a single app, tenants and loopback peers set up once; splitting
// them would repeat that set-up in every file.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService, withTenant } from '../../src/db/tenant.ts';
import type { Clock } from '../../src/lib/clock.ts';
import { admitScan, planScan, slicePortRange, WEBAPP_SEED_PATHS, type ScanDto } from '../../src/scans/index.ts';
import { createTestApp, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { enrollWorker, signingSecret } from '../helpers/workers.ts';
import { scanRow, scanTenant, setVerification, workerUpdate, type ScanTenant } from './scans-fixtures.ts';

let t: TestApp;
let now = new Date('2030-06-15T10:00:00Z');
const clock: Clock = { now: () => new Date(now) };

beforeAll(async () => {
  t = await createTestApp({ deps: { clock } });
});
afterAll(() => t.close());

describe('chunk plans', () => {
  it('slices 1–65535 (or a given range) into contiguous, gap-free port ranges for 2 to 8 chunks', () => {
    for (let n = 2; n <= 8; n++) {
      const plan = planScan({ kind: 'port', options: { timeoutMs: 1500, rate: 1500 }, chunkCount: n });
      const ranges = plan.chunks.map((c) => (c as { range: { from: number; to: number } }).range);
      expect(ranges).toHaveLength(n);
      expect(ranges[0]!.from).toBe(1);
      expect(ranges.at(-1)!.to).toBe(65535);
      for (let i = 1; i < n; i++) expect(ranges[i]!.from).toBe(ranges[i - 1]!.to + 1);
      const sizes = ranges.map((r) => r.to - r.from + 1);
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
      expect(plan.options).toMatchObject({ range: { from: 1, to: 65535 } });
    }
    expect(slicePortRange(8000, 8009, 3)).toEqual([
      { from: 8000, to: 8002 },
      { from: 8003, to: 8005 },
      { from: 8006, to: 8009 },
    ]);
    expect(() =>
      planScan({ kind: 'port', options: { range: { from: 1, to: 3 }, timeoutMs: 1, rate: 1 }, chunkCount: 4 }),
    ).toThrow(/fewer ports/);
    expect(() => planScan({ kind: 'port', options: { topPorts: 100, timeoutMs: 1, rate: 1 }, chunkCount: 2 })).toThrow(
      /topPorts/,
    );
    // Unchunked with nothing said: the top 1,000 ports.
    expect(planScan({ kind: 'port', options: { timeoutMs: 1500, rate: 1500 } }).options).toMatchObject({
      topPorts: 1000,
    });
  });

  it('buckets template severities (with the tags on every chunk)', () => {
    const all = ['info', 'low', 'medium', 'high', 'critical'] as const;
    const plan = planScan({
      kind: 'template',
      options: { severities: [...all], tags: ['cve'], templateIds: [], rateLimit: 150 },
      chunkCount: 2,
    });
    expect(plan.chunks).toEqual([
      { kind: 'template', severities: ['info', 'low'], tags: ['cve'], templateIds: [] },
      { kind: 'template', severities: ['medium', 'high', 'critical'], tags: ['cve'], templateIds: [] },
    ]);
    const five = planScan({
      kind: 'template',
      options: { severities: [...all], tags: [], templateIds: [], rateLimit: 150 },
      chunkCount: 5,
    });
    expect(five.chunks.map((c) => (c as { severities: string[] }).severities)).toEqual(all.map((s) => [s]));
    expect(() =>
      planScan({
        kind: 'template',
        options: { severities: ['high', 'critical'], tags: [], templateIds: [], rateLimit: 150 },
        chunkCount: 3,
      }),
    ).toThrow(/at most 2 chunks/);
  });

  it('deals the web seed paths over the chunks with the profile; chunk 0 runs the passive baseline', () => {
    const plan = planScan({
      kind: 'webapp',
      options: { profile: 'full', maxDepth: 3, maxPages: 200, paths: [...WEBAPP_SEED_PATHS] },
      chunkCount: 3,
    });
    expect(plan.chunks).toEqual([
      { kind: 'webapp', paths: ['/', '/login', '/v2'], profile: 'full', passiveBaseline: true },
      { kind: 'webapp', paths: ['/api', '/static', '/health'], profile: 'full', passiveBaseline: false },
      { kind: 'webapp', paths: ['/admin', '/v1'], profile: 'full', passiveBaseline: false },
    ]);
    const eight = planScan({
      kind: 'webapp',
      options: { profile: 'baseline', maxDepth: 3, maxPages: 200, paths: [...WEBAPP_SEED_PATHS] },
      chunkCount: 8,
    });
    expect(eight.chunks.flatMap((c) => (c as { paths: string[] }).paths)).toEqual([...WEBAPP_SEED_PATHS]);
    expect(eight.chunks.filter((c) => (c as { passiveBaseline: boolean }).passiveBaseline)).toHaveLength(1);
  });
});

describe('queueing a scan', () => {
  let s: ScanTenant;
  beforeAll(async () => {
    s = await scanTenant(t);
  });

  it('queues a verified asset with the kind defaults filled in, and audits it', async () => {
    const host = await s.asset('host');
    const { scan, children } = await s.queue({ assetId: host, kind: 'port' });
    expect(scan).toMatchObject({
      kind: 'port',
      status: 'queued',
      percent: 0,
      parentId: null,
      chunkCount: null,
      asset: { id: host, kind: 'host' },
      options: { topPorts: 1000, timeoutMs: 1500, rate: 1500 },
    });
    expect(scan.requestedBy?.email).toBeTruthy();
    expect(children).toEqual([]);
    const audit = (await s.owner.get(`${s.base}/audit-log?action=scan.`)).json() as {
      entries: { action: string; targetId: string }[];
    };
    expect(audit.entries).toContainEqual(expect.objectContaining({ action: 'scan.queued', targetId: scan.id }));
  });

  it('validates options per kind', async () => {
    const host = await s.asset('host');
    const web = await s.asset('webapp');
    for (const [body, path] of [
      [{ assetId: host, kind: 'port', options: { range: { from: 10, to: 5 } } }, 'options.range.to'],
      [{ assetId: host, kind: 'port', options: { range: { from: 0, to: 5 } } }, 'options.range.from'],
      [{ assetId: host, kind: 'port', options: { range: { from: 1, to: 9 }, topPorts: 10 } }, 'options.topPorts'],
      [{ assetId: host, kind: 'template', options: { severities: ['urgent'] } }, 'options.severities.0'],
      [{ assetId: web, kind: 'webapp', options: { profile: 'aggressive' } }, 'options.profile'],
      [{ assetId: web, kind: 'webapp', options: { paths: ['no-slash'] } }, 'options.paths.0'],
      [{ assetId: host, kind: 'edge', options: { ports: [70000] } }, 'options.ports.0'],
      [{ assetId: host, kind: 'edge', chunkCount: 2 }, 'chunkCount'],
      [{ assetId: host, kind: 'port', chunkCount: 9 }, 'chunkCount'],
      [{ assetId: host, kind: 'port', options: { unknown: true } }, 'options'],
    ] as const) {
      const res = await s.owner.post(`${s.base}/scans`, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error).toBe('validation_failed');
      expect(JSON.stringify(res.json().details), JSON.stringify(body)).toContain(path);
    }
    const tooMany = await s.owner.post(`${s.base}/scans`, {
      assetId: host,
      kind: 'template',
      options: { severities: ['high'] },
      chunkCount: 2,
    });
    expect([tooMany.statusCode, tooMany.json().details[0].path]).toEqual([400, 'body.chunkCount']);
  });

  it('scans only verified, covered or bypassed assets that are not archived, with a kind that fits', async () => {
    const pending = await s.asset('host', 'pending');
    let res = await s.owner.post(`${s.base}/scans`, { assetId: pending, kind: 'port' });
    expect([res.statusCode, res.json().error]).toEqual([409, 'asset_not_verified']);

    const bypassed = await s.asset('host', 'bypassed');
    expect((await s.owner.post(`${s.base}/scans`, { assetId: bypassed, kind: 'edge' })).statusCode).toBe(201);

    // Covered by a verified domain: the asset service derives it.
    const apex = await s.asset('domain', 'pending');
    const apexTarget = ((await s.owner.get(`${s.base}/assets/${apex}`)).json() as { asset: { target: string } }).asset
      .target;
    const sub = await s.owner.post(`${s.base}/assets`, { kind: 'host', target: `api.${apexTarget}` });
    const subId = (sub.json() as { asset: { id: string } }).asset.id;
    res = await s.owner.post(`${s.base}/scans`, { assetId: subId, kind: 'port' });
    expect(res.json().error).toBe('asset_not_verified');
    await setVerification(t, apex, 'verified');
    await s.owner.post(`${s.base}/assets/${subId}/verify`);
    expect(
      ((await s.owner.get(`${s.base}/assets/${subId}`)).json() as { asset: { verification: { via: string } } }).asset
        .verification.via,
    ).toBe('covered');
    expect((await s.owner.post(`${s.base}/scans`, { assetId: subId, kind: 'port' })).statusCode).toBe(201);

    const image = await s.asset('container_image');
    res = await s.owner.post(`${s.base}/scans`, { assetId: image, kind: 'port' });
    expect([res.statusCode, res.json().error]).toEqual([422, 'scan_kind_mismatch']);
    expect(res.json().message).toMatch(/container/);
    res = await s.owner.post(`${s.base}/scans`, {
      assetId: image,
      kind: 'container',
      options: { severityThreshold: 'high' },
    });
    expect(res.statusCode).toBe(201);

    const archived = await s.asset('webapp');
    await s.owner.post(`${s.base}/assets/${archived}/archive`);
    res = await s.owner.post(`${s.base}/scans`, { assetId: archived, kind: 'webapp' });
    expect([res.statusCode, res.json().error]).toEqual([409, 'asset_archived']);

    res = await s.owner.post(`${s.base}/scans`, { assetId: '00000000-0000-4000-8000-000000000000', kind: 'port' });
    expect([res.statusCode, res.json().error]).toEqual([404, 'asset_not_found']);
  });

  it('limits unfinished scans per asset; a chunked scan takes one slot', async () => {
    const host = await s.asset('host');
    const first = await s.queue({ assetId: host, kind: 'port', chunkCount: 4 });
    const again = await s.owner.post(`${s.base}/scans`, { assetId: host, kind: 'edge' });
    expect([again.statusCode, again.json().error]).toEqual([409, 'asset_scan_limit']);
    await s.settings(200, 2);
    await s.queue({ assetId: host, kind: 'edge' });
    expect((await s.owner.post(`${s.base}/scans`, { assetId: host, kind: 'template' })).json().error).toBe(
      'asset_scan_limit',
    );
    await s.owner.post(`${s.base}/scans/${first.scan.id}/cancel`);
    expect((await s.owner.post(`${s.base}/scans`, { assetId: host, kind: 'template' })).statusCode).toBe(201);
    await s.settings(200, 1);
  });
});

describe('daily quota', () => {
  let s: ScanTenant;
  beforeAll(async () => {
    s = await scanTenant(t);
    await s.settings(3, 1);
  });

  it('counts scans per UTC day (a chunked scan once), refunds scans cancelled before they started, refills at midnight UTC', async () => {
    now = new Date('2030-07-01T22:00:00Z');
    const a = await s.asset('host');
    const b = await s.asset('webapp');
    const c = await s.asset('domain');
    const d = await s.asset('host');
    const first = await s.queue({ assetId: a, kind: 'port', chunkCount: 8 });
    const second = await s.queue({ assetId: b, kind: 'webapp', chunkCount: 8 });
    await s.queue({ assetId: c, kind: 'template' });
    const over = await s.owner.post(`${s.base}/scans`, { assetId: d, kind: 'port' });
    expect([over.statusCode, over.json().error, over.json().details]).toEqual([
      429,
      'quota_exceeded',
      { quotaDay: '2030-07-01' },
    ]);
    expect(over.headers['retry-after']).toBe(String(2 * 3600));
    expect((await s.owner.get(`${s.base}/scan-usage`)).json()).toMatchObject({
      day: '2030-07-01',
      used: 3,
      dailyScanQuota: 3,
      resetsAt: '2030-07-02T00:00:00.000Z',
    });

    // Cancelled before any chunk was leased: refunded.
    await s.owner.post(`${s.base}/scans/${first.scan.id}/cancel`);
    expect((await scanRow(t, first.scan.id)).day).toBeNull();
    await s.queue({ assetId: d, kind: 'port' });
    // Work started on one chunk: cancelling does not refund.
    await workerUpdate(t, second.children[3]!.id, 'running', 10);
    await s.owner.post(`${s.base}/scans/${second.scan.id}/cancel`);
    expect((await scanRow(t, second.scan.id)).day).toBe('2030-07-01');
    expect((await s.owner.post(`${s.base}/scans`, { assetId: a, kind: 'port' })).json().error).toBe('quota_exceeded');

    now = new Date('2030-07-02T00:00:01Z');
    expect((await s.owner.post(`${s.base}/scans`, { assetId: a, kind: 'port' })).statusCode).toBe(201);
    expect((await s.owner.get(`${s.base}/scan-usage`)).json()).toMatchObject({ day: '2030-07-02', used: 1 });
    now = new Date('2030-06-15T10:00:00Z');
  });

  it('a quota of zero stops all scanning', async () => {
    const other = await scanTenant(t, s.owner);
    await other.settings(0, 1);
    const res = await other.owner.post(`${other.base}/scans`, { assetId: await other.asset('host'), kind: 'port' });
    expect(res.json().error).toBe('quota_exceeded');
  });
});

describe('chunked scans and the aggregation trigger', () => {
  let s: ScanTenant;
  beforeAll(async () => {
    s = await scanTenant(t);
  });

  it('creates the parent in chunking with its chunks queued, each carrying its spec', async () => {
    const web = await s.asset('webapp');
    const { scan, children } = await s.queue({
      assetId: web,
      kind: 'webapp',
      options: { profile: 'full' },
      chunkCount: 4,
    });
    expect(scan).toMatchObject({ status: 'chunking', chunkCount: 4, percent: 0, parentId: null });
    expect(children.map((c) => [c.chunkIndex, c.status, c.parentId])).toEqual(
      [0, 1, 2, 3].map((i) => [i, 'queued', scan.id]),
    );
    expect(children[0]!.chunkSpec).toEqual({
      kind: 'webapp',
      paths: ['/', '/static'],
      profile: 'full',
      passiveBaseline: true,
    });
    expect(children[3]!.chunkSpec).toEqual({
      kind: 'webapp',
      paths: ['/login', '/health'],
      profile: 'full',
      passiveBaseline: false,
    });
    // Chunks are not listed as scans of their own.
    const list = (await s.owner.get(`${s.base}/scans?assetId=${web}`)).json() as { scans: ScanDto[] };
    expect(list.scans.map((x) => x.id)).toEqual([scan.id]);
  });

  it('aggregates status and percent: chunking → aggregating → succeeded', async () => {
    const host = await s.asset('host');
    const { scan, children } = await s.queue({ assetId: host, kind: 'port', chunkCount: 4 });
    const get = async () =>
      (await s.owner.get(`${s.base}/scans/${scan.id}`)).json() as { scan: ScanDto; children: ScanDto[] };
    await workerUpdate(t, children[0]!.id, 'leased', 0);
    expect((await get()).scan).toMatchObject({ status: 'aggregating', percent: 0 });
    expect((await get()).scan.startedAt).not.toBeNull();
    await workerUpdate(t, children[0]!.id, 'running', 50);
    await workerUpdate(t, children[1]!.id, 'running', 30);
    expect((await get()).scan).toMatchObject({ status: 'aggregating', percent: 20 }); // (50+30+0+0)/4
    // A re-queued chunk (lease expired) does not send the parent back to chunking.
    await workerUpdate(t, children[1]!.id, 'queued', 0);
    expect((await get()).scan).toMatchObject({ status: 'aggregating', percent: 12 });
    for (const c of children) await workerUpdate(t, c.id, 'succeeded', 100);
    const done = await get();
    expect(done.scan).toMatchObject({ status: 'succeeded', percent: 100 });
    expect(done.scan.finishedAt).not.toBeNull();
    expect(done.children.every((c) => c.status === 'succeeded')).toBe(true);
  });

  it("gives the parent its chunks' outcome: partial when some were inconclusive, inconclusive when all were", async () => {
    const finish = (id: string, outcome: string, reason: string | null) =>
      withService(t.database.db, (tx) =>
        sql`update scans set status = 'succeeded', percent = 100, outcome = ${outcome}, outcome_reason = ${reason} where id = ${id}`.execute(
          tx,
        ),
      );
    const host = await s.asset('host');
    const some = await s.queue({ assetId: host, kind: 'port', chunkCount: 3 });
    await finish(some.children[0]!.id, 'complete', null);
    await finish(some.children[1]!.id, 'inconclusive', 'no port answered');
    await finish(some.children[2]!.id, 'partial', 'time budget');
    const shown = (await s.owner.get(`${s.base}/scans/${some.scan.id}`)).json() as {
      scan: ScanDto;
      children: ScanDto[];
    };
    expect(shown.scan).toMatchObject({
      status: 'succeeded',
      outcome: 'partial',
      outcomeReason: '1 of 3 chunks inconclusive, 1 of 3 chunks partial',
    });
    expect(shown.children[1]).toMatchObject({ outcome: 'inconclusive', outcomeReason: 'no port answered' });

    const all = await s.queue({ assetId: await s.asset('host'), kind: 'port', chunkCount: 2 });
    for (const c of all.children) await finish(c.id, 'inconclusive', 'host down');
    expect(await scanRow(t, all.scan.id)).toMatchObject({
      status: 'succeeded',
      outcome: 'inconclusive',
      outcome_reason: 'every chunk was inconclusive',
    });

    const clean = await s.queue({ assetId: await s.asset('host'), kind: 'port', chunkCount: 2 });
    for (const c of clean.children) await finish(c.id, 'complete', null);
    expect(await scanRow(t, clean.scan.id)).toMatchObject({
      status: 'succeeded',
      outcome: 'complete',
      outcome_reason: null,
    });
  });

  it('fails the parent when every chunk has finished and one failed', async () => {
    const host = await s.asset('host');
    const { scan, children } = await s.queue({ assetId: host, kind: 'template', chunkCount: 3 });
    await workerUpdate(t, children[0]!.id, 'failed', 40);
    expect((await scanRow(t, scan.id)).status).toBe('aggregating');
    await workerUpdate(t, children[1]!.id, 'succeeded', 100);
    await workerUpdate(t, children[2]!.id, 'succeeded', 100);
    const row = await scanRow(t, scan.id);
    expect([row.status, row.percent, row.error]).toEqual(['failed', 80, '1 of 3 chunks failed']);
    expect(row.finished_at).not.toBeNull();
    // Terminal parents stay terminal.
    await workerUpdate(t, children[0]!.id, 'succeeded', 100);
    expect((await scanRow(t, scan.id)).status).toBe('failed');
  });
});

describe('cancel', () => {
  let s: ScanTenant;
  beforeAll(async () => {
    s = await scanTenant(t);
  });

  it('cancels a queued scan; a finished scan cannot be cancelled', async () => {
    const host = await s.asset('host');
    const { scan } = await s.queue({ assetId: host, kind: 'edge' });
    const res = await s.owner.post(`${s.base}/scans/${scan.id}/cancel`);
    expect(res.statusCode).toBe(200);
    expect(res.json().scan).toMatchObject({ status: 'cancelled' });
    expect(res.json().scan.finishedAt).not.toBeNull();
    const again = await s.owner.post(`${s.base}/scans/${scan.id}/cancel`);
    expect([again.statusCode, again.json().error]).toEqual([409, 'scan_not_cancellable']);
    const audit = (await s.owner.get(`${s.base}/audit-log?action=scan.cancelled`)).json() as {
      entries: { targetId: string }[];
    };
    expect(audit.entries.map((e) => e.targetId)).toContain(scan.id);
  });

  it('cancels a running scan and clears its lease', async () => {
    const host = await s.asset('host');
    const { scan } = await s.queue({ assetId: host, kind: 'port' });
    await withService(t.database.db, (tx) =>
      sql`update scans set status = 'running', attempts = 1, lease_token = gen_random_uuid(), lease_expires_at = now() + interval '90 seconds' where id = ${scan.id}`.execute(
        tx,
      ),
    );
    expect((await s.owner.post(`${s.base}/scans/${scan.id}/cancel`)).json().scan.status).toBe('cancelled');
    const row = await scanRow(t, scan.id);
    expect([row.lease_token, row.lease_expires_at]).toEqual([null, null]);
    expect(row.day).not.toBeNull(); // work had started: no refund
  });

  it('cancelling a parent cancels its unfinished chunks and leaves finished ones; a chunk alone cannot be cancelled', async () => {
    const host = await s.asset('host');
    const { scan, children } = await s.queue({ assetId: host, kind: 'port', chunkCount: 4 });
    await workerUpdate(t, children[0]!.id, 'succeeded', 100);
    await workerUpdate(t, children[1]!.id, 'running', 40);
    const chunk = await s.owner.post(`${s.base}/scans/${children[2]!.id}/cancel`);
    expect([chunk.statusCode, chunk.json().error, chunk.json().details]).toEqual([
      409,
      'scan_not_cancellable',
      { parentId: scan.id },
    ]);
    const res = (await s.owner.post(`${s.base}/scans/${scan.id}/cancel`)).json() as {
      scan: ScanDto;
      children: ScanDto[];
    };
    expect(res.scan.status).toBe('cancelled');
    expect(res.children.map((c) => c.status)).toEqual(['succeeded', 'cancelled', 'cancelled', 'cancelled']);
    expect((await s.owner.post(`${s.base}/scans/${scan.id}/cancel`)).json().error).toBe('scan_not_cancellable');
  });
});

describe('listing', () => {
  it('filters by status, kind, asset and activity, and pages with a cursor', async () => {
    const s = await scanTenant(t);
    await s.settings(200, 5);
    const host = await s.asset('host');
    const ids: string[] = [];
    for (const kind of ['port', 'edge', 'template', 'port']) {
      now = new Date(now.getTime() + 1000);
      ids.push((await s.queue({ assetId: host, kind })).scan.id);
    }
    await s.owner.post(`${s.base}/scans/${ids[0]}/cancel`);
    const list = async (q: string) =>
      (await s.owner.get(`${s.base}/scans?${q}`)).json() as { scans: ScanDto[]; nextBefore: string | null };
    expect((await list('kind=port')).scans.map((x) => x.id)).toEqual([ids[3], ids[0]]);
    expect((await list('status=cancelled')).scans.map((x) => x.id)).toEqual([ids[0]]);
    expect((await list('active=true')).scans).toHaveLength(3);
    const page1 = await list(`assetId=${host}&limit=3`);
    expect(page1.scans.map((x) => x.id)).toEqual([ids[3], ids[2], ids[1]]);
    const page2 = await list(`assetId=${host}&limit=3&before=${encodeURIComponent(page1.nextBefore!)}`);
    expect([page2.scans.map((x) => x.id), page2.nextBefore]).toEqual([[ids[0]], null]);
    expect((await s.owner.get(`${s.base}/scans?before=junk`)).statusCode).toBe(400);
  });
});

describe('admission at lease time (the function the lease path calls)', () => {
  it('admits a chunk whose parent already holds the asset slot, holds back other scans, and re-checks the quota rank', async () => {
    const s = await scanTenant(t);
    await s.settings(200, 2);
    const host = await s.asset('host');
    const parent = await s.queue({ assetId: host, kind: 'port', chunkCount: 3 });
    now = new Date(now.getTime() + 1000);
    const solo = await s.queue({ assetId: host, kind: 'edge' });
    await workerUpdate(t, parent.children[0]!.id, 'leased', 0);
    await s.settings(200, 1);
    const lease = (scanId: string) =>
      withService(t.database.db, (tx) =>
        admitScan(tx, { tenantId: s.tenantId, assetId: host, phase: 'lease', scanId, now: clock.now() }),
      );
    expect(await lease(parent.children[1]!.id)).toMatchObject({ admitted: true });
    expect(await lease(solo.scan.id)).toMatchObject({ admitted: false, reason: 'asset_scan_limit' });
    // Lowered quota: the later scan of the day falls outside it.
    await s.settings(1, 5);
    expect(await lease(parent.children[2]!.id)).toMatchObject({ admitted: true });
    expect(await lease(solo.scan.id)).toMatchObject({ admitted: false, reason: 'quota_exceeded' });
    // Proof lost after queueing: refused at lease time.
    await s.settings(200, 5);
    await setVerification(t, host, 'pending');
    expect(await lease(solo.scan.id)).toMatchObject({ admitted: false, reason: 'asset_not_verified' });
    // Another tenant's scan id is not found from this tenant.
    const other = await scanTenant(t);
    expect(
      await withService(t.database.db, (tx) =>
        admitScan(tx, {
          tenantId: other.tenantId,
          assetId: host,
          phase: 'lease',
          scanId: solo.scan.id,
          now: clock.now(),
        }),
      ),
    ).toMatchObject({ admitted: false, reason: 'asset_not_found' });
  });
});

describe('tenant isolation', () => {
  it('other tenants get 403 or 404 and row-level security hides scans', async () => {
    const s = await scanTenant(t);
    const host = await s.asset('host');
    const { scan } = await s.queue({ assetId: host, kind: 'port' });
    const stranger = new Client(t.app);
    await stranger.signUp(uniqueEmail('scan-stranger'));
    const strangerTenant = await stranger.createTenant('Stranger');
    await stranger.me();
    expect((await stranger.get(`${s.base}/scans/${scan.id}`)).json().error).toBe('tenant_forbidden');
    expect((await stranger.get(`${s.base}/scans`)).json().error).toBe('tenant_forbidden');
    expect((await stranger.post(`${s.base}/scans/${scan.id}/cancel`)).json().error).toBe('tenant_forbidden');
    const own = `/api/v1/tenants/${strangerTenant}`;
    expect((await stranger.get(`${own}/scans/${scan.id}`)).json().error).toBe('scan_not_found');
    expect((await stranger.post(`${own}/scans/${scan.id}/cancel`)).json().error).toBe('scan_not_found');
    expect((await stranger.post(`${own}/scans`, { assetId: host, kind: 'port' })).json().error).toBe('asset_not_found');
    expect(((await stranger.get(`${own}/scans`)).json() as { scans: unknown[] }).scans).toEqual([]);
    // The backstop: unfiltered statements as the other tenant.
    const seen = await withTenant(
      t.database.db,
      { tenantId: strangerTenant },
      async (tx) =>
        (await sql<{ n: number }>`select count(*)::int as n from scans where id = ${scan.id}`.execute(tx)).rows[0]!.n,
    );
    expect(seen).toBe(0);
    await expect(
      withTenant(t.database.db, { tenantId: strangerTenant }, (tx) =>
        sql`insert into scans (tenant_id, asset_id, kind) values (${s.tenantId}, ${host}, 'port')`.execute(tx),
      ),
    ).rejects.toThrow(/row-level security/);
    await expect(
      withTenant(t.database.db, { tenantId: strangerTenant }, (tx) =>
        sql`update scans set status = 'cancelled' where id = ${scan.id} returning id`.execute(tx),
      ),
    ).resolves.toMatchObject({ rows: [] });
  });
});

describe('why a queued scan waits', () => {
  it('says so on the list and the detail, from the lease rule: secret, worker, asset limit, quota, retry', async () => {
    const s = await scanTenant(t);
    await s.settings(100, 2);
    const asset = await s.asset('host');
    const first = (await s.queue({ assetId: asset, kind: 'port' })).scan;
    // The second one's rank on its day follows the first (ranks order by queue time, then id).
    now = new Date(now.getTime() + 1000);
    const second = (await s.queue({ assetId: asset, kind: 'port' })).scan;
    const reason = async (id: string) =>
      ((await s.owner.get(`${s.base}/scans/${id}`)).json() as { scan: ScanDto }).scan.waitReason?.code ?? null;
    const set = (q: ReturnType<typeof sql>) => withService(t.database.db, (tx) => q.execute(tx));
    expect(await reason(first.id)).toBe('no_signing_secret');
    const listed = (await s.owner.get(`${s.base}/scans`)).json().scans as ScanDto[];
    expect(listed.find((x) => x.id === first.id)?.waitReason).toMatchObject({
      code: 'no_signing_secret',
      message: expect.stringContaining('under Workers'),
    });
    const secret = await signingSecret(s.owner, s.tenantId);
    expect(await reason(first.id)).toBe('no_worker');
    const w = await enrollWorker(t, s.owner, s.tenantId, { secret, now: clock.now });
    await set(sql`update workers set last_seen_at = now() - interval '1 hour' where id = ${w.workerId}`);
    expect(await reason(first.id)).toBe('no_active_worker');
    await set(sql`update workers set last_seen_at = now() where id = ${w.workerId}`);
    expect(await reason(first.id)).toBe('waiting_for_worker');
    // The first one runs; the asset's limit drops to 1: the second waits for it.
    await set(sql`update scans set status = 'running', attempts = 1 where id = ${first.id}`);
    await s.settings(100, 1);
    expect(await reason(first.id)).toBeNull();
    const detail = ((await s.owner.get(`${s.base}/scans/${second.id}`)).json() as { scan: ScanDto }).scan;
    expect(detail.waitReason).toMatchObject({ code: 'asset_scan_limit', message: expect.stringMatching(/limit is 1/) });
    // A quota lowered below the second one's rank on its day.
    await s.settings(1, 5);
    expect(await reason(second.id)).toBe('quota_exceeded');
    await s.settings(100, 5);
    await set(sql`update scans set not_before = ${new Date(now.getTime() + 3_600_000)} where id = ${second.id}`);
    expect(await reason(second.id)).toBe('retry_backoff');
  });
});
