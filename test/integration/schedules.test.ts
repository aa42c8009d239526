// Scan schedules: cron expressions in time zones (DST), CRUD, and the cron tick hook — its
// secret, exactly-once dispatch under concurrent ticks, missed runs, admission failures.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService, withTenant } from '../../src/db/tenant.ts';
import type { Clock } from '../../src/lib/clock.ts';
import {
  formatInZone,
  nextRunAfter,
  SCHEDULES_TICK_PATH,
  type ScanDto,
  type ScheduleDto,
} from '../../src/scans/index.ts';
import { startBackgroundJobs } from '../../src/server/background.ts';
import { createTestApp, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { scanTenant, setVerification, type ScanTenant } from './scans-fixtures.ts';

const CRON_SECRET = 'cron-secret-for-tests-0123456789';
let t: TestApp;
let now = new Date('2031-01-10T08:00:00Z');
const clock: Clock = { now: () => new Date(now) };
let s: ScanTenant;

beforeAll(async () => {
  t = await createTestApp({ env: { CRON_SECRET }, deps: { clock } });
  s = await scanTenant(t);
  await s.settings(200, 1);
});
afterAll(() => t.close());

const tick = (headers: Record<string, string> = { authorization: `Bearer ${CRON_SECRET}` }) =>
  t.app.inject({ method: 'POST', url: SCHEDULES_TICK_PATH, headers });
type Tick = { ok: boolean; dispatched: number; results: { scheduleId: string; scanId?: string; error?: string }[] };

async function createSchedule(body: Record<string, unknown>): Promise<ScheduleDto> {
  const res = await s.owner.post(`${s.base}/scan-schedules`, body);
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { schedule: ScheduleDto }).schedule;
}
const getSchedule = async (id: string) =>
  (await s.owner.get(`${s.base}/scan-schedules/${id}`)).json() as {
    schedule: ScheduleDto;
    upcoming: { at: string; local: string }[];
    history: ScanDto[];
  };
/** Finishes every unfinished scan of the tenant, so the per-asset limit does not get in the way. */
const finishAll = () =>
  withService(t.database.db, (tx) =>
    sql`update scans set status = 'succeeded', percent = 100 where tenant_id = ${s.tenantId} and status not in ('succeeded', 'failed', 'cancelled')`.execute(
      tx,
    ),
  );

describe('cron expressions in time zones', () => {
  it('follows daylight saving: the same wall-clock time moves in UTC, gaps and repeats run once', () => {
    // New York springs forward on 2025-03-09: 09:00 EST is 14:00Z, 09:00 EDT is 13:00Z.
    expect(nextRunAfter('0 9 * * *', 'America/New_York', new Date('2025-03-08T12:00:00Z'))?.toISOString()).toBe(
      '2025-03-08T14:00:00.000Z',
    );
    expect(nextRunAfter('0 9 * * *', 'America/New_York', new Date('2025-03-08T15:00:00Z'))?.toISOString()).toBe(
      '2025-03-09T13:00:00.000Z',
    );
    // Berlin 2025-03-30 has no 02:30: the run happens at the first valid time after the gap (03:00 CEST).
    const gap = nextRunAfter('30 2 * * *', 'Europe/Berlin', new Date('2025-03-29T12:00:00Z'))!;
    expect([gap.toISOString(), formatInZone(gap, 'Europe/Berlin')]).toEqual([
      '2025-03-30T01:00:00.000Z',
      '2025-03-30 03:00 GMT+2',
    ]);
    // New York 2025-11-02 has 01:30 twice: one run, at the first (EDT) occurrence.
    const first = nextRunAfter('30 1 * * *', 'America/New_York', new Date('2025-11-01T12:00:00Z'))!;
    expect(first.toISOString()).toBe('2025-11-02T05:30:00.000Z');
    expect(nextRunAfter('30 1 * * *', 'America/New_York', first)?.toISOString()).toBe('2025-11-03T06:30:00.000Z');
  });

  it('refuses bad expressions and zones with the field named', async () => {
    const host = await s.asset('host');
    for (const [patch, path] of [
      [{ cron: 'every day' }, 'body.cron'],
      [{ cron: '61 * * * *' }, 'body.cron'],
      [{ cron: '* * * * * *' }, 'body.cron'], // seconds are not offered
      [{ cron: '0 0 31 2 *' }, 'body.cron'], // never fires
      [{ timeZone: 'Mars/Olympus_Mons' }, 'body.timeZone'],
    ] as const) {
      const body: Record<string, unknown> = { name: 'Bad', assetId: host, kind: 'port', cron: '0 3 * * *' };
      const res = await s.owner.post(`${s.base}/scan-schedules`, { ...body, ...patch });
      expect(res.statusCode, JSON.stringify(patch)).toBe(400);
      expect(res.json().details[0].path).toBe(path);
    }
  });
});

describe('managing schedules', () => {
  it('creates a schedule with its next run in UTC and in its zone, previews runs, edits, disables and deletes', async () => {
    now = new Date('2025-03-08T12:00:00Z');
    const host = await s.asset('host');
    const sc = await createSchedule({
      name: 'Nightly ports',
      assetId: host,
      kind: 'port',
      chunkCount: 4,
      cron: '0 9 * * *',
      timeZone: 'america/new_york',
    });
    expect(sc).toMatchObject({
      timeZone: 'America/New_York',
      enabled: true,
      nextRunAt: '2025-03-08T14:00:00.000Z',
      nextRunLocal: '2025-03-08 09:00 EST',
      chunkCount: 4,
      options: { range: { from: 1, to: 65535 } },
    });
    const d = await getSchedule(sc.id);
    expect(d.upcoming.slice(0, 2)).toEqual([
      { at: '2025-03-08T14:00:00.000Z', local: '2025-03-08 09:00 EST' },
      { at: '2025-03-09T13:00:00.000Z', local: '2025-03-09 09:00 EDT' },
    ]);
    const preview = (
      await s.owner.get(`${s.base}/scan-schedules/preview?cron=${encodeURIComponent('@daily')}&timeZone=Asia/Tokyo`)
    ).json() as { upcoming: { at: string }[] };
    expect(preview.upcoming[0]!.at).toBe('2025-03-08T15:00:00.000Z');

    let res = await s.owner.request('PATCH', `${s.base}/scan-schedules/${sc.id}`, {
      cron: '30 6 * * 1',
      timeZone: 'Europe/Berlin',
      name: 'Weekly ports',
    });
    expect(res.json().schedule).toMatchObject({
      name: 'Weekly ports',
      cron: '30 6 * * 1',
      nextRunAt: '2025-03-10T05:30:00.000Z',
    });
    res = await s.owner.post(`${s.base}/scan-schedules/${sc.id}/disable`);
    expect(res.json().schedule).toMatchObject({ enabled: false, nextRunAt: null, nextRunLocal: null });
    expect((await getSchedule(sc.id)).upcoming).toEqual([]);
    res = await s.owner.post(`${s.base}/scan-schedules/${sc.id}/enable`);
    expect(res.json().schedule).toMatchObject({ enabled: true, nextRunAt: '2025-03-10T05:30:00.000Z' });
    const list = (await s.owner.get(`${s.base}/scan-schedules?assetId=${host}`)).json() as { schedules: ScheduleDto[] };
    expect(list.schedules.map((x) => x.id)).toEqual([sc.id]);
    const audit = (await s.owner.get(`${s.base}/audit-log?action=scan_schedule.`)).json() as {
      entries: { action: string }[];
    };
    expect(audit.entries.map((e) => e.action)).toEqual(
      expect.arrayContaining([
        'scan_schedule.created',
        'scan_schedule.updated',
        'scan_schedule.disabled',
        'scan_schedule.enabled',
      ]),
    );
    expect((await s.owner.delete(`${s.base}/scan-schedules/${sc.id}`)).statusCode).toBe(204);
    expect((await s.owner.get(`${s.base}/scan-schedules/${sc.id}`)).json().error).toBe('schedule_not_found');
  });

  it('refuses schedules for assets that cannot be scanned', async () => {
    const pending = await s.asset('host', 'pending');
    const res = await s.owner.post(`${s.base}/scan-schedules`, {
      name: 'x',
      assetId: pending,
      kind: 'port',
      cron: '@daily',
    });
    expect([res.statusCode, res.json().error]).toEqual([409, 'asset_not_verified']);
    const image = await s.asset('container_image');
    expect(
      (
        await s.owner.post(`${s.base}/scan-schedules`, { name: 'x', assetId: image, kind: 'webapp', cron: '@daily' })
      ).json().error,
    ).toBe('scan_kind_mismatch');
  });
});

describe('the tick hook', () => {
  it('is shut without the right secret, in either header', async () => {
    for (const headers of [
      {},
      { authorization: 'Bearer wrong' },
      { authorization: CRON_SECRET },
      { 'x-cron-secret': 'wrong' },
      { authorization: `Basic ${CRON_SECRET}` },
    ] as Record<string, string>[]) {
      const res = await tick(headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      expect(res.json()).toMatchObject({ error: 'Unauthorized' });
      expect(res.headers['content-type']).toMatch(/application\/json/);
    }
    expect((await tick({ 'x-cron-secret': CRON_SECRET })).statusCode).toBe(200);
    // Schedulers that send an empty body labelled as JSON, or a JSON object, are fine too.
    expect(
      (await tick({ authorization: `Bearer ${CRON_SECRET}`, 'content-type': 'application/json' })).statusCode,
    ).toBe(200);
    const withBody = await t.app.inject({
      method: 'POST',
      url: SCHEDULES_TICK_PATH,
      headers: { 'x-cron-secret': CRON_SECRET },
      payload: { source: 'cron' },
    });
    expect(withBody.statusCode).toBe(200);
    expect((await tick()).json()).toMatchObject({ ok: true });
  });

  it('stays shut when CRON_SECRET is unset', async () => {
    const bare = await createTestApp();
    try {
      for (const headers of [
        {},
        { authorization: 'Bearer ' },
        { 'x-cron-secret': '' },
        { authorization: 'Bearer undefined' },
      ]) {
        const res = await bare.app.inject({ method: 'POST', url: SCHEDULES_TICK_PATH, headers });
        expect([res.statusCode, res.json().error]).toEqual([401, 'Unauthorized']);
      }
    } finally {
      await bare.close();
    }
  });

  it('dispatches each due schedule exactly once when two ticks run at the same moment', async () => {
    now = new Date('2031-02-01T00:00:00Z');
    await finishAll();
    const schedules: ScheduleDto[] = [];
    for (let i = 0; i < 6; i++) {
      const kind = i % 2 ? 'edge' : 'template';
      schedules.push(
        await createSchedule({
          name: `Every 15 min ${i}`,
          assetId: await s.asset('host'),
          kind,
          ...(kind === 'template' ? { chunkCount: 2 } : {}),
          cron: '*/15 * * * *',
          timeZone: 'UTC',
        }),
      );
    }
    const notDue = await createSchedule({
      name: 'Monthly',
      assetId: await s.asset('host'),
      kind: 'port',
      cron: '0 0 1 * *',
    });
    expect(schedules[0]!.nextRunAt).toBe('2031-02-01T00:15:00.000Z');

    now = new Date('2031-02-01T00:15:30Z');
    const [a, b] = await Promise.all([tick(), tick({ 'x-cron-secret': CRON_SECRET })]);
    // On PostgreSQL the test files share one database: other files' schedules may be due at this
    // clock too, so only this tenant's are counted.
    const mine = new Set([...schedules.map((x) => x.id), notDue.id]);
    const results = [...(a.json() as Tick).results, ...(b.json() as Tick).results].filter((r) =>
      mine.has(r.scheduleId),
    );
    expect(results).toHaveLength(6);
    expect(results.map((r) => r.scheduleId).sort()).toEqual(schedules.map((x) => x.id).sort());
    expect(results.every((r) => r.scanId && !r.error)).toBe(true);
    // Once, in the database too; chunked definitions are queued chunked.
    const rows = await withService(t.database.db, (tx) =>
      sql<{ schedule_id: string; n: number; chunks: number }>`
      select schedule_id, count(*)::int as n, max(chunk_count)::int as chunks from scans where parent_id is null and schedule_id is not null and tenant_id = ${s.tenantId} and created_at >= ${now} group by schedule_id`.execute(
        tx,
      ),
    );
    expect(rows.rows).toHaveLength(6);
    expect(rows.rows.every((r) => r.n === 1)).toBe(true);
    expect(rows.rows.filter((r) => r.chunks === 2)).toHaveLength(3);

    // Called again at the same moment: nothing is due.
    expect((await tick()).json()).toEqual({ ok: true, dispatched: 0, results: [] });
    const d = await getSchedule(schedules[0]!.id);
    expect(d.schedule).toMatchObject({
      nextRunAt: '2031-02-01T00:30:00.000Z',
      lastRunAt: now.toISOString(),
      lastError: null,
    });
    expect(d.history.map((h) => h.id)).toEqual([d.schedule.lastScanId]);
    expect(d.history[0]).toMatchObject({ scheduleId: schedules[0]!.id, requestedBy: null });
    expect((await getSchedule(notDue.id)).schedule.lastRunAt).toBeNull();
    const audit = (await s.owner.get(`${s.base}/audit-log?action=scan.queued`)).json() as {
      entries: { targetId: string; details: { scheduleId?: string } }[];
    };
    expect(audit.entries.filter((e) => e.details.scheduleId === schedules[0]!.id)).toHaveLength(1);
  });

  it('runs a schedule once after downtime (no burst of missed runs) and records admission failures while advancing', async () => {
    now = new Date('2031-03-01T00:00:00Z');
    await finishAll();
    const host = await s.asset('host');
    const sc = await createSchedule({ name: 'Hourly', assetId: host, kind: 'port', cron: '0 * * * *' });
    // Five hours of missed runs.
    now = new Date('2031-03-01T05:20:00Z');
    let r = (await tick()).json() as Tick;
    expect(r.results.filter((x) => x.scheduleId === sc.id)).toHaveLength(1);
    expect((await getSchedule(sc.id)).schedule.nextRunAt).toBe('2031-03-01T06:00:00.000Z');

    // The previous run is still unfinished: the asset's slot is taken; recorded, and the schedule moves on.
    now = new Date('2031-03-01T06:00:05Z');
    r = (await tick()).json() as Tick;
    expect(r.results.find((x) => x.scheduleId === sc.id)).toEqual({ scheduleId: sc.id, error: 'asset_scan_limit' });
    let d = await getSchedule(sc.id);
    expect(d.schedule).toMatchObject({ nextRunAt: '2031-03-01T07:00:00.000Z' });
    expect(d.schedule.lastError).toMatch(/^asset_scan_limit: /);
    expect(d.history).toHaveLength(1);

    // Quota used up: same treatment; the tick itself is still ok.
    await finishAll();
    await s.settings(0, 1);
    now = new Date('2031-03-01T07:00:05Z');
    r = (await tick()).json() as Tick;
    expect(r.ok).toBe(true);
    expect(r.results.find((x) => x.scheduleId === sc.id)?.error).toBe('quota_exceeded');
    await s.settings(200, 1);

    // Proof lost.
    await setVerification(t, host, 'pending');
    now = new Date('2031-03-01T08:00:05Z');
    r = (await tick()).json() as Tick;
    expect(r.results.find((x) => x.scheduleId === sc.id)?.error).toBe('asset_not_verified');
    await setVerification(t, host, 'verified');
    now = new Date('2031-03-01T09:00:05Z');
    r = (await tick()).json() as Tick;
    expect(r.results.find((x) => x.scheduleId === sc.id)?.scanId).toBeTruthy();
    d = await getSchedule(sc.id);
    expect(d.schedule.lastError).toBeNull();
    expect(d.history).toHaveLength(2);
    // Disabled schedules are never dispatched.
    await s.owner.post(`${s.base}/scan-schedules/${sc.id}/disable`);
    await finishAll();
    now = new Date('2031-03-01T12:00:05Z');
    expect(((await tick()).json() as Tick).results.find((x) => x.scheduleId === sc.id)).toBeUndefined();
  });
});

describe('a busy asset', () => {
  it('queues a run behind a scan that is running, and skips a run while one already waits', async () => {
    now = new Date('2031-04-01T00:00:00Z');
    await finishAll();
    const host = await s.asset('host');
    const sc = await createSchedule({ name: 'Hourly busy', assetId: host, kind: 'port', cron: '0 * * * *' });
    const first = await s.queue({ assetId: host, kind: 'port', options: { range: { from: 1, to: 100 } } });
    await withService(t.database.db, (tx) =>
      sql`update scans set status = 'running', attempts = 1 where id = ${first.scan.id}`.execute(tx),
    );
    now = new Date('2031-04-01T01:00:05Z');
    const queued = ((await tick()).json() as Tick).results.find((x) => x.scheduleId === sc.id);
    expect(queued?.scanId).toBeTruthy();
    const behind = (await s.owner.get(`${s.base}/scans/${queued!.scanId}`)).json() as { scan: ScanDto };
    expect(behind.scan.status).toBe('queued');
    expect((await getSchedule(sc.id)).schedule.lastError).toBeNull();
    // The next run finds that one still waiting: skipped and said so, no backlog.
    now = new Date('2031-04-01T02:00:05Z');
    const skipped = ((await tick()).json() as Tick).results.find((x) => x.scheduleId === sc.id);
    expect(skipped).toEqual({ scheduleId: sc.id, error: 'asset_scan_limit' });
    expect((await getSchedule(sc.id)).schedule.lastError).toMatch(/already waiting to start/);
    // A person asking for a scan of the busy asset is still refused.
    expect((await s.owner.post(`${s.base}/scans`, { assetId: host, kind: 'port' })).json().error).toBe(
      'asset_scan_limit',
    );
    await finishAll();
  });
});

describe('the built-in ticker', () => {
  it('runs a due schedule with no cron hook call, and stops when told', async () => {
    await finishAll();
    const host = await s.asset('host');
    const schedule = await createSchedule({ name: 'Ticker', assetId: host, kind: 'port', cron: '*/5 * * * *' });
    now = new Date(new Date(schedule.nextRunAt!).getTime() + 1_000);
    const errors: unknown[] = [];
    const stop = startBackgroundJobs(
      t.app,
      t.database,
      { SCHEDULE_TICK_SECONDS: 1, PGLITE_MAINTENANCE_SECONDS: 0 },
      { error: (...a: unknown[]) => errors.push(a), info: () => undefined },
    );
    try {
      let history: ScanDto[] = [];
      for (let i = 0; i < 100 && history.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        history = (await getSchedule(schedule.id)).history;
      }
      expect(history).toHaveLength(1);
      expect(errors).toEqual([]);
    } finally {
      await stop();
    }
    // Stopped: a later due time passes with no further run.
    await finishAll();
    now = new Date(now.getTime() + 10 * 60_000);
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await getSchedule(schedule.id)).history).toHaveLength(1);
  });
});

describe('isolation', () => {
  it('keeps other tenants away from schedules', async () => {
    const sc = await createSchedule({ name: 'Private', assetId: await s.asset('host'), kind: 'edge', cron: '@weekly' });
    const stranger = new Client(t.app);
    await stranger.signUp(uniqueEmail('sched-stranger'));
    const own = await stranger.createTenant('Stranger');
    await stranger.me();
    expect((await stranger.get(`${s.base}/scan-schedules/${sc.id}`)).json().error).toBe('tenant_forbidden');
    expect((await stranger.get(`/api/v1/tenants/${own}/scan-schedules/${sc.id}`)).json().error).toBe(
      'schedule_not_found',
    );
    expect(
      (await stranger.request('PATCH', `/api/v1/tenants/${own}/scan-schedules/${sc.id}`, { enabled: false })).json()
        .error,
    ).toBe('schedule_not_found');
    expect((await stranger.delete(`/api/v1/tenants/${own}/scan-schedules/${sc.id}`)).json().error).toBe(
      'schedule_not_found',
    );
    const seen = await withTenant(
      t.database.db,
      { tenantId: own },
      async (tx) => (await sql<{ n: number }>`select count(*)::int as n from scan_schedules`.execute(tx)).rows[0]!.n,
    );
    expect(seen).toBe(0);
  });
});
