// Admission and aggregation under concurrency. On PostgreSQL (DATABASE_URL) the requests really
// run in parallel over a pool of connections; on PGlite they are serialised, and the same
// invariants must hold.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
import { withService } from '../../src/db/tenant.ts';
import type { ScanDto } from '../../src/scans/index.ts';
import { createTestApp, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { scanTenant, type ScanTenant } from './scans-fixtures.ts';

const PG = process.env.DATABASE_URL;
let t: TestApp;
let database: Database;
let dataDir: string;
/** On PostgreSQL: raw parallel connections for "worker" updates (each statement its own transaction). */
let pool: pg.Pool | null = null;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'rampart-scans-conc-'));
  database = PG
    ? await openDatabase({ databaseUrl: PG, dataDir, poolMax: 32 })
    : await openDatabase({ dataDir, inMemory: true });
  await migrate(database);
  t = await createTestApp({ database });
  if (PG) pool = new pg.Pool({ connectionString: PG, max: 16 });
});
afterAll(async () => {
  await t.close();
  await pool?.end();
  await database.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** More sessions of the same owner: separate clients, as several browser tabs or API users would be. */
async function sessions(s: ScanTenant, n: number, email: string): Promise<Client[]> {
  const out = [s.owner];
  for (let i = 1; i < n; i++) {
    const c = new Client(t.app);
    expect((await c.signIn(email)).statusCode).toBe(200);
    await c.me();
    out.push(c);
  }
  return out;
}

async function dbCounts(tenantId: string) {
  return withService(t.database.db, async (tx) => {
    const quota = await sql<{
      n: number;
    }>`select count(*)::int as n from scans where tenant_id = ${tenantId} and quota_day is not null`.execute(tx);
    const perAsset = await sql<{ asset_id: string; n: number }>`
      select asset_id, count(*)::int as n from scans where tenant_id = ${tenantId} and parent_id is null and status not in ('succeeded', 'failed', 'cancelled') group by asset_id`.execute(
      tx,
    );
    return { quotaUsed: quota.rows[0]!.n, perAsset: perAsset.rows.map((r) => r.n) };
  });
}

describe('50 concurrent queue requests', () => {
  it('never overshoot the daily quota', async () => {
    const email = uniqueEmail('conc-quota');
    const owner = new Client(t.app);
    await owner.signUp(email);
    const s = await scanTenant(t, owner);
    await s.settings(20, 3);
    const assets = await Promise.all(Array.from({ length: 10 }, () => s.asset('host')));
    const clients = await sessions(s, 4, email);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        clients[i % clients.length]!.post(
          `${s.base}/scans`,
          i % 3 === 0
            ? { assetId: assets[i % 10], kind: 'port', chunkCount: 1 + (i % 7) + 1 }
            : { assetId: assets[i % 10], kind: i % 2 ? 'edge' : 'template' },
        ),
      ),
    );
    const codes = results.map((r) => (r.statusCode === 201 ? 'ok' : (r.json() as { error: string }).error));
    // Each asset got 5 requests and may hold 3: 30 fit, so the quota of 20 is what binds.
    expect(codes.filter((c) => c === 'ok')).toHaveLength(20);
    expect(new Set(codes)).toEqual(
      new Set(['ok', 'quota_exceeded', 'asset_scan_limit'].filter((c) => codes.includes(c))),
    );
    expect(codes).toContain('quota_exceeded');
    const db = await dbCounts(s.tenantId);
    expect(db.quotaUsed).toBe(20);
    expect(Math.max(...db.perAsset)).toBeLessThanOrEqual(3);
  });

  it('never overshoot the per-asset limit', async () => {
    const email = uniqueEmail('conc-asset');
    const owner = new Client(t.app);
    await owner.signUp(email);
    const s = await scanTenant(t, owner);
    await s.settings(1000, 2);
    const assets = await Promise.all(Array.from({ length: 5 }, () => s.asset('webapp')));
    const clients = await sessions(s, 4, email);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        clients[i % clients.length]!.post(
          `${s.base}/scans`,
          i % 2 ? { assetId: assets[i % 5], kind: 'webapp', chunkCount: 8 } : { assetId: assets[i % 5], kind: 'edge' },
        ),
      ),
    );
    const codes = results.map((r) => (r.statusCode === 201 ? 'ok' : (r.json() as { error: string }).error));
    expect(codes.filter((c) => c === 'ok')).toHaveLength(10);
    expect(codes.filter((c) => c !== 'ok').every((c) => c === 'asset_scan_limit')).toBe(true);
    const db = await dbCounts(s.tenantId);
    expect(db.perAsset).toEqual([2, 2, 2, 2, 2]);
  });
});

/** One chunk update as its own transaction: on PostgreSQL over its own pooled connection. */
async function chunkUpdate(id: string, status: string, percent: number): Promise<void> {
  if (pool) await pool.query('update scans set status = $2, percent = $3 where id = $1', [id, status, percent]);
  else
    await withService(t.database.db, (tx) =>
      sql`update scans set status = ${status}, percent = ${percent} where id = ${id}`.execute(tx),
    );
}

describe('aggregation under concurrent chunk updates', () => {
  let s: ScanTenant;
  beforeAll(async () => {
    s = await scanTenant(t);
    await s.settings(1000, 64);
  });

  async function parentAndChildren(parentId: string) {
    return withService(t.database.db, async (tx) => ({
      parent: await tx
        .selectFrom('scans')
        .select(['status', 'percent', 'finished_at'])
        .where('id', '=', parentId)
        .executeTakeFirstOrThrow(),
      children: await tx.selectFrom('scans').select(['status', 'percent']).where('parent_id', '=', parentId).execute(),
    }));
  }

  it('keeps each parent equal to the aggregate of its chunks (8 chunks × 25 updates each, 4 parents at once)', async () => {
    const host = await s.asset('host');
    const parents: { scan: ScanDto; children: ScanDto[] }[] = [];
    for (let i = 0; i < 4; i++) parents.push(await s.queue({ assetId: host, kind: 'port', chunkCount: 8 }));

    // Progress: every chunk of every parent climbs in parallel.
    await Promise.all(
      parents.flatMap((p) =>
        p.children.map(async (c, ci) => {
          for (let step = 1; step <= 25; step++) await chunkUpdate(c.id, 'running', Math.min(99, step * 3 + ci));
        }),
      ),
    );
    for (const p of parents) {
      const { parent, children } = await parentAndChildren(p.scan.id);
      const avg = Math.floor(children.reduce((a, c) => a + c.percent, 0) / children.length);
      expect([parent.status, parent.percent]).toEqual(['aggregating', avg]);
    }

    // Completion: all chunks of a parent finish at the same moment; one parent has a failure.
    await Promise.all(
      parents.flatMap((p, pi) =>
        p.children.map((c, ci) =>
          chunkUpdate(c.id, pi === 3 && ci === 5 ? 'failed' : 'succeeded', pi === 3 && ci === 5 ? 60 : 100),
        ),
      ),
    );
    for (const [pi, p] of parents.entries()) {
      const { parent } = await parentAndChildren(p.scan.id);
      if (pi === 3) expect([parent.status, parent.percent]).toEqual(['failed', Math.floor((7 * 100 + 60) / 8)]);
      else expect([parent.status, parent.percent]).toEqual(['succeeded', 100]);
      expect(parent.finished_at).not.toBeNull();
    }
  });

  it('cancelling a parent while its chunks are being updated neither deadlocks nor loses the cancel', async () => {
    const host = await s.asset('host');
    for (let round = 0; round < 3; round++) {
      const p = await s.queue({ assetId: host, kind: 'template', chunkCount: 5 });
      const updates = p.children.map(async (c) => {
        for (let step = 1; step <= 10; step++) {
          // Workers write only while their chunk is live, as the lease fencing will make them.
          if (pool)
            await pool.query(
              `update scans set status = 'running', percent = $2 where id = $1 and status in ('queued', 'leased', 'running')`,
              [c.id, step * 5],
            );
          else
            await withService(t.database.db, (tx) =>
              sql`update scans set status = 'running', percent = ${step * 5} where id = ${c.id} and status in ('queued', 'leased', 'running')`.execute(
                tx,
              ),
            );
        }
      });
      const [cancel] = await Promise.all([s.owner.post(`${s.base}/scans/${p.scan.id}/cancel`), ...updates]);
      expect(cancel!.statusCode, cancel!.body).toBe(200);
      const { parent, children } = await parentAndChildren(p.scan.id);
      expect(parent.status).toBe('cancelled');
      expect(children.every((c) => c.status === 'cancelled')).toBe(true);
    }
  });
});
