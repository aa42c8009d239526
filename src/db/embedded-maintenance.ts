// Autovacuum for the embedded database. PGlite runs PostgreSQL as a single backend without the
// autovacuum launcher, so nothing would ever analyze or vacuum its tables: the planner would plan
// every query without statistics (it once scanned all of a tenant's findings per import batch),
// rows deleted by retention (mesh records, nonces, leases) would never be reclaimed, and nothing
// would freeze old transaction ids. This does autovacuum's job with autovacuum's default rules,
// one table per statement, from pg_stat_user_tables. On PostgreSQL the server's own autovacuum
// does it; this is not started there (docs/decisions.md, decision 28).
import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.ts';

/** PostgreSQL's autovacuum defaults (postgresql.conf): base thresholds and scale factors. */
export const AUTOVACUUM_RULES = {
  vacuumThreshold: 50,
  vacuumScaleFactor: 0.2,
  insertThreshold: 1000,
  insertScaleFactor: 0.2,
  analyzeThreshold: 50,
  analyzeScaleFactor: 0.1,
  /** Transactions since a table's oldest unfrozen id before it is vacuumed regardless (autovacuum_freeze_max_age). */
  freezeMaxAge: 200_000_000,
} as const;

export interface TableActivity {
  table: string;
  /** Live rows as of the last vacuum or analyze; -1 when never measured. */
  reltuples: number;
  /** The table has data on disk (a never-measured empty table needs nothing). */
  hasPages: boolean;
  deadRows: number;
  modifiedSinceAnalyze: number;
  insertedSinceVacuum: number;
  xidAge: number;
}

export type MaintenanceAction = 'vacuum' | 'analyze';

/** What autovacuum would do to a table now: vacuum (with analyze when due too), analyze, or nothing. */
export function maintenanceFor(
  t: TableActivity,
  rules = AUTOVACUUM_RULES,
): { action: MaintenanceAction; analyze: boolean } | null {
  const rows = Math.max(0, t.reltuples);
  // Never measured but holding data: rows written before the counters started (a database made
  // from the template, counters reset by an unclean stop) would otherwise wait for new changes.
  const unmeasured = t.reltuples < 0 && t.hasPages;
  const analyze = unmeasured || t.modifiedSinceAnalyze > rules.analyzeThreshold + rules.analyzeScaleFactor * rows;
  const vacuum =
    t.deadRows > rules.vacuumThreshold + rules.vacuumScaleFactor * rows ||
    t.insertedSinceVacuum > rules.insertThreshold + rules.insertScaleFactor * rows ||
    t.xidAge > rules.freezeMaxAge;
  if (vacuum) return { action: 'vacuum', analyze };
  if (analyze) return { action: 'analyze', analyze: true };
  return null;
}

export interface MaintenanceRun {
  table: string;
  action: MaintenanceAction;
  analyzed: boolean;
  ms: number;
}

export interface EmbeddedMaintenance {
  /** Checks every table once and vacuums or analyzes those due; returns what it did. */
  runOnce(): Promise<MaintenanceRun[]>;
  /** Runs runOnce every `intervalMs` (never two at once). */
  start(): void;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

export function createEmbeddedMaintenance(deps: {
  db: Kysely<DB>;
  intervalMs: number;
  log: { info(o: object, m: string): void; error(o: object, m: string): void };
  now?: () => number;
}): EmbeddedMaintenance {
  const { db, log } = deps;
  const now = deps.now ?? (() => performance.now());
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> | null = null;

  async function activity(): Promise<TableActivity[]> {
    // A backend publishes its counters at most once a second when idle; this makes it publish at
    // its next idle moment, before the read below.
    await sql`select pg_stat_force_next_flush()`.execute(db);
    // The connection's own role (the cluster's superuser): maintenance needs the tables' owner.
    const { rows } = await sql<TableActivity>`
      select s.relname as "table", c.reltuples::float8 as reltuples, pg_relation_size(s.relid) > 0 as "hasPages", s.n_dead_tup::int8 as "deadRows",
             s.n_mod_since_analyze::int8 as "modifiedSinceAnalyze", s.n_ins_since_vacuum::int8 as "insertedSinceVacuum",
             age(c.relfrozenxid)::int8 as "xidAge"
      from pg_stat_user_tables s join pg_class c on c.oid = s.relid
      where s.schemaname = 'public'
      order by s.relname`.execute(db);
    return rows;
  }

  async function runOnce(): Promise<MaintenanceRun[]> {
    const done: MaintenanceRun[] = [];
    for (const t of await activity()) {
      const due = maintenanceFor(t);
      if (!due) continue;
      const started = now();
      // One statement per table, outside a transaction (VACUUM cannot run in one): requests run
      // between tables; a large table's vacuum holds the single connection while it runs.
      const table = sql.table(t.table);
      await (
        due.action === 'analyze'
          ? sql`analyze ${table}`
          : due.analyze
            ? sql`vacuum (analyze) ${table}`
            : sql`vacuum ${table}`
      ).execute(db);
      done.push({ table: t.table, action: due.action, analyzed: due.analyze, ms: Math.round(now() - started) });
    }
    if (done.length) log.info({ tables: done }, 'embedded database maintenance');
    return done;
  }

  function tick() {
    if (running) return;
    running = runOnce()
      .catch((err: unknown) => log.error({ err }, 'embedded database maintenance failed'))
      .finally(() => (running = null));
  }

  return {
    runOnce,
    start() {
      if (timer || deps.intervalMs <= 0) return;
      timer = setInterval(tick, deps.intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}
