// Row-level security is the backstop: a query with NO tenant filter, run as the app role inside
// withTenant, must see only that tenant's rows. Runs on PGlite and, with DATABASE_URL, PostgreSQL.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService, withTenant } from '../../src/db/tenant.ts';
import { createTestApp, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';

describe('tenant isolation by row-level security', () => {
  let t: TestApp;
  let tenantA: string;
  let tenantB: string;
  let userA: string;

  beforeAll(async () => {
    t = await createTestApp();
    const a = new Client(t.app);
    userA = (await a.signUp(uniqueEmail('rls-a'))).user.id;
    tenantA = await a.createTenant('Tenant A');
    const b = new Client(t.app);
    await b.signUp(uniqueEmail('rls-b'));
    tenantB = await b.createTenant('Tenant B');
    // Settings and audit rows for both tenants.
    for (const [c, id] of [
      [a, tenantA],
      [b, tenantB],
    ] as const) {
      await c.me();
      const res = await c.put(`/api/v1/tenants/${id}/settings`, { dailyScanQuota: 7, perAssetConcurrentScans: 2 });
      expect(res.statusCode).toBe(200);
    }
  });
  afterAll(() => t.close());

  it('runs tenant requests as rampart_app, which is neither superuser nor table owner', async () => {
    const row = await withTenant(
      t.database.db,
      { tenantId: tenantA },
      async (tx) =>
        (
          await sql<{
            u: string;
            su: boolean;
            bypass: boolean;
          }>`select current_user as u, r.rolsuper as su, r.rolbypassrls as bypass from pg_roles r where r.rolname = current_user`.execute(
            tx,
          )
        ).rows[0],
    );
    expect(row).toEqual({ u: 'rampart_app', su: false, bypass: false });
  });

  it('an unfiltered select returns only the current tenant rows', async () => {
    const seen = await withTenant(t.database.db, { tenantId: tenantA, userId: userA }, async (tx) => ({
      settings: (await sql<{ tenant_id: string }>`select tenant_id from tenant_settings`.execute(tx)).rows.map(
        (r) => r.tenant_id,
      ),
      audit: (await sql<{ tenant_id: string | null }>`select distinct tenant_id from audit_log`.execute(tx)).rows.map(
        (r) => r.tenant_id,
      ),
      members: (await sql<{ o: string }>`select distinct "organizationId" as o from member`.execute(tx)).rows.map(
        (r) => r.o,
      ),
      orgs: (await sql<{ id: string }>`select id from organization`.execute(tx)).rows.map((r) => r.id),
    }));
    expect(seen.settings).toEqual([tenantA]);
    expect(seen.audit).toEqual([tenantA]);
    expect(seen.members).toEqual([tenantA]);
    expect(seen.orgs).toEqual([tenantA]);
    // The same statements as the other tenant see only its rows.
    const other = await withTenant(
      t.database.db,
      { tenantId: tenantB },
      async (tx) => (await sql<{ tenant_id: string }>`select tenant_id from tenant_settings`.execute(tx)).rows,
    );
    expect(other.map((r) => r.tenant_id)).toEqual([tenantB]);
  });

  it('shows each tenant only its own scan templates', async () => {
    const row = (tenant_id: string, template_id: string) => ({
      tenant_id,
      template_id,
      name: template_id,
      severity: 'info' as const,
      tags: [],
      yaml: `id: ${template_id}`,
      size: 10,
      sha256: '0'.repeat(64),
    });
    for (const [id, name] of [
      [tenantA, 'rls-a'],
      [tenantB, 'rls-b'],
    ] as const)
      await withTenant(t.database.db, { tenantId: id }, (tx) =>
        tx.insertInto('scan_templates').values(row(id, name)).execute(),
      );
    const seen = await withTenant(
      t.database.db,
      { tenantId: tenantA },
      async (tx) =>
        (
          await sql<{
            tenant_id: string;
            template_id: string;
          }>`select tenant_id, template_id from scan_templates`.execute(tx)
        ).rows,
    );
    expect(seen).toEqual([{ tenant_id: tenantA, template_id: 'rls-a' }]);
    await expect(
      withTenant(t.database.db, { tenantId: tenantA }, (tx) =>
        tx.insertInto('scan_templates').values(row(tenantB, 'forged')).execute(),
      ),
    ).rejects.toThrow(/row-level security/);
    const changed = await withTenant(t.database.db, { tenantId: tenantA }, (tx) =>
      tx.updateTable('scan_templates').set({ name: 'changed' }).where('tenant_id', '=', tenantB).executeTakeFirst(),
    );
    expect(changed.numUpdatedRows).toBe(0n);
  });

  it('without a tenant set, the app role sees nothing', async () => {
    const rows = await t.database.db.transaction().execute(async (tx) => {
      await sql`select set_config('role', 'rampart_app', true)`.execute(tx);
      return (await sql`select * from tenant_settings`.execute(tx)).rows;
    });
    expect(rows).toEqual([]);
  });

  it('refuses writes into another tenant', async () => {
    await expect(
      withTenant(t.database.db, { tenantId: tenantA }, (tx) =>
        tx.insertInto('audit_log').values({ tenant_id: tenantB, action: 'forged', details: '{}' }).execute(),
      ),
    ).rejects.toThrow(/row-level security/);
    await expect(
      withTenant(t.database.db, { tenantId: tenantA }, (tx) =>
        tx
          .updateTable('tenant_settings')
          .set({ daily_scan_quota: 1 })
          .where('tenant_id', '=', tenantB)
          .executeTakeFirst(),
      ),
    ).resolves.toMatchObject({ numUpdatedRows: 0n });
    const b = await withService(t.database.db, (tx) =>
      tx
        .selectFrom('tenant_settings')
        .select('daily_scan_quota')
        .where('tenant_id', '=', tenantB)
        .executeTakeFirstOrThrow(),
    );
    expect(b.daily_scan_quota).toBe(7);
  });

  it('gives the app role no access to credentials or sessions', async () => {
    for (const table of ['account', 'session', '"twoFactor"', 'verification', 'platform_roles']) {
      await expect(
        withTenant(t.database.db, { tenantId: tenantA }, (tx) => sql.raw(`select * from ${table}`).execute(tx)),
      ).rejects.toThrow(/permission denied/);
    }
  });

  it('has RLS enabled and forced on every platform tenant table', async () => {
    const rows = (
      await sql<{ relname: string; relrowsecurity: boolean; relforcerowsecurity: boolean }>`
        select relname, relrowsecurity, relforcerowsecurity from pg_class
        where relname in ('tenant_settings', 'audit_log', 'platform_roles', 'scan_templates') order by relname`.execute(
        t.database.db,
      )
    ).rows;
    expect(rows).toEqual([
      { relname: 'audit_log', relrowsecurity: true, relforcerowsecurity: true },
      { relname: 'platform_roles', relrowsecurity: true, relforcerowsecurity: true },
      { relname: 'scan_templates', relrowsecurity: true, relforcerowsecurity: true },
      { relname: 'tenant_settings', relrowsecurity: true, relforcerowsecurity: true },
    ]);
  });
});
