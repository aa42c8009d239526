// A pre-migrated embedded database, cached outside DATA_DIR. Creating a PGlite cluster (initdb
// in WASM) takes seconds; loading this tarball takes well under one. The key covers the PGlite
// version and every migration's checksum, so a stale template is never used: without a matching
// one, the database is created the ordinary way. It holds schema only, never data or secrets.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256Hex } from '../lib/crypto.ts';
import { openDatabase } from './client.ts';
import { listMigrations, migrate } from './migrate.ts';

export const TEMPLATE_CACHE_DIR = join(import.meta.dirname, '../../node_modules/.cache/rampart');

function pgliteVersion(): string {
  const pkg = join(import.meta.dirname, '../../node_modules/@electric-sql/pglite/package.json');
  return (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
}

export function templateKey(): string {
  return sha256Hex([pgliteVersion(), ...listMigrations().map((m) => `${m.version}:${m.checksum}`)].join('\n')).slice(
    0,
    16,
  );
}

const templateFile = (dir: string) => join(dir, `pglite-template-${templateKey()}.tar.gz`);

/** Whether a template for the current key is cached (without reading it). */
export function hasPgliteTemplate(dir = TEMPLATE_CACHE_DIR): boolean {
  return existsSync(templateFile(dir));
}

/** The template for the current key, or null. */
export function readPgliteTemplate(dir = TEMPLATE_CACHE_DIR): Blob | null {
  try {
    return new Blob([readFileSync(templateFile(dir))]);
  } catch {
    return null;
  }
}

/** Builds the template unless one for the current key exists. Returns whether it built. */
export async function ensurePgliteTemplate(dir = TEMPLATE_CACHE_DIR): Promise<boolean> {
  const file = templateFile(dir);
  if (hasPgliteTemplate(dir)) return false;
  const scratch = mkdtempSync(join(tmpdir(), 'rampart-template-'));
  try {
    const database = await openDatabase({ dataDir: scratch, inMemory: true });
    try {
      await migrate(database);
      const blob = await database.pglite!.dumpDataDir();
      mkdirSync(dir, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, Buffer.from(await blob.arrayBuffer()));
      renameSync(tmp, file); // atomic: a concurrent reader sees all or nothing
    } finally {
      await database.close();
    }
    return true;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
