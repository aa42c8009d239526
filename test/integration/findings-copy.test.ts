// The embedded database writes a batch's new findings with one COPY (copy_findings_from_blob):
// what it stores must be exactly what the JSON insert stores, whatever the text holds (tabs, line
// breaks, backslashes, quotes in array elements, non-ASCII, NUL), and a batch whose COPY meets a
// fingerprint already written falls back to the insert, which folds it. PostgreSQL has no
// /dev/blob device and always uses the insert, so these run on the embedded database only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService, withTenant } from '../../src/db/tenant.ts';
import { COPY_COLUMNS, encodeFindingRows } from '../../src/findings/findings-copy.ts';
import {
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
  const blob = t.database.blobStatement;
  viaCopy = createBatchedFindingsIngest({
    ...deps,
    ...(blob
      ? {
          blobStatement: async (statement: string, data: Uint8Array) => {
            try {
              await blob(statement, data);
              copies.ok += 1;
            } catch (e) {
              copies.failed += 1;
              throw e;
            }
          },
        }
      : {}),
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

describe.runIf(process.env.DATABASE_URL)('new findings on PostgreSQL', () => {
  it('are written by the insert: the server has no /dev/blob device', () => {
    expect(t.database.blobStatement).toBeUndefined();
  });
});

describe.skipIf(process.env.DATABASE_URL)('new findings written with COPY (embedded database)', () => {
  it('stores exactly what the JSON insert stores, for every column and hostile text', async () => {
    expect(t.database.blobStatement).toBeDefined();
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

  it('falls back to the insert when the COPY meets a fingerprint already written, and folds it', async () => {
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
    // its COPY meets 'a' and fails; the insert writes 'b' and folds 'a' into the known row.
    await s.batch([f('a', 'high'), f('b', 'medium')]);
    expect(copies).toEqual({ ok: 1, failed: 1 });
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
