// Container images uploaded as archives (docker save / OCI tar, optionally gzipped): streamed into
// the tenant's storage, validated, limited, verified by construction; on built-in storage and on a
// tenant bucket (real S3-compatible server on loopback).
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { startS3Server, type TestS3Server } from '../helpers/s3-server.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const work = mkdtempSync(join(tmpdir(), 'rampart-archives-'));
let n = 0;

/** A docker-save-shaped archive built by the system tar (GNU or POSIX format), optionally gzipped. */
function imageArchive(opts: { layerBytes?: number; gzip?: boolean; format?: 'gnu' | 'posix' } = {}): Buffer {
  const dir = join(work, `img-${++n}`);
  mkdirSync(join(dir, 'blobs', 'sha256'), { recursive: true });
  const layer = randomBytes(opts.layerBytes ?? 4096);
  writeFileSync(join(dir, 'blobs', 'sha256', sha(layer)), layer);
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify([
      { Config: 'blobs/sha256/cfg', RepoTags: [`acme/app:${n}`], Layers: [`blobs/sha256/${sha(layer)}`] },
    ]),
  );
  writeFileSync(join(dir, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
  const out = join(work, `img-${n}.tar${opts.gzip ? '.gz' : ''}`);
  execFileSync('tar', [`--format=${opts.format ?? 'gnu'}`, opts.gzip ? '-czf' : '-cf', out, '-C', dir, '.']);
  return readFileSync(out);
}

let t: TestApp;
let owner: Client;
let tenant: string;
const base = () => `/api/v1/tenants/${tenant}/assets`;
const OCTET = { 'content-type': 'application/octet-stream' };

function tenantObjects(app: TestApp, tenantId: string): string[] {
  const root = join(app.config.DATA_DIR, 'storage', 'objects', 'tenants', tenantId);
  if (!existsSync(root)) return [];
  return (readdirSync(root, { recursive: true }) as string[])
    .filter((f) => !f.split('/').pop()!.startsWith('.') && !readdirSyncSafe(join(root, f)))
    .sort();
}
function readdirSyncSafe(p: string): boolean {
  try {
    readdirSync(p);
    return true;
  } catch {
    return false;
  }
}
const tmpLeftovers = (app: TestApp) =>
  existsSync(join(app.config.DATA_DIR, 'storage', 'tmp'))
    ? readdirSync(join(app.config.DATA_DIR, 'storage', 'tmp'))
    : [];

beforeAll(async () => {
  t = await createTestApp({ env: { IMAGE_ARCHIVE_MAX_BYTES: String(256 * 1024) } });
  owner = new Client(t.app);
  await owner.signUp(uniqueEmail('archive-owner'));
  tenant = await owner.createTenant('Archive Co');
  await owner.me();
});
afterAll(async () => {
  await t.close();
  rmSync(work, { recursive: true, force: true });
});

interface ArchiveAsset {
  id: string;
  kind: string;
  target: string;
  name: string;
  source: string;
  archive: { fileName: string; size: number; sha256: string; format: string; uploadedAt: string } | null;
  verification: { status: string; via: string | null };
}

async function upload(file: Buffer, fileName: string, name?: string, client = owner) {
  const q = new URLSearchParams({ fileName, ...(name ? { name } : {}) });
  return client.request('POST', `${base()}/archives?${q}`, file, OCTET);
}

describe('image archive uploads on built-in storage', () => {
  it('registers a tar archive as a container image verified by its upload', async () => {
    const file = imageArchive();
    const res = await upload(file, 'C:\\images\\app-1.tar', 'Billing API');
    expect(res.statusCode, res.body).toBe(201);
    const a = res.json().asset as ArchiveAsset;
    expect(a).toMatchObject({
      kind: 'container_image',
      target: `archive:sha256:${sha(file)}`,
      name: 'Billing API',
      source: 'archive',
      archive: { fileName: 'app-1.tar', size: file.length, sha256: sha(file), format: 'tar' },
      verification: { status: 'verified', via: 'upload' },
    });
    expect(tenantObjects(t, tenant)).toEqual([
      expect.stringMatching(new RegExp(`^assets/${a.id}/archive-[0-9a-f-]{36}$`)),
    ]);
    const raw = await t.database.db
      .selectFrom('assets')
      .select(['archive_storage_key', 'dns_name'])
      .where('id', '=', a.id)
      .executeTakeFirstOrThrow();
    expect(raw).toEqual({ archive_storage_key: tenantObjects(t, tenant)[0], dns_name: null });

    const dl = await owner.get(`${base()}/${a.id}/archive`);
    expect(dl.statusCode).toBe(200);
    expect(dl.headers['content-type']).toBe('application/x-tar');
    expect(dl.headers['content-disposition']).toContain('filename="app-1.tar"');
    expect(sha(dl.rawPayload)).toBe(sha(file));

    const detail = (await owner.get(`${base()}/${a.id}`)).json() as {
      log: { event: string; detail: string | null }[];
      instructions: unknown;
    };
    expect(detail.instructions).toBeNull();
    expect(detail.log.map((e) => e.event)).toEqual(['archive_uploaded', 'created']);
    const check = (await owner.post(`${base()}/${a.id}/verify`)).json() as { result: { outcome: string } };
    expect(check.result.outcome).toBe('verified');
  });

  it('accepts gzipped and POSIX-format archives', async () => {
    const gz = imageArchive({ gzip: true });
    const res = await upload(gz, 'app.tar.gz');
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().asset.archive).toMatchObject({ format: 'tar+gzip', sha256: sha(gz) });
    const dl = await owner.get(`${base()}/${res.json().asset.id}/archive`);
    expect(dl.headers['content-type']).toBe('application/gzip');
    const posix = await upload(imageArchive({ format: 'posix' }), 'oci.tar');
    expect(posix.statusCode, posix.body).toBe(201);
  });

  it('refuses garbage, keeping nothing', async () => {
    const before = tenantObjects(t, tenant);
    const garbage: [string, Buffer][] = [
      ['random bytes', randomBytes(20_000)],
      ['text', Buffer.from('FROM alpine:3.20\nRUN echo hi\n'.repeat(100))],
      ['gzipped text', gzipSync(Buffer.from('not a tar archive at all '.repeat(400)))],
      ['truncated gzip', imageArchive({ gzip: true }).subarray(0, 30)],
      ['empty', Buffer.alloc(0)],
      ['zip', Buffer.concat([Buffer.from('PK\u0003\u0004'), randomBytes(2000)])],
    ];
    for (const [label, body] of garbage) {
      const res = await upload(body, 'x.tar');
      expect([res.statusCode, res.json().error], label).toEqual([400, 'invalid_image_archive']);
    }
    // A tar whose header checksum is wrong is not a tar.
    const broken = Buffer.from(imageArchive());
    broken[0] = broken[0]! ^ 0xff;
    expect((await upload(broken, 'broken.tar')).json().error).toBe('invalid_image_archive');
    expect(tenantObjects(t, tenant)).toEqual(before);
    expect(tmpLeftovers(t)).toEqual([]);
  });

  it('refuses an archive over the limit with 413, declared or streamed, keeping nothing', async () => {
    const before = tenantObjects(t, tenant);
    const big = imageArchive({ layerBytes: 300 * 1024 });
    const declared = await upload(big, 'big.tar');
    expect([declared.statusCode, declared.json().error]).toEqual([413, 'payload_too_large']);
    expect(declared.headers.connection).toBe('close');
    // No Content-Length: the limit is enforced while streaming.
    const streamed = await owner.request(
      'POST',
      `${base()}/archives?fileName=big.tar`,
      Readable.from(
        (function* () {
          for (let i = 0; i < big.length; i += 16 * 1024) yield big.subarray(i, i + 16 * 1024);
        })(),
      ),
      OCTET,
    );
    expect([streamed.statusCode, streamed.json().error]).toEqual([413, 'payload_too_large']);
    expect(tenantObjects(t, tenant)).toEqual(before);
    expect(tmpLeftovers(t)).toEqual([]);
    expect(
      await t.database.db
        .selectFrom('assets')
        .select('id')
        .where('tenant_id', '=', tenant)
        .where('archive_file_name', '=', 'big.tar')
        .execute(),
    ).toEqual([]);
  });

  it('refuses the same archive twice, and references that pose as archives', async () => {
    const file = imageArchive();
    expect((await upload(file, 'dup.tar')).statusCode).toBe(201);
    const before = tenantObjects(t, tenant);
    const again = await upload(file, 'dup-again.tar');
    expect([again.statusCode, again.json().error]).toEqual([409, 'asset_exists']);
    expect(tenantObjects(t, tenant)).toEqual(before);
    const posing = await owner.post(base(), { kind: 'container_image', target: `archive:sha256:${sha(file)}` });
    expect(posing.statusCode).toBe(400);
  });

  it('takes a new version on the detail page and drops the old file', async () => {
    const first = imageArchive();
    const a = (await upload(first, 'v1.tar')).json().asset as ArchiveAsset;
    const oldKeys = tenantObjects(t, tenant).filter((k) => k.startsWith(`assets/${a.id}/`));
    expect(oldKeys).toHaveLength(1);
    const second = imageArchive({ gzip: true });
    const res = await owner.request('PUT', `${base()}/${a.id}/archive?fileName=v2.tar.gz`, second, OCTET);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().asset).toMatchObject({
      id: a.id,
      target: `archive:sha256:${sha(second)}`,
      archive: { fileName: 'v2.tar.gz', format: 'tar+gzip', sha256: sha(second) },
      verification: { status: 'verified', via: 'upload' },
    });
    const keys = tenantObjects(t, tenant).filter((k) => k.startsWith(`assets/${a.id}/`));
    expect(keys).toHaveLength(1);
    expect(keys[0]).not.toBe(oldKeys[0]);
    const log = ((await owner.get(`${base()}/${a.id}`)).json() as { log: { event: string }[] }).log.map((e) => e.event);
    expect(log[0]).toBe('archive_replaced');
    // Garbage as a new version changes nothing.
    const bad = await owner.request('PUT', `${base()}/${a.id}/archive?fileName=v3.tar`, randomBytes(5000), OCTET);
    expect(bad.json().error).toBe('invalid_image_archive');
    expect((await owner.get(`${base()}/${a.id}`)).json().asset.archive.fileName).toBe('v2.tar.gz');
    // A registry-referenced image takes no upload.
    const ref = (await owner.post(base(), { kind: 'container_image', target: `ghcr.io/acme/ref-${n}:1` })).json()
      .asset as ArchiveAsset;
    const refused = await owner.request('PUT', `${base()}/${ref.id}/archive?fileName=x.tar`, imageArchive(), OCTET);
    expect([refused.statusCode, refused.json().error]).toEqual([409, 'conflict']);
    expect(ref.source).toBe('reference');
    expect(ref.archive).toBeNull();
  });

  it('keeps other tenants and signed-out callers out', async () => {
    const other = new Client(t.app);
    await other.signUp(uniqueEmail('archive-other'));
    const otherTenant = await other.createTenant('Other');
    await other.me();
    const before = tenantObjects(t, tenant);
    const res = await upload(imageArchive(), 'intruder.tar', undefined, other);
    expect([res.statusCode, res.json().error]).toEqual([403, 'tenant_forbidden']);
    expect(tenantObjects(t, tenant)).toEqual(before);
    const mine = (await upload(imageArchive(), 'mine.tar')).json().asset as ArchiveAsset;
    expect((await other.get(`${base()}/${mine.id}/archive`)).statusCode).toBe(403);
    const cross = await other.get(`/api/v1/tenants/${otherTenant}/assets/${mine.id}/archive`);
    expect([cross.statusCode, cross.json().error]).toEqual([404, 'asset_not_found']);
    const anon = await new Client(t.app).request('POST', `${base()}/archives?fileName=a.tar`, imageArchive(), OCTET);
    expect(anon.statusCode).toBe(401);
    expect(tenantObjects(t, tenant)).toHaveLength(before.length + 1);
  });
});

describe('image archive uploads over a real HTTP connection', () => {
  // app.inject() hands routes a different body stream than a socket does; this is the real path.
  it('stores an archive sent by fetch, and refuses one over the limit with 413', async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const headers = {
      ...OCTET,
      cookie: [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      'x-csrf-token': owner.csrf!,
      origin: 'http://rampart.test',
    };
    const file = imageArchive({ layerBytes: 100 * 1024, gzip: true });
    const ok = await fetch(`${address}${base()}/archives?fileName=http.tar.gz`, {
      method: 'POST',
      body: new Uint8Array(file),
      headers,
    });
    expect(ok.status, await ok.clone().text()).toBe(201);
    expect(((await ok.json()) as { asset: ArchiveAsset }).asset.archive).toMatchObject({
      sha256: sha(file),
      format: 'tar+gzip',
    });
    const before = tenantObjects(t, tenant);
    const big = await fetch(`${address}${base()}/archives?fileName=big.tar`, {
      method: 'POST',
      body: new Uint8Array(imageArchive({ layerBytes: 300 * 1024 })),
      headers,
    });
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: string }).error).toBe('payload_too_large');
    expect(tenantObjects(t, tenant)).toEqual(before);
  });
});

describe('image archive uploads to a tenant bucket', () => {
  let s3: TestS3Server;
  beforeAll(async () => {
    s3 = await startS3Server();
    const res = await owner.put(`/api/v1/tenants/${tenant}/storage`, {
      endpoint: s3.endpoint,
      region: s3.region,
      bucket: s3.bucket,
      pathStyle: true,
      prefix: 'rampart',
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
    });
    expect(res.statusCode, res.body).toBe(200);
  });
  afterAll(() => s3.close());

  it('stores the archive in the bucket and streams it back', async () => {
    const before = tenantObjects(t, tenant);
    const file = imageArchive({ layerBytes: 100 * 1024 });
    const res = await upload(file, 'bucket.tar');
    expect(res.statusCode, res.body).toBe(201);
    const a = res.json().asset as ArchiveAsset;
    expect(s3.objectKeys()).toEqual([expect.stringMatching(new RegExp(`^rampart/assets/${a.id}/archive-`))]);
    expect(tenantObjects(t, tenant)).toEqual(before);
    expect(sha((await owner.get(`${base()}/${a.id}/archive`)).rawPayload)).toBe(sha(file));
    // Archives uploaded before the switch stay readable from built-in storage.
    const list = (await owner.get(`${base()}?kind=container_image&limit=200`)).json().assets as ArchiveAsset[];
    const older = list.find((x) => x.archive?.fileName === 'mine.tar')!;
    expect(sha((await owner.get(`${base()}/${older.id}/archive`)).rawPayload)).toBe(older.archive!.sha256);
  });

  it('leaves nothing in the bucket when an upload is refused', async () => {
    const before = s3.objectKeys();
    expect((await upload(imageArchive({ layerBytes: 300 * 1024 }), 'big.tar')).statusCode).toBe(413);
    expect((await upload(randomBytes(10_000), 'junk.tar')).statusCode).toBe(400);
    expect(s3.objectKeys()).toEqual(before);
  });
});

describe('image archive uploads with the default limit', () => {
  it('streams archives far over the 1 MiB JSON body limit', async () => {
    const big = await createTestApp();
    try {
      const c = new Client(big.app);
      await c.signUp(uniqueEmail('archive-big'));
      const id = await c.createTenant('Big Co');
      await c.me();
      const file = imageArchive({ layerBytes: 3 * 1024 * 1024, gzip: true });
      const res = await c.request(
        'POST',
        `/api/v1/tenants/${id}/assets/archives?fileName=big.tar.gz`,
        Readable.from([file.subarray(0, 1_000_000), file.subarray(1_000_000)]),
        OCTET,
      );
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().asset.archive).toMatchObject({ size: file.length, sha256: sha(file) });
    } finally {
      await big.close();
    }
  });
});
