// The embedded database runs on its own thread: a slow statement does not stop the event loop,
// PostgreSQL's error fields reach the caller, transactions commit or roll back as a whole, and a
// closed instance refuses further calls.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, PGliteDialect, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { ThreadedPGlite } from './pglite-thread.ts';

describe('embedded database thread', () => {
  it('creates a new cluster in a child process, then serves it with the configured page cache', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rampart-thread-'));
    try {
      const db = await ThreadedPGlite.create({
        dir: join(dir, 'pg'),
        template: null,
        sharedBuffers: '8MB',
        initFirst: true,
      });
      try {
        expect(existsSync(join(dir, 'pg', 'PG_VERSION'))).toBe(true);
        const { rows } = await db.query("select current_setting('shared_buffers') as sb");
        expect(rows).toEqual([{ sb: '8MB' }]);
        await db.query('create table kept (id int)');
      } finally {
        await db.close();
      }
      // Opened again (no initdb): the table is there.
      const again = await ThreadedPGlite.create({
        dir: join(dir, 'pg'),
        template: null,
        sharedBuffers: '16MB',
        initFirst: false,
      });
      try {
        expect((await again.query("select to_regclass('kept') is not null as ok")).rows).toEqual([{ ok: true }]);
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports a cluster that cannot be created, with the reason', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rampart-thread-'));
    try {
      // A file where the cluster directory should be.
      writeFileSync(join(dir, 'pg'), 'not a directory');
      await expect(
        ThreadedPGlite.create({ dir: join(dir, 'pg'), template: null, sharedBuffers: '16MB', initFirst: true }),
      ).rejects.toThrow(/creating the embedded database in .*pg failed \(exit 1\): \S/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps the event loop running during a slow statement', async () => {
    const db = await ThreadedPGlite.create({ dir: undefined, template: null, sharedBuffers: '16MB', initFirst: false });
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
    const db = await ThreadedPGlite.create({ dir: undefined, template: null, sharedBuffers: '16MB', initFirst: false });
    try {
      await db.query('create table t (id int8 primary key, at timestamptz, data bytea, doc jsonb)');
      const at = new Date('2026-01-02T03:04:05.678Z');
      await db.query('insert into t values ($1, $2, $3, $4)', [
        7,
        at,
        Buffer.from([1, 2, 255]),
        JSON.stringify({ a: [1, 'é'] }),
      ]);
      const { rows } = await db.query('select * from t');
      expect(rows).toEqual([{ id: 7, at, data: new Uint8Array([1, 2, 255]), doc: { a: [1, 'é'] } }]);
      const err = (await db.query('insert into t (id) values (7)').catch((e: unknown) => e)) as Error & {
        code?: string;
        constraint?: string;
      };
      expect(err).toBeInstanceOf(Error);
      expect(err.code).toBe('23505');
      expect(err.constraint).toBe('t_pkey');
    } finally {
      await db.close();
    }
  });

  it('commits or rolls back a transaction as a whole', async () => {
    const db = await ThreadedPGlite.create({ dir: undefined, template: null, sharedBuffers: '16MB', initFirst: false });
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
      await expect(
        db.execInTransaction(['insert into t values (5)', 'select broken from nowhere']),
      ).rejects.toMatchObject({ code: '42P01' });
      expect((await db.query('select n from t order by n')).rows).toEqual([{ n: 1 }, { n: 3 }, { n: 4 }]);
    } finally {
      await db.close();
    }
    expect(db.closed).toBe(true);
    await expect(db.query('select 1')).rejects.toThrow(/closed/);
    // A transaction asked for after close (a shutdown during start-up) fails like a query: its
    // callback still runs, every query refused, so Kysely's driver neither waits forever nor
    // leaves a rejection unhandled.
    let ran = false;
    await expect(
      db.transaction(async (tx) => {
        ran = true;
        await tx.query('select 1');
      }),
    ).rejects.toThrow(/closed/);
    expect(ran).toBe(true);
    const kysely = new Kysely<Record<string, never>>({ dialect: new PGliteDialect({ pglite: db as never }) });
    await expect(kysely.transaction().execute((trx) => sql`select 1`.execute(trx))).rejects.toThrow(/closed/);
  });
});
