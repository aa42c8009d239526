// Leasing (docs/worker-protocol.md) end to end through the signed routes: long poll, fencing on
// every write, heartbeats that extend leases and tell cancellations, expiry and re-queue with
// back-off, max attempts, release, fail, admission at lease time (quota, per-asset concurrency,
// lapsed proofs by real DNS), chunks on several workers, kinds, and tenant isolation.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordName, recordValue } from '../../src/assets/dns-verifier.ts';
import { withService } from '../../src/db/tenant.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';
import { tenantCast } from '../helpers/tenants.ts';
import { enrollWorker, signingSecret, type TestWorker } from '../helpers/workers.ts';
import { scanRow, scanTenant, type ScanTenant } from './scans-fixtures.ts';

const clock = { now: () => new Date() };
let t: TestApp;
let dns: TestDnsServer;
let st: ScanTenant;
let w1: TestWorker;
let w2: TestWorker;
let outsider: TestWorker;

type Lease = {
  scanId: string;
  leaseToken: string;
  attempt: number;
  kind: string;
  chunk: { index: number; count: number; spec: Record<string, unknown> } | null;
  asset: { id: string; target: string };
};

async function lease(
  w: TestWorker,
  kinds: string[] = ['port', 'template', 'webapp', 'container', 'edge'],
  waitSeconds = 0,
): Promise<Lease | null> {
  const res = await w.post('lease', { kinds, waitSeconds });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().lease;
}
/** Marks an asset's TXT proof as checked just now, so leasing needs no DNS re-check. */
const freshProof = (assetId: string) =>
  withService(t.database.db, (tx) =>
    sql`update assets set last_checked_at = ${clock.now()} where id = ${assetId}`.execute(tx),
  );
/** Leaves nothing leasable behind for the next test. */
/** Time passes for a lease (the lease clock is the database's): its expiry is moved into the past. */
const expire = (scanId: string) =>
  withService(t.database.db, (tx) =>
    sql`update scans set lease_expires_at = now() - interval '1 second' where id = ${scanId}`.execute(tx),
  );
/** The back-off before a re-queued scan's next attempt is over. */
const backOffOver = (scanId: string) =>
  withService(t.database.db, (tx) =>
    sql`update scans set not_before = now() - interval '1 second' where id = ${scanId}`.execute(tx),
  );
const drain = () =>
  withService(t.database.db, (tx) =>
    sql`update scans set status = 'cancelled' where tenant_id = ${st.tenantId} and status not in ('succeeded', 'failed', 'cancelled')`.execute(
      tx,
    ),
  );
async function hostAsset(): Promise<string> {
  const id = await st.asset('host');
  await freshProof(id);
  return id;
}
const portScan = async (assetId: string, extra: Record<string, unknown> = {}) =>
  (await st.queue({ assetId, kind: 'port', options: { range: { from: 1, to: 1024 } }, ...extra })).scan;

beforeAll(async () => {
  dns = await startDnsServer();
  t = await createTestApp({ env: { DNS_RESOLVERS: dns.address, DNS_TIMEOUT_MS: '300' }, deps: { clock } });
  const cast = await tenantCast(t, 'lease');
  st = await scanTenant(t, cast.owner);
  await st.settings(1000, 5);
  const secret = await signingSecret(cast.owner, st.tenantId);
  w1 = await enrollWorker(t, cast.owner, st.tenantId, { name: 'w1', secret, now: clock.now });
  w2 = await enrollWorker(t, cast.owner, st.tenantId, { name: 'w2', secret, now: clock.now });
  outsider = await enrollWorker(t, cast.other, cast.otherTenant, {
    name: 'outsider',
    secret: await signingSecret(cast.other, cast.otherTenant),
    now: clock.now,
  });
});
afterAll(async () => {
  await t.close();
  dns.close();
});

describe('lease', () => {
  it('answers null when there is no work, and validates the body', async () => {
    await drain();
    expect(await lease(w1)).toBeNull();
    const bad = await w1.post('lease', { kinds: ['laser'] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('validation_failed');
    expect((await w1.post('lease', { kinds: [] })).statusCode).toBe(400);
    expect((await w1.post('lease', { kinds: ['port'], waitSeconds: 26 })).statusCode).toBe(400);
  });

  it('leases a queued scan once, with what the worker needs', async () => {
    const assetId = await hostAsset();
    const scan = await portScan(assetId);
    const l = (await lease(w1))!;
    expect(l).toMatchObject({
      scanId: scan.id,
      attempt: 1,
      maxAttempts: 3,
      kind: 'port',
      leaseSeconds: 90,
      heartbeatSeconds: 30,
      chunk: null,
      asset: { id: assetId, kind: 'host' },
    });
    expect(l.asset.target).toMatch(/example\.test$/);
    expect(await lease(w2)).toBeNull();
    const row = await scanRow(t, scan.id);
    expect(row).toMatchObject({ status: 'leased', leased_by: w1.workerId, lease_token: l.leaseToken, attempts: 1 });
    // The workers page shows it as the worker's current scan.
    const list = (await st.owner.get(`${st.base}/workers`)).json().workers as {
      id: string;
      currentScan: { id: string } | null;
    }[];
    expect(list.find((w) => w.id === w1.workerId)?.currentScan?.id).toBe(scan.id);
    await drain();
  });

  it('long polls until work appears', async () => {
    await drain();
    const assetId = await hostAsset();
    const pending = lease(w1, ['port'], 5);
    await new Promise((r) => setTimeout(r, 300));
    const scan = await portScan(assetId);
    expect((await pending)?.scanId).toBe(scan.id);
    await drain();
  });

  it("leases only the kinds the worker asks for, and only its own tenant's scans", async () => {
    await drain();
    const scan = await portScan(await hostAsset());
    expect(await lease(w1, ['template', 'edge'])).toBeNull();
    expect(await lease(outsider)).toBeNull();
    expect((await lease(w1, ['port']))?.scanId).toBe(scan.id);
    await drain();
  });

  it('gives the chunks of one scan to different workers', async () => {
    await drain();
    const { scan, children } = await st.queue({
      assetId: await hostAsset(),
      kind: 'port',
      options: { range: { from: 1, to: 3000 } },
      chunkCount: 3,
    });
    const a = (await lease(w1))!;
    const b = (await lease(w2))!;
    const c = (await lease(w1))!;
    expect(new Set([a.scanId, b.scanId, c.scanId])).toEqual(new Set(children.map((x) => x.id)));
    expect(a.chunk).toMatchObject({ index: 0, count: 3, spec: { kind: 'port', range: { from: 1, to: 1000 } } });
    expect(await lease(w2)).toBeNull();
    expect((await scanRow(t, scan.id)).status).toBe('aggregating');
    await drain();
  });
});

describe('fencing, heartbeat, progress', () => {
  it('progress moves the scan to running and needs the current token', async () => {
    await drain();
    const scan = await portScan(await hostAsset());
    const l = (await lease(w1))!;
    const ok = await w1.post(`scans/${scan.id}/progress`, { leaseToken: l.leaseToken, percent: 40 });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(await scanRow(t, scan.id)).toMatchObject({ status: 'running', percent: 40 });
    const stale = await w1.post(`scans/${scan.id}/progress`, {
      leaseToken: '00000000-0000-4000-8000-000000000000',
      percent: 50,
    });
    expect(stale.statusCode).toBe(409);
    expect(stale.json().error).toBe('lease_lost');
    // Another worker cannot write under w1's token either.
    expect((await w2.post(`scans/${scan.id}/progress`, { leaseToken: l.leaseToken, percent: 50 })).json().error).toBe(
      'lease_lost',
    );
    // Nor can another tenant's worker learn anything about the scan.
    expect(
      (await outsider.post(`scans/${scan.id}/progress`, { leaseToken: l.leaseToken, percent: 50 })).json().error,
    ).toBe('scan_not_found');
    expect((await scanRow(t, scan.id)).percent).toBe(40);
    await drain();
  });

  it('heartbeat extends active leases and tells cancelled and lost ones', async () => {
    await drain();
    const s1 = await portScan(await hostAsset());
    const s2 = await portScan(await hostAsset());
    const l1 = (await lease(w1))!;
    const l2 = (await lease(w1))!;
    await withService(t.database.db, (tx) =>
      sql`update scans set lease_expires_at = now() + interval '5 seconds' where id = ${l1.scanId}`.execute(tx),
    );
    const before = (await scanRow(t, l1.scanId)).lease_expires_at!;
    // The owner cancels the second scan.
    const cancel = await st.owner.post(`${st.base}/scans/${l2.scanId}/cancel`);
    expect(cancel.statusCode, cancel.body).toBe(200);
    const res = await w1.post('heartbeat', {
      version: '1.0.1',
      leases: [
        { scanId: l1.scanId, leaseToken: l1.leaseToken },
        { scanId: l2.scanId, leaseToken: l2.leaseToken },
        { scanId: l1.scanId, leaseToken: l2.leaseToken },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    const states = res.json().leases as { scanId: string; state: string; leaseExpiresAt: string | null }[];
    expect(states.map((s) => s.state)).toEqual(['active', 'cancelled', 'lost']);
    expect(new Date(states[0]!.leaseExpiresAt!).getTime()).toBeGreaterThan(new Date(before).getTime());
    // A write on the cancelled scan says so.
    expect(
      (await w1.post(`scans/${l2.scanId}/progress`, { leaseToken: l2.leaseToken, percent: 10 })).json().error,
    ).toBe('scan_cancelled');
    // Another tenant's worker hears nothing but "lost" about our scans.
    const theirs = await outsider.post('heartbeat', { leases: [{ scanId: l1.scanId, leaseToken: l1.leaseToken }] });
    expect(theirs.json().leases[0].state).toBe('lost');
    expect([s1.id, s2.id]).toContain(l1.scanId);
    await drain();
  });

  it('refuses a replayed signed request', async () => {
    const raw = JSON.stringify({
      sentAt: clock.now().toISOString(),
      nonce: 'replay-nonce-0123456789',
      kinds: ['port'],
      waitSeconds: 0,
    });
    expect((await w1.postRaw('lease', raw)).statusCode).toBe(200);
    const again = await w1.postRaw('lease', raw);
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toBe('worker_replay');
  });
});

describe('expiry, release, fail', () => {
  it('re-queues an expired lease with back-off; another worker finishes the scan; the first is fenced out', async () => {
    await drain();
    const scan = await portScan(await hostAsset());
    const first = (await lease(w1))!;
    await expire(scan.id);
    expect(await t.app.services.leases.reapExpired()).toBeGreaterThanOrEqual(1);
    expect(await scanRow(t, scan.id)).toMatchObject({
      status: 'queued',
      lease_token: null,
      leased_by: null,
      attempts: 1,
    });
    expect(await lease(w2)).toBeNull(); // back-off: 15 s after the first attempt
    expect(new Date((await scanRow(t, scan.id)).not_before!).getTime()).toBeGreaterThan(Date.now() + 10_000);
    await backOffOver(scan.id);
    const second = (await lease(w2))!;
    expect(second).toMatchObject({ scanId: scan.id, attempt: 2 });
    expect(
      (await w1.post(`scans/${scan.id}/progress`, { leaseToken: first.leaseToken, percent: 90 })).json().error,
    ).toBe('lease_lost');
    expect(
      (await w2.post(`scans/${scan.id}/progress`, { leaseToken: second.leaseToken, percent: 90 })).statusCode,
    ).toBe(200);
    // The second worker completes the scan; the first one's late report is refused.
    const report = `${JSON.stringify({ type: 'report', version: 1, scanner: 'port' })}\n`;
    expect((await w1.post('report', { scanId: scan.id, leaseToken: first.leaseToken, report })).json().error).toBe(
      'lease_lost',
    );
    const done = await w2.post('report', { scanId: scan.id, leaseToken: second.leaseToken, format: 'native', report });
    expect(done.statusCode, done.body).toBe(200);
    await t.app.services.ingestion.drain();
    expect(await scanRow(t, scan.id)).toMatchObject({ status: 'succeeded', attempts: 2 });
    await drain();
  });

  it('fails a scan whose leases expired on every attempt', async () => {
    await drain();
    const scan = await portScan(await hostAsset());
    for (let i = 1; i <= 3; i++) {
      const l = (await lease(w1))!;
      expect(l.attempt).toBe(i);
      await expire(scan.id);
      await t.app.services.leases.reapExpired();
      if (i < 3) await backOffOver(scan.id);
    }
    const row = await scanRow(t, scan.id);
    expect(row.status).toBe('failed');
    expect(row.error).toMatch(/all 3 attempts/);
    expect(await lease(w1)).toBeNull();
  });

  it('release gives the scan back without counting the attempt', async () => {
    await drain();
    const scan = await portScan(await hostAsset());
    const l = (await lease(w1))!;
    const res = await w1.post(`scans/${scan.id}/release`, { leaseToken: l.leaseToken, reason: 'shutting down' });
    expect(res.statusCode, res.body).toBe(200);
    expect(await scanRow(t, scan.id)).toMatchObject({ status: 'queued', attempts: 0, leased_by: null });
    expect((await w1.post(`scans/${scan.id}/release`, { leaseToken: l.leaseToken })).json().error).toBe('lease_lost');
    expect((await lease(w2))?.attempt).toBe(1);
    await drain();
  });

  it('fail re-queues a retryable failure while attempts remain, else fails the scan with the message', async () => {
    await drain();
    const scan = await portScan(await hostAsset());
    const l = (await lease(w1))!;
    const retry = await w1.post(`scans/${scan.id}/fail`, {
      leaseToken: l.leaseToken,
      error: 'network unreachable',
      retryable: true,
    });
    expect(retry.json()).toEqual({ ok: true, status: 'queued' });
    await backOffOver(scan.id);
    const l2 = (await lease(w1))!;
    const fatal = await w1.post(`scans/${scan.id}/fail`, { leaseToken: l2.leaseToken, error: 'scanner crashed' });
    expect(fatal.json()).toEqual({ ok: true, status: 'failed' });
    expect(await scanRow(t, scan.id)).toMatchObject({ status: 'failed', error: 'scanner crashed' });
  });
});

describe('admission at lease time', () => {
  it('holds back scans beyond a lowered daily quota', async () => {
    await drain();
    await st.settings(1000, 5);
    const a = await portScan(await hostAsset());
    const b = await portScan(await hostAsset());
    const used = (await st.owner.get(`/api/v1/tenants/${st.tenantId}/scan-usage`)).json();
    // Lower the quota to what was used before b: a fits, b does not.
    const before = Number(used.used);
    await st.settings(before - 1, 5);
    const l = await lease(w1);
    expect(l?.scanId).toBe(a.id);
    expect(await lease(w1)).toBeNull();
    expect((await scanRow(t, b.id)).status).toBe('queued');
    await st.settings(1000, 5);
    expect((await lease(w1))?.scanId).toBe(b.id);
    await drain();
  });

  it('looks past any number of scans held back by the quota: a newer scan is leased, the held ones wait', async () => {
    await drain();
    await st.settings(1000, 5);
    const held: string[] = [];
    for (let i = 0; i < 12; i++) held.push((await portScan(await hostAsset())).id);
    const fresh = await portScan(await hostAsset());
    // The 12 were queued two days ago; the fresh one is the first of yesterday's. A quota of 2
    // admits the first two of the older day and the fresh one, and holds back ten older ones:
    // more than one lease attempt's first look (8 candidates).
    await withService(t.database.db, async (tx) => {
      await sql`update scans set quota_day = quota_day - 2, created_at = created_at - interval '2 days' where id in (${sql.join(held)})`.execute(
        tx,
      );
      await sql`update scans set quota_day = quota_day - 1 where id = ${fresh.id}`.execute(tx);
    });
    await st.settings(2, 5);
    const leased = [(await lease(w1))?.scanId, (await lease(w2))?.scanId, (await lease(w1))?.scanId];
    expect(leased).toEqual([held[0], held[1], fresh.id]);
    expect(await lease(w2)).toBeNull();
    const rows = await withService(t.database.db, (tx) =>
      tx.selectFrom('scans').select(['id', 'status', 'quota_held_at']).where('id', 'in', held.slice(2)).execute(),
    );
    expect(rows.map((r) => r.status)).toEqual(Array(10).fill('queued'));
    expect(rows.every((r) => r.quota_held_at !== null)).toBe(true);
    // A raised quota frees the held scans at once, oldest first.
    await st.settings(1000, 5);
    expect((await lease(w1))?.scanId).toBe(held[2]);
    await drain();
  });

  it('holds back a second scan of an asset at its concurrency limit', async () => {
    await drain();
    const assetId = await hostAsset();
    const a = await portScan(assetId);
    const b = await portScan(assetId);
    await st.settings(1000, 1);
    expect((await lease(w1))?.scanId).toBe(a.id);
    expect(await lease(w2)).toBeNull();
    expect((await scanRow(t, b.id)).status).toBe('queued');
    await st.settings(1000, 5);
    await drain();
  });

  it('re-checks a stale proof by DNS: a lapsed one fails the scan, a good one is leased', async () => {
    await drain();
    const good = await st.asset('domain');
    const bad = await st.asset('domain');
    const rows = await withService(t.database.db, (tx) =>
      tx.selectFrom('assets').select(['id', 'target', 'verification_token']).where('id', 'in', [good, bad]).execute(),
    );
    const g = rows.find((r) => r.id === good)!;
    dns.zone.set(recordName(g.target), { txt: [recordValue(g.verification_token)] });
    const stale = new Date(clock.now().getTime() - 2 * 3600_000);
    await withService(t.database.db, (tx) =>
      sql`update assets set last_checked_at = ${stale} where id in (${good}, ${bad})`.execute(tx),
    );
    const badScan = await portScan(bad);
    const goodScan = await portScan(good);
    const l = await lease(w1);
    expect(l?.scanId).toBe(goodScan.id);
    const row = await scanRow(t, badScan.id);
    expect(row.status).toBe('failed');
    expect(row.error).toMatch(/ownership proof/);
    await drain();
  });

  it('fails a queued scan whose asset was archived', async () => {
    await drain();
    const assetId = await hostAsset();
    const scan = await portScan(assetId);
    await withService(t.database.db, (tx) =>
      sql`update assets set archived_at = now() where id = ${assetId}`.execute(tx),
    );
    expect(await lease(w1)).toBeNull();
    expect(await scanRow(t, scan.id)).toMatchObject({ status: 'failed' });
  });
});
