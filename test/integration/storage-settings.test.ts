// Tenant bucket settings over the API against a real S3-compatible server on loopback: secrets
// sealed at rest and never returned, roles, tenant isolation (RLS), test connection and its
// failure codes, and forTenant choosing the bucket or built-in storage.
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTenant } from '../../src/db/tenant.ts';
import { createS3Store } from '../../src/storage/index.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { tenantCast } from '../helpers/tenants.ts';
import { startS3Server, type TestS3Server } from '../helpers/s3-server.ts';

let s3: TestS3Server;
let t: TestApp;
let owner: Client;
let tenant: string;
let member: Client;
let other: Client;
let otherTenant: string;

const url = (id = tenant) => `/api/v1/tenants/${id}/storage`;
const settings = (over: Record<string, unknown> = {}) => ({
  endpoint: s3.endpoint,
  region: s3.region,
  bucket: s3.bucket,
  pathStyle: true,
  prefix: 'rampart',
  accessKeyId: s3.accessKeyId,
  secretAccessKey: s3.secretAccessKey,
  ...over,
});

beforeAll(async () => {
  s3 = await startS3Server();
  t = await createTestApp();
  ({ owner, tenant, member, other, otherTenant } = await tenantCast(t, 'storage'));
});
afterAll(async () => {
  await t.close();
  await s3.close();
});

describe('storage settings', () => {
  it('starts on built-in storage', async () => {
    const res = await owner.get(url());
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ active: 'builtin', s3: null, canEdit: true });
    expect((await t.app.services.storage.forTenant(tenant)).kind).toBe('builtin');
  });

  it('validates endpoint, bucket and region, and needs keys the first time', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ endpoint: 'ftp://s3.example.com' }, 'body.endpoint'],
      [{ endpoint: 'not a url' }, 'body.endpoint'],
      [{ endpoint: 'https://AKIA:secret@s3.example.com' }, 'body.endpoint'],
      [{ bucket: 'Upper_Case' }, 'body.bucket'],
      [{ bucket: 'ab' }, 'body.bucket'],
      [{ bucket: '192.168.1.10' }, 'body.bucket'],
      [{ bucket: 'a..b' }, 'body.bucket'],
      [{ region: 'eu central' }, 'body.region'],
      [{ prefix: '../up' }, 'body.prefix'],
      [{ accessKeyId: undefined }, 'body.accessKeyId'],
      [{ secretAccessKey: undefined }, 'body.secretAccessKey'],
    ];
    for (const [over, path] of bad) {
      const res = await owner.put(url(), settings(over));
      expect(res.statusCode, JSON.stringify(over)).toBe(400);
      expect(res.json().error).toBe('validation_failed');
      expect(
        res.json().details.map((d: { path: string }) => d.path),
        JSON.stringify(over),
      ).toContain(path);
      // A refused request never echoes a key back.
      expect(res.body).not.toContain(s3.secretAccessKey);
    }
    expect((await owner.get(url())).json().s3).toBeNull();
  });

  it('saves the bucket with keys sealed at rest and shows only their presence', async () => {
    const res = await owner.put(url(), settings({ endpoint: `${s3.endpoint}/` }));
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      active: 's3',
      canEdit: true,
      s3: {
        endpoint: s3.endpoint,
        bucket: s3.bucket,
        region: s3.region,
        pathStyle: true,
        prefix: 'rampart',
        enabled: true,
        hasAccessKeyId: true,
        hasSecretAccessKey: true,
        lastTest: null,
      },
    });
    const raw = await t.database.db
      .selectFrom('tenant_storage_settings')
      .selectAll()
      .where('tenant_id', '=', tenant)
      .executeTakeFirstOrThrow();
    expect(raw.secret_access_key_sealed).not.toBe(s3.secretAccessKey);
    expect(raw.secret_access_key_sealed).not.toContain(s3.secretAccessKey);
    expect(raw.access_key_id_sealed).not.toContain(s3.accessKeyId);
    expect(raw.secret_access_key_sealed).toMatch(/^v1\./);
    expect(t.app.services.secretBox.open(raw.secret_access_key_sealed)).toBe(s3.secretAccessKey);
    for (const r of [res, await owner.get(url()), await member.get(url())]) {
      expect(r.body).not.toContain(s3.secretAccessKey);
      expect(r.body).not.toContain(s3.accessKeyId);
    }
    // The audit entry records what changed, never the keys.
    const audit = await t.database.db
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('tenant_id', '=', tenant)
      .where('action', 'like', 'storage.%')
      .execute();
    expect(audit.map((a) => a.action)).toEqual(['storage.settings_updated']);
    const details = JSON.stringify(audit[0]!.details);
    expect(details).toContain(s3.bucket);
    expect(details).not.toContain(s3.secretAccessKey);
    expect(details).not.toContain(s3.accessKeyId);
  });

  it('keeps stored keys when a change omits them', async () => {
    const before = await t.database.db
      .selectFrom('tenant_storage_settings')
      .selectAll()
      .where('tenant_id', '=', tenant)
      .executeTakeFirstOrThrow();
    const res = await owner.put(
      url(),
      settings({ accessKeyId: undefined, secretAccessKey: undefined, prefix: 'rampart/v2' }),
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().s3).toMatchObject({ prefix: 'rampart/v2', hasSecretAccessKey: true });
    const after = await t.database.db
      .selectFrom('tenant_storage_settings')
      .selectAll()
      .where('tenant_id', '=', tenant)
      .executeTakeFirstOrThrow();
    expect(after.secret_access_key_sealed).toBe(before.secret_access_key_sealed);
    expect(after.access_key_id_sealed).toBe(before.access_key_id_sealed);
  });

  it('lets members read but not change or test, and keeps other tenants out', async () => {
    expect((await member.get(url())).json()).toMatchObject({ active: 's3', canEdit: false });
    for (const res of [
      await member.put(url(), settings()),
      await member.delete(url()),
      await member.post(`${url()}/test`),
    ]) {
      expect([res.statusCode, res.json().error]).toEqual([403, 'tenant_forbidden']);
    }
    for (const res of [
      await other.get(url()),
      await other.put(url(), settings()),
      await other.delete(url()),
      await other.post(`${url()}/test`),
    ]) {
      expect([res.statusCode, res.json().error]).toEqual([403, 'tenant_forbidden']);
      expect(res.body).not.toContain(s3.bucket);
    }
    expect((await other.get(url(otherTenant))).json()).toMatchObject({ active: 'builtin', s3: null });
    // Row-level security: an unfiltered read as the other tenant sees no row of this one.
    const seen = await withTenant(
      t.database.db,
      { tenantId: otherTenant },
      async (tx) => (await sql<{ tenant_id: string }>`select tenant_id from tenant_storage_settings`.execute(tx)).rows,
    );
    expect(seen).toEqual([]);
    const own = await withTenant(
      t.database.db,
      { tenantId: tenant },
      async (tx) => (await sql<{ tenant_id: string }>`select tenant_id from tenant_storage_settings`.execute(tx)).rows,
    );
    expect(own).toEqual([{ tenant_id: tenant }]);
    // Nor can it write one for this tenant.
    const write = await withTenant(t.database.db, { tenantId: otherTenant }, (tx) =>
      sql`update tenant_storage_settings set bucket = 'hijack' where tenant_id = ${tenant}`.execute(tx),
    );
    expect(Number(write.numAffectedRows ?? 0)).toBe(0);
  });

  it('tests the saved connection and records the result', async () => {
    const res = await owner.post(`${url()}/test`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, tested: 'saved' });
    const s = (await owner.get(url())).json().s3;
    expect(s.lastTest).toMatchObject({ ok: true, error: null });
    // The probe object was deleted again.
    expect(s3.objectKeys()).toEqual([]);
  });

  it('maps failures to stable codes without leaking the secret', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ secretAccessKey: 'definitely-the-wrong-secret' }, 'storage_auth_failed'],
      [{ accessKeyId: 'AKUNKNOWNKEY0000' }, 'storage_auth_failed'],
      [{ bucket: 'rampart-missing-bucket' }, 'storage_bucket_not_found'],
      [{ endpoint: 'http://127.0.0.1:9' }, 'storage_unreachable'],
    ];
    for (const [over, code] of cases) {
      const res = await owner.post(`${url()}/test`, settings(over));
      expect(res.statusCode, res.body).toBe(502);
      expect(res.json()).toMatchObject({ error: code });
      expect(res.json().message.length).toBeGreaterThan(10);
      expect(res.body).not.toContain('definitely-the-wrong-secret');
      expect(res.body).not.toContain(s3.secretAccessKey);
    }
    // A candidate's result is not recorded on the saved settings.
    expect((await owner.get(url())).json().s3.lastTest.ok).toBe(true);
    // The saved settings, broken: the failure is recorded.
    await owner.put(url(), settings({ secretAccessKey: 'definitely-the-wrong-secret' }));
    const res = await owner.post(`${url()}/test`);
    expect([res.statusCode, res.json().error]).toEqual([502, 'storage_auth_failed']);
    expect((await owner.get(url())).json().s3.lastTest).toMatchObject({ ok: false, error: 'storage_auth_failed' });
    await owner.put(url(), settings());
  });

  it('routes the tenant’s objects to its bucket, with reads falling back to built-in', async () => {
    const { storage } = t.app.services;
    // Written while on built-in storage:
    await owner.put(url(), settings({ enabled: false, accessKeyId: undefined, secretAccessKey: undefined }));
    const before = await storage.forTenant(tenant);
    expect(before.kind).toBe('builtin');
    await before.put('evidence/old.txt', Readable.from([Buffer.from('old')]), { maxBytes: 10 });
    // Switched on: new objects go to the bucket, the old one stays readable.
    await owner.put(url(), settings({ accessKeyId: undefined, secretAccessKey: undefined }));
    const store = await storage.forTenant(tenant);
    expect(store.kind).toBe('s3');
    expect(typeof store.presignPut).toBe('function');
    await store.put('evidence/new.txt', Readable.from([Buffer.from('new')]), { maxBytes: 10 });
    const direct = createS3Store({
      endpoint: s3.endpoint,
      region: s3.region,
      bucket: s3.bucket,
      pathStyle: true,
      prefix: 'rampart',
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
    });
    expect(await direct.head('evidence/new.txt')).toMatchObject({ size: 3 });
    expect(s3.objectKeys()).toEqual(['rampart/evidence/new.txt']);
    expect(await direct.head('evidence/old.txt')).toBeNull();
    expect(await store.head('evidence/old.txt')).toMatchObject({ size: 3 });
    // Other tenants' built-in storage is separate.
    expect(await (await storage.forTenant(otherTenant)).head('evidence/old.txt')).toBeNull();
    await store.delete('evidence/old.txt');
    await store.delete('evidence/new.txt');
    expect(await store.head('evidence/old.txt')).toBeNull();
    expect(await direct.head('evidence/new.txt')).toBeNull();
    direct.destroy();
  });

  it('survives a changed APP_ENCRYPTION_KEY while the bucket is off, and says so while it is on', async () => {
    await owner.put(url(), settings({ enabled: false }));
    const rekeyed = await createTestApp({ database: t.database, deps: { encryptionKey: Buffer.alloc(32, 9) } });
    try {
      const store = await rekeyed.app.services.storage.forTenant(tenant);
      expect(store.kind).toBe('builtin');
      await store.put('evidence/rekeyed.txt', Readable.from([Buffer.from('still here')]), { maxBytes: 1024 });
      expect((await store.head('evidence/rekeyed.txt'))?.size).toBe(10);
      await owner.put(url(), settings({ enabled: true, accessKeyId: undefined, secretAccessKey: undefined }));
      await expect(rekeyed.app.services.storage.forTenant(tenant)).rejects.toMatchObject({
        code: 'storage_auth_failed',
      });
    } finally {
      await rekeyed.app.close();
    }
  });

  it('goes back to built-in storage on delete', async () => {
    const res = await owner.delete(url());
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ active: 'builtin', s3: null, canEdit: true });
    expect(
      await t.database.db
        .selectFrom('tenant_storage_settings')
        .select('tenant_id')
        .where('tenant_id', '=', tenant)
        .execute(),
    ).toEqual([]);
    expect((await t.app.services.storage.forTenant(tenant)).kind).toBe('builtin');
    expect((await owner.delete(url())).statusCode).toBe(200);
    const t2 = await owner.post(`${url()}/test`);
    expect([t2.statusCode, t2.json().error]).toEqual([404, 'storage_not_configured']);
    const actions = (
      await t.database.db
        .selectFrom('audit_log')
        .select('action')
        .where('tenant_id', '=', tenant)
        .where('action', 'like', 'storage.%')
        .execute()
    ).map((a) => a.action);
    expect(actions).toContain('storage.settings_removed');
    expect(actions.filter((a) => a === 'storage.settings_removed')).toHaveLength(1);
  });
});
