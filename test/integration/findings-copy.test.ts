// A batch's new findings are written with COPY: on the embedded database straight into findings
// (copy_findings_from_blob), on PostgreSQL into a temporary table by COPY FROM STDIN and from there
// by an insert. What either stores must be exactly what the JSON insert stores, whatever the text
// holds (tabs, line breaks, backslashes, quotes in array elements, non-ASCII, NUL), and a batch
// whose rows meet a fingerprint already written folds it (on the embedded database the COPY fails
// and the batch is written again by the insert).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService, withTenant } from '../../src/db/tenant.ts';
import { COPY_COLUMNS, encodeFindingRows } from '../../src/findings/findings-copy.ts';
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
let viaJson: BatchedFindingsIngest;
let viaCopy: BatchedFindingsIngest;
const copies: { ok: number; failed: number } = { ok: 0, failed: 0 };

beforeAll(async () => {
  // A management peer, so that critical findings are announced through the outbox.
  t = await createTestApp({ env: { SVC_MANAGEMENT_PEER: `mgmt-${RUN}` } });
  ({ owner, tenant } = await ownerWithTenant(t, 'Copy'));
  const deps = { db: t.database.db, reporter: t.app.services.reporter, clock: { now: () => new Date() } };
  viaJson = createBatchedFindingsIngest(deps);
  // The database's own bulk path, counting its calls and failures.
  const counted =
    <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      try {
        const r = await f(...a);
        copies.ok += 1;
        return r;
      } catch (e) {
        copies.failed += 1;
        throw e;
      }
    };
  const { blobStatement, copyIn } = bulkWritesOf(t.database);
  viaCopy = createBatchedFindingsIngest({
    ...deps,
    ...(blobStatement ? { blobStatement: counted(blobStatement) } : {}),
    ...(copyIn ? { copyIn: counted(copyIn) } : {}),
  });
});
afterAll(() => t.close());

let n = 0;
async function assetWithScan(): Promise<{ asset: string; scan: string }> {
  n += 1;
  const res = await owner.post(`/api/v1/tenants/${tenant}/assets`, {
    kind: 'webapp',
    target: `https://c${n}-${RUN}.example.test/`,
  });
  expect(res.statusCode, res.body).toBe(201);
  const asset = (res.json() as { asset: { id: string } }).asset.id;
  const scan = await withTenant(t.database.db, { tenantId: tenant }, async (tx) =>
    tx
      .insertInto('scans')
      .values({ tenant_id: tenant, asset_id: asset, kind: 'template', status: 'ingesting' })
      .returning('id')
      .executeTakeFirstOrThrow(),
  );
  return { asset, scan: scan.id };
}

// Every kind of column, and text that COPY's format must escape.
const hostile = (host: string): NormalizedFindingInput => ({
  ruleId: 'rule\\with\ttab',
  title: 'Title with "quotes", a tab\tand a line\nbreak, \\N and \\. and ünïcødé ✓',
  description: 'Line one\r\nLine two\\n not a break\u0000after a NUL',
  severity: 'critical',
  cvss: { score: 9.8, vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H' },
  cwe: [79, 89],
  cve: ['CVE-2024-3094'],
  location: { url: `https://${host}/a\\b?q=1`, param: 'na"me' },
  evidence: {
    summary: 'tab\there',
    request: 'GET /a\\b HTTP/1.1\r\nHost: x\r\n\r\n',
    response: '{"k":"v\\u0041"}\n\\',
    extracted: ['with "quote"', 'back\\slash', 'comma,brace}{'],
    data: { nested: { list: [1, 'two', null, true] }, tab: '\t' },
  },
  remediation: 'Update.\tNow.',
  references: ['https://example.test/a?b=1&c="2"', 'https://example.test/\\x'],
  discriminator: 'matcher\\1',
});

// What differs between two findings of two assets and scans by construction; every other column
// must be equal whichever path wrote it.
const OWN = [
  'id',
  'asset_id',
  'scan_id',
  'first_scan_id',
  'fingerprint',
  'first_seen_at',
  'last_seen_at',
  'sla_due_at',
  'created_at',
  'updated_at',
];
const content = (r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).filter(([k]) => !OWN.includes(k)));

const stored = (asset: string) =>
  withService(t.database.db, (tx) =>
    tx.selectFrom('findings').selectAll().where('asset_id', '=', asset).orderBy('title').execute(),
  );

describe('new findings written with COPY', () => {
  it("uses the database's own path: /dev/blob on the embedded database, COPY FROM STDIN on PostgreSQL", () => {
    if (process.env.DATABASE_URL) {
      expect(t.database.blobStatement).toBeUndefined();
      expect(t.database.copyIn).toBeDefined();
    } else {
      expect(t.database.blobStatement).toBeDefined();
      expect(t.database.copyIn).toBeUndefined();
    }
  });

  it('stores exactly what the JSON insert stores, for every column and hostile text', async () => {
    copies.ok = 0;
    copies.failed = 0;
    const a = await assetWithScan();
    const b = await assetWithScan();
    // The same host in both, so that the location and search text are the same too.
    const host = `same-${RUN}.example.test`;
    for (const [ingest, { scan }] of [
      [viaJson, a],
      [viaCopy, b],
    ] as const) {
      const s = await ingest.begin(scan);
      await s.batch([hostile(host), { ...hostile(host), ruleId: 'plain', title: 'Plain', severity: 'low' }]);
      expect(await s.finish()).toMatchObject({ received: 2, distinct: 2, created: 2 });
    }
    expect(copies).toEqual({ ok: 1, failed: 0 });
    const [json, copy] = [await stored(a.asset), await stored(b.asset)];
    expect(copy).toHaveLength(2);
    for (let i = 0; i < 2; i++) {
      expect(content(copy[i]!)).toEqual(content(json[i]!));
      expect(Object.keys(content(copy[i]!)).length).toBeGreaterThan(25);
      expect(copy[i]!.scan_id).toBe(b.scan);
      expect(copy[i]!.first_scan_id).toBe(b.scan);
      expect(new Date(copy[i]!.first_seen_at).getTime()).toBe(new Date(copy[i]!.last_seen_at).getTime());
      expect(copy[i]!.id).toMatch(/^[0-9a-f-]{36}$/);
    }
    // The text came through whole (not only equal on both paths).
    const critical = copy.find((r) => r.severity === 'critical')!;
    expect(critical.title).toBe(hostile(host).title);
    expect(critical.description).toBe('Line one\r\nLine two\\n not a break\uFFFDafter a NUL');
    expect(critical.evidence).toMatchObject({ extracted: ['with "quote"', 'back\\slash', 'comma,brace}{'] });
    expect(critical.reference_urls).toEqual(hostile(host).references);
    expect(critical.sla_due_at).not.toBeNull();
    // A critical finding written by COPY is announced like one written by the insert.
    const reports = await withService(t.database.db, (tx) =>
      tx.selectFrom('svc_outbox').select('payload').where('event_type', '=', 'finding.critical').execute(),
    );
    const announced = reports.map((r) => (r.payload as { data?: { findingId?: string } }).data?.findingId);
    expect(announced).toContain(critical.id);
    expect(announced).toContain(json.find((r) => r.severity === 'critical')!.id);
  });

  it('folds a row whose fingerprint is already written (the embedded database through the insert)', async () => {
    const { asset, scan } = await assetWithScan();
    const f = (title: string, severity: NormalizedFindingInput['severity']): NormalizedFindingInput => ({
      ruleId: title,
      title,
      severity,
      location: { url: `https://fold-${RUN}.example.test/${title}` },
    });
    copies.ok = 0;
    copies.failed = 0;
    const s = await viaCopy.begin(scan);
    await s.batch([f('a', 'low')]);
    // All new so far: the next batch is written without looking its fingerprints up first, so
    // its rows meet 'a'. On the embedded database the COPY fails and the insert writes 'b' and
    // folds 'a' into the known row; on PostgreSQL the insert from the copied rows skips 'a',
    // which is folded the same way.
    await s.batch([f('a', 'high'), f('b', 'medium')]);
    expect(copies).toEqual(process.env.DATABASE_URL ? { ok: 2, failed: 0 } : { ok: 1, failed: 1 });
    expect(await s.finish()).toMatchObject({ received: 3, distinct: 2, created: 2 });
    const rows = await stored(asset);
    expect(rows.map((r) => [r.title, r.severity])).toEqual([
      ['a', 'high'],
      ['b', 'medium'],
    ]);
  });

  it('encodes nothing for no rows, and refuses a number COPY could not read back', () => {
    expect(encodeFindingRows([])).toHaveLength(0);
    const row = Object.fromEntries(COPY_COLUMNS.map((k) => [k, 'x']));
    expect(encodeFindingRows([row as never])).toHaveLength(COPY_COLUMNS.length * 2);
    expect(() => encodeFindingRows([{ ...row, cvss_score: Number.NaN } as never])).toThrow(/finite/);
  });
});

describe.runIf(process.env.DATABASE_URL)('COPY FROM STDIN on PostgreSQL (Database.copyIn)', () => {
  const probe = sql`create temp table if not exists copy_probe (n integer, s text) on commit delete rows`;

  it("copies on the transaction's own connection, as part of that transaction", async () => {
    const copyIn = t.database.copyIn!;
    await withService(t.database.db, async (tx) => {
      await probe.execute(tx);
      // Escapes and nulls of COPY's text format read back as written.
      expect(
        await copyIn(tx, 'copy pg_temp.copy_probe (n, s) from stdin', Buffer.from('1\ta\\tb\\\\c\n2\t\\N\n')),
      ).toBe(2);
      const { rows } = await sql<{
        n: number;
        s: string | null;
      }>`select n, s from pg_temp.copy_probe order by n`.execute(tx);
      expect(rows).toEqual([
        { n: 1, s: 'a\tb\\c' },
        { n: 2, s: null },
      ]);
      // Undone with the transaction's own state: a rolled-back savepoint takes the copied rows with it.
      await sql`savepoint before_copy`.execute(tx);
      expect(await copyIn(tx, 'copy pg_temp.copy_probe (n, s) from stdin', Buffer.from('3\tc\n'))).toBe(1);
      await sql`rollback to savepoint before_copy`.execute(tx);
      const { rows: after } = await sql<{ n: number }>`select n from pg_temp.copy_probe order by n`.execute(tx);
      expect(after.map((r) => r.n)).toEqual([1, 2]);
    });
  });

  it("fails with the database's error on data COPY cannot read, and the connection serves on", async () => {
    const copyIn = t.database.copyIn!;
    const failed = await withService(t.database.db, async (tx) => {
      await probe.execute(tx);
      await copyIn(tx, 'copy pg_temp.copy_probe (n, s) from stdin', Buffer.from('not a number\tx\n'));
    }).catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: '22P02' });
    // Every service connection still answers (the failed one among them).
    for (let i = 0; i < 4; i++) {
      const { rows } = await withService(t.database.db, (tx) => sql<{ one: number }>`select 1 as one`.execute(tx));
      expect(rows).toEqual([{ one: 1 }]);
    }
  });

  it('sends any other statement with a byte-array parameter as an ordinary query', async () => {
    const { rows } = await withService(t.database.db, (tx) =>
      sql<{ b: Buffer; t: string }>`select ${Buffer.from([0, 1, 255])}::bytea as b, 'copy x from stdin' as t`.execute(
        tx,
      ),
    );
    expect([...rows[0]!.b]).toEqual([0, 1, 255]);
    await expect(
      withService(t.database.db, (tx) => t.database.copyIn!(tx, 'select 1', Buffer.from(''))),
    ).rejects.toThrow(/COPY … FROM STDIN/);
  });
});
