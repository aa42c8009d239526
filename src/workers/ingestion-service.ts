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
import { Readable } from 'node:stream';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Logger } from 'pino';
import type { DB, ReportIngestionsTable } from '../db/schema.ts';
import { withService, type Tx } from '../db/tenant.ts';
import type { BatchedFindingsIngest, IngestSummary, NormalizedFinding } from '../findings/index.ts';
import type { Clock } from '../lib/clock.ts';
import { isAppError } from '../lib/errors.ts';
import type { StorageService } from '../storage/index.ts';
import { DETECT_BYTES, detectFormat, ImportError, parseReport, type ReportFormat, type ReportMeta } from './importers/index.ts';
import type { EnqueueReport, IngestionQueue } from './ingestion-types.ts';

export type IngestionRow = Selectable<ReportIngestionsTable>;

/** What a finished job keeps in `summary`: the findings summary plus what the parser saw. */
export interface IngestionSummary extends Omit<IngestSummary, 'scanId' | 'replayed'> {
  format: ReportFormat;
  scanner: string;
  tool: string | null;
  skipped: number;
  skipSamples: { where: string; reason: string }[];
  replayed: boolean;
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
}

export const DEFAULT_INGEST_BATCH = 1_000;
const RETRY_BACKOFF_SECONDS = 5;
const ORPHANED_REPORT_SECONDS = 600;

/** The claim was taken over (our lock ran out): stop without writing anything. */
class LostClaim extends Error {}
/** The replica is shutting down: give the job back unfinished. */
class Released extends Error {}

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
        const prior = await tx.selectFrom('report_ingestions').select('id').where('upload_id', '=', input.uploadId).executeTakeFirst();
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

  /** Fenced update of a running job: no row when our claim was taken over. */
  const fenced = (tx: Tx, job: IngestionRow) => tx.updateTable('report_ingestions').where('id', '=', job.id).where('locked_by', '=', me).where('attempts', '=', job.attempts).where('status', '=', 'running');

  async function run(job: IngestionRow): Promise<void> {
    const size = Number(job.size);
    const progress = { bytes: 0, findings: 0, skipped: 0 };
    let written = { bytes: -1, findings: -1 };
    let lost = false;
    let flushing: Promise<void> | null = null;
    const flush = async () => {
      const now = clock.now();
      const snapshot = { ...progress };
      const percent = size > 0 ? Math.min(99, Math.floor((snapshot.bytes / size) * 100)) : 0;
      const moved = snapshot.bytes !== written.bytes || snapshot.findings !== written.findings;
      const updated = await withService(db, async (tx) => {
        const row = await fenced(tx, job)
          .set({ bytes_read: snapshot.bytes, findings_read: snapshot.findings, skipped: snapshot.skipped, locked_until: lockUntil(), updated_at: now })
          .returning('id')
          .executeTakeFirst();
        // An imported scan shows the reading progress; a worker's scan stays where its lease left it.
        if (row && moved && job.source === 'import')
          await tx.updateTable('scans').set({ percent, updated_at: now }).where('id', '=', job.scan_id).where('status', '=', 'ingesting').where('percent', '<', percent).execute();
        return row;
      });
      if (!updated) lost = true;
      written = { bytes: snapshot.bytes, findings: snapshot.findings };
    };
    const timer = setInterval(() => {
      if (flushing) return;
      flushing = flush()
        .catch((err: unknown) => log.warn({ err, ingestionId: job.id }, 'could not record ingestion progress'))
        .finally(() => {
          flushing = null;
        });
    }, progressIntervalMs);
    timer.unref();
    const checkpoint = () => {
      if (lost) throw new LostClaim();
      if (stopping) throw new Released();
    };

    let body: Readable | null = null;
    const inflight: Promise<void>[] = [];
    try {
      const scan = await withService(db, (tx) => tx.selectFrom('scans').select(['id', 'status']).where('id', '=', job.scan_id).executeTakeFirst());
      if (!scan || scan.status === 'cancelled') {
        await finishFailed(job, 'The scan was cancelled before its report was read.', false);
        return;
      }
      const session = await findings.begin(job.scan_id, { validate: false });
      let meta: ReportMeta | null = null;
      let format = job.format;
      if (!session.replayed) {
        const store = await storage.forTenant(job.tenant_id);
        body = (await store.get(job.object_key)).body;
        const it = (body as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
        const head: Buffer[] = [];
        if (!format) {
          let headLen = 0;
          while (headLen < DETECT_BYTES) {
            const r = await it.next();
            if (r.done) break;
            const chunk = typeof r.value === 'string' ? Buffer.from(r.value) : r.value;
            head.push(chunk);
            headLen += chunk.length;
          }
          format = detectFormat(Buffer.concat(head).subarray(0, DETECT_BYTES), job.file_name ?? undefined);
          if (!format)
            throw new ImportError('unknown_format', null, 'The report format could not be recognised from its first bytes; supported: native JSONL, nmap XML, nuclei JSONL, ZAP JSON, Trivy JSON v2, SARIF 2.1.0.');
          await withService(db, (tx) => fenced(tx, job).set({ format }).execute());
        }
        const counted = Readable.from(
          (async function* () {
            for (const c of head) {
              progress.bytes += c.length;
              yield c;
            }
            for (;;) {
              const r = await it.next();
              if (r.done) return;
              const chunk = typeof r.value === 'string' ? Buffer.from(r.value) : r.value;
              progress.bytes += chunk.length;
              yield chunk;
            }
          })(),
        );
        const report = parseReport(format, counted);
        let batch: NormalizedFinding[] = [];
        // One batch is written while the next is parsed: on PostgreSQL the database works while
        // this process parses. At most two batches are held.
        for await (const f of report) {
          batch.push(f);
          progress.findings += 1;
          if (batch.length >= batchSize) {
            checkpoint();
            while (inflight.length >= writers) await inflight.shift();
            const written = session.batch(batch);
            written.catch(() => undefined);
            inflight.push(written);
            batch = [];
            progress.skipped = report.meta.skipped;
          }
        }
        while (inflight.length) await inflight.shift();
        checkpoint();
        if (batch.length) await session.batch(batch);
        meta = report.meta;
        progress.skipped = meta.skipped;
      }
      checkpoint();
      const summary = await session.finish({ closeMissing: !meta?.partial });
      await finishSucceeded(job, summary, meta, format, size, progress);
    } catch (e) {
      // A batch still being written finishes (or fails) before the outcome is recorded.
      await Promise.allSettled(inflight);
      if (e instanceof LostClaim) {
        log.warn({ ingestionId: job.id }, 'ingestion claim was taken over by another replica; stopped');
      } else if (e instanceof Released) {
        await withService(db, (tx) =>
          fenced(tx, job)
            .set({ status: 'queued', attempts: job.attempts - 1, locked_by: null, locked_until: null, updated_at: clock.now() })
            .execute(),
        ).catch((err: unknown) => log.warn({ err, ingestionId: job.id }, 'could not release the ingestion job'));
      } else if (e instanceof ImportError) {
        await finishFailed(job, `The report could not be read: ${e.message}`, false);
      } else if (isAppError(e) && e.code === 'object_not_found') {
        await finishFailed(job, 'The stored report is missing; upload it again.', false);
      } else {
        log.error({ err: e, ingestionId: job.id, attempt: job.attempts }, 'report ingestion failed');
        await finishFailed(job, `Reading the report failed unexpectedly (attempt ${job.attempts} of ${maxAttempts}).`, job.attempts < maxAttempts);
      }
    } finally {
      clearInterval(timer);
      body?.destroy();
      await flushing;
    }
  }

  async function finishSucceeded(job: IngestionRow, summary: IngestSummary, meta: ReportMeta | null, format: ReportFormat | null, size: number, progress: { findings: number; skipped: number }) {
    const now = clock.now();
    const prior = (job.summary ?? null) as IngestionSummary | null;
    const { scanId: _scanId, ...rest } = summary;
    const out: IngestionSummary = {
      ...rest,
      format: meta?.format ?? format ?? prior?.format ?? 'native',
      scanner: meta?.scanner ?? prior?.scanner ?? '',
      tool: meta?.tool ?? prior?.tool ?? null,
      skipped: meta?.skipped ?? prior?.skipped ?? 0,
      skipSamples: meta?.skipSamples ?? prior?.skipSamples ?? [],
    };
    await withService(db, async (tx) => {
      const done = await fenced(tx, job)
        .set({
          status: 'succeeded',
          summary: JSON.stringify(out),
          ...(meta ? { bytes_read: size, findings_read: progress.findings, skipped: progress.skipped } : {}),
          error: null,
          locked_by: null,
          locked_until: null,
          finished_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirst();
      if (!done) return;
      // A chunk's parent follows through the aggregation trigger.
      await tx
        .updateTable('scans')
        .set({ status: 'succeeded', percent: 100, error: null, finished_at: now, updated_at: now, started_at: sql`coalesce(started_at, ${now})` })
        .where('id', '=', job.scan_id)
        .where('status', '=', 'ingesting')
        .execute();
    });
  }

  async function finishFailed(job: IngestionRow, message: string, retry: boolean) {
    const now = clock.now();
    await withService(db, async (tx) => {
      if (retry) {
        await fenced(tx, job)
          .set({ status: 'queued', error: message, locked_by: null, locked_until: new Date(now.getTime() + job.attempts * RETRY_BACKOFF_SECONDS * 1000), updated_at: now })
          .execute();
        return;
      }
      const done = await fenced(tx, job).set({ status: 'failed', error: message, locked_by: null, locked_until: null, finished_at: now, updated_at: now }).returning('id').executeTakeFirst();
      if (!done) return;
      await tx.updateTable('scans').set({ status: 'failed', error: message, finished_at: now, updated_at: now }).where('id', '=', job.scan_id).where('status', '=', 'ingesting').execute();
    }).catch((err: unknown) => log.error({ err, ingestionId: job.id }, 'could not record the ingestion outcome'));
  }

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
