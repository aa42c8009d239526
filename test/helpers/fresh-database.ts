// A migrated database of a test file's own, for tests that need an installation nobody else touched
// (no super-admin yet, secrets sealed with one key): an in-memory PGlite, or on PostgreSQL a new
// database beside the suite's, dropped again by cleanup().
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';

export async function openFreshDatabase(prefix: string): Promise<{ database: Database; cleanup: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), `rampart-${prefix}-`));
  const base = process.env.DATABASE_URL;
  const name = `rampart_${prefix}_${process.pid}_${Date.now().toString(36)}`;
  const admin = async (statement: string) => {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    try {
      await c.query(statement);
    } finally {
      await c.end();
    }
  };
  let database: Database;
  if (base) {
    await admin(`create database ${name}`);
    const url = new URL(base);
    url.pathname = `/${name}`;
    database = await openDatabase({ databaseUrl: url.toString(), dataDir, poolMax: 5 });
  } else database = await openDatabase({ dataDir, inMemory: true });
  await migrate(database);
  return {
    database,
    cleanup: async () => {
      await database.close();
      if (base) await admin(`drop database ${name} with (force)`);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
