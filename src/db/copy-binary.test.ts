import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from './client.ts';
import { copyBinary, CopyStream, type CopyColumn } from './copy-binary.ts';

const PROBE: CopyColumn[] = [
  { name: 'n', type: 'int4' },
  { name: 't', type: 'text' },
  { name: 'b', type: 'bool' },
  { name: 'r', type: 'float4' },
  { name: 'at', type: 'timestamptz' },
];

describe('COPY binary format', () => {
  it('writes the signature, each field with its length (-1 for null) and the trailer', () => {
    const bytes = Buffer.from(
      copyBinary(PROBE, [
        [7, 'é', true, 1.5, Date.UTC(2000, 0, 1, 0, 0, 1)],
        [-1, null, false, null, null],
      ]),
    );
    const hex = [
      '5047434f50590aff0d0a00',
      '00000000',
      '00000000', // PGCOPY\n\377\r\n\0, flags, header extension
      '0005',
      '00000004',
      '00000007',
      '00000002',
      'c3a9',
      '00000001',
      '01',
      '00000004',
      '3fc00000',
      '00000008',
      '00000000000f4240',
      '0005',
      '00000004',
      'ffffffff',
      'ffffffff',
      '00000001',
      '00',
      'ffffffff',
      'ffffffff',
      'ffff',
    ].join('');
    expect(bytes.toString('hex')).toBe(hex);
  });

  it('refuses a value of the wrong type, an int4 out of range, an invalid time and a short row', () => {
    expect(() => copyBinary(PROBE, [['7', 't', true, 1, 0]])).toThrow(TypeError);
    expect(() => copyBinary(PROBE, [[2 ** 31, 't', true, 1, 0]])).toThrow(/32-bit/);
    expect(() => copyBinary(PROBE, [[1, 't', true, 1, new Date(Number.NaN)]])).toThrow(/valid time/);
    expect(() => copyBinary(PROBE, [[1, 't']])).toThrow(/2 values for 5 columns/);
  });

  it('appends rows one at a time to the same bytes, and a refused row leaves the stream as it was', () => {
    const rows: [number, string | null, boolean, number | null, number | null][] = [
      [7, 'é', true, 1.5, Date.UTC(2000, 0, 1, 0, 0, 1)],
      [-1, null, false, null, null],
    ];
    const stream = new CopyStream(PROBE, 1); // grows past its first guess
    stream.add(rows[0]!);
    expect(() => stream.add([1, 'partly written', true, 1, new Date(Number.NaN)])).toThrow(/valid time/);
    expect(() => stream.add([1])).toThrow(/1 values for 5 columns/);
    stream.add(rows[1]!);
    expect(stream.rows).toBe(2);
    expect(Buffer.from(stream.finish()).equals(Buffer.from(copyBinary(PROBE, rows)))).toBe(true);
    expect(() => stream.add(rows[0]!)).toThrow(/finished/);
  });

  describe('through the embedded database', () => {
    let dir: string;
    let database: Database;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'rampart-copy-'));
      database = await openDatabase({ dataDir: dir, inMemory: true });
      await sql`create table copy_probe (n int not null, t text, b boolean, r real, at timestamptz)`.execute(
        database.db,
      );
    });
    afterAll(async () => {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('stores any text exactly (NUL and unpaired surrogates as U+FFFD), and every type as sent', async () => {
      let n = 0;
      const row = fc.record({
        t: fc.option(fc.string({ unit: 'binary', maxLength: 40 }), { nil: null }),
        b: fc.boolean(),
        r: fc.float({ noNaN: true }),
        // Before and after the 2000 epoch, to the millisecond (a Date's precision).
        at: fc.date({
          min: new Date('1970-01-01T00:00:00Z'),
          max: new Date('2100-01-01T00:00:00Z'),
          noInvalidDate: true,
        }),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 20 }), async (rows) => {
          const base = n;
          n += rows.length;
          await database.copyRows!(
            'copy_probe',
            PROBE,
            rows.map((r, i) => [base + i, r.t, r.b, r.r, r.at]),
          );
          const { rows: back } = await sql<{
            n: number;
            t: string | null;
            b: boolean;
            r: number;
            at: Date;
          }>`select n, t, b, r, at from copy_probe where n >= ${base} and n < ${n} order by n`.execute(database.db);
          // real is read back as PostgreSQL's shortest text for the float4, so compare as float4.
          expect(back.map((b) => ({ ...b, r: Math.fround(b.r) }))).toEqual(
            rows.map((r, i) => ({
              n: base + i,
              t: r.t === null ? null : r.t.replaceAll('\0', '\uFFFD').toWellFormed(),
              b: r.b,
              r: Math.fround(r.r),
              at: r.at,
            })),
          );
        }),
        { numRuns: 60 },
      );
    });

    it('keeps fractions of a millisecond given as epoch milliseconds, and the int4 limits', async () => {
      const at = Date.UTC(2026, 10, 26, 4, 0, 0) + 0.123;
      await database.copyRows!('copy_probe', PROBE, [
        [2 ** 31 - 1, 'max', true, 0, at],
        [-(2 ** 31), 'min', false, 0, at],
      ]);
      const { rows } = await sql<{
        n: number;
        us: string;
      }>`select n, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as us from copy_probe where t in ('max', 'min') order by n`.execute(
        database.db,
      );
      expect(rows).toEqual([
        { n: -(2 ** 31), us: '2026-11-26T04:00:00.000123' },
        { n: 2 ** 31 - 1, us: '2026-11-26T04:00:00.000123' },
      ]);
    });

    it('waits for a transaction in progress instead of joining it', async () => {
      let inside = 0;
      const tx = database.db.transaction().execute(async (t) => {
        await sql`insert into copy_probe (n) values (-1)`.execute(t);
        await new Promise((r) => setTimeout(r, 50));
        inside = Number(
          (await sql<{ c: number }>`select count(*)::int as c from copy_probe where n = -2`.execute(t)).rows[0]!.c,
        );
        throw new Error('roll back');
      });
      const copied = database.copyRows!('copy_probe', [{ name: 'n', type: 'int4' }], [[-2]]);
      await expect(tx).rejects.toThrow('roll back');
      await copied;
      // The COPY neither ran inside the transaction nor was rolled back with it.
      expect(inside).toBe(0);
      const { rows } = await sql<{ n: number }>`select n from copy_probe where n < 0 and n > -3 order by n`.execute(
        database.db,
      );
      expect(rows).toEqual([{ n: -2 }]);
    });

    it('appends a stream encoded ahead', async () => {
      const stream = new CopyStream(PROBE);
      for (let i = 0; i < 300; i++) stream.add([10_000 + i, `row ${i}`, i % 2 === 0, i / 4, Date.UTC(2026, 0, 1) + i]);
      await database.copyRows!('copy_probe', PROBE, stream);
      const { rows } = await sql<{
        c: number;
        t: string;
      }>`select count(*)::int as c, max(t) as t from copy_probe where n >= 10000 and n < 10300`.execute(database.db);
      expect(rows).toEqual([{ c: 300, t: 'row 99' }]);
    });
  });
});
