// Rotating APP_ENCRYPTION_KEY: the secret box opens values sealed under a previous key, and
// `npm run admin -- reseal-secrets` re-seals every stored secret under the current key, after
// which the previous key is no longer needed. Runs on a database of its own: re-sealing touches
// every tenant's rows, which other test files share on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.ts';
import { createSecretBox } from '../../src/lib/crypto.ts';
import { runAdmin } from '../../src/ops/admin-cli.ts';
import { openFreshDatabase } from '../helpers/fresh-database.ts';
import { createTestApp, TEST_AUTH_SECRET, type TestApp } from '../helpers/app.ts';
import { tenantCast } from '../helpers/tenants.ts';
import { signingSecret } from '../helpers/workers.ts';

const keyA = Buffer.alloc(32, 7); // the test apps' key (test/helpers/app.ts)
const keyB = Buffer.alloc(32, 11);
const keyC = Buffer.alloc(32, 13);

let database: Database;
let cleanup: () => Promise<void>;
let t: TestApp;
let tenant: string;
let webhookSecret: string;

beforeAll(async () => {
  ({ database, cleanup } = await openFreshDatabase('reseal'));
  t = await createTestApp({ database });
  const cast = await tenantCast(t, 'reseal');
  tenant = cast.tenant;
  webhookSecret = await signingSecret(cast.owner, tenant);
  const a = createSecretBox(keyA);
  await database.db
    .insertInto('tenant_storage_settings')
    .values({
      tenant_id: tenant,
      endpoint: 'https://s3.example.test',
      region: 'us-east-1',
      bucket: 'b',
      path_style: false,
      prefix: '',
      enabled: true,
      access_key_id_sealed: a.seal('AKIARESEAL'),
      secret_access_key_sealed: a.seal('reseal-secret-key'),
    })
    .execute();
});
afterAll(async () => {
  await t.app.close();
  await cleanup();
});

const admin = async (box = createSecretBox(keyB, [keyA])) => {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(['reseal-secrets'], {
    config: t.config,
    database,
    authSecret: TEST_AUTH_SECRET,
    secretBox: box,
    io: { out: (l) => out.push(l), err: (l) => err.push(l) },
  });
  return { code, out, err };
};

describe('secret box with previous keys', () => {
  it('opens values sealed under a previous key and seals only under the current one', () => {
    const old = createSecretBox(keyA).seal('value');
    const rotating = createSecretBox(keyB, [keyC, keyA]);
    expect(rotating.open(old)).toBe('value');
    const fresh = rotating.seal('value');
    expect(createSecretBox(keyB).open(fresh)).toBe('value');
    expect(() => createSecretBox(keyA).open(fresh)).toThrow();
    expect(() => createSecretBox(keyB).open(old)).toThrow();
  });
});

describe('npm run admin -- reseal-secrets', () => {
  it('re-seals every stored secret under the new key; the old key then opens nothing', async () => {
    const r = await admin();
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.out.join('\n')).toMatch(/tenant_storage_settings: 1 of 1 rows re-sealed/);
    expect(r.out.join('\n')).toMatch(/tenant_webhook_secrets: 1 of 1 rows re-sealed/);
    const onlyB = createSecretBox(keyB);
    const storage = await database.db
      .selectFrom('tenant_storage_settings')
      .selectAll()
      .where('tenant_id', '=', tenant)
      .executeTakeFirstOrThrow();
    expect(onlyB.open(storage.access_key_id_sealed)).toBe('AKIARESEAL');
    expect(onlyB.open(storage.secret_access_key_sealed)).toBe('reseal-secret-key');
    expect(() => createSecretBox(keyA).open(storage.secret_access_key_sealed)).toThrow();
    const hook = await database.db
      .selectFrom('tenant_webhook_secrets')
      .selectAll()
      .where('tenant_id', '=', tenant)
      .executeTakeFirstOrThrow();
    expect(onlyB.open(hook.current_sealed)).toBe(webhookSecret);
  });

  it('running it again changes values but not what they hold (idempotent)', async () => {
    const before = await database.db
      .selectFrom('tenant_webhook_secrets')
      .select('current_sealed')
      .where('tenant_id', '=', tenant)
      .executeTakeFirstOrThrow();
    const r = await admin(createSecretBox(keyB));
    expect(r.code).toBe(0);
    const after = await database.db
      .selectFrom('tenant_webhook_secrets')
      .select('current_sealed')
      .where('tenant_id', '=', tenant)
      .executeTakeFirstOrThrow();
    expect(after.current_sealed).not.toBe(before.current_sealed); // fresh IV
    expect(createSecretBox(keyB).open(after.current_sealed)).toBe(webhookSecret);
  });

  it('reports rows no configured key opens, leaves them untouched and exits 1', async () => {
    const lost = createSecretBox(keyC).seal('sealed under a key that is gone');
    await database.db
      .updateTable('tenant_storage_settings')
      .set({ access_key_id_sealed: lost })
      .where('tenant_id', '=', tenant)
      .execute();
    const r = await admin(createSecretBox(keyB, [keyA]));
    expect(r.code).toBe(1);
    expect(r.out.join('\n')).toMatch(/tenant_storage_settings: 0 of 1 rows re-sealed, 1 unreadable/);
    expect(r.err.join('\n')).toMatch(/APP_ENCRYPTION_KEY_PREVIOUS/);
    const row = await database.db
      .selectFrom('tenant_storage_settings')
      .select('access_key_id_sealed')
      .where('tenant_id', '=', tenant)
      .executeTakeFirstOrThrow();
    expect(row.access_key_id_sealed).toBe(lost);
    // With the lost key supplied as a previous key, it is recovered.
    expect((await admin(createSecretBox(keyB, [keyC]))).code).toBe(0);
  });

  it('refuses extra arguments and a missing key', async () => {
    const err: string[] = [];
    expect(
      await runAdmin(['reseal-secrets', '--all'], {
        config: t.config,
        database,
        authSecret: TEST_AUTH_SECRET,
        secretBox: createSecretBox(keyB),
        io: { out: () => undefined, err: (l) => err.push(l) },
      }),
    ).toBe(64);
    expect(err.join('\n')).toMatch(/usage:/);
  });
});
