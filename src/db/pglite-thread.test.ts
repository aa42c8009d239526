// The embedded database runs on its own thread: a slow statement does not stop the event loop,
// PostgreSQL's error fields reach the caller, transactions commit or roll back as a whole, and a
// closed instance refuses further calls.
import { describe, expect, it } from 'vitest';
import { ThreadedPGlite } from './pglite-thread.ts';

describe('embedded database thread', () => {
  it('keeps the event loop running during a slow statement', async () => {
    const db = await ThreadedPGlite.create(undefined, null);
    try {
      let ticks = 0;
      const timer = setInterval(() => (ticks += 1), 10);
      await db.query('select pg_sleep(0.5)');
      clearInterval(timer);
      // On the calling thread the sleep would block every timer until it returned (0 ticks).
      expect(ticks).toBeGreaterThanOrEqual(3);
    } finally {
      await db.close();
    }
  });

  it('passes parameters and rows through, with int8 as numbers and PostgreSQL error fields', async () => {
    const db = await ThreadedPGlite.create(undefined, null);
    try {
      await db.query('create table t (id int8 primary key, at timestamptz, data bytea, doc jsonb)');
      const at = new Date('2026-01-02T03:04:05.678Z');
      await db.query('insert into t values ($1, $2, $3, $4)', [7, at, Buffer.from([1, 2, 255]), JSON.stringify({ a: [1, 'é'] })]);
      const { rows } = await db.query('select * from t');
      expect(rows).toEqual([{ id: 7, at, data: new Uint8Array([1, 2, 255]), doc: { a: [1, 'é'] } }]);
      const err = (await db.query('insert into t (id) values (7)').catch((e: unknown) => e)) as Error & { code?: string; constraint?: string };
      expect(err).toBeInstanceOf(Error);
      expect(err.code).toBe('23505');
      expect(err.constraint).toBe('t_pkey');
    } finally {
      await db.close();
    }
  });

  it('commits or rolls back a transaction as a whole', async () => {
    const db = await ThreadedPGlite.create(undefined, null);
    try {
      await db.query('create table t (n int)');
      await db.transaction(async (tx) => {
        await tx.query('insert into t values (1)');
      });
      await expect(
        db.transaction(async (tx) => {
          await tx.query('insert into t values (2)');
          throw new Error('abandon');
        }),
      ).rejects.toThrow('abandon');
      await db.execInTransaction(['insert into t values (3); insert into t values (4)']);
      await expect(db.execInTransaction(['insert into t values (5)', 'select broken from nowhere'])).rejects.toMatchObject({ code: '42P01' });
      expect((await db.query('select n from t order by n')).rows).toEqual([{ n: 1 }, { n: 3 }, { n: 4 }]);
    } finally {
      await db.close();
    }
    expect(db.closed).toBe(true);
    await expect(db.query('select 1')).rejects.toThrow(/closed/);
  });
});
