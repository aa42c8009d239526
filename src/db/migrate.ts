// Plain numbered SQL migrations, forward only. Applied at start and by `npm run migrate`.
// On PostgreSQL a session advisory lock makes concurrent runs (several replicas starting) safe.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { sha256Hex } from '../lib/crypto.ts';
import type { Database } from './client.ts';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');
const LOCK_KEY = 7_261_706_172; // arbitrary, stable across releases

export interface Migration {
  version: string;
  name: string;
  sql: string;
  checksum: string;
}

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((file) => {
      const text = readFileSync(join(dir, file), 'utf8');
      return { version: file.slice(0, 4), name: file.slice(5, -4), sql: text, checksum: sha256Hex(text) };
    });
}

export interface MigrateResult {
  applied: string[];
}

export async function migrate(database: Database, migrations = listMigrations()): Promise<MigrateResult> {
  const { db } = database;
  return db.connection().execute(async (conn) => {
    if (database.kind === 'postgres') await sql`select pg_advisory_lock(${LOCK_KEY})`.execute(conn);
    try {
      await sql`create table if not exists schema_migrations (
        version text primary key, name text not null, checksum text not null, applied_at timestamptz not null default now())`.execute(
        conn,
      );
      const done = new Map(
        (await conn.selectFrom('schema_migrations').selectAll().execute()).map((r) => [r.version, r]),
      );
      const applied: string[] = [];
      for (const m of migrations) {
        const prior = done.get(m.version);
        if (prior) {
          if (prior.checksum !== m.checksum)
            throw new Error(
              `migration ${m.version}_${m.name} was edited after it was applied; migrations are append-only`,
            );
          continue;
        }
        // Version, name and checksum come from validated file names and a hex digest.
        const record = `insert into schema_migrations (version, name, checksum) values ('${m.version}', '${m.name}', '${m.checksum}')`;
        if (database.pglite) {
          // PGlite's query() is single-statement; exec() takes the whole script. We hold Kysely's
          // connection mutex here, so nothing else is using the instance.
          await database.pglite.execInTransaction([m.sql, record]);
        } else {
          await conn.transaction().execute(async (tx) => {
            await sql.raw(m.sql).execute(tx);
            await sql.raw(record).execute(tx);
          });
        }
        applied.push(`${m.version}_${m.name}`);
      }
      return { applied };
    } finally {
      if (database.kind === 'postgres') await sql`select pg_advisory_unlock(${LOCK_KEY})`.execute(conn);
    }
  });
}
