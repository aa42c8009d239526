// The batched findings ingest (begin → batch* → finish) used for large reports: cross-batch
// duplicates fold, a run that crashed after some batches converges when run again (no duplicate
// rows or events, one critical report per finding; creation is the row itself, no event), the closing step stays limited
// to the scan's scope, and a finished scan replays.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService, withTenant } from '../../src/db/tenant.ts';
import { findingsByFingerprintQuery } from '../../src/findings/findings-ingest.ts';
import {
  bulkWritesOf,
  createBatchedFindingsIngest,
  type BatchedFindingsIngest,
  type NormalizedFindingInput,
} from '../../src/findings/index.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import type { Client } from '../helpers/client.ts';
import { ownerWithTenant } from '../helpers/tenants.ts';

const RUN = Math.random().toString(36).slice(2, 8);

let t: TestApp;
let owner: Client;
let tenant: string;
let batched: BatchedFindingsIngest;

beforeAll(async () => {
  t = await createTestApp({ env: { SVC_MANAGEMENT_PEER: `mgmt-${RUN}` } });
  ({ owner, tenant } = await ownerWithTenant(t, 'Batched'));
  batched = createBatchedFindingsIngest({
    db: t.database.db,
    reporter: t.app.services.reporter,
    clock: { now: () => new Date() },
    // As the server: the embedded database writes new findings with COPY.
    ...bulkWritesOf(t.database),
  });
});
afterAll(() => t.close());

let assetCounter = 0;
async function addAsset(): Promise<string> {
  assetCounter += 1;
  const res = await owner.post(`/api/v1/tenants/${tenant}/assets`, {
    kind: 'host',
    target: `b${assetCounter}-${RUN}.example.test`,
  });
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { asset: { id: string } }).asset.id;
}

async function addScan(assetId: string, chunk?: { parentId: string; index: number; spec: unknown }): Promise<string> {
  return withTenant(t.database.db, { tenantId: tenant }, async (tx) => {
    const row = await tx
      .insertInto('scans')
      .values({
        tenant_id: tenant,
        asset_id: assetId,
        kind: 'port',
        status: 'ingesting',
        parent_id: chunk?.parentId ?? null,
        chunk_index: chunk?.index ?? null,
        chunk_spec: chunk ? JSON.stringify(chunk.spec) : null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  });
}

const port = (
  p: number,
  severity: NormalizedFindingInput['severity'] = 'info',
  extra: Partial<NormalizedFindingInput> = {},
): NormalizedFindingInput => ({
  ruleId: 'open-port',
  title: `Open port ${p}/tcp`,
  severity,
  location: { host: `b-${RUN}.example.test`, port: p, protocol: 'tcp' },
  ...extra,
});

const rowsOf = (assetId: string) =>
  withService(t.database.db, (tx) =>
    tx.selectFrom('findings').selectAll().where('asset_id', '=', assetId).orderBy('port').execute(),
  );
const eventCounts = async (assetId: string) => {
  const { rows } = await withService(t.database.db, (tx) =>
    sql<{
      event: string;
      n: number;
    }>`select e.event, count(*)::int as n from finding_events e join findings f on f.id = e.finding_id where f.asset_id = ${assetId} group by e.event`.execute(
      tx,
    ),
  );
  return Object.fromEntries(rows.map((r) => [r.event, r.n]));
};
const criticalReports = async (assetId: string) =>
  (
    await withService(t.database.db, (tx) =>
      tx
        .selectFrom('svc_outbox')
        .select('payload')
        .where('event_type', '=', 'finding.critical')
        .where(sql<boolean>`payload->'data'->>'assetId' = ${assetId}`)
        .execute(),
    )
  ).length;

describe('batched findings ingest', () => {
  it('folds duplicates across batches and summarises like one ingest', async () => {
    const asset = await addAsset();
    const scan = await addScan(asset);
    const s = await batched.begin(scan);
    expect(s.replayed).toBe(false);
    await s.batch([port(22), port(80, 'low', { cwe: [200] })]);
    await s.batch([port(443), port(80, 'high', { cwe: [319] })]);
    await s.batch([]);
    const summary = await s.finish();
    expect(summary).toMatchObject({
      received: 4,
      distinct: 3,
      created: 3,
      seen: 0,
      reopened: 0,
      fixed: 0,
      replayed: false,
    });
    const rows = await rowsOf(asset);
    expect(rows.map((r) => r.port)).toEqual([22, 80, 443]);
    const p80 = rows.find((r) => r.port === 80)!;
    expect(p80.severity).toBe('high');
    expect([...p80.cwe_ids].sort()).toEqual([200, 319]);
    expect(rows.every((r) => r.scan_id === scan && r.first_scan_id === scan)).toBe(true);
    // Creation is not stored as an event (the history derives it from the row); port 80 was
    // reported low, then high in a later batch.
    expect(await eventCounts(asset)).toEqual({ severity_changed: 1 });
  });

  it('writes batches concurrently: a duplicate written by two batches at once is one row, folded', async () => {
    const asset = await addAsset();
    const scan = await addScan(asset);
    const s = await batched.begin(scan);
    // Two writers, as the runner uses on PostgreSQL; both batches hold port 80 and 8443.
    await Promise.all([
      s.batch([port(22), port(80, 'low', { cwe: [200] }), port(8443)]),
      s.batch([port(443), port(80, 'critical', { cwe: [319] }), port(8443, 'medium')]),
    ]);
    const summary = await s.finish();
    expect(summary).toMatchObject({ distinct: 4, created: 4, replayed: false });
    const rows = await rowsOf(asset);
    expect(rows.map((r) => r.port)).toEqual([22, 80, 443, 8443]);
    const p80 = rows.find((r) => r.port === 80)!;
    expect(p80.severity).toBe('critical');
    expect([...p80.cwe_ids].sort()).toEqual([200, 319]);
    expect(rows.find((r) => r.port === 8443)!.severity).toBe('medium');
    // 80 and 8443 each change severity once, whichever batch wrote them first.
    expect(await eventCounts(asset)).toEqual({ severity_changed: 2 });
  });

  it('after an all-new batch inserts first: known, fixed and in-batch duplicate findings fold as before', async () => {
    const asset = await addAsset();
    // An earlier scan found 22 and 3306; the next one showed only 80, which closed both.
    const first = await addScan(asset);
    const s0 = await batched.begin(first);
    await s0.batch([port(22), port(3306, 'low')]);
    await s0.finish();
    const second = await addScan(asset);
    const s1 = await batched.begin(second);
    await s1.batch([port(80)]);
    expect(await s1.finish()).toMatchObject({ fixed: 2, created: 1 });
    expect(await criticalReports(asset)).toBe(0);

    const scan = await addScan(asset);
    const s = await batched.begin(scan);
    // All new: the next batch is written insert-first.
    await s.batch([port(1), port(2)]);
    // Two fixed findings come back (22 twice in the batch, folded), one changes severity to
    // critical, and one is new.
    await s.batch([port(3306, 'critical', { cwe: [200] }), port(22), port(22, 'high', { cwe: [319] }), port(4)]);
    // Known again: looked up first.
    await s.batch([port(80), port(2, 'medium')]);
    const summary = await s.finish();
    expect(summary).toMatchObject({ received: 8, distinct: 6, created: 3, seen: 3, reopened: 2, fixed: 0 });

    const rows = await rowsOf(asset);
    expect(rows.map((r) => [r.port, r.status, r.severity])).toEqual([
      [1, 'open', 'info'],
      [2, 'open', 'medium'],
      [4, 'open', 'info'],
      [22, 'open', 'high'],
      [80, 'open', 'info'],
      [3306, 'open', 'critical'],
    ]);
    const p22 = rows.find((r) => r.port === 22)!;
    expect([p22.reopened_count, p22.fixed_at, [...p22.cwe_ids]]).toEqual([1, null, [319]]);
    const p3306 = rows.find((r) => r.port === 3306)!;
    expect([p3306.reopened_count, p3306.first_scan_id, p3306.scan_id]).toEqual([1, first, scan]);
    expect(rows.filter((r) => r.first_scan_id === scan).map((r) => r.port)).toEqual([1, 2, 4]);
    // Closed twice, reopened twice; severities 22 info → high, 3306 low → critical, 2 info → medium.
    expect(await eventCounts(asset)).toEqual({ fixed: 2, reopened: 2, severity_changed: 3 });
    expect(await criticalReports(asset)).toBe(1);
  });

  it('converges after a crash mid-way: no duplicate rows, events or critical reports; closing still right', async () => {
    const asset = await addAsset();
    // An earlier full scan found 22, 3306 and 8080 (8080 fixed since).
    const first = await addScan(asset);
    const s0 = await batched.begin(first);
    await s0.batch([port(22), port(3306, 'medium'), port(8080)]);
    await s0.finish();
    await withService(t.database.db, (tx) =>
      sql`update findings set status = 'fixed', fixed_at = now() where asset_id = ${asset} and port = 8080`.execute(tx),
    );

    const report = [
      [port(22), port(443, 'critical')],
      [port(8080), port(9000, 'high')],
      [port(9001), port(3306, 'high')],
    ];
    const scan = await addScan(asset);
    // The first run commits two batches, then its process dies (the session is dropped).
    const crashed = await batched.begin(scan);
    await crashed.batch(report[0]!);
    await crashed.batch(report[1]!);
    expect(await criticalReports(asset)).toBe(1);

    const again = await batched.begin(scan);
    expect(again.replayed).toBe(false);
    for (const b of report) await again.batch(b);
    const summary = await again.finish();

    const rows = await rowsOf(asset);
    expect(rows.map((r) => r.port)).toEqual([22, 443, 3306, 8080, 9000, 9001]);
    expect(rows.map((r) => r.status)).toEqual(['open', 'open', 'open', 'open', 'open', 'open']);
    expect(rows.find((r) => r.port === 3306)!.severity).toBe('high');
    expect(rows.find((r) => r.port === 8080)!.reopened_count).toBe(1);
    // 3 created by the first scan + 443, 9000, 9001 by this one; one reopen of 8080.
    expect(rows.filter((r) => r.first_scan_id === scan).map((r) => r.port)).toEqual([443, 9000, 9001]);
    expect(await eventCounts(asset)).toEqual({ reopened: 1, severity_changed: 1 });
    expect(summary).toMatchObject({ distinct: 6, created: 3, seen: 3, reopened: 1, fixed: 0, received: 6 });
    expect(await criticalReports(asset)).toBe(1);

    // A rescan that no longer shows 9000 and 9001 closes exactly those, once.
    const rescan = await addScan(asset);
    const s2 = await batched.begin(rescan);
    await s2.batch([port(22), port(443, 'critical'), port(3306, 'high'), port(8080)]);
    expect(await s2.finish()).toMatchObject({ fixed: 2, created: 0, seen: 4 });
    expect((await eventCounts(asset)).fixed).toBe(2);
  });

  it('closes only inside a chunk scope and replays a finished scan', async () => {
    const asset = await addAsset();
    const full = await addScan(asset);
    const s0 = await batched.begin(full);
    await s0.batch([port(22), port(80), port(5000)]);
    await s0.finish();

    const parent = await withTenant(t.database.db, { tenantId: tenant }, (tx) =>
      tx
        .insertInto('scans')
        .values({ tenant_id: tenant, asset_id: asset, kind: 'port', status: 'aggregating', chunk_count: 2 })
        .returning('id')
        .executeTakeFirstOrThrow(),
    );
    const chunk = await addScan(asset, { parentId: parent.id, index: 0, spec: { range: { from: 1, to: 1000 } } });
    const s = await batched.begin(chunk);
    await s.batch([port(80)]);
    const summary = await s.finish();
    // 22 is in 1–1000 and was not seen: fixed; 5000 is outside the chunk: left open.
    expect(summary).toMatchObject({ fixed: 1, seen: 1, scopeKey: 'ports:1-1000' });
    const byPort = Object.fromEntries((await rowsOf(asset)).map((r) => [r.port, r.status]));
    expect(byPort).toEqual({ 22: 'fixed', 80: 'open', 5000: 'open' });

    const replay = await batched.begin(chunk);
    expect(replay.replayed).toBe(true);
    await replay.batch([port(999)]);
    expect(await replay.finish()).toMatchObject({ fixed: 1, replayed: true });
    expect((await rowsOf(asset)).some((r) => r.port === 999)).toBe(false);
  });

  it('looks up a batch by fingerprint with one unique-index probe each, with or without statistics', async () => {
    // Without statistics (the embedded database before its first analyze) `fingerprint = any(…)`
    // was planned as a scan of every finding of the tenant, per batch: a large import went quadratic.
    const asset = await addAsset();
    const scan = await addScan(asset);
    const s = await batched.begin(scan);
    const many = Array.from({ length: 3_000 }, (_, i) => port(i + 1));
    for (let i = 0; i < many.length; i += 1_000) await s.batch(many.slice(i, i + 1_000));
    await s.finish();
    const stored = (await rowsOf(asset)).map((r) => r.fingerprint);
    const probe = [...stored.slice(0, 250), ...Array.from({ length: 250 }, (_, i) => `absent-${i}`)];
    const { plan, found } = await withService(t.database.db, async (tx) => ({
      plan: (await sql<{ 'QUERY PLAN': string }>`explain ${findingsByFingerprintQuery(tenant, probe)}`.execute(tx)).rows
        .map((r) => r['QUERY PLAN'])
        .join('\n'),
      found: (await findingsByFingerprintQuery(tenant, probe).execute(tx)).rows,
    }));
    expect(plan).toMatch(/Index (Only )?Scan using findings_tenant_id_fingerprint_key/);
    expect(plan).not.toMatch(/Seq Scan on findings|Bitmap Heap Scan on findings/);
    expect(found.map((r) => r.fingerprint).sort()).toEqual(stored.slice(0, 250).sort());
  });
});
