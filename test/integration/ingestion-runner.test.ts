// The ingestion queue and runner: a queued report is streamed into findings and its scan
// succeeds; a corrupt report fails the job and the scan with the parser's message; a job whose
// replica died (lock expired) is taken over, one still locked is not, and one out of attempts fails.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import { fixturePath } from '../../src/workers/importers/test-helpers.ts';
import type { ReportFormat } from '../../src/workers/importers/index.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { scanTenant, type ScanTenant } from './scans-fixtures.ts';

let t: TestApp;
let s: ScanTenant;
let seq = 0;

beforeAll(async () => {
  t = await createTestApp();
  s = await scanTenant(t);
});
afterAll(() => t.close());

/** A scan a worker has uploaded (status ingesting) and its stored report; the job is queued as the upload finalize would. */
async function uploaded(
  content: Buffer | string,
  opts: { kind?: 'template' | 'port'; format?: ReportFormat | null; fileName?: string; asset?: string } = {},
) {
  const asset = opts.asset ?? (await s.asset('host'));
  const scanId = await withService(
    t.database.db,
    async (tx) =>
      (
        await tx
          .insertInto('scans')
          .values({
            tenant_id: s.tenantId,
            asset_id: asset,
            kind: opts.kind ?? 'template',
            status: 'ingesting',
            percent: 99,
            attempts: 1,
          })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id,
  );
  const key = `reports/${scanId}/runner-${++seq}`;
  const store = await t.app.services.storage.forTenant(s.tenantId);
  const put = await store.put(key, Readable.from([Buffer.from(content)]), { maxBytes: 10 * 1024 * 1024 });
  const { ingestionId } = await withService(t.database.db, (tx) =>
    t.app.services.ingestion.enqueue(tx, {
      tenantId: s.tenantId,
      scanId,
      uploadId: null,
      source: 'worker',
      storage: store.kind,
      objectKey: key,
      size: put.size,
      sha256: put.sha256,
      format: opts.format === undefined ? null : opts.format,
      fileName: opts.fileName ?? null,
    }),
  );
  return { asset, scanId, ingestionId };
}

const job = (id: string) =>
  withService(t.database.db, (tx) =>
    tx.selectFrom('report_ingestions').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
  );
const scan = (id: string) =>
  withService(t.database.db, (tx) => tx.selectFrom('scans').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
const findingsOf = (scanId: string) =>
  withService(t.database.db, (tx) =>
    tx.selectFrom('findings').select(['rule_id', 'status', 'scanner']).where('scan_id', '=', scanId).execute(),
  );

const nuclei = readFileSync(fixturePath('nuclei-results.jsonl'));

describe('ingestion runner', () => {
  it('runs a queued report into findings and finishes its scan', async () => {
    const { scanId, ingestionId } = await uploaded(nuclei);
    expect((await job(ingestionId)).status).toBe('queued');
    await t.app.services.ingestion.drain();
    const j = await job(ingestionId);
    expect(j).toMatchObject({ status: 'succeeded', format: 'nuclei', attempts: 1, error: null, locked_by: null });
    expect(Number(j.bytes_read)).toBe(nuclei.length);
    const rows = await findingsOf(scanId);
    expect(rows.length).toBeGreaterThan(0);
    expect(j.findings_read).toBeGreaterThanOrEqual(rows.length);
    expect(rows.every((r) => r.status === 'open' && r.scanner === 'template')).toBe(true);
    expect(j.summary).toMatchObject({ created: rows.length, distinct: rows.length, format: 'nuclei', tool: 'nuclei' });
    const sc = await scan(scanId);
    expect(sc).toMatchObject({ status: 'succeeded', percent: 100, error: null });
    expect(sc.finished_at).not.toBeNull();
    // The scan's ingest is recorded: running the job again would replay, not re-create.
    const ingests = await withService(t.database.db, (tx) =>
      tx.selectFrom('finding_scan_ingests').select('scan_id').where('scan_id', '=', scanId).execute(),
    );
    expect(ingests).toHaveLength(1);
  });

  it('closes nothing after a report marked partial, and closes what is gone after a complete one', async () => {
    const header = (partial?: string) =>
      JSON.stringify({
        type: 'report',
        version: 1,
        scanner: 'template',
        target: 'h.example.test',
        ...(partial ? { partial } : {}),
      });
    const finding = (ruleId: string) =>
      JSON.stringify({
        type: 'finding',
        ruleId,
        title: ruleId,
        severity: 'high',
        location: { url: 'https://h.example.test/' },
      });
    const asset = await s.asset('host');
    await uploaded(`${header()}\n${finding('a')}\n${finding('b')}\n`, { asset });
    await t.app.services.ingestion.drain();
    const status = async () =>
      Object.fromEntries(
        (
          await withService(t.database.db, (tx) =>
            tx.selectFrom('findings').select(['rule_id', 'status']).where('asset_id', '=', asset).execute(),
          )
        ).map((r) => [r.rule_id, r.status]),
      );
    // Requests failed this time: b was not seen, but it may still be there.
    await uploaded(`${header('3 requests failed')}\n${finding('a')}\n`, { asset });
    await t.app.services.ingestion.drain();
    expect(await status()).toEqual({ a: 'open', b: 'open' });
    await uploaded(`${header()}\n${finding('a')}\n`, { asset });
    await t.app.services.ingestion.drain();
    expect(await status()).toEqual({ a: 'open', b: 'fixed' });
  });

  it('records an inconclusive report on its scan with the reason and coverage, and closes nothing', async () => {
    const header = (extra: Record<string, unknown> = {}) =>
      JSON.stringify({ type: 'report', version: 1, scanner: 'port', target: 'h.example.test', ...extra });
    const finding = (port: number) =>
      JSON.stringify({
        type: 'finding',
        ruleId: `port.open.tcp.${port}`,
        title: `Open port ${port}/tcp`,
        severity: 'info',
        location: { host: 'h.example.test', port, protocol: 'tcp' },
      });
    const asset = await s.asset('host');
    const first = await uploaded(
      `${header({ coverage: { hosts: ['h.example.test'], ports: [[1, 65535]] } })}\n${finding(3306)}\n${finding(5432)}\n`,
      { asset, kind: 'port' },
    );
    await t.app.services.ingestion.drain();
    expect(await scan(first.scanId)).toMatchObject({
      status: 'succeeded',
      outcome: 'complete',
      outcome_reason: null,
      coverage: { hosts: ['h.example.test'], ports: [[1, 65535]] },
    });

    // The host went down: every probe timed out. Nothing was looked at, so nothing is fixed.
    const reason = 'no port of h.example.test answered: all 1000 probes timed out';
    const down = await uploaded(
      `${header({ inconclusive: reason, coverage: { hosts: ['h.example.test', '192.0.2.7'], ports: [[1, 1000]] } })}\n${JSON.stringify({ type: 'end', findings: 0 })}\n`,
      { asset, kind: 'port' },
    );
    await t.app.services.ingestion.drain();
    const sc = await scan(down.scanId);
    expect(sc).toMatchObject({
      status: 'succeeded',
      outcome: 'inconclusive',
      outcome_reason: reason,
      coverage: { hosts: ['h.example.test', '192.0.2.7'], ports: [[1, 1000]] },
    });
    expect((await job(down.ingestionId)).summary).toMatchObject({
      fixed: 0,
      outcome: 'inconclusive',
      outcomeReason: reason,
    });
    const rows = await withService(t.database.db, (tx) =>
      tx
        .selectFrom('findings')
        .select(['rule_id', 'status'])
        .where('asset_id', '=', asset)
        .orderBy('rule_id')
        .execute(),
    );
    expect(rows).toEqual([
      { rule_id: 'port.open.tcp.3306', status: 'open' },
      { rule_id: 'port.open.tcp.5432', status: 'open' },
    ]);
    const api = (await s.owner.get(`${s.base}/scans/${down.scanId}`)).json();
    expect(api.scan).toMatchObject({ outcome: 'inconclusive', outcomeReason: reason });
    expect(api.coverage).toEqual({ hosts: ['h.example.test', '192.0.2.7'], ports: [[1, 1000]] });
  });

  it('refuses a native report whose coverage is malformed, naming it', async () => {
    const bad = JSON.stringify({ type: 'report', version: 1, scanner: 'port', coverage: { ports: [[80, 22]] } });
    const { scanId, ingestionId } = await uploaded(`${bad}\n`, { kind: 'port' });
    await t.app.services.ingestion.drain();
    expect((await job(ingestionId)).error).toMatch(/Invalid coverage: ports\.0: A port range ends before it starts/);
    expect((await scan(scanId)).status).toBe('failed');
  });

  it('fails a corrupt report with the line, and its scan with it', async () => {
    const lines = nuclei.toString('utf8').split('\n').filter(Boolean);
    const corrupt = [lines[0], lines[1], '{"template-id": "broken", "info": {', lines[2]].join('\n');
    const { scanId, ingestionId } = await uploaded(corrupt, { format: 'nuclei' });
    await t.app.services.ingestion.drain();
    const j = await job(ingestionId);
    expect(j.status).toBe('failed');
    expect(j.error).toMatch(/could not be read: .*line 3/);
    expect(j.attempts).toBe(1);
    const sc = await scan(scanId);
    expect(sc.status).toBe('failed');
    expect(sc.error).toBe(j.error);
  });

  it('fails a report whose format cannot be recognised', async () => {
    const { scanId, ingestionId } = await uploaded('just some text, not a report\n');
    await t.app.services.ingestion.drain();
    const j = await job(ingestionId);
    expect(j.status).toBe('failed');
    expect(j.error).toMatch(/format could not be recognised/);
    expect((await scan(scanId)).status).toBe('failed');
  });

  it("takes over a dead replica's job once its lock expired, never one still locked", async () => {
    const dead = await uploaded(nuclei);
    const alive = await uploaded(nuclei);
    const past = new Date(Date.now() - 5_000);
    const future = new Date(Date.now() + 600_000);
    await withService(t.database.db, async (tx) => {
      await tx
        .updateTable('report_ingestions')
        .set({ status: 'running', attempts: 1, locked_by: 'dead-replica', locked_until: past })
        .where('id', '=', dead.ingestionId)
        .execute();
      await tx
        .updateTable('report_ingestions')
        .set({ status: 'running', attempts: 1, locked_by: 'busy-replica', locked_until: future })
        .where('id', '=', alive.ingestionId)
        .execute();
    });
    await t.app.services.ingestion.drain();
    const taken = await job(dead.ingestionId);
    expect(taken).toMatchObject({ status: 'succeeded', attempts: 2, locked_by: null });
    expect((await scan(dead.scanId)).status).toBe('succeeded');
    expect((await findingsOf(dead.scanId)).length).toBeGreaterThan(0);
    const untouched = await job(alive.ingestionId);
    expect(untouched).toMatchObject({ status: 'running', attempts: 1, locked_by: 'busy-replica' });
    expect((await scan(alive.scanId)).status).toBe('ingesting');
  });

  it('runs one job at a time per asset and scanner kind, across replicas', async () => {
    const busy = await uploaded(nuclei);
    const sameAsset = await uploaded(nuclei, { asset: busy.asset });
    const otherKind = await uploaded(nuclei, { asset: busy.asset, kind: 'port', format: 'nuclei' });
    const otherAsset = await uploaded(nuclei);
    // Another replica is reading the first report.
    await withService(t.database.db, (tx) =>
      tx
        .updateTable('report_ingestions')
        .set({
          status: 'running',
          attempts: 1,
          locked_by: 'other-replica',
          locked_until: new Date(Date.now() + 600_000),
        })
        .where('id', '=', busy.ingestionId)
        .execute(),
    );
    await t.app.services.ingestion.drain();
    // Its closing step judges by the findings its batches touched: a second ingest of the same
    // asset and kind must wait, or it would close what the first one saw.
    expect((await job(sameAsset.ingestionId)).status).toBe('queued');
    expect((await job(otherAsset.ingestionId)).status).toBe('succeeded');
    expect((await job(otherKind.ingestionId)).status).not.toBe('queued');
    // Once the first is done, the waiting one runs.
    await withService(t.database.db, (tx) =>
      tx
        .updateTable('report_ingestions')
        .set({ status: 'succeeded', locked_by: null, locked_until: null })
        .where('id', '=', busy.ingestionId)
        .execute(),
    );
    await t.app.services.ingestion.drain();
    expect((await job(sameAsset.ingestionId)).status).toBe('succeeded');
  });

  it("leaves a report on another replica's disk to that replica until it is orphaned", async () => {
    const mine = await uploaded(nuclei);
    // Built-in storage here is this app's DATA_DIR: the job names it.
    expect((await job(mine.ingestionId)).storage_node).toBe(`${hostname()}:${resolve(t.config.DATA_DIR)}`);
    const elsewhere = await uploaded(nuclei);
    await withService(t.database.db, (tx) =>
      tx
        .updateTable('report_ingestions')
        .set({ storage_node: 'other-host:/srv/rampart' })
        .where('id', '=', elsewhere.ingestionId)
        .execute(),
    );
    await t.app.services.ingestion.drain();
    expect((await job(mine.ingestionId)).status).toBe('succeeded');
    expect((await job(elsewhere.ingestionId)).status).toBe('queued');
    // Nobody claimed it for over ten minutes: any replica takes it (here the object happens to exist).
    await withService(t.database.db, (tx) =>
      sql`update report_ingestions set created_at = now() - interval '11 minutes' where id = ${elsewhere.ingestionId}`.execute(
        tx,
      ),
    );
    await t.app.services.ingestion.drain();
    expect((await job(elsewhere.ingestionId)).status).toBe('succeeded');
  });

  it('fails a job whose replica died on every attempt', async () => {
    const { scanId, ingestionId } = await uploaded(nuclei);
    await withService(t.database.db, (tx) =>
      sql`update report_ingestions set status = 'running', attempts = 3, locked_by = 'dead-replica', locked_until = now() - interval '1 minute' where id = ${ingestionId}`.execute(
        tx,
      ),
    );
    await t.app.services.ingestion.drain();
    const j = await job(ingestionId);
    expect(j.status).toBe('failed');
    expect(j.error).toMatch(/all 3 attempts/);
    expect((await scan(scanId)).status).toBe('failed');
    expect(await findingsOf(scanId)).toHaveLength(0);
  });
});
