// Report ingestion jobs: the queue behind worker uploads and "Import results", and the runner that
// streams a stored report into findings.
//
// - enqueue() inserts a job in the caller's transaction, so a finalized upload or an import always
//   has its job, whichever replica took the request.
// - Any replica runs jobs: a claim takes the oldest runnable job with FOR UPDATE SKIP LOCKED and
//   holds it with a lock that runs out (locked_until) unless renewed. A crashed replica's job is
//   claimed again once its lock expired; attempts bound the retries. Every write of a running job
//   is fenced by (locked_by, attempts), so a runner that lost its claim changes nothing.
// - A job streams the object (bytes counted), detects the format from the first bytes when the
//   uploader did not say, parses it, and writes findings in batches through the batched findings
//   ingest (each batch its own short transaction), so memory stays flat whatever the report's
//   size and a re-run after a crash converges to the same findings.
// - Progress (bytes read, findings read) is written at most every progressIntervalMs, which also
//   renews the claim.
// - Wake-up: a kick after enqueue on this replica (the claim retries shortly after, since the
//   enqueuing transaction may not have committed yet), and a poll for everything else.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Logger } from 'pino';
import type { DB, ReportIngestionsTable, ScanOutcome } from '../db/schema.ts';
import { withService, type Tx } from '../db/tenant.ts';
import type { BatchedFindingsIngest, IngestSummary } from '../findings/index.ts';
import type { Clock } from '../lib/clock.ts';
import type { StorageService } from '../storage/index.ts';
import type { CoverageJson, ReportFormat, ReportMetaJson, SkipReason } from './importers/index.ts';
import { fencedBy, runJob, systemResolve, type JobContext } from './ingestion-job.ts';
import type { EnqueueReport, IngestionQueue } from './ingestion-types.ts';

export type IngestionRow = Selectable<ReportIngestionsTable>;

/**
 * What a finished job keeps in `summary`: the findings summary of its scan, what the parser read,
 * skipped (by reason), cleaned and saw as covered, and the assets a multi-host report was split to.
 * Fields after `skipSamples` are absent in summaries written before they existed.
 */
export interface IngestionSummary extends Omit<IngestSummary, 'scanId' | 'replayed'> {
  format: ReportFormat;
  scanner: string;
  tool: string | null;
  skipped: number;
  skipSamples: { where: string; reason: string }[];
  replayed: boolean;
  /** What the result was worth (the scan's outcome) and why, when not complete. */
  outcome?: ScanOutcome;
  outcomeReason?: string;
  records?: number;
  passed?: number;
  skipReasons?: SkipReason[];
  cleaned?: ReportMetaJson['cleaned'] | null;
  coverage?: CoverageJson | null;
  partial?: string | null;
  /** Nothing was closed as fixed: a partial report, or one that said nothing of the chosen asset. */
  closedNothing?: boolean;
  splits?: {
    assetId: string | null;
    assetName: string | null;
    scanId: string;
    findings: number;
    distinct: number;
    created: number;
    fixed: number;
  }[];
  unmatchedHosts?: string[];
}

export interface IngestionServiceDeps {
  db: Kysely<DB>;
  storage: StorageService;
  findings: BatchedFindingsIngest;
  clock: Clock;
  log: Pick<Logger, 'warn' | 'error' | 'info'>;
  /** Names this replica in locked_by (diagnostics); unique per process by default. */
  instanceId?: string;
  /** How long a claim holds without renewal; renewed with every progress write. */
  lockSeconds?: number;
  /**
   * Identity of this replica's built-in storage when it is a local directory (host and path);
   * null when built-in storage is shared object storage. A report kept on one replica's disk is
   * ingested only by a replica that sees that disk, instead of failing as "missing" elsewhere.
   */
  builtinNode?: string | null;
  /** How often an idle replica looks for jobs queued elsewhere. */
  pollMs?: number;
  /** Findings per batch transaction. */
  batchSize?: number;
  /**
   * Batches written at once (default 1). PostgreSQL: 2, so the database writes one batch while
   * it reads the next and this process parses a third. PGlite has one connection: 1.
   */
  writers?: number;
  progressIntervalMs?: number;
  maxAttempts?: number;
  /** Heap of the thread a report is parsed on (parse-on-thread.ts PARSE_THREAD_HEAP_MB by default). */
  parseHeapMb?: number;
  /** Resolves the chosen asset's name to recognise its addresses in a report (system resolver by default). */
  resolveHost?: (name: string) => Promise<string[]>;
}

export const DEFAULT_INGEST_BATCH = 1_000;
const ORPHANED_REPORT_SECONDS = 600;

export function createIngestionService(deps: IngestionServiceDeps) {
  const { db, storage, findings, clock, log } = deps;
  const me = deps.instanceId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const lockSeconds = deps.lockSeconds ?? 60;
  const builtinNode = deps.builtinNode ?? null;
  const pollMs = deps.pollMs ?? 3_000;
  const writers = Math.max(1, deps.writers ?? 1);
  // Findings held in memory are about (writers + 1) batches. 1,000 per batch: on PostgreSQL 2
  // writers × 1,000 are as fast as × 2,000 and stay under the memory target; on PGlite one writer
  // of 1,000 is as fast as of 2,000 and peaks about 50 MB lower (the database's own memory grows
  // with the largest statement it was sent). Measured in BENCHMARKS.md (ingestion).
  const batchSize = deps.batchSize ?? DEFAULT_INGEST_BATCH;
  const progressIntervalMs = deps.progressIntervalMs ?? 500;
  const maxAttempts = deps.maxAttempts ?? 3;

  let started = false;
  let stopping = false;
  let poller: NodeJS.Timeout | null = null;
  let draining: Promise<void> | null = null;
  let again = false;
  const timers = new Set<NodeJS.Timeout>();

  const lockUntil = () => new Date(clock.now().getTime() + lockSeconds * 1000);

  const queue: IngestionQueue = {
    async enqueue(tx: Tx, input: EnqueueReport): Promise<{ ingestionId: string }> {
      if (input.uploadId) {
        // One job per upload: a repeated finalize gets the same job.
        const prior = await tx
          .selectFrom('report_ingestions')
          .select('id')
          .where('tenant_id', '=', input.tenantId)
          .where('upload_id', '=', input.uploadId)
          .executeTakeFirst();
        if (prior) return { ingestionId: prior.id };
      }
      const id = randomUUID();
      const now = clock.now();
      await tx
        .insertInto('report_ingestions')
        .values({
          id,
          tenant_id: input.tenantId,
          scan_id: input.scanId,
          upload_id: input.uploadId,
          source: input.source,
          storage: input.storage,
          storage_node: input.storage === 'builtin' ? builtinNode : null,
          object_key: input.objectKey,
          size: input.size,
          sha256: input.sha256.toLowerCase(),
          format: input.format,
          file_name: input.fileName,
          status: 'queued',
          created_by: input.createdBy?.userId ?? null,
          created_by_email: input.createdBy?.email ?? null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      kick();
      return { ingestionId: id };
    },
  };

  /** Fails jobs whose claim ran out on their last attempt (their replica died every time). */
  async function failExhausted(): Promise<number> {
    const now = clock.now();
    const message = `Reading the report stopped unexpectedly on all ${maxAttempts} attempts.`;
    const { rows } = await withService(db, (tx) =>
      sql<{ id: string }>`
        with dead as (
          update report_ingestions set status = 'failed', error = ${message}, finished_at = ${now}, locked_by = null, locked_until = null, updated_at = ${now}
          where id in (select id from report_ingestions where status = 'running' and locked_until < ${now} and attempts >= ${maxAttempts}
                       order by created_at limit 20 for update skip locked)
          returning id, scan_id
        ), failed_scans as (
          update scans s set status = 'failed', error = ${message}, finished_at = ${now}, updated_at = ${now}
          from dead where s.id = dead.scan_id and s.status = 'ingesting'
          returning s.id
        )
        select id from dead`.execute(tx),
    );
    return rows.length;
  }

  /**
   * Claims the oldest runnable job. Jobs of one asset and scanner kind run one at a time (on any
   * replica): each closes what its scan no longer shows, judged by which findings its batches
   * touched, so the batches of two such ingests must not interleave. Claims take turns under one
   * advisory lock, so the "none running" check and the claim cannot race across replicas.
   */
  async function claim(): Promise<IngestionRow | null> {
    const now = clock.now();
    // A replica-local report nobody has claimed for this long (its replica is gone or moved) is
    // claimed anywhere, where it fails as missing instead of waiting forever.
    const orphanedBefore = new Date(now.getTime() - ORPHANED_REPORT_SECONDS * 1000);
    const { rows } = await withService(db, async (tx) => {
      await sql`select pg_advisory_xact_lock(hashtextextended('rampart.ingestion-claim', 0))`.execute(tx);
      return sql<IngestionRow>`
        update report_ingestions j set status = 'running', attempts = j.attempts + 1, locked_by = ${me}, locked_until = ${lockUntil()},
          started_at = coalesce(j.started_at, ${now}), updated_at = ${now}
        where j.id = (
          select r.id from report_ingestions r join scans s on s.id = r.scan_id
          where ((r.status = 'queued' and (r.locked_until is null or r.locked_until <= ${now}))
              or (r.status = 'running' and r.locked_until < ${now} and r.attempts < ${maxAttempts}))
            and (r.storage_node is null or r.storage_node = ${builtinNode ?? ''} or r.created_at < ${orphanedBefore})
            and not exists (
              select 1 from report_ingestions o join scans os on os.id = o.scan_id
               where o.status = 'running' and o.locked_until >= ${now} and o.id <> r.id
                 and os.asset_id = s.asset_id and os.kind = s.kind)
          order by r.created_at, r.id limit 1 for update of r skip locked)
        returning j.*`.execute(tx);
    });
    return rows[0] ?? null;
  }

  const fenced = fencedBy(me);

  const ctx: JobContext = {
    db,
    storage,
    findings,
    clock,
    log,
    batchSize,
    writers,
    progressIntervalMs,
    maxAttempts,
    parseHeapMb: deps.parseHeapMb,
    resolveHost: deps.resolveHost ?? systemResolve,
    fenced,
    lockUntil,
    stopping: () => stopping,
  };
  const run = (job: IngestionRow) => runJob(ctx, job);

  /** Claims and runs one job; its id, or null when none was runnable. */
  async function runOnce(): Promise<string | null> {
    await failExhausted();
    const job = await claim();
    if (!job) return null;
    await run(job);
    return job.id;
  }

  /** Runs jobs until none is runnable (or the service stops). One drain at a time per replica. */
  function drain(): Promise<void> {
    if (draining) {
      again = true;
      return draining;
    }
    draining = (async () => {
      try {
        do {
          again = false;
          while (!stopping && (await runOnce())) {
            /* next job */
          }
        } while (again && !stopping);
      } catch (err) {
        log.error({ err }, 'ingestion runner failed');
      } finally {
        draining = null;
      }
    })();
    return draining;
  }

  function later(ms: number) {
    const t = setTimeout(() => {
      timers.delete(t);
      void drain();
    }, ms);
    t.unref();
    timers.add(t);
  }

  /** Runs new work soon on this replica; retried shortly after, as the enqueuing transaction may still be open. */
  function kick() {
    if (!started || stopping) return;
    later(0);
    later(250);
    later(1_500);
  }

  return {
    ...queue,
    kick,
    runOnce,
    drain,
    /** Starts polling (and kicking) on this replica. */
    start() {
      if (started) return;
      started = true;
      stopping = false;
      poller = setInterval(() => void drain(), pollMs);
      poller.unref();
      later(0);
    },
    /** Stops polling; a running job is given back unfinished at its next batch boundary. */
    async stop() {
      if (!started) return;
      stopping = true;
      started = false;
      if (poller) clearInterval(poller);
      poller = null;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await draining;
    },
  };
}

export type IngestionService = ReturnType<typeof createIngestionService>;
