// Migrations in production (`npm run migrate`, and every replica at start): forward-only and
// append-only, and safe when several processes run them at once on one PostgreSQL (advisory lock).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { listMigrations, migrate, REWORDED_COMMENTS } from '../../src/db/migrate.ts';

const PG = process.env.DATABASE_URL;
const CLI = join(import.meta.dirname, '../../src/db/migrate-cli.ts');

/** Runs `npm run migrate`'s entry point as a release job would: its own process and environment. */
function runCli(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
const all = listMigrations();
const names = all.map((m) => `${m.version}_${m.name}`);

describe('forward-only migrations', () => {
  let dataDir: string;
  let database: Database;
  let admin: pg.Client | null = null;
  let dbName = '';

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rampart-migrate-'));
    if (PG) {
      // A database of its own: the shared test database is already migrated.
      const url = new URL(PG);
      dbName = `rampart_migrate_${Math.random().toString(36).slice(2, 8)}`;
      url.pathname = '/postgres';
      admin = new pg.Client({ connectionString: url.toString() });
      await admin.connect();
      await admin.query(`create database ${dbName}`);
      url.pathname = `/${dbName}`;
      database = await openDatabase({ databaseUrl: url.toString(), dataDir });
    } else database = await openDatabase({ dataDir, inMemory: true });
  });
  afterAll(async () => {
    await database.close();
    if (admin) {
      await admin.query(`drop database ${dbName} with (force)`);
      await admin.end();
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('applies every migration once, in order, and a second run applies nothing', async () => {
    expect((await migrate(database)).applied).toEqual(names);
    expect((await migrate(database)).applied).toEqual([]);
    const rows = await sql<{
      version: string;
    }>`select version from schema_migrations order by applied_at, version`.execute(database.db);
    expect(rows.rows.map((r) => r.version)).toEqual(all.map((m) => m.version));
  });

  it('takes a migration whose comments were reworded as applied, and records its new checksum', async () => {
    // A database that applied 0013 and 0016 before their comments stopped naming issue numbers.
    const stored = async (version: string) =>
      (
        await sql<{ checksum: string }>`select checksum from schema_migrations where version = ${version}`.execute(
          database.db,
        )
      ).rows[0]!.checksum;
    for (const [version, [earlier]] of Object.entries(REWORDED_COMMENTS))
      await sql`update schema_migrations set checksum = ${earlier!} where version = ${version}`.execute(database.db);
    expect((await migrate(database)).applied).toEqual([]);
    for (const version of Object.keys(REWORDED_COMMENTS)) {
      expect(await stored(version)).toBe(all.find((m) => m.version === version)!.checksum);
      expect(REWORDED_COMMENTS[version]).not.toContain(await stored(version));
    }
    // Only the listed earlier checksums: another one of the same migration is still an edit.
    await sql`update schema_migrations set checksum = ${'c'.repeat(64)} where version = '0013'`.execute(database.db);
    await expect(migrate(database)).rejects.toThrow('migration 0013_hosted_workers was edited after it was applied');
    await sql`update schema_migrations set checksum = ${all.find((m) => m.version === '0013')!.checksum} where version = '0013'`.execute(
      database.db,
    );
  });

  it('refuses to start when an applied migration was edited, and changes nothing', async () => {
    const edited = all.map((m, i) => (i === 3 ? { ...m, sql: `${m.sql}\n-- edited`, checksum: 'f'.repeat(64) } : m));
    await expect(migrate(database, edited)).rejects.toThrow(
      `migration ${all[3]!.version}_${all[3]!.name} was edited after it was applied`,
    );
    const added = {
      version: '9999',
      name: 'must_not_run',
      sql: 'create table must_not_run (id int)',
      checksum: 'a'.repeat(64),
    };
    await expect(migrate(database, [...edited, added])).rejects.toThrow('was edited');
    const table = await sql<{ t: string | null }>`select to_regclass('must_not_run')::text as t`.execute(database.db);
    expect(table.rows[0]!.t).toBeNull();
  });
});

describe('rolling upgrades (operations guide 1.3)', () => {
  // Releases before the convention whose migrations are not safe under old replicas.
  const beforeConvention = ['0020_finding_created_events', '0021_findings_asset_tenant_fk'];
  const guide = readFileSync(join(import.meta.dirname, '../../docs/operations/install.md'), 'utf8');
  const section = guide.slice(guide.indexOf('### 1.3 Upgrades'), guide.indexOf('### 1.4'));
  const listed = [...section.matchAll(/^\| `(\d{4}_[a-z0-9_]+)` \|/gm)].map((m) => m[1]!);

  it('every newer migration says whether old replicas survive it, and the guide lists exactly the ones that need a stop', () => {
    const stops = [...beforeConvention];
    for (const m of all.filter((x) => x.version > '0021')) {
      const first = m.sql.split('\n', 1)[0]!;
      expect(first, `${m.version}_${m.name}`).toMatch(/^-- upgrade: (rolling|stop \(.+\))$/);
      if (first.startsWith('-- upgrade: stop')) stops.push(`${m.version}_${m.name}`);
    }
    expect(listed).toEqual(stops);
  });
});

describe('the migrate command', () => {
  it('refuses to run in production without DATABASE_URL instead of migrating a throwaway embedded database', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rampart-migrate-cli-'));
    try {
      const r = await runCli({ NODE_ENV: 'production', DATA_DIR: dataDir });
      expect(r.code).toBe(78);
      expect(r.stderr).toContain('DATABASE_URL: required by `migrate` when NODE_ENV=production');
      const bad = await runCli({ NODE_ENV: 'production', DATABASE_URL: 'mysql://nope', DATA_DIR: dataDir });
      expect(bad.code).toBe(78);
      expect(bad.stderr).toContain('Invalid configuration');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!PG)('concurrent runs on one PostgreSQL (several replicas starting, or two migration jobs)', () => {
  it('applies each migration exactly once while three processes migrate at once', { timeout: 120_000 }, async () => {
    const url = new URL(PG!);
    const dbName = `rampart_migrate_conc_${Math.random().toString(36).slice(2, 8)}`;
    url.pathname = '/postgres';
    const admin = new pg.Client({ connectionString: url.toString() });
    await admin.connect();
    await admin.query(`create database ${dbName}`);
    url.pathname = `/${dbName}`;
    const dirs = [0, 1, 2].map(() => mkdtempSync(join(tmpdir(), 'rampart-migrate-conc-')));
    const handles = await Promise.all(dirs.map((dataDir) => openDatabase({ databaseUrl: url.toString(), dataDir })));
    try {
      const results = await Promise.all(handles.map((d) => migrate(d)));
      // One run applied everything (whichever took the lock first); the others found nothing to do.
      expect(results.map((r) => r.applied.length).sort((a, b) => a - b)).toEqual([0, 0, names.length]);
      expect(results.find((r) => r.applied.length)!.applied).toEqual(names);
      const rows = await sql<{
        version: string;
        n: number;
      }>`select version, count(*)::int as n from schema_migrations group by version order by version`.execute(
        handles[0]!.db,
      );
      expect(rows.rows).toEqual(all.map((m) => ({ version: m.version, n: 1 })));
      // Two release jobs at once through the command itself, on the migrated database.
      const cli = await Promise.all(
        [0, 1].map((i) => runCli({ NODE_ENV: 'production', DATABASE_URL: url.toString(), DATA_DIR: dirs[i]! })),
      );
      expect(cli.map((r) => [r.code, r.stdout.trim()])).toEqual([
        [0, 'database is up to date'],
        [0, 'database is up to date'],
      ]);
    } finally {
      await Promise.all(handles.map((d) => d.close()));
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
      await admin.query(`drop database ${dbName} with (force)`);
      await admin.end();
    }
  });
});
