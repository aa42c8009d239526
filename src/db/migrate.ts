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

/**
 * Checksums a migration had before only its comments were reworded, by version. A database that
 * applied the earlier text takes the new one as the same migration and records its checksum; any
 * other difference is still an edit. Add to this only when the SQL itself is unchanged.
 */
export const REWORDED_COMMENTS: Readonly<Record<string, readonly string[]>> = {
  // Comments no longer name tracker issues or documents outside the repository.
  '0006': ['41e6f37034a3f2320f0e31e6d6400a124867857ba3c2780adadde5914b3ce5c7'],
  '0009': ['a3df28ce935fbf019fe65b837b43d2f70cc2a5db68422aada3a55ad20a1eab60'],
  '0010': ['adf1af915beda20122bc91f6b659091368c2bef4634485d78a4aa1c73e371fd6'],
  '0011': ['b2bec25f34eb1f0b8b998d2a8ed0651c52ed59366726f8b59f94175a7c4ef491'],
  '0012': ['0c337d730da1cd694ffda2c70787d40a4012d2f0454a4f2070072e0227e06a9e'],
  '0013': ['dc0e5dd082381c52f092e52b455099d3d661a27bf1ba9d9e64ef902eecf19a50'],
  '0016': ['003db5504db4f5db91f52900c1d67b9133db321b9414ac59f88825bbafb6f010'],
  '0017': ['7cb95cb29805964113525af75b972d7512a58dd786ef03ba56bc7073a05351bf'],
};

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

export async function migrate(
  database: Database,
  migrations = listMigrations(),
  reworded: Readonly<Record<string, readonly string[]>> = REWORDED_COMMENTS,
): Promise<MigrateResult> {
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
          if (prior.checksum === m.checksum) continue;
          if (!reworded[m.version]?.includes(prior.checksum))
            throw new Error(
              `migration ${m.version}_${m.name} was edited after it was applied; migrations are append-only`,
            );
          await conn
            .updateTable('schema_migrations')
            .set({ checksum: m.checksum })
            .where('version', '=', m.version)
            .where('checksum', '=', prior.checksum)
            .execute();
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
