// Shared by bench:ingest and bench:import-memory: the child process that measures one database
// (server modules are loaded only there, so the parent's memory is not counted), a tenant with an
// asset and a scan waiting for its report, the ingestion runner as the server configures it,
// and an RSS sampler.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { createBenchDatabase, serverNodeFlags } from './lib.ts';

export type BenchDb = 'pglite' | 'postgres';
export const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Runs `file --child <kind>` with the server's Node flags (plus `extraFlags`) and returns the JSON
 * of its last output line. PostgreSQL runs on `databaseUrl`, else on a fresh database dropped after.
 */
export async function runBenchChild(
  file: string,
  kind: BenchDb,
  opts: { databaseUrl?: string; extraFlags?: string[]; pgName: string },
): Promise<unknown> {
  const scratch =
    kind === 'postgres' && !opts.databaseUrl ? await createBenchDatabase(PG_ADMIN_URL, opts.pgName) : null;
  try {
    const url = opts.databaseUrl ?? scratch?.url;
    const proc = spawn(
      process.execPath,
      ['--expose-gc', ...serverNodeFlags(), ...(opts.extraFlags ?? []), file, '--child', kind],
      {
        env: { ...process.env, ...(url ? { BENCH_CHILD_DATABASE_URL: url } : {}) },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => proc.on('exit', (c) => resolve(c)));
    if (code !== 0) throw new Error(`the ${kind} run exited with ${code} (out of memory?)`);
    return JSON.parse(out.trim().split('\n').at(-1)!) as unknown;
  } finally {
    await scratch?.drop();
  }
}

/** In the child: `--child <kind>` from the command line, or null in the parent. */
export function childKind(): BenchDb | null {
  const at = process.argv.indexOf('--child');
  return at === -1 ? null : (process.argv[at + 1] as BenchDb);
}

export interface IngestBench {
  db: import('kysely').Kysely<import('../src/db/schema.ts').DB>;
  store: import('../src/storage/index.ts').ObjectStore;
  tenantId: string;
  scanId: string;
  /** Stores `body` under `key` in built-in storage and queues its ingestion as the source would. */
  enqueue(
    key: string,
    body: Readable,
    fileName: string,
    maxBytes: number,
  ): Promise<{ ingestionId: string; size: number }>;
  /** Runs the queued ingestion to its end. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A migrated database (PGlite in a fresh DATA_DIR on disk, or BENCH_CHILD_DATABASE_URL), one
 * tenant with a verified web app asset and a scan in `ingesting`, and the ingestion runner with
 * the server's writer count (2 on PostgreSQL, 1 on PGlite, unless `writers` says otherwise).
 */
export async function openIngestBench(
  kind: BenchDb,
  o: { source: 'worker' | 'import'; writers?: number; batchSize?: number },
): Promise<IngestBench> {
  const { openDatabase } = await import('../src/db/client.ts');
  const { migrate } = await import('../src/db/migrate.ts');
  const { withService } = await import('../src/db/tenant.ts');
  const { bulkWritesOf, createBatchedFindingsIngest } = await import('../src/findings/index.ts');
  const { createBuiltinStore } = await import('../src/storage/index.ts');
  const { createIngestionService } = await import('../src/workers/ingestion-service.ts');

  const dataDir = mkdtempSync(join(tmpdir(), `rampart-bench-${o.source}-`));
  const databaseUrl = process.env.BENCH_CHILD_DATABASE_URL;
  const database =
    kind === 'postgres'
      ? await openDatabase({ databaseUrl: databaseUrl!, dataDir, poolMax: 5 })
      : await openDatabase({ dataDir });
  const close = async () => {
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await migrate(database);
    const db = database.db;
    const store = createBuiltinStore(join(dataDir, 'storage'), 'bench');
    const storage = { forTenant: async () => store, builtin: () => store, builtinFor: () => store };
    const reporter = { report: async () => ({ sent: false as const, reason: 'no_management_peer' as const }) };
    const clock = { now: () => new Date() };
    const tenantId = randomUUID();
    const assetId = randomUUID();
    const scanId = randomUUID();
    // Set-up as the owner (the service role may not create tenants).
    await db.transaction().execute(async (tx) => {
      await tx
        .insertInto('organization')
        .values({
          id: tenantId,
          name: `Bench ${o.source}`,
          slug: `bench-${o.source}-${tenantId}`,
          createdAt: new Date(),
        })
        .execute();
      await tx
        .insertInto('assets')
        .values({
          id: assetId,
          tenant_id: tenantId,
          kind: 'webapp',
          target: 'https://app.bench.example.test/',
          name: 'bench',
          verification_status: 'verified',
          verification_token: 'bench',
        })
        .execute();
      await tx
        .insertInto('scans')
        .values({
          id: scanId,
          tenant_id: tenantId,
          asset_id: assetId,
          kind: 'template',
          status: 'ingesting',
          ...(o.source === 'import' ? { source: 'import', percent: 0 } : { percent: 99, attempts: 1 }),
        })
        .execute();
    });
    const ingestion = createIngestionService({
      db,
      storage,
      findings: createBatchedFindingsIngest({
        db,
        reporter,
        clock,
        ...bulkWritesOf(database),
      }),
      clock,
      log: { warn: () => undefined, error: (e: unknown, m?: string) => console.error(m, e), info: () => undefined },
      writers: o.writers ?? (kind === 'postgres' ? 2 : 1),
      ...(o.batchSize ? { batchSize: o.batchSize } : {}),
      // An import's host names are resolved for its coverage; none of the bench's exist.
      ...(o.source === 'import' ? { resolveHost: async () => [] } : {}),
    });
    return {
      db,
      store,
      tenantId,
      scanId,
      async enqueue(key, body, fileName, maxBytes) {
        const put = await store.put(key, body, { maxBytes });
        const { ingestionId } = await withService(db, (tx) =>
          ingestion.enqueue(tx, {
            tenantId,
            scanId,
            uploadId: null,
            source: o.source,
            storage: 'builtin',
            objectKey: key,
            size: put.size,
            sha256: put.sha256,
            format: null,
            fileName,
          }),
        );
        return { ingestionId, size: put.size };
      },
      drain: () => ingestion.drain(),
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

/**
 * Waits until the process is at rest: a GC, then RSS read every 100 ms until it has not fallen
 * for a second (at most 5 s). Setting up a fresh embedded database leaves a few hundred MB that
 * are returned to the system only within about a second of it (seen: 730 MB falling to 285 MB
 * with a JavaScript heap of 37 MB throughout); a baseline taken before would count them.
 */
export async function settleMemory(): Promise<number> {
  global.gc?.();
  let low = process.memoryUsage().rss;
  let still = 0;
  for (let waited = 0; waited < 5_000 && still < 1_000; waited += 100) {
    await new Promise((r) => setTimeout(r, 100));
    const rss = process.memoryUsage().rss;
    if (rss < low * 0.99) {
      low = rss;
      still = 0;
    } else still += 100;
  }
  return low;
}

/** Samples RSS and heap every `everyMs` until stop(); the baseline is taken after a GC. */
export function sampleMemory(everyMs: number): { baseline: number; stop(): { peakRss: number; peakHeap: number } } {
  global.gc?.();
  const baseline = process.memoryUsage().rss;
  let peakRss = baseline;
  let peakHeap = process.memoryUsage().heapUsed;
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  }, everyMs);
  return {
    baseline,
    stop() {
      clearInterval(timer);
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      return { peakRss, peakHeap };
    },
  };
}

export const mb = (b: number): number => Math.round((b / 1024 / 1024) * 10) / 10;

/** User + system CPU seconds of one thread or process from its /proc stat line (Linux only). */
function cpuOfStat(path: string): number | null {
  try {
    const stat = readFileSync(path, 'utf8');
    // Fields after the parenthesised name: state is field 3, utime 14, stime 15 (clock ticks).
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}
const CLOCK_TICKS = 100;
const MAIN_TID = String(process.pid);

/** Which part of the process a thread is, by the name the kernel shows for it. */
function threadGroup(comm: string): string {
  if (comm === 'MainThread') return 'main';
  if (comm === 'pglite') return 'pglite';
  if (comm === 'report-parse') return 'parse';
  if (comm === 'V8Worker' || comm.startsWith('DelayedTask')) return 'v8';
  return 'other';
}

/**
 * CPU seconds spent during a window, per part of this process (main thread, embedded database
 * thread, parse thread, V8's helper threads for garbage collection and compilation, the rest)
 * and in `extraPids` (the PostgreSQL backends serving the run). On a machine shared with other
 * work, wall time says how busy the machine was; CPU seconds say what the ingest itself cost.
 * Threads are sampled every `everyMs`, so one that ends within the window is counted up to its
 * last sample. Empty on systems without /proc.
 */
export function sampleCpu(everyMs: number): {
  stop(extraPids?: { start: Map<number, number>; pids: number[] }): Record<string, number>;
} {
  const first = new Map<string, { group: string; cpu: number }>();
  const last = new Map<string, number>();
  const read = (initial: boolean) => {
    let tids: string[];
    try {
      tids = readdirSync('/proc/self/task');
    } catch {
      return;
    }
    for (const tid of tids) {
      const cpu = cpuOfStat(`/proc/self/task/${tid}/stat`);
      if (cpu === null) continue;
      const known = first.get(tid);
      // A new thread shows its parent's name until it names itself shortly after it starts, so
      // the name is read again until it differs from the main thread's (the sampling itself
      // runs on the main thread: reading every name every time cost it half a CPU second).
      if (!known || (known.group === 'main' && tid !== MAIN_TID)) {
        let comm: string;
        try {
          comm = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
        } catch {
          continue;
        }
        if (known) known.group = threadGroup(comm);
        else first.set(tid, { group: threadGroup(comm), cpu: initial ? cpu : 0 });
      }
      last.set(tid, cpu);
    }
  };
  read(true);
  const timer = setInterval(() => read(false), everyMs);
  return {
    stop(extra) {
      clearInterval(timer);
      read(false);
      const out: Record<string, number> = {};
      for (const [tid, { group, cpu }] of first) out[group] = (out[group] ?? 0) + (last.get(tid)! - cpu);
      if (extra)
        for (const pid of extra.pids) {
          const cpu = cpuOfStat(`/proc/${pid}/stat`);
          if (cpu !== null) out.postgres = (out.postgres ?? 0) + cpu - (extra.start.get(pid) ?? 0);
        }
      const total = Object.values(out).reduce((a, b) => a + b, 0);
      for (const k of Object.keys(out)) out[k] = Math.round(out[k]! * 100) / 100;
      return { ...out, total: Math.round(total * 100) / 100 };
    },
  };
}

/** CPU seconds so far of each PostgreSQL backend connected to the current database (same machine). */
export async function postgresBackendCpu(
  db: import('kysely').Kysely<import('../src/db/schema.ts').DB>,
): Promise<{ start: Map<number, number>; pids: number[] }> {
  const { sql } = await import('kysely');
  const { rows } = await sql<{
    pid: number;
  }>`select pid from pg_stat_activity where datname = current_database() and backend_type = 'client backend'`.execute(
    db,
  );
  const start = new Map<number, number>();
  for (const { pid } of rows) {
    const cpu = cpuOfStat(`/proc/${pid}/stat`);
    if (cpu !== null) start.set(pid, cpu);
  }
  return { start, pids: rows.map((r) => r.pid) };
}
