// Row-level security on every CMMC table (0017_cmmc.sql), exercised as the app role the way
// tenant requests run (withTenant): unfiltered reads see one tenant, forged writes are refused,
// and rows the app role must not write (script runs, handoff links, renewal notices) are
// writable only by the service role. Runs on PGlite and, with DATABASE_URL, PostgreSQL.
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DB } from '../../src/db/schema.ts';
import { withService, withTenant, type Tx } from '../../src/db/tenant.ts';
import { createTestApp, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';

const TABLES = [
  'compliance_profiles',
  'endpoint_audit_runs',
  'compliance_control_attestations',
  'compliance_attestation_evidence',
  'cmmc_policy_documents',
  'compliance_handoffs',
  'cmmc_handoff_links',
  'cmmc_renewal_notices',
] as const;

let t: TestApp;
const tenants: string[] = [];
const profiles: string[] = [];
let userA: string;

const hex = (c: string) => c.repeat(64);

async function insertProfile(tx: Tx, tenant: string, cage: string): Promise<string> {
  const { rows } = await sql<{ id: string }>`
    insert into compliance_profiles (tenant_id, cage_code, company_name, mail_platform, affirming_official_name, affirming_official_title, affirming_official_email)
    values (${tenant}::uuid, ${cage}, 'Co', 'm365', 'A', 'B', 'a@b.test') returning id`.execute(tx);
  return rows[0]!.id;
}

/** Tenant-writable rows (as the app role, inside that tenant). */
async function insertTenantRows(tx: Tx, tenant: string, profile: string, tag: string) {
  await sql`insert into compliance_control_attestations (tenant_id, profile_id, requirement_id, item_id, answer) values (${tenant}::uuid, ${profile}::uuid, 'AC.L1-b.1.i', ${`ac1.roster-${tag}`}, 'yes')`.execute(
    tx,
  );
  await sql`insert into compliance_attestation_evidence (tenant_id, profile_id, requirement_id, item_id, file_name, content_type, size_bytes, sha256, storage_kind, storage_key)
            values (${tenant}::uuid, ${profile}::uuid, 'AC.L1-b.1.i', 'ac1.roster', ${`roster-${tag}.pdf`}, 'application/pdf', 10, ${hex('a')}, 'builtin', ${`k-${tag}`})`.execute(
    tx,
  );
  await sql`insert into cmmc_policy_documents (tenant_id, profile_id, kind, version, title, body_markdown) values (${tenant}::uuid, ${profile}::uuid, 'access_control', 1, ${`AC ${tag}`}, '# AC')`.execute(
    tx,
  );
  await sql`insert into compliance_handoffs (tenant_id, profile_id, status_date, scope_description, cage_codes, overall_result, requirement_results, affirming_official_name, affirming_official_title, affirming_official_email, affirmation_text_version, affirmed_in_sprs_on, assessment_snapshot_sha256, next_due, reminder_at)
            values (${tenant}::uuid, ${profile}::uuid, '2026-01-01', ${`scope ${tag}`}, array['1AB2C'], 'MET', '{}', 'A', 'B', 'a@b.test', 'v1', '2026-01-02', ${hex('b')}, '2027-01-01', '2026-12-02')`.execute(
    tx,
  );
}

/** Service-only rows. */
async function insertServiceRows(q: Kysely<DB> | Tx, tenant: string, profile: string, tag: string) {
  await sql`insert into endpoint_audit_runs (tenant_id, profile_id, hostname, os, results, script_version) values (${tenant}::uuid, ${profile}::uuid, ${`host-${tag}`}, 'windows', '{"win.rdp_disabled":"pass"}', '1.0.0')`.execute(
    q,
  );
  await sql`insert into cmmc_handoff_links (token_hash, caller, expires_at, tenant_id) values (${randomBytes(32).toString('hex')}, 'bid', now() + interval '30 minutes', ${tenant}::uuid)`.execute(
    q,
  );
  await sql`insert into cmmc_renewal_notices (tenant_id, profile_id, kind, day) values (${tenant}::uuid, ${profile}::uuid, 'renewal_due', current_date)`.execute(
    q,
  );
}

beforeAll(async () => {
  t = await createTestApp();
  for (const label of ['a', 'b']) {
    const c = new Client(t.app);
    const me = await c.signUp(uniqueEmail(`cmmc-rls-${label}`));
    if (label === 'a') userA = me.user.id;
    tenants.push(await c.createTenant(`CMMC RLS ${label}`));
  }
  for (const [i, tag] of ['a', 'b'].entries()) {
    const tenant = tenants[i]!;
    const profile = await withTenant(t.database.db, { tenantId: tenant }, async (tx) => {
      const id = await insertProfile(tx, tenant, tag === 'a' ? '1AAAA' : '2BBBB');
      await insertTenantRows(tx, tenant, id, tag);
      return id;
    });
    profiles.push(profile);
    await withService(t.database.db, (tx) => insertServiceRows(tx, tenant, profile, tag));
  }
});
afterAll(() => t.close());

describe('CMMC tables under row-level security', () => {
  it('has RLS enabled and forced on every CMMC table', async () => {
    const { rows } = await sql<{ relname: string; relrowsecurity: boolean; relforcerowsecurity: boolean }>`
      select relname, relrowsecurity, relforcerowsecurity from pg_class where relname in (${sql.join([...TABLES])}) and relkind = 'r' order by relname`.execute(
      t.database.db,
    );
    expect(rows.map((r) => r.relname).sort()).toEqual([...TABLES].sort());
    for (const r of rows) expect([r.relname, r.relrowsecurity, r.relforcerowsecurity]).toEqual([r.relname, true, true]);
  });

  it('an unfiltered select as the app role returns only the current tenant rows, in every table', async () => {
    for (const [i, tenant] of tenants.entries()) {
      const seen = await withTenant(t.database.db, { tenantId: tenant, userId: i === 0 ? userA : null }, async (tx) => {
        const out: Record<string, string[]> = {};
        for (const table of TABLES)
          out[table] = (
            await sql<{ tenant_id: string }>`select distinct tenant_id from ${sql.table(table)}`.execute(tx)
          ).rows.map((r) => r.tenant_id);
        return out;
      });
      for (const table of TABLES) expect(seen[table], `${table} as tenant ${i}`).toEqual([tenant]);
    }
  });

  it('without a tenant set, the app role sees no CMMC rows', async () => {
    const counts = await t.database.db.transaction().execute(async (tx) => {
      await sql`select set_config('role', 'rampart_app', true), set_config('app.tenant_id', '', true)`.execute(tx);
      const out: number[] = [];
      for (const table of TABLES)
        out.push((await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(tx)).rows[0]!.n);
      return out;
    });
    expect(counts).toEqual(TABLES.map(() => 0));
  });

  it('refuses forged writes into another tenant and leaves its rows unchanged', async () => {
    const [a, b] = tenants as [string, string];
    const [, pb] = profiles as [string, string];
    const asA = <T>(fn: (tx: Tx) => Promise<T>) => withTenant(t.database.db, { tenantId: a }, fn);
    await expect(asA((tx) => insertProfile(tx, b, '3CCCC'))).rejects.toThrow(/row-level security|duplicate key/);
    await expect(
      asA((tx) =>
        sql`insert into compliance_control_attestations (tenant_id, profile_id, requirement_id, item_id, answer) values (${b}::uuid, ${pb}::uuid, 'AC.L1-b.1.i', 'x', 'no')`.execute(
          tx,
        ),
      ),
    ).rejects.toThrow(/row-level security/);
    await expect(
      asA((tx) =>
        sql`insert into cmmc_policy_documents (tenant_id, profile_id, kind, version, title, body_markdown) values (${b}::uuid, ${pb}::uuid, 'media_protection', 1, 'x', 'x')`.execute(
          tx,
        ),
      ),
    ).rejects.toThrow(/row-level security/);
    await expect(
      asA((tx) =>
        sql`insert into compliance_attestation_evidence (tenant_id, profile_id, requirement_id, item_id, file_name, content_type, size_bytes, sha256, storage_kind, storage_key) values (${b}::uuid, ${pb}::uuid, 'AC.L1-b.1.i', 'x', 'x', 'x', 1, ${hex('e')}, 'builtin', 'x')`.execute(
          tx,
        ),
      ),
    ).rejects.toThrow(/row-level security/);
    for (const table of [
      'compliance_profiles',
      'compliance_control_attestations',
      'cmmc_policy_documents',
      'compliance_attestation_evidence',
    ] as const) {
      const r = await asA((tx) =>
        sql`update ${sql.table(table)} set tenant_id = tenant_id where tenant_id = ${b}::uuid`.execute(tx),
      );
      expect(Number(r.numAffectedRows ?? 0n), table).toBe(0);
    }
    // Moving one's own row into another tenant is refused too.
    await expect(
      asA((tx) => sql`update compliance_profiles set tenant_id = ${b}::uuid where tenant_id = ${a}::uuid`.execute(tx)),
    ).rejects.toThrow(/row-level security|duplicate key/);
    const bRows = await withService(
      t.database.db,
      async (tx) =>
        (
          await sql<{
            n: number;
          }>`select count(*)::int as n from compliance_control_attestations where tenant_id = ${b}::uuid`.execute(tx)
        ).rows[0]!.n,
    );
    expect(bRows).toBe(1);
  });

  it('gives the app role no writes on script runs, handoff links and renewal notices (service role only)', async () => {
    const [a] = tenants as [string];
    const [pa] = profiles as [string];
    const asA = <T>(fn: (tx: Tx) => Promise<T>) => withTenant(t.database.db, { tenantId: a }, fn);
    await expect(
      asA((tx) =>
        sql`insert into endpoint_audit_runs (tenant_id, profile_id, hostname, os, results, script_version) values (${a}::uuid, ${pa}::uuid, 'forged', 'windows', '{}', '1.0.0')`.execute(
          tx,
        ),
      ),
    ).rejects.toThrow(/permission denied/);
    await expect(
      asA((tx) =>
        sql`insert into cmmc_handoff_links (token_hash, caller, expires_at) values (${hex('f')}, 'x', now() + interval '1 minute')`.execute(
          tx,
        ),
      ),
    ).rejects.toThrow(/permission denied/);
    await expect(
      asA((tx) =>
        sql`insert into cmmc_renewal_notices (tenant_id, profile_id, kind, day) values (${a}::uuid, ${pa}::uuid, 'expired', current_date)`.execute(
          tx,
        ),
      ),
    ).rejects.toThrow(/permission denied/);
    await expect(asA((tx) => sql`delete from endpoint_audit_runs`.execute(tx))).rejects.toThrow(/permission denied/);
    // The renewal log holds one notice of a kind per profile per day.
    await expect(
      withService(t.database.db, (tx) =>
        sql`insert into cmmc_renewal_notices (tenant_id, profile_id, kind, day) values (${a}::uuid, ${pa}::uuid, 'renewal_due', current_date)`.execute(
          tx,
        ),
      ),
    ).rejects.toThrow(/duplicate key|unique/);
  });

  it('lets the app role change only the retire columns of script runs, and only in its own tenant (migration 0022)', async () => {
    const [a, b] = tenants as [string, string];
    const asA = <T>(fn: (tx: Tx) => Promise<T>) => withTenant(t.database.db, { tenantId: a }, fn);
    const retired = await asA((tx) =>
      sql`update endpoint_audit_runs set retired_at = now(), retired_note = 'gone'`.execute(tx),
    );
    expect(Number(retired.numAffectedRows ?? 0n)).toBe(1);
    expect(
      Number(
        (
          await asA((tx) =>
            sql`update endpoint_audit_runs set retired_at = now() where tenant_id = ${b}::uuid`.execute(tx),
          )
        ).numAffectedRows ?? 0n,
      ),
    ).toBe(0);
    for (const change of [
      sql`results = '{"win.rdp_disabled":"fail"}'`,
      sql`hostname = 'forged'`,
      sql`received_at = now()`,
      sql`reasons = '{}'`,
      sql`tenant_id = ${b}::uuid`,
    ]) {
      await expect(asA((tx) => sql`update endpoint_audit_runs set ${change}`.execute(tx))).rejects.toThrow(
        /permission denied/,
      );
    }
    const state = await withService(
      t.database.db,
      async (tx) =>
        (
          await sql<{
            tenant_id: string;
            retired: boolean;
          }>`select tenant_id, retired_at is not null as retired from endpoint_audit_runs where tenant_id = any(${tenants}::uuid[]) order by tenant_id = ${a}::uuid desc`.execute(
            tx,
          )
        ).rows,
    );
    expect(state).toEqual([
      { tenant_id: a, retired: true },
      { tenant_id: b, retired: false },
    ]);
    await asA((tx) => sql`update endpoint_audit_runs set retired_at = null, retired_note = null`.execute(tx));
  });

  it('lets the service role (verify route, sweeps) read every tenant but not rewrite tenant answers', async () => {
    const counts = await withService(t.database.db, async (tx) => {
      const out: Record<string, number> = {};
      for (const table of TABLES)
        out[table] = (
          await sql<{
            n: number;
          }>`select count(distinct tenant_id)::int as n from ${sql.table(table)} where tenant_id = any(${tenants}::uuid[])`.execute(
            tx,
          )
        ).rows[0]!.n;
      return out;
    });
    for (const table of TABLES) expect(counts[table], table).toBe(2);
    await expect(
      withService(t.database.db, (tx) => sql`update compliance_control_attestations set answer = 'no'`.execute(tx)),
    ).rejects.toThrow(/permission denied/);
    await expect(withService(t.database.db, (tx) => sql`delete from compliance_profiles`.execute(tx))).rejects.toThrow(
      /permission denied/,
    );
  });
});
