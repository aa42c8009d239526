import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from './client.ts';
import {
  AUTOVACUUM_RULES,
  createEmbeddedMaintenance,
  maintenanceFor,
  type TableActivity,
} from './embedded-maintenance.ts';

const quiet = { info: () => undefined, error: () => undefined };
const table = (t: Partial<TableActivity>): TableActivity => ({
  table: 't',
  reltuples: 10_000,
  hasPages: true,
  deadRows: 0,
  modifiedSinceAnalyze: 0,
  insertedSinceVacuum: 0,
  xidAge: 1_000,
  ...t,
});

describe('autovacuum rules', () => {
  it('vacuums past the dead-row, insert or freeze threshold and analyzes past the change threshold', () => {
    // 10,000 rows: vacuum past 50 + 2,000 dead rows or 1,000 + 2,000 inserts; analyze past 50 + 1,000 changes.
    expect(maintenanceFor(table({}))).toBeNull();
    expect(maintenanceFor(table({ deadRows: 2_050 }))).toBeNull();
    expect(maintenanceFor(table({ deadRows: 2_051 }))).toEqual({ action: 'vacuum', analyze: false });
    expect(maintenanceFor(table({ insertedSinceVacuum: 3_001, modifiedSinceAnalyze: 3_001 }))).toEqual({
      action: 'vacuum',
      analyze: true,
    });
    expect(maintenanceFor(table({ modifiedSinceAnalyze: 1_051 }))).toEqual({ action: 'analyze', analyze: true });
    expect(maintenanceFor(table({ modifiedSinceAnalyze: 1_050 }))).toBeNull();
    expect(maintenanceFor(table({ xidAge: AUTOVACUUM_RULES.freezeMaxAge + 1 }))).toEqual({
      action: 'vacuum',
      analyze: false,
    });
    // Never measured (reltuples -1): the base thresholds alone, and data written before the
    // counters started (a template, a reset) is analyzed once; an empty table needs nothing.
    expect(maintenanceFor(table({ reltuples: -1, hasPages: false, modifiedSinceAnalyze: 51 }))).toEqual({
      action: 'analyze',
      analyze: true,
    });
    expect(maintenanceFor(table({ reltuples: -1, hasPages: true }))).toEqual({ action: 'analyze', analyze: true });
    expect(maintenanceFor(table({ reltuples: -1, hasPages: false }))).toBeNull();
  });
});

describe('embedded database maintenance', () => {
  let dir: string;
  let database: Database;
  const stats = async () => {
    await sql`select pg_stat_force_next_flush()`.execute(database.db);
    return (
      await sql<{ reltuples: number; dead: number; vacuumed: boolean; analyzed: boolean }>`
        select c.reltuples::float8 as reltuples, s.n_dead_tup::int as dead, s.last_vacuum is not null as vacuumed, s.last_analyze is not null as analyzed
        from pg_stat_user_tables s join pg_class c on c.oid = s.relid where s.relname = 'maint_probe'`.execute(
        database.db,
      )
    ).rows[0]!;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rampart-maint-'));
    database = await openDatabase({ dataDir: dir, inMemory: true });
    await sql`create table maint_probe (id int primary key, note text)`.execute(database.db);
  });
  afterAll(async () => {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('vacuums and analyzes what changed, then leaves it alone, and reclaims deleted rows', async () => {
    const maintenance = createEmbeddedMaintenance({ db: database.db, intervalMs: 0, log: quiet });
    await sql`insert into maint_probe select g, 'row ' || g from generate_series(1, 5000) g`.execute(database.db);
    // Without statistics the planner does not know the table's size.
    expect((await stats()).analyzed).toBe(false);

    const first = await maintenance.runOnce();
    expect(first.find((r) => r.table === 'maint_probe')).toMatchObject({ action: 'vacuum', analyzed: true });
    expect(await stats()).toMatchObject({ reltuples: 5000, vacuumed: true, analyzed: true });
    expect((await maintenance.runOnce()).find((r) => r.table === 'maint_probe')).toBeUndefined();

    // Deleting 40 % leaves dead rows past the threshold (50 + 20 % of 5,000): vacuumed away.
    await sql`delete from maint_probe where id <= 2000`.execute(database.db);
    expect((await stats()).dead).toBe(2000);
    expect((await maintenance.runOnce()).find((r) => r.table === 'maint_probe')).toMatchObject({
      action: 'vacuum',
      analyzed: true,
    });
    expect(await stats()).toMatchObject({ reltuples: 3000, dead: 0 });
  });

  it('analyzes data written before its counters started (a template, counters reset)', async () => {
    const maintenance = createEmbeddedMaintenance({ db: database.db, intervalMs: 0, log: quiet });
    await sql`create table maint_seeded (id int primary key)`.execute(database.db);
    await sql`insert into maint_seeded select generate_series(1, 40)`.execute(database.db);
    await sql`select pg_stat_reset()`.execute(database.db);
    // 40 rows: below every threshold, but never measured.
    expect((await maintenance.runOnce()).find((r) => r.table === 'maint_seeded')).toMatchObject({ action: 'analyze' });
    const { rows } = await sql<{
      reltuples: number;
    }>`select reltuples::float8 as reltuples from pg_class where relname = 'maint_seeded'`.execute(database.db);
    expect(rows[0]!.reltuples).toBe(40);
    expect((await maintenance.runOnce()).find((r) => r.table === 'maint_seeded')).toBeUndefined();
  });

  it('runs on its timer, one run at a time, until stopped', async () => {
    const runs: unknown[] = [];
    const maintenance = createEmbeddedMaintenance({
      db: database.db,
      intervalMs: 20,
      log: { info: (o) => runs.push(o), error: quiet.error },
    });
    await sql`update maint_probe set note = 'changed' where id <= 3000`.execute(database.db);
    maintenance.start();
    for (let i = 0; i < 100 && runs.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    await maintenance.stop();
    expect(runs).toEqual([
      { tables: [expect.objectContaining({ table: 'maint_probe', action: 'vacuum', analyzed: true })] },
    ]);
    const after = runs.length;
    await sql`update maint_probe set note = 'again' where id <= 3000`.execute(database.db);
    await new Promise((r) => setTimeout(r, 100));
    expect(runs).toHaveLength(after);
  });
});
