// "Import results": a member imports a report for an asset (multipart); the scan it makes uses no
// quota and is ingested by the runner; outsiders cannot; oversize uploads are refused with
// nothing kept; wrong or unknown formats and kinds that do not fit the asset are clear errors.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import { fixturePath } from '../../src/workers/importers/test-helpers.ts';
import type { IngestionDto, ScanIngestions } from '../../src/workers/ingestion-schemas.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { tenantCast, type TenantCast } from '../helpers/tenants.ts';
import type { Client } from '../helpers/client.ts';
import { setVerification } from './scans-fixtures.ts';

const MAX = 16 * 1024;
let t: TestApp;
let cast: TenantCast;
let seq = 0;
const RUN = Math.random().toString(36).slice(2, 8);

beforeAll(async () => {
  t = await createTestApp({ env: { REPORT_MAX_BYTES: String(MAX) } });
  cast = await tenantCast(t, 'imports');
});
afterAll(() => t.close());

const base = (tenantId = cast.tenant) => `/api/v1/tenants/${tenantId}`;

async function asset(
  kind: 'host' | 'webapp' | 'container_image' = 'host',
  status: 'verified' | 'bypassed' | 'pending' = 'verified',
  named?: string,
): Promise<string> {
  const target =
    named ??
    (kind === 'webapp'
      ? `https://i${++seq}-${RUN}.example.test/`
      : kind === 'container_image'
        ? `registry.example.test/i${++seq}-${RUN}:1`
        : `i${++seq}-${RUN}.example.test`);
  const res = await cast.owner.post(`${base()}/assets`, { kind, target });
  expect(res.statusCode, res.body).toBe(201);
  const id = (res.json() as { asset: { id: string } }).asset.id;
  if (status !== 'pending') await setVerification(t, id, status);
  return id;
}

function multipart(fields: Record<string, string>, file?: { name: string; content: Buffer }) {
  const boundary = `----rampart${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields))
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
    );
    parts.push(file.content, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

const importReport = (
  client: Client,
  fields: Record<string, string>,
  file?: { name: string; content: Buffer },
  tenantId = cast.tenant,
) => {
  const { body, headers } = multipart(fields, file);
  return client.request('POST', `${base(tenantId)}/imports`, body, headers);
};
const fixture = (name: string) => ({ name, content: readFileSync(fixturePath(name)) });

/** Every stored object under DATA_DIR/storage whose path mentions imports. */
function storedImports(): string[] {
  const root = join(t.config.DATA_DIR, 'storage');
  try {
    return (readdirSync(root, { recursive: true }) as string[]).filter(
      (p) => p.includes('imports/') || p.includes('imports\\'),
    );
  } catch {
    return [];
  }
}
const ingestionCount = async () =>
  Number(
    (
      await withService(t.database.db, (tx) =>
        tx
          .selectFrom('report_ingestions')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('tenant_id', '=', cast.tenant)
          .executeTakeFirstOrThrow(),
      )
    ).n,
  );

describe('import results', () => {
  it('lets a member import a report; the scan is an import, uses no quota, and is ingested', async () => {
    // The fixture reports on two hosts, both assets of the tenant: one import, split in two.
    const assetId = await asset('host', 'verified', 'shop.example.com');
    const legacy = await asset('host', 'verified', 'legacy.example.com');
    const res = await importReport(cast.member, { assetId, format: 'auto' }, fixture('nuclei-results.jsonl'));
    expect(res.statusCode, res.body).toBe(202);
    const imp = (res.json() as { import: IngestionDto }).import;
    expect(imp).toMatchObject({
      source: 'import',
      format: 'nuclei',
      fileName: 'nuclei-results.jsonl',
      asset: { id: assetId },
      scan: { kind: 'template' },
    });
    expect(imp.createdBy?.email).toBeTruthy();
    expect(['queued', 'running', 'succeeded']).toContain(imp.status);

    const scanRow = await withService(t.database.db, (tx) =>
      tx.selectFrom('scans').selectAll().where('id', '=', imp.scanId).executeTakeFirstOrThrow(),
    );
    expect(scanRow).toMatchObject({ source: 'import', quota_day: null, kind: 'template' });
    const usage = await cast.member.get(`${base()}/scan-usage`);
    expect(usage.statusCode, usage.body).toBe(200);
    expect((usage.json() as { used: number }).used).toBe(0);

    await t.app.services.ingestion.drain();
    const done = await cast.member.get(`${base()}/imports/${imp.id}`);
    expect(done.statusCode).toBe(200);
    const final = (done.json() as { import: IngestionDto }).import;
    expect(final).toMatchObject({ status: 'succeeded', percent: 100, scan: { status: 'succeeded' }, error: null });
    expect(final.summary!.created).toBeGreaterThan(0);
    expect(final.summary!.splits).toEqual([
      expect.objectContaining({ assetId: legacy, assetName: 'legacy.example.com', findings: 1 }),
    ]);
    expect(final.summary!.skipReasons).toEqual([{ reason: 'no template-id', count: 1, where: ['line 7'] }]);
    const split = await withService(t.database.db, (tx) =>
      tx.selectFrom('scans').selectAll().where('id', '=', final.summary!.splits[0]!.scanId).executeTakeFirstOrThrow(),
    );
    expect(split).toMatchObject({ asset_id: legacy, source: 'import', status: 'succeeded', kind: 'template' });
    const legacyFindings = await withService(t.database.db, (tx) =>
      tx.selectFrom('findings').select(['location_text', 'scan_id']).where('asset_id', '=', legacy).execute(),
    );
    expect(legacyFindings).toEqual([
      { location_text: expect.stringContaining('legacy.example.com:8080'), scan_id: split.id },
    ]);

    const list = await cast.member.get(`${base()}/imports`);
    expect((list.json() as { imports: IngestionDto[] }).imports.map((i) => i.id)).toContain(imp.id);
    const panel = await cast.member.get(`${base()}/scans/${imp.scanId}/ingestions`);
    expect(panel.statusCode, panel.body).toBe(200);
    expect((panel.json() as ScanIngestions).ingestions.map((i) => i.id)).toEqual([imp.id]);

    const audit = await withService(t.database.db, (tx) =>
      tx
        .selectFrom('audit_log')
        .select(['action', 'details', 'actor_email'])
        .where('target_id', '=', imp.scanId)
        .execute(),
    );
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      action: 'scan.imported',
      details: { assetId, format: 'nuclei', ingestionId: imp.id },
    });
  });

  it('refuses outsiders, and hides imports from other tenants', async () => {
    const assetId = await asset('host');
    const before = await ingestionCount();
    const res = await importReport(cast.other, { assetId }, fixture('nuclei-results.jsonl'));
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: 'tenant_forbidden' });
    // Their own tenant does not have this asset.
    const own = await importReport(cast.other, { assetId }, fixture('nuclei-results.jsonl'), cast.otherTenant);
    expect(own.statusCode).toBe(404);
    expect(own.json()).toMatchObject({ error: 'asset_not_found' });
    expect(await ingestionCount()).toBe(before);

    const mine = await importReport(cast.member, { assetId }, fixture('nmap-scan.xml'));
    expect(mine.statusCode, mine.body).toBe(202);
    const id = (mine.json() as { import: IngestionDto }).import.id;
    expect((await cast.other.get(`${base()}/imports/${id}`)).statusCode).toBe(403);
    expect((await cast.other.get(`${base(cast.otherTenant)}/imports/${id}`)).json()).toMatchObject({
      error: 'import_not_found',
    });
    expect(
      ((await cast.other.get(`${base(cast.otherTenant)}/imports`)).json() as { imports: unknown[] }).imports,
    ).toHaveLength(0);
    await t.app.services.ingestion.drain();
  });

  it('refuses a report over REPORT_MAX_BYTES with 413 and keeps nothing', async () => {
    const assetId = await asset('host');
    const before = await ingestionCount();
    const storedBefore = storedImports().length;
    const line = readFileSync(fixturePath('nuclei-results.jsonl'), 'utf8').split('\n')[0]!;
    const big = Buffer.from(`${line}\n`.repeat(Math.ceil((MAX * 2) / (line.length + 1))));
    const res = await importReport(cast.member, { assetId }, { name: 'big.jsonl', content: big });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ error: 'payload_too_large', details: { maxBytes: MAX } });
    expect(await ingestionCount()).toBe(before);
    expect(storedImports().length).toBe(storedBefore);
  });

  it('names a wrong or unknown format, and a kind that does not fit the asset', async () => {
    const host = await asset('host');
    const storedBefore = storedImports().length;
    const mismatch = await importReport(
      cast.member,
      { assetId: host, format: 'nmap' },
      fixture('nuclei-results.jsonl'),
    );
    expect(mismatch.statusCode).toBe(422);
    expect(mismatch.json()).toMatchObject({
      error: 'report_format_mismatch',
      details: { chosen: 'nmap', detected: 'nuclei' },
    });
    const unknown = await importReport(
      cast.member,
      { assetId: host },
      { name: 'notes.txt', content: Buffer.from('hello, not a report\n') },
    );
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json()).toMatchObject({ error: 'report_format_unknown' });
    const bad = await importReport(cast.member, { assetId: host, format: 'xml' }, fixture('nmap-scan.xml'));
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'validation_failed' });
    const kind = await importReport(cast.member, { assetId: host }, fixture('trivy-image.json'));
    expect(kind.statusCode).toBe(422);
    expect(kind.json()).toMatchObject({
      error: 'scan_kind_mismatch',
      details: { reportKind: 'container', assetKind: 'host' },
    });
    const missing = await importReport(cast.member, { assetId: host });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ error: 'import_file_missing' });
    expect(storedImports().length).toBe(storedBefore);

    const pending = await asset('host', 'pending');
    const unverified = await importReport(cast.member, { assetId: pending }, fixture('nuclei-results.jsonl'));
    expect(unverified.statusCode).toBe(409);
    expect(unverified.json()).toMatchObject({ error: 'asset_not_verified' });
  });

  it('says at upload what a refused file looks like and which formats are read', async () => {
    const host = await asset('host');
    const png = Buffer.from([
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 1, 0,
    ]);
    const binary = await importReport(
      cast.member,
      { assetId: host, format: 'native' },
      { name: 'shot.png', content: png },
    );
    expect(binary.statusCode).toBe(422);
    expect(binary.json()).toMatchObject({
      error: 'report_format_mismatch',
      details: {
        chosen: 'native',
        detected: null,
        looksLike: 'binary data, not a text report',
        supported: expect.arrayContaining(['nessus', 'testssl']),
      },
    });
    expect((binary.json() as { message: string }).message).toMatch(
      /^The file looks like binary data, not a text report, not Rampart native .*Supported: .*Nessus/,
    );
    const xml = await importReport(
      cast.member,
      { assetId: host },
      { name: 'inv.xml', content: Buffer.from('<?xml version="1.0"?><inventory><item/></inventory>') },
    );
    expect(xml.statusCode).toBe(422);
    expect(xml.json()).toMatchObject({
      error: 'report_format_unknown',
      details: { looksLike: 'an XML document whose root element is <inventory>' },
    });
    const sarifNamed = await importReport(
      cast.member,
      { assetId: host, format: 'sarif' },
      { name: 'x.json', content: Buffer.from('{"name":"x","items":[1]}') },
    );
    expect(sarifNamed.json()).toMatchObject({
      error: 'report_format_mismatch',
      details: { looksLike: 'a JSON document with keys "name", "items"' },
    });
    // nuclei writes an empty file when it finds nothing: zero findings, if the user says it is nuclei.
    const empty = await importReport(
      cast.member,
      { assetId: host },
      { name: 'nuclei.jsonl', content: Buffer.alloc(0) },
    );
    expect(empty.statusCode).toBe(422);
    expect((empty.json() as { message: string }).message).toMatch(/choose nuclei/);
    const named = await importReport(
      cast.member,
      { assetId: host, format: 'nuclei' },
      { name: 'nuclei.jsonl', content: Buffer.alloc(0) },
    );
    expect(named.statusCode, named.body).toBe(202);
    await t.app.services.ingestion.drain();
    const final = (
      (await cast.member.get(`${base()}/imports/${(named.json() as { import: IngestionDto }).import.id}`)).json() as {
        import: IngestionDto;
      }
    ).import;
    expect(final).toMatchObject({ status: 'succeeded', summary: { received: 0, records: 0, skipped: 0 } });
  });

  it('refuses an upload over the file-analysis limits with 429, reading nothing', async () => {
    const host = await asset('host');
    const me = (await cast.member.get('/api/v1/me')).json() as { user: { id: string } };
    // The member already has a file being analysed (an import or an explanation): the budget is shared.
    const held = t.app.services.fileAnalysis.acquire(me.user.id);
    try {
      const before = await ingestionCount();
      const res = await importReport(cast.member, { assetId: host }, fixture('nmap-scan.xml'));
      expect(res.statusCode).toBe(429);
      expect(res.json()).toMatchObject({ error: 'too_many_concurrent', details: { limit: 1 } });
      expect(res.headers['retry-after']).toBeTruthy();
      expect(await ingestionCount()).toBe(before);
    } finally {
      held.release();
    }
    const again = await importReport(cast.member, { assetId: host }, fixture('nmap-scan.xml'));
    expect(again.statusCode, again.body).toBe(202);
    await t.app.services.ingestion.drain();
  });

  it('accepts a named format the bytes do not show, and fails its ingestion with the parser message', async () => {
    const host = await asset('host');
    const res = await importReport(
      cast.member,
      { assetId: host, format: 'nuclei' },
      { name: 'r.jsonl', content: Buffer.from('{"template-id":"x","info":{"name":"a"},"matched-at":"h:1"}\n{oops\n') },
    );
    expect(res.statusCode, res.body).toBe(202);
    const imp = (res.json() as { import: IngestionDto }).import;
    await t.app.services.ingestion.drain();
    const final = ((await cast.member.get(`${base()}/imports/${imp.id}`)).json() as { import: IngestionDto }).import;
    expect(final.status).toBe('failed');
    expect(final.error).toMatch(/line 2/);
    expect(final.scan.status).toBe('failed');
  });
});
