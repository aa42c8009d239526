// Platform storage in an S3-compatible bucket (STORAGE_S3_*), the setting that lets several
// replicas share "built-in" storage: a tenant without a bucket of its own stores image archives
// and worker reports under <prefix>/tenants/<id>/ in the platform bucket (a real S3-compatible
// server on loopback), workers upload through presigned PUTs, and a second server on the same
// database and bucket reads what the first stored. Half-set variables are refused at start.
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/lib/config.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { startS3Server, type TestS3Server } from '../helpers/s3-server.ts';
import { tenantCast } from '../helpers/tenants.ts';
import { enrollWorker, signingSecret, type TestWorker } from '../helpers/workers.ts';
import { scanTenant, type ScanTenant } from './scans-fixtures.ts';

const sha = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');
const work = mkdtempSync(join(tmpdir(), 'rampart-platform-s3-'));
let s3: TestS3Server;
let a: TestApp;
let b: TestApp;
let st: ScanTenant;
let w: TestWorker;

function archive(): Buffer {
  const dir = join(work, 'img');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify([{ Config: 'c.json', RepoTags: ['acme/app:1'], Layers: [] }]),
  );
  writeFileSync(join(dir, 'layer.bin'), randomBytes(10_000));
  execFileSync('tar', ['-cf', join(work, 'img.tar'), '-C', dir, '.']);
  return readFileSync(join(work, 'img.tar'));
}

beforeAll(async () => {
  s3 = await startS3Server();
  const env = {
    STORAGE_S3_ENDPOINT: s3.endpoint,
    STORAGE_S3_BUCKET: s3.bucket,
    STORAGE_S3_ACCESS_KEY_ID: s3.accessKeyId,
    STORAGE_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    STORAGE_S3_PREFIX: 'rampart/prod',
  };
  a = await createTestApp({ env });
  // A second replica: same database, same bucket, its own DATA_DIR.
  b = await createTestApp({ env: { ...env, DATA_DIR: mkdtempSync(join(work, 'replica-b-')) }, database: a.database });
  const cast = await tenantCast(a, 'platform-s3');
  st = await scanTenant(a, cast.owner);
  await st.settings(100, 5);
  w = await enrollWorker(a, cast.owner, st.tenantId, { secret: await signingSecret(cast.owner, st.tenantId) });
});
afterAll(async () => {
  await b?.app.close();
  await a?.close();
  await s3?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('platform storage in S3', () => {
  it('stores a tenant’s image archive in the platform bucket, readable through another replica', async () => {
    const bytes = archive();
    const up = await st.owner.request('POST', `${st.base}/assets/archives?fileName=app.tar`, bytes, {
      'content-type': 'application/octet-stream',
    });
    expect(up.statusCode, up.body).toBe(201);
    const id = up.json().asset.id as string;
    const keys = s3.objectKeys();
    expect(keys.some((k) => k.startsWith(`rampart/prod/tenants/${st.tenantId}/assets/${id}/`))).toBe(true);
    // Replica b has never seen the file on disk: it reads it from the bucket.
    const viaB = new Client(b.app);
    for (const [k, v] of st.owner.cookies) viaB.cookies.set(k, v);
    const back = await viaB.get(`${st.base}/assets/${id}/archive`);
    expect(back.statusCode, back.body.slice(0, 200)).toBe(200);
    expect(sha(back.rawPayload)).toBe(sha(bytes));
  });

  it('has workers upload reports with a presigned PUT into the platform bucket', async () => {
    const assetId = await st.asset('host', 'bypassed');
    await st.queue({ assetId, kind: 'port', options: { range: { from: 1, to: 10 } } });
    const lease = (await w.post('lease', { kinds: ['port'], waitSeconds: 0 })).json().lease as {
      scanId: string;
      leaseToken: string;
    };
    const report = `${JSON.stringify({ type: 'report', version: 1, scanner: 'port', target: 'h' })}\n`;
    const init = await w.post('report/init', {
      scanId: lease.scanId,
      leaseToken: lease.leaseToken,
      size: Buffer.byteLength(report),
      sha256: sha(report),
      format: 'native',
    });
    expect(init.statusCode, init.body).toBe(201);
    const target = init.json() as { url: string; headers: Record<string, string>; storage: string; uploadId: string };
    expect(target.storage).toBe('s3');
    expect(target.url.startsWith(s3.endpoint)).toBe(true);
    const headers = Object.fromEntries(
      Object.entries(target.headers).filter(([k]) => k.toLowerCase() !== 'content-length'),
    );
    const put = await fetch(target.url, { method: 'PUT', body: report, headers });
    expect(put.status).toBe(200);
    const fin = await w.post('report/finalize', { uploadId: target.uploadId, leaseToken: lease.leaseToken });
    expect(fin.statusCode, fin.body).toBe(200);
    expect(
      s3.objectKeys().some((k) => k.startsWith(`rampart/prod/tenants/${st.tenantId}/reports/${lease.scanId}/`)),
    ).toBe(true);
  });

  it('refuses a half-configured bucket at start', () => {
    expect(() => loadConfig({ STORAGE_S3_ENDPOINT: 'http://127.0.0.1:9000', STORAGE_S3_BUCKET: 'b' })).toThrow(
      ConfigError,
    );
    expect(() => loadConfig({ STORAGE_S3_PREFIX: '/bad/' })).toThrow(ConfigError);
  });
});
