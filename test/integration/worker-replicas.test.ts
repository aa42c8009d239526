// Two server replicas on one database (each with its own connection pool on PostgreSQL) and 20
// workers polling both at once: every scan is leased exactly once, and an asset never runs more
// scans at a time than its limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import { createTestApp, openTestDatabase, type TestApp } from '../helpers/app.ts';
import { tenantCast } from '../helpers/tenants.ts';
import { enrollWorker, signingSecret, type TestWorker } from '../helpers/workers.ts';
import { scanTenant } from './scans-fixtures.ts';

const SCANS_PER_ASSET = 3;
const ASSETS = 20;
let dbs: Awaited<ReturnType<typeof openTestDatabase>>[] = [];
let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  dbs = [await openTestDatabase()];
  // PostgreSQL: a second pool, as a second process would have. PGlite is one in-process database.
  if (process.env.DATABASE_URL) dbs.push(await openTestDatabase());
  a = await createTestApp({ database: dbs[0]!.database });
  b = await createTestApp({ database: (dbs[1] ?? dbs[0]!).database });
});
afterAll(async () => {
  await a.app.close();
  await b.app.close();
  for (const d of dbs) await d.cleanup();
});

describe('leasing across replicas', () => {
  // 60 scans leased, reported and ingested one asset turn at a time: about 25 s on an idle
  // two-core machine, so the test has room beyond the suite's 30 s default.
  it(`20 workers on two replicas lease each of ${ASSETS * SCANS_PER_ASSET} scans once, one scan per asset at a time`, async () => {
    const cast = await tenantCast(a, 'replicas');
    const st = await scanTenant(a, cast.owner);
    await st.settings(10_000, SCANS_PER_ASSET);
    const scanIds = new Set<string>();
    const assetOf = new Map<string, string>();
    for (let i = 0; i < ASSETS; i++) {
      const assetId = await st.asset('host', 'bypassed');
      for (let j = 0; j < SCANS_PER_ASSET; j++) {
        const { scan } = await st.queue({ assetId, kind: 'port', options: { range: { from: 1, to: 10 } } });
        scanIds.add(scan.id);
        assetOf.set(scan.id, assetId);
      }
    }
    // Now at most one scan per asset may run: the rest wait for their turn at lease time.
    await st.settings(10_000, 1);
    const secret = await signingSecret(cast.owner, st.tenantId);
    const workers: { w: TestWorker; app: TestApp }[] = [];
    for (let i = 0; i < 20; i++) {
      const app = i % 2 ? a : b;
      workers.push({ w: await enrollWorker(app, cast.owner, st.tenantId, { name: `r${i}`, secret }), app });
    }

    const leases: { scanId: string; worker: number }[] = [];
    const running = new Map<string, string>(); // assetId → scanId running now
    const overlaps: string[] = [];
    // Workers stop once every scan was leased, or after 10 s without any lease. (A count of idle
    // answers across 20 workers ran out in ~50 ms on a loaded machine while an asset's previous
    // scan was still being ingested, and one scan was never leased.)
    let lastLeaseAt = Date.now();
    await Promise.all(
      workers.map(async ({ w }, n) => {
        while (Date.now() - lastLeaseAt < 10_000 && leases.length < scanIds.size) {
          const res = await w.post('lease', { kinds: ['port'], waitSeconds: 0 });
          expect(res.statusCode, res.body).toBe(200);
          const lease = res.json().lease as { scanId: string; leaseToken: string } | null;
          if (!lease) {
            await new Promise((r) => setTimeout(r, 25));
            continue;
          }
          lastLeaseAt = Date.now();
          leases.push({ scanId: lease.scanId, worker: n });
          const assetId = assetOf.get(lease.scanId)!;
          if (running.has(assetId)) overlaps.push(`${assetId}: ${running.get(assetId)} and ${lease.scanId}`);
          running.set(assetId, lease.scanId);
          const progress = await w.post(`scans/${lease.scanId}/progress`, {
            leaseToken: lease.leaseToken,
            percent: 50,
          });
          expect(progress.statusCode, progress.body).toBe(200);
          // Clear our mark before the report ends the lease, so no false overlap is seen.
          running.delete(assetId);
          const report = await w.post('report', {
            scanId: lease.scanId,
            leaseToken: lease.leaseToken,
            format: 'native',
            report: `${JSON.stringify({ type: 'report', version: 1, scanner: 'port' })}\n`,
          });
          expect(report.statusCode, report.body).toBe(200);
        }
      }),
    );
    const counts = new Map<string, number>();
    for (const l of leases) counts.set(l.scanId, (counts.get(l.scanId) ?? 0) + 1);
    expect([...counts.values()].filter((c) => c > 1)).toEqual([]);
    expect(new Set(counts.keys())).toEqual(scanIds);
    expect(overlaps).toEqual([]);
    // Both replicas handed out leases.
    expect(new Set(leases.map((l) => l.worker % 2)).size).toBe(2);
    // Every report is read (by either replica's runner) and every scan ends succeeded.
    await Promise.all([a.app.services.ingestion.drain(), b.app.services.ingestion.drain()]);
    const statuses = await withService(a.database.db, (tx) =>
      tx.selectFrom('scans').select('status').where('tenant_id', '=', st.tenantId).execute(),
    );
    expect(statuses.filter((r) => r.status !== 'succeeded')).toEqual([]);
  }, 120_000);
});
