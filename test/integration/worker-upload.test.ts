// Report uploads (docs/worker-protocol.md): init → PUT → finalize on built-in storage (our own
// signed URL) and on a tenant bucket (a presigned S3 PUT, through a real S3-compatible server on
// loopback), the legacy single shot, limits, fencing, idempotent finalize, and the orphan reaper.
//
// What the loopback S3 server does not check (test/helpers/s3-server.ts, @20minutes/s3rver): it
// verifies SigV4 signatures, including the signed content-length, but ignores
// x-amz-checksum-sha256, so finalize's own re-hash is what catches a wrong body there.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { startS3Server, type TestS3Server } from '../helpers/s3-server.ts';
import { tenantCast } from '../helpers/tenants.ts';
import { enrollWorker, signingSecret, type TestWorker } from '../helpers/workers.ts';
import { scanRow, scanTenant, type ScanTenant } from './scans-fixtures.ts';

let offset = 0;
const clock = { now: () => new Date(Date.now() + offset) };
let t: TestApp;
let s3: TestS3Server;
let st: ScanTenant;
let w: TestWorker;
let other: TestWorker;

const REPORT = `${JSON.stringify({ type: 'report', version: 1, scanner: 'port', target: 'h.example.test' })}\n`;
const sha = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');

async function leased(worker = w): Promise<{ scanId: string; leaseToken: string }> {
  const assetId = await st.asset('host', 'bypassed');
  const { scan } = await st.queue({ assetId, kind: 'port', options: { range: { from: 1, to: 100 } } });
  const res = await worker.post('lease', { kinds: ['port'], waitSeconds: 0 });
  const lease = res.json().lease as { scanId: string; leaseToken: string };
  expect(lease.scanId).toBe(scan.id);
  return lease;
}
async function init(
  lease: { scanId: string; leaseToken: string },
  body: string | Buffer,
  over: Record<string, unknown> = {},
) {
  return w.post('report/init', {
    scanId: lease.scanId,
    leaseToken: lease.leaseToken,
    size: Buffer.byteLength(body),
    sha256: sha(body),
    format: 'native',
    ...over,
  });
}
/** PUT to a built-in upload URL through inject. */
function put(
  url: string,
  body: string | Buffer,
  headers: Record<string, string> = { 'content-type': 'application/octet-stream' },
) {
  const u = new URL(url);
  return t.app.inject({ method: 'PUT', url: `${u.pathname}${u.search}`, payload: body, headers });
}
const uploadRow = (id: string) =>
  withService(t.database.db, (tx) =>
    tx.selectFrom('report_uploads').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
  );

beforeAll(async () => {
  s3 = await startS3Server();
  t = await createTestApp({
    deps: { clock },
    env: { REPORT_MAX_BYTES: '65536', WORKER_LEGACY_REPORT_MAX_BYTES: '4096' },
  });
  const cast = await tenantCast(t, 'upload');
  st = await scanTenant(t, cast.owner);
  await st.settings(1000, 5);
  w = await enrollWorker(t, cast.owner, st.tenantId, {
    secret: await signingSecret(cast.owner, st.tenantId),
    now: clock.now,
  });
  other = await enrollWorker(t, cast.other, cast.otherTenant, {
    secret: await signingSecret(cast.other, cast.otherTenant),
    now: clock.now,
  });
});
afterAll(async () => {
  await t.close();
  await s3.close();
});

describe('two-phase upload to built-in storage', () => {
  it('init → PUT → finalize ends the lease and queues ingestion; finalize repeats answer the same', async () => {
    const lease = await leased();
    const res = await init(lease, REPORT, { fileName: 'report.jsonl' });
    expect(res.statusCode, res.body).toBe(201);
    const up = res.json();
    expect(up).toMatchObject({
      method: 'PUT',
      storage: 'builtin',
      headers: { 'content-length': String(Buffer.byteLength(REPORT)) },
    });
    expect(new Date(up.expiresAt).getTime() - clock.now().getTime()).toBeLessThanOrEqual(15 * 60_000);
    const putRes = await put(up.url, REPORT);
    expect(putRes.statusCode, putRes.body).toBe(200);
    expect(putRes.json()).toEqual({ uploadId: up.uploadId, size: Buffer.byteLength(REPORT), sha256: sha(REPORT) });

    const fin = await w.post('report/finalize', { uploadId: up.uploadId, leaseToken: lease.leaseToken });
    expect(fin.statusCode, fin.body).toBe(200);
    expect(fin.json()).toMatchObject({ uploadId: up.uploadId, scanId: lease.scanId, status: 'finalized' });
    expect(await scanRow(t, lease.scanId)).toMatchObject({ status: 'ingesting', lease_token: null });
    expect(await uploadRow(up.uploadId)).toMatchObject({
      status: 'finalized',
      ingestion_id: fin.json().ingestionId,
      format: 'native',
      file_name: 'report.jsonl',
    });
    // A retry (say, the answer was lost) answers the same, although the lease has ended.
    const again = await w.post('report/finalize', { uploadId: up.uploadId, leaseToken: lease.leaseToken });
    expect(again.json()).toEqual(fin.json());
    // Further writes under the ended lease are refused.
    expect(
      (await w.post(`scans/${lease.scanId}/progress`, { leaseToken: lease.leaseToken, percent: 5 })).json().error,
    ).toBe('lease_lost');
    // The built-in PUT is closed once finalized.
    expect((await put(up.url, REPORT)).statusCode).toBe(409);
  });

  it('refuses a declared size over REPORT_MAX_BYTES, more bytes than declared, and a wrong hash — keeping nothing', async () => {
    const lease = await leased();
    const big = await w.post('report/init', {
      scanId: lease.scanId,
      leaseToken: lease.leaseToken,
      size: 65537,
      sha256: sha('x'),
    });
    expect(big.statusCode).toBe(413);
    expect(big.json().error).toBe('payload_too_large');

    const up = (await init(lease, REPORT)).json();
    const longer = await put(up.url, `${REPORT}extra`);
    expect(longer.statusCode).toBe(413);
    const wrong = await put(up.url, REPORT.replace('port', 'p0rt'));
    expect(wrong.statusCode).toBe(422);
    expect(wrong.json().error).toBe('upload_mismatch');
    const fin = await w.post('report/finalize', { uploadId: up.uploadId, leaseToken: lease.leaseToken });
    expect(fin.statusCode).toBe(409);
    expect(fin.json().error).toBe('upload_incomplete');
    expect((await scanRow(t, lease.scanId)).status).toBe('leased');
  });

  it('checks the URL signature and expiry', async () => {
    const lease = await leased();
    const up = (await init(lease, REPORT)).json();
    const tampered = new URL(up.url);
    tampered.searchParams.set('expires', String(Number(tampered.searchParams.get('expires')) + 3600));
    expect((await put(tampered.toString(), REPORT)).json().error).toBe('upload_url_invalid');
    offset += 16 * 60_000;
    expect((await put(up.url, REPORT)).json().error).toBe('upload_url_expired');
    offset = 0;
  });

  it('needs the lease: a stale token, another worker, or another tenant cannot start or finish an upload', async () => {
    const lease = await leased();
    const stale = await init({ ...lease, leaseToken: '00000000-0000-4000-8000-000000000000' }, REPORT);
    expect(stale.json().error).toBe('lease_lost');
    const theirs = await other.post('report/init', {
      scanId: lease.scanId,
      leaseToken: lease.leaseToken,
      size: 10,
      sha256: sha('0123456789'),
    });
    expect(theirs.json().error).toBe('scan_not_found');
    const up = (await init(lease, REPORT)).json();
    expect((await put(up.url, REPORT)).statusCode).toBe(200);
    const notYours = await other.post('report/finalize', { uploadId: up.uploadId, leaseToken: lease.leaseToken });
    expect(notYours.json().error).toBe('upload_not_found');
    // The scan is cancelled before finalize: the report is not taken.
    await st.owner.post(`${st.base}/scans/${lease.scanId}/cancel`);
    const fin = await w.post('report/finalize', { uploadId: up.uploadId, leaseToken: lease.leaseToken });
    expect(fin.json().error).toBe('scan_cancelled');
    expect((await uploadRow(up.uploadId)).status).toBe('pending');
  });

  it('reaps pending uploads an hour after their URL expired, object and row', async () => {
    const lease = await leased();
    const up = (await init(lease, REPORT)).json();
    expect((await put(up.url, REPORT)).statusCode).toBe(200);
    const row = await uploadRow(up.uploadId);
    expect(await (await t.app.services.storage.forTenant(st.tenantId)).head(row.object_key)).not.toBeNull();
    const reaped = async () => {
      await t.app.services.uploads.reapOrphans();
      return !!(await withService(t.database.db, (tx) =>
        tx.selectFrom('report_uploads').select('id').where('id', '=', up.uploadId).executeTakeFirst(),
      ));
    };
    expect(await reaped()).toBe(true);
    // The URL expired 61 minutes ago (the reaper uses the database's clock).
    await withService(t.database.db, (tx) =>
      sql`update report_uploads set expires_at = now() - interval '61 minutes' where id = ${up.uploadId}`.execute(tx),
    );
    expect(await reaped()).toBe(false);
    expect(await (await t.app.services.storage.forTenant(st.tenantId)).head(row.object_key)).toBeNull();
    expect(
      await withService(t.database.db, (tx) =>
        tx.selectFrom('report_uploads').select('id').where('id', '=', up.uploadId).executeTakeFirst(),
      ),
    ).toBeUndefined();
  });
});

describe('legacy single shot', () => {
  it('takes the report inside the signed body, within its own body limit', async () => {
    const lease = await leased();
    const res = await w.post('report', {
      scanId: lease.scanId,
      leaseToken: lease.leaseToken,
      format: 'native',
      report: REPORT,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ scanId: lease.scanId, status: 'finalized' });
    const row = await uploadRow(res.json().uploadId);
    expect(row).toMatchObject({ status: 'finalized', sha256: sha(REPORT), storage: 'builtin' });
    expect((await scanRow(t, lease.scanId)).status).toBe('ingesting');

    const lease2 = await leased();
    const tooBig = await w.post('report', {
      scanId: lease2.scanId,
      leaseToken: lease2.leaseToken,
      report: 'x'.repeat(5000),
    });
    expect(tooBig.statusCode).toBe(413);
    expect((await scanRow(t, lease2.scanId)).status).toBe('leased');
  });
});

describe('two-phase upload to a tenant bucket', () => {
  it('answers a presigned S3 PUT that signs the length; finalize re-hashes what the bucket holds', async () => {
    // Last in the file: from here on the tenant's new objects go to its bucket.
    const put = await st.owner.put(`${st.base}/storage`, {
      endpoint: s3.endpoint,
      region: s3.region,
      bucket: s3.bucket,
      pathStyle: true,
      prefix: 'rampart',
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      enabled: true,
    });
    expect(put.statusCode, put.body).toBe(200);
    const lease = await leased();

    const body = Buffer.from(REPORT);
    const initRes = await w.post('report/init', {
      scanId: lease.scanId,
      leaseToken: lease.leaseToken,
      size: body.length,
      sha256: sha(body),
    });
    expect(initRes.statusCode, initRes.body).toBe(201);
    const up = initRes.json();
    expect(up.storage).toBe('s3');
    expect(up.url.startsWith(s3.endpoint)).toBe(true);
    expect(new URL(up.url).searchParams.get('X-Amz-SignedHeaders')).toContain('content-length');

    // A body of another length breaks the signature: the server refuses it.
    const short = await fetch(up.url, {
      method: 'PUT',
      headers: { ...up.headers, 'content-length': String(body.length - 1) },
      body: body.subarray(1),
    });
    expect(short.ok).toBe(false);
    // Same length, other bytes: this server does not check the checksum header, finalize does.
    const forged = Buffer.from(REPORT.replace('port', 'p0rt'));
    expect((await fetch(up.url, { method: 'PUT', headers: up.headers, body: forged })).ok).toBe(true);
    const bad = await w.post('report/finalize', { uploadId: up.uploadId, leaseToken: lease.leaseToken });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error).toBe('upload_mismatch');

    const ok = await fetch(up.url, { method: 'PUT', headers: up.headers, body });
    expect(ok.status, await ok.text()).toBe(200);
    const fin = await w.post('report/finalize', { uploadId: up.uploadId, leaseToken: lease.leaseToken });
    expect(fin.statusCode, fin.body).toBe(200);
    expect(await scanRow(t, lease.scanId)).toMatchObject({ status: 'ingesting' });
    const store = await t.app.services.storage.forTenant(st.tenantId);
    expect(store.kind).toBe('s3');
    expect((await store.head(`reports/${lease.scanId}/${up.uploadId}`))?.size).toBe(body.length);
  });
});
