import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from './client.ts';
import { copyText } from './copy-text.ts';

describe('COPY text format', () => {
  it('escapes what would end a field, a row or the data, and writes null as \\N', () => {
    expect(copyText([['a\tb', 'line\nbreak\r', 'back\\slash', null, 42, 1.5, true, false]])).toBe('a\\tb\tline\\nbreak\\r\tback\\\\slash\t\\N\t42\t1.5\tt\tf\n');
    expect(copyText([['\\.'], ['\\N']])).toBe('\\\\.\n\\\\N\n');
    expect(copyText([['nul\0here']])).toBe('nul\uFFFDhere\n');
    expect(copyText([])).toBe('');
  });

  describe('through the embedded database', () => {
    let dir: string;
    let database: Database;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'rampart-copy-'));
      database = await openDatabase({ dataDir: dir, inMemory: true });
      await sql`create table copy_probe (n int not null, t text, b boolean, r real)`.execute(database.db);
    });
    afterAll(async () => {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('stores any text exactly (NUL and unpaired surrogates as U+FFFD)', async () => {
      let n = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(fc.option(fc.string({ unit: 'binary', maxLength: 40 }), { nil: null }), { minLength: 1, maxLength: 20 }), async (texts) => {
          const base = n;
          n += texts.length;
          await database.copyRows!('copy_probe', ['n', 't', 'b', 'r'], texts.map((t, i) => [base + i, t, i % 2 === 0, i / 4]));
          const { rows } = await sql<{ n: number; t: string | null; b: boolean; r: number }>`select n, t, b, r from copy_probe where n >= ${base} and n < ${n} order by n`.execute(database.db);
          expect(rows).toEqual(texts.map((t, i) => ({ n: base + i, t: t === null ? null : t.replaceAll('\0', '\uFFFD').toWellFormed(), b: i % 2 === 0, r: i / 4 })));
        }),
        { numRuns: 60 },
      );
    });

    it('waits for a transaction in progress instead of joining it', async () => {
      let inside = 0;
      const tx = database.db.transaction().execute(async (t) => {
        await sql`insert into copy_probe (n) values (-1)`.execute(t);
        await new Promise((r) => setTimeout(r, 50));
        inside = Number((await sql<{ c: number }>`select count(*)::int as c from copy_probe where n = -2`.execute(t)).rows[0]!.c);
        throw new Error('roll back');
      });
      const copied = database.copyRows!('copy_probe', ['n'], [[-2]]);
      await expect(tx).rejects.toThrow('roll back');
      await copied;
      // The COPY neither ran inside the transaction nor was rolled back with it.
      expect(inside).toBe(0);
      const { rows } = await sql<{ n: number }>`select n from copy_probe where n < 0 order by n`.execute(database.db);
      expect(rows).toEqual([{ n: -2 }]);
    });
  });
});
