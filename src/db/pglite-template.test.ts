import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from './client.ts';
import { migrate } from './migrate.ts';
import { ensurePgliteTemplate, readPgliteTemplate } from './pglite-template.ts';

describe('embedded database template', () => {
  // Builds and migrates a whole embedded database, then starts another from it: about 10 s on an
  // idle machine, past the suite's 30 s default when the machine's two cores are shared.
  it('builds once per key and starts a fully migrated database from it', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'rampart-tpl-cache-'));
    const data = mkdtempSync(join(tmpdir(), 'rampart-tpl-data-'));
    try {
      expect(readPgliteTemplate(cache)).toBeNull();
      expect(await ensurePgliteTemplate(cache)).toBe(true);
      expect(await ensurePgliteTemplate(cache)).toBe(false);
      expect(readdirSync(cache).filter((f) => f.endsWith('.tmp'))).toEqual([]);
      const database = await openDatabase({ dataDir: data, pgliteTemplate: () => readPgliteTemplate(cache) });
      try {
        expect(existsSync(join(data, 'pg', 'PG_VERSION'))).toBe(true);
        expect((await migrate(database)).applied).toEqual([]);
        const rows = await sql<{ n: number }>`select count(*)::int as n from tenant_settings`.execute(database.db);
        expect(rows.rows[0]!.n).toBe(0);
      } finally {
        await database.close();
      }
    } finally {
      rmSync(cache, { recursive: true, force: true });
      rmSync(data, { recursive: true, force: true });
    }
  }, 120_000);
});
