// One contract for every object store, run against built-in storage and a real S3-compatible
// server on loopback (SigV4 verified); then what only S3 has: signature checks and presigned PUTs.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/lib/errors.ts';
import { createBuiltinStore, createS3Store, type ObjectStore, type S3ObjectStore } from '../../src/storage/index.ts';
import { startS3Server, type TestS3Server } from '../helpers/s3-server.ts';

const MIB = 1024 * 1024;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** `total` bytes in 64 KiB chunks from a seeded generator: a stream, never one buffer. */
function bodyOf(total: number, seed = 1): { stream: () => Readable; sha256: string } {
  const chunk = (i: number) => createHash('sha512').update(`${seed}:${i}`).digest();
  const gen = function* () {
    let sent = 0;
    let i = 0;
    while (sent < total) {
      const block = Buffer.alloc(Math.min(64 * 1024, total - sent));
      for (let o = 0; o < block.length; o += 64) chunk(i++).copy(block, o);
      sent += block.length;
      yield block;
    }
  };
  const h = createHash('sha256');
  for (const b of gen()) h.update(b);
  return { stream: () => Readable.from(gen()), sha256: h.digest('hex') };
}

async function readAll(r: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of r as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks);
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (e) {
    return e instanceof AppError ? e.code : `non-app-error: ${String(e)}`;
  }
}

let s3: TestS3Server;
let dataDir: string;
beforeAll(async () => {
  s3 = await startS3Server();
  dataDir = mkdtempSync(join(tmpdir(), 'rampart-storage-'));
});
afterAll(async () => {
  await s3.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const s3Settings = (over: Partial<Parameters<typeof createS3Store>[0]> = {}) => ({
  endpoint: s3.endpoint,
  region: s3.region,
  bucket: s3.bucket,
  pathStyle: true,
  prefix: 'tenant-x',
  accessKeyId: s3.accessKeyId,
  secretAccessKey: s3.secretAccessKey,
  ...over,
});

const stores: [string, () => ObjectStore, () => string[]][] = [
  [
    'built-in',
    () => createBuiltinStore(join(dataDir, 'storage'), 'tenants/6f1c1a54-25b4-4e43-9a36-9a4a6a0b3b11'),
    () => readdirSync(join(dataDir, 'storage', 'tmp')),
  ],
  ['S3', () => createS3Store(s3Settings(), { partSize: 5 * MIB }), () => []],
];

describe.each(stores)('object store contract: %s', (_name, make, leftovers) => {
  let store: ObjectStore;
  beforeAll(() => {
    store = make();
  });
  afterAll(() => (store as Partial<S3ObjectStore>).destroy?.());

  it('puts, heads, gets and deletes (idempotently)', async () => {
    const body = Buffer.from('hello rampart\n');
    const put = await store.put('reports/r1/summary.json', Readable.from([body]), {
      maxBytes: 1024,
      contentType: 'application/json',
    });
    expect(put).toEqual({ size: body.length, sha256: sha(body) });
    expect(await store.head('reports/r1/summary.json')).toEqual({ size: body.length, contentType: 'application/json' });
    const got = await store.get('reports/r1/summary.json');
    expect(got.info.size).toBe(body.length);
    expect((await readAll(got.body)).equals(body)).toBe(true);
    await store.delete('reports/r1/summary.json');
    await store.delete('reports/r1/summary.json');
    expect(await store.head('reports/r1/summary.json')).toBeNull();
    expect(await codeOf(store.get('reports/r1/summary.json'))).toBe('object_not_found');
  });

  it('replaces an object in place', async () => {
    await store.put('a/b', Readable.from([Buffer.from('one')]), { maxBytes: 10 });
    await store.put('a/b', Readable.from([Buffer.from('second')]), { maxBytes: 10, contentType: 'text/plain' });
    expect((await readAll((await store.get('a/b')).body)).toString()).toBe('second');
    await store.delete('a/b');
  });

  it('streams a multi-megabyte body through, hashing it on the way', async () => {
    const big = bodyOf(12 * MIB + 12345, 7);
    const put = await store.put('big/blob.bin', big.stream(), {
      maxBytes: 64 * MIB,
      expected: { size: 12 * MIB + 12345, sha256: big.sha256 },
    });
    expect(put).toEqual({ size: 12 * MIB + 12345, sha256: big.sha256 });
    expect((await store.head('big/blob.bin'))?.size).toBe(12 * MIB + 12345);
    const h = createHash('sha256');
    for await (const c of (await store.get('big/blob.bin')).body as AsyncIterable<Buffer>) h.update(c);
    expect(h.digest('hex')).toBe(big.sha256);
    await store.delete('big/blob.bin');
  });

  it('aborts over the size limit and keeps nothing (also not the earlier parts)', async () => {
    expect(await codeOf(store.put('limit/over.bin', bodyOf(11 * MIB).stream(), { maxBytes: 10 * MIB }))).toBe(
      'payload_too_large',
    );
    expect(await store.head('limit/over.bin')).toBeNull();
    // A declared size over the limit is refused before reading.
    expect(
      await codeOf(store.put('limit/declared.bin', bodyOf(10).stream(), { maxBytes: 5, expected: { size: 10 } })),
    ).toBe('payload_too_large');
    expect(await store.head('limit/declared.bin')).toBeNull();
    expect(leftovers()).toEqual([]);
  });

  it('refuses a size or hash different from the declared one and keeps nothing', async () => {
    const b = bodyOf(300_000, 3);
    expect(await codeOf(store.put('m/size-short', b.stream(), { maxBytes: MIB, expected: { size: 300_001 } }))).toBe(
      'upload_mismatch',
    );
    expect(await codeOf(store.put('m/size-long', b.stream(), { maxBytes: MIB, expected: { size: 299_999 } }))).toBe(
      'upload_mismatch',
    );
    expect(
      await codeOf(
        store.put('m/hash', b.stream(), {
          maxBytes: MIB,
          expected: { size: 300_000, sha256: sha(Buffer.from('other')) },
        }),
      ),
    ).toBe('upload_mismatch');
    for (const k of ['m/size-short', 'm/size-long', 'm/hash']) expect(await store.head(k)).toBeNull();
    expect(
      await store.put('m/ok', b.stream(), {
        maxBytes: MIB,
        expected: { size: 300_000, sha256: b.sha256.toUpperCase() },
      }),
    ).toEqual({ size: 300_000, sha256: b.sha256 });
    await store.delete('m/ok');
    expect(leftovers()).toEqual([]);
  });

  it('keeps nothing when the incoming body fails half-way', async () => {
    const failing = new Readable({
      read() {
        this.push(randomBytes(64 * 1024));
        if (Math.random() < 0.2) this.destroy(new Error('client went away'));
      },
    });
    expect(await codeOf(store.put('broken/body', failing, { maxBytes: 64 * MIB }))).toMatch(/client went away/);
    expect(await store.head('broken/body')).toBeNull();
    expect(leftovers()).toEqual([]);
  });

  it('refuses keys that could leave the store', async () => {
    const bad = [
      '',
      '../escape',
      'a/../../b',
      '/etc/passwd',
      'a//b',
      'a/',
      '.hidden',
      'a/.meta',
      'a\\b',
      'a b',
      'caf\u00e9',
      'x'.repeat(1025),
      'a/./b',
      '..',
    ];
    for (const key of bad) {
      expect(await codeOf(store.put(key, Readable.from([Buffer.from('x')]), { maxBytes: 10 })), key).toBe(
        'invalid_object_key',
      );
      expect(await codeOf(store.get(key)), key).toBe('invalid_object_key');
      expect(await codeOf(store.head(key)), key).toBe('invalid_object_key');
      expect(await codeOf(store.delete(key)), key).toBe('invalid_object_key');
    }
  });
});

describe('S3 specifics', () => {
  it('the loopback server verifies signatures: a wrong secret is refused', async () => {
    const wrong = createS3Store(s3Settings({ secretAccessKey: `${s3.secretAccessKey}x` }), { maxAttempts: 1 });
    expect(await codeOf(wrong.put('sig/x', Readable.from([Buffer.from('x')]), { maxBytes: 10 }))).toBe(
      'storage_auth_failed',
    );
    // A HEAD answer has no body to name the cause: a bare 403 reads as access denied.
    expect(await codeOf(wrong.head('sig/x'))).toBe('storage_access_denied');
    wrong.destroy();
    const unknown = createS3Store(s3Settings({ accessKeyId: 'AKNOSUCHKEY' }), { maxAttempts: 1 });
    expect(await codeOf(unknown.put('sig/x', Readable.from([Buffer.from('x')]), { maxBytes: 10 }))).toBe(
      'storage_auth_failed',
    );
    unknown.destroy();
  });

  it('keeps objects under the prefix', async () => {
    const store = createS3Store(s3Settings({ prefix: 'tenants/abc' }));
    const root = createS3Store(s3Settings({ prefix: '' }));
    await store.put('k/one', Readable.from([Buffer.from('1')]), { maxBytes: 10 });
    expect(await root.head('tenants/abc/k/one')).toMatchObject({ size: 1 });
    expect(await root.head('k/one')).toBeNull();
    await store.delete('k/one');
    store.destroy();
    root.destroy();
  });

  it('presigned PUT: accepts exactly the signed length and checksum, refuses others', async () => {
    const store = createS3Store(s3Settings());
    const body = Buffer.from('{"report":"ok"}\n');
    const p = await store.presignPut('uploads/u1.json', {
      size: body.length,
      sha256: sha(body),
      expiresInSeconds: 300,
    });
    const signed = new URL(p.url).searchParams.get('X-Amz-SignedHeaders')!.split(';');
    expect(signed).toEqual(expect.arrayContaining(['content-length', 'host', 'x-amz-checksum-sha256']));
    // No default CRC32 of an empty body is baked into the URL: many S3-compatible stores refuse it.
    expect(p.url).not.toMatch(/crc32/i);
    expect(p.headers).toEqual({
      'content-length': String(body.length),
      'x-amz-checksum-sha256': Buffer.from(sha(body), 'hex').toString('base64'),
    });
    expect(p.expiresAt.getTime()).toBeGreaterThan(Date.now());

    const longer = Buffer.concat([body, Buffer.from('extra')]);
    const wrongLength = await fetch(p.url, {
      method: 'PUT',
      headers: { ...p.headers, 'content-length': String(longer.length) },
      body: longer,
    });
    expect(wrongLength.status).toBe(403);
    expect(await wrongLength.text()).toContain('SignatureDoesNotMatch');
    const wrongChecksum = await fetch(p.url, {
      method: 'PUT',
      headers: { ...p.headers, 'x-amz-checksum-sha256': Buffer.from(sha(longer), 'hex').toString('base64') },
      body,
    });
    expect(wrongChecksum.status).toBe(403);
    expect(await store.head('uploads/u1.json')).toBeNull();

    const ok = await fetch(p.url, { method: 'PUT', headers: p.headers, body });
    expect(ok.status).toBe(200);
    expect((await readAll((await store.get('uploads/u1.json')).body)).equals(body)).toBe(true);
    // Expiry is capped at 15 minutes.
    const capped = await store.presignPut('uploads/u2.json', {
      size: 1,
      sha256: sha(Buffer.from('x')),
      expiresInSeconds: 7 * 24 * 3600,
    });
    expect(new URL(capped.url).searchParams.get('X-Amz-Expires')).toBe('900');
    store.destroy();
  });

  it('names a missing bucket and an unreachable endpoint', async () => {
    const missing = createS3Store(s3Settings({ bucket: 'no-such-bucket-here' }), { maxAttempts: 1 });
    expect(await codeOf(missing.put('x', Readable.from([Buffer.from('x')]), { maxBytes: 10 }))).toBe(
      'storage_bucket_not_found',
    );
    missing.destroy();
    const closed = createS3Store(s3Settings({ endpoint: 'http://127.0.0.1:9' }), {
      maxAttempts: 1,
      connectionTimeoutMs: 2000,
    });
    expect(await codeOf(closed.put('x', Readable.from([Buffer.from('x')]), { maxBytes: 10 }))).toBe(
      'storage_unreachable',
    );
    closed.destroy();
  });
});
