// The image archive of an uploaded container asset, fetched by the worker that leased its scan:
// the exact bytes with their digest, fenced by the lease token, refused to other tenants' workers
// and for registry-reference assets; the real client writes it to disk and checks the digest.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkerClient } from '../../src/agent/client.ts';
import { WorkerApiError } from '../../src/agent/errors.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { tenantCast } from '../helpers/tenants.ts';
import { enrollWorker, signingSecret, type TestWorker } from '../helpers/workers.ts';
import { scanTenant, type ScanTenant } from './scans-fixtures.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const work = mkdtempSync(join(tmpdir(), 'rampart-worker-archive-'));

/** A docker-save-shaped archive made with the system tar. */
function imageArchive(): Buffer {
  const dir = join(work, 'img');
  mkdirSync(join(dir, 'blobs', 'sha256'), { recursive: true });
  const layer = randomBytes(50_000);
  writeFileSync(join(dir, 'blobs', 'sha256', sha(layer)), layer);
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify([{ Config: 'blobs/sha256/cfg', RepoTags: ['acme/app:1'], Layers: [`blobs/sha256/${sha(layer)}`] }]),
  );
  const out = join(work, 'img.tar');
  execFileSync('tar', ['-cf', out, '-C', dir, '.']);
  return readFileSync(out);
}

let t: TestApp;
let st: ScanTenant;
let w: TestWorker;
let other: TestWorker;
let serverUrl = '';
let archive: Buffer;
let archiveAsset = '';

async function leaseContainer(worker = w): Promise<{ scanId: string; leaseToken: string; asset: { target: string } }> {
  const res = await worker.post('lease', { kinds: ['container'], waitSeconds: 0 });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().lease;
}

beforeAll(async () => {
  t = await createTestApp();
  const cast = await tenantCast(t, 'archive-lease');
  st = await scanTenant(t, cast.owner);
  await st.settings(1000, 5);
  w = await enrollWorker(t, cast.owner, st.tenantId, { secret: await signingSecret(cast.owner, st.tenantId) });
  other = await enrollWorker(t, cast.other, cast.otherTenant, {
    secret: await signingSecret(cast.other, cast.otherTenant),
  });
  archive = imageArchive();
  const up = await cast.owner.request('POST', `${st.base}/assets/archives?fileName=app.tar`, archive, {
    'content-type': 'application/octet-stream',
  });
  expect(up.statusCode, up.body).toBe(201);
  archiveAsset = up.json().asset.id;
  serverUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t.close();
  rmSync(work, { recursive: true, force: true });
});

describe('worker archive download', () => {
  it('streams the archive with its digest to the lease holder only', async () => {
    await st.queue({ assetId: archiveAsset, kind: 'container' });
    const lease = await leaseContainer();
    expect(lease.asset.target).toBe(`archive:sha256:${sha(archive)}`);

    const res = await w.post(`scans/${lease.scanId}/archive`, { leaseToken: lease.leaseToken });
    expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
    expect(res.headers['x-rampart-sha256']).toBe(sha(archive));
    expect(res.headers['content-type']).toBe('application/x-tar');
    expect(Buffer.compare(res.rawPayload, archive)).toBe(0);

    // A wrong lease token, and another tenant's worker, get nothing.
    // (Another hex digit, not another case: the token is a UUID and 'B…' is the same UUID as 'b…'.)
    const wrong = await w.post(`scans/${lease.scanId}/archive`, {
      leaseToken: `${lease.leaseToken.startsWith('0') ? '1' : '0'}${lease.leaseToken.slice(1)}`,
    });
    expect(wrong.statusCode).toBe(409);
    expect(wrong.json().error).toBe('lease_lost');
    const stranger = await other.post(`scans/${lease.scanId}/archive`, { leaseToken: lease.leaseToken });
    expect([404, 409]).toContain(stranger.statusCode);
    expect(stranger.body).not.toContain(sha(archive));

    // The real client writes it to disk and checks the digest.
    const client = createWorkerClient({ serverUrl, token: w.token, signingSecret: w.secret });
    const dest = join(work, 'downloaded.tar');
    const got = await client.downloadArchive(lease.scanId, lease.leaseToken, dest);
    expect(got).toEqual({ path: dest, size: archive.length, sha256: sha(archive) });
    expect(Buffer.compare(readFileSync(dest), archive)).toBe(0);
    // Finished here (failed on purpose), so the next test leases its own scan.
    expect(
      (
        await w.post(`scans/${lease.scanId}/fail`, {
          leaseToken: lease.leaseToken,
          error: 'test done',
          retryable: false,
        })
      ).statusCode,
    ).toBe(200);
  });

  it('refuses a container scan of a registry reference: there is no archive to fetch', async () => {
    const ref = await st.asset('container_image', 'verified');
    await st.queue({ assetId: ref, kind: 'container' });
    const lease = await leaseContainer();
    expect(lease.asset.target).not.toMatch(/^archive:/);
    const res = await w.post(`scans/${lease.scanId}/archive`, { leaseToken: lease.leaseToken });
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toBe('object_not_found');
    const client = createWorkerClient({ serverUrl, token: w.token, signingSecret: w.secret });
    const err = await client
      .downloadArchive(lease.scanId, lease.leaseToken, join(work, 'none.tar'))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkerApiError);
    expect((err as WorkerApiError).code).toBe('object_not_found');
  });
});
