// One ingestion job, start to end: stream the stored report (bytes counted for progress), detect
// its format when the uploader did not name it, parse it on a thread with a capped heap
// (parse-on-thread.ts), route its findings to the assets they are about (ingestion-sink.ts), and
// record the outcome with what was read, merged, skipped, cleaned and covered (the import's result
// page shows it). Every write of a running job is fenced by its claim.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB, ScanOutcome } from '../db/schema.ts';
import { withService, type Tx } from '../db/tenant.ts';
import type { BatchedFindingsIngest } from '../findings/index.ts';
import type { Clock } from '../lib/clock.ts';
import { isAppError } from '../lib/errors.ts';
import { KINDS_FOR_ASSET } from '../scans/index.ts';
import type { StorageService } from '../storage/index.ts';
import { safeMessage } from './importers/clean.ts';
import { DETECT_BYTES, detectFormat, ImportError, type ReportFormat, type ReportMetaJson } from './importers/index.ts';
import { parseOnThread, ResourceExhausted } from './importers/parse-on-thread.ts';
import { FORMAT_LABELS } from './ingestion-schemas.ts';
import { assetHost, HostRouter, type RoutingAsset } from './ingestion-routing.ts';
import { closingCoverageOfImport } from './closing-coverage.ts';
import { IngestionSink, type SinkOutcome } from './ingestion-sink.ts';
import type { IngestionRow, IngestionSummary } from './ingestion-service.ts';

/** The claim was taken over (our lock ran out): stop without writing anything. */
export class LostClaim extends Error {}
/** The replica is shutting down: give the job back unfinished. */
export class Released extends Error {}

export interface JobContext {
  db: Kysely<DB>;
  storage: StorageService;
  findings: BatchedFindingsIngest;
  clock: Clock;
  log: Pick<Logger, 'warn' | 'error' | 'info'>;
  batchSize: number;
  writers: number;
  progressIntervalMs: number;
  maxAttempts: number;
  parseHeapMb: number | undefined;
  /** A name's addresses (the chosen asset's own, to recognise it in a report). */
  resolveHost: (name: string) => Promise<string[]>;
  fenced: ReturnType<typeof fencedBy>;
  lockUntil: () => Date;
  stopping: () => boolean;
}

/** Fenced update of a running job of this replica: no row when our claim was taken over. */
export const fencedBy = (me: string) => (tx: Tx, job: IngestionRow) =>
  tx
    .updateTable('report_ingestions')
    .where('id', '=', job.id)
    .where('locked_by', '=', me)
    .where('attempts', '=', job.attempts)
    .where('status', '=', 'running');

/** The system resolver, bounded to 3 s (a report is not held up by a slow name server). */
export async function systemResolve(name: string): Promise<string[]> {
  if (isIP(name)) return [name];
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 3_000).unref());
  try {
    const rows = await Promise.race([lookup(name, { all: true }), timeout]);
    return rows.map((r) => r.address);
  } catch {
    return [];
  }
}

const SUPPORTED = `supported: ${Object.values(FORMAT_LABELS).join(', ')}`;

/** What a read report was worth: inconclusive beats partial (nothing looked at vs. not everything). */
function outcomeOf(meta: ReportMetaJson): { outcome: ScanOutcome; reason: string | null } {
  if (meta.inconclusive) return { outcome: 'inconclusive', reason: meta.inconclusive };
  if (meta.partial) return { outcome: 'partial', reason: meta.partial };
  return { outcome: 'complete', reason: null };
}

/** Skips that are the tool's own decision about a result (it is not a problem), not unreadable records. */
const DECIDED = /^(suppressed|baselineState absent|marked as a false positive|ignored by)/i;

/**
 * A report whose every record was skipped as unreadable (no rule, no location, too large ...)
 * said nothing: it is inconclusive and closes nothing, whatever its coverage claims. Records the
 * tool itself suppressed or marked false positive were read, and keep the report conclusive.
 */
export function withAllSkippedInconclusive(meta: ReportMetaJson): ReportMetaJson {
  if (meta.inconclusive || meta.skipped === 0 || meta.findings > 0 || meta.passed > 0) return meta;
  if (meta.skipReasons.some((r) => DECIDED.test(r.reason))) return meta;
  const top = [...meta.skipReasons].sort((a, b) => b.count - a.count)[0];
  const why = top ? ` (${top.reason}${meta.skipReasons.length > 1 ? ', and other reasons' : ''})` : '';
  const n = meta.skipped;
  return {
    ...meta,
    inconclusive: `all ${n} result${n === 1 ? ' was' : 's were'} skipped${why}: nothing readable was reported`,
  };
}

export async function runJob(ctx: JobContext, job: IngestionRow): Promise<void> {
  const { db, storage, findings, clock, log } = ctx;
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
      const row = await ctx
        .fenced(tx, job)
        .set({
          bytes_read: snapshot.bytes,
          findings_read: snapshot.findings,
          skipped: snapshot.skipped,
          locked_until: ctx.lockUntil(),
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirst();
      // An imported scan shows the reading progress; a worker's scan stays where its lease left it.
      if (row && moved && job.source === 'import')
        await tx
          .updateTable('scans')
          .set({ percent, updated_at: now })
          .where('id', '=', job.scan_id)
          .where('status', '=', 'ingesting')
          .where('percent', '<', percent)
          .execute();
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
  }, ctx.progressIntervalMs);
  timer.unref();
  const checkpoint = () => {
    if (lost) throw new LostClaim();
    if (ctx.stopping()) throw new Released();
  };

  let body: Readable | null = null;
  let sink: IngestionSink | null = null;
  try {
    const scan = await withService(db, (tx) =>
      tx
        .selectFrom('scans as s')
        .innerJoin('assets as a', 'a.id', 's.asset_id')
        .select([
          's.id',
          's.status',
          's.kind',
          's.requested_by',
          'a.id as asset_id',
          'a.name',
          'a.kind as asset_kind',
          'a.target',
        ])
        .where('s.id', '=', job.scan_id)
        .executeTakeFirst(),
    );
    if (!scan || scan.status === 'cancelled') {
      await finishFailed(ctx, job, 'The scan was cancelled before its report was read.', false);
      return;
    }
    const session = await findings.begin(job.scan_id, { validate: false });
    let meta: ReportMetaJson | null = null;
    let outcome: SinkOutcome | null = null;
    let format = job.format;
    if (session.replayed) {
      outcome = {
        primary: await session.finish(),
        splits: [],
        unmatchedHosts: [],
        unmatchedFindings: 0,
        primaryCovered: true,
      };
    } else {
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
          throw new ImportError(
            'unknown_format',
            null,
            `The report format could not be recognised from its first bytes; ${SUPPORTED}.`,
          );
        await withService(db, (tx) => ctx.fenced(tx, job).set({ format }).execute());
      }
      async function* counted(): AsyncGenerator<Buffer> {
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
      }
      const asset: RoutingAsset = { id: scan.asset_id, name: scan.name, kind: scan.asset_kind, target: scan.target };
      const router =
        job.source === 'import' && assetHost(asset) ? await routerFor(ctx, job.tenant_id, asset, scan.kind) : null;
      sink = new IngestionSink(
        { db, findings, clock, batchSize: ctx.batchSize, writers: ctx.writers, checkpoint },
        {
          id: job.id,
          tenantId: job.tenant_id,
          scanId: job.scan_id,
          kind: scan.kind,
          createdBy: job.created_by ?? scan.requested_by,
        },
        { asset, session },
        router,
      );
      const parsed = parseOnThread(format, counted(), {
        batchSize: 500,
        ...(ctx.parseHeapMb ? { heapMb: ctx.parseHeapMb } : {}),
      });
      for await (const b of parsed) {
        for (const f of b.findings) await sink.add(f);
        progress.findings += b.findings.length;
        progress.skipped = b.skipped;
      }
      meta = withAllSkippedInconclusive(parsed.meta());
      progress.skipped = meta.skipped;
      for (const h of meta.coverage.hosts) sink.noteHost(h.name, h.up);
      checkpoint();
      // A partial or inconclusive result did not look at everything: it closes nothing.
      outcome = await sink.end({
        partial: !!meta.partial || !!meta.inconclusive,
        coverage: closingCoverageOfImport(meta),
      });
    }
    checkpoint();
    await finishSucceeded(ctx, job, outcome, meta, format, size, progress);
  } catch (e) {
    // A batch still being written finishes (or fails) before the outcome is recorded.
    await sink?.settle();
    if (e instanceof LostClaim) {
      log.warn({ ingestionId: job.id }, 'ingestion claim was taken over by another replica; stopped');
    } else if (e instanceof Released) {
      await withService(db, (tx) =>
        ctx
          .fenced(tx, job)
          .set({
            status: 'queued',
            attempts: job.attempts - 1,
            locked_by: null,
            locked_until: null,
            updated_at: clock.now(),
          })
          .execute(),
      ).catch((err: unknown) => log.warn({ err, ingestionId: job.id }, 'could not release the ingestion job'));
    } else if (e instanceof ImportError) {
      await finishFailed(ctx, job, `The report could not be read: ${e.message}`, false);
    } else if (e instanceof ResourceExhausted) {
      // Final: running it again would exhaust the same resource (and, in the server, could take the server with it).
      log.warn({ ingestionId: job.id, reason: e.message }, 'report ingestion stopped: resource exhausted');
      await finishFailed(
        ctx,
        job,
        `${e.message} Split the report into smaller files, or raise the limit (docs/operations.md).`,
        false,
      );
    } else if (isAppError(e) && e.code === 'object_not_found') {
      await finishFailed(ctx, job, 'The stored report is missing; upload it again.', false);
    } else {
      log.error({ err: e, ingestionId: job.id, attempt: job.attempts }, 'report ingestion failed');
      await finishFailed(
        ctx,
        job,
        `Reading the report failed unexpectedly (attempt ${job.attempts} of ${ctx.maxAttempts}).`,
        job.attempts < ctx.maxAttempts,
      );
    }
  } finally {
    clearInterval(timer);
    sink?.dispose();
    body?.destroy();
    await flushing;
  }
}

/** The tenant's assets a report of this scanner kind may be split to, and the chosen asset's addresses. */
async function routerFor(ctx: JobContext, tenantId: string, chosen: RoutingAsset, kind: string): Promise<HostRouter> {
  const rows = await withService(ctx.db, (tx) =>
    tx
      .selectFrom('assets')
      .select(['id', 'name', 'kind', 'target'])
      .where('tenant_id', '=', tenantId)
      .where('archived_at', 'is', null)
      .where('verification_status', 'in', ['verified', 'bypassed'])
      .where('id', '<>', chosen.id)
      .limit(10_000)
      .execute(),
  );
  const fits = rows.filter((a) => (KINDS_FOR_ASSET[a.kind] as readonly string[]).includes(kind));
  const host = assetHost(chosen);
  const addresses = host ? await ctx.resolveHost(host) : [];
  return new HostRouter(chosen, fits, addresses);
}

async function finishSucceeded(
  ctx: JobContext,
  job: IngestionRow,
  outcome: SinkOutcome,
  meta: ReportMetaJson | null,
  format: ReportFormat | null,
  size: number,
  progress: { findings: number; skipped: number },
) {
  const { clock, db } = ctx;
  const now = clock.now();
  const prior = (job.summary ?? null) as IngestionSummary | null;
  const { scanId: _scanId, ...rest } = outcome.primary;
  // A replayed ingest (the findings were written by an earlier run of this job) has no meta: the
  // outcome is the prior summary's, unknown when that run recorded none.
  const result = meta
    ? outcomeOf(meta)
    : prior?.outcome
      ? { outcome: prior.outcome, reason: prior.outcomeReason ?? null }
      : null;
  const unmatchedReason = outcome.unmatchedFindings
    ? [
        {
          reason: 'host matches no asset of this tenant (not imported)',
          count: outcome.unmatchedFindings,
          where: outcome.unmatchedHosts.slice(0, 5),
        },
      ]
    : [];
  const out: IngestionSummary = {
    ...rest,
    format: meta?.format ?? format ?? prior?.format ?? 'native',
    scanner: meta?.scanner ?? prior?.scanner ?? '',
    tool: meta?.tool ?? prior?.tool ?? null,
    skipped: (meta?.skipped ?? prior?.skipped ?? 0) + outcome.unmatchedFindings,
    skipSamples: meta?.skipSamples ?? prior?.skipSamples ?? [],
    records: meta?.records ?? prior?.records ?? 0,
    passed: meta?.passed ?? prior?.passed ?? 0,
    skipReasons: meta ? [...meta.skipReasons, ...unmatchedReason] : (prior?.skipReasons ?? []),
    cleaned: meta?.cleaned ?? prior?.cleaned ?? null,
    coverage: meta?.coverage ?? prior?.coverage ?? null,
    partial: meta?.partial ?? prior?.partial ?? null,
    closedNothing: meta
      ? !!meta.partial || !!meta.inconclusive || !outcome.primaryCovered
      : (prior?.closedNothing ?? false),
    splits: meta
      ? outcome.splits.map((s) => ({
          assetId: s.assetId,
          assetName: s.assetName,
          scanId: s.scanId,
          findings: s.findings,
          distinct: s.summary.distinct,
          created: s.summary.created,
          fixed: s.summary.fixed,
        }))
      : (prior?.splits ?? []),
    unmatchedHosts: meta ? outcome.unmatchedHosts : (prior?.unmatchedHosts ?? []),
    ...(result ? { outcome: result.outcome, ...(result.reason ? { outcomeReason: result.reason } : {}) } : {}),
  };
  await withService(db, async (tx) => {
    const done = await ctx
      .fenced(tx, job)
      .set({
        status: 'succeeded',
        summary: JSON.stringify(out),
        ...(meta ? { bytes_read: size, findings_read: progress.findings, skipped: out.skipped } : {}),
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
    const finished = {
      status: 'succeeded' as const,
      percent: 100,
      error: null,
      finished_at: now,
      updated_at: now,
      started_at: sql<Date>`coalesce(started_at, ${now})`,
      ...(result ? { outcome: result.outcome, outcome_reason: result.reason } : {}),
    };
    // The chosen asset's scan carries the report's coverage; a split scan's hosts are its own.
    await tx
      .updateTable('scans')
      .set({ ...finished, ...(meta?.scanCoverage ? { coverage: JSON.stringify(meta.scanCoverage) } : {}) })
      .where('id', '=', job.scan_id)
      .where('status', '=', 'ingesting')
      .execute();
    const splitIds = (out.splits ?? []).map((s) => s.scanId);
    if (splitIds.length)
      await tx
        .updateTable('scans')
        .set(finished)
        .where('id', 'in', splitIds)
        .where('status', '=', 'ingesting')
        .execute();
  });
}

export async function finishFailed(
  ctx: Pick<JobContext, 'clock' | 'db' | 'fenced' | 'log'>,
  job: IngestionRow,
  raw: string,
  retry: boolean,
) {
  const now = ctx.clock.now();
  // Stored and shown: never a character the database refuses or the report's raw bytes.
  const message = safeMessage(raw, 2_000);
  await withService(ctx.db, async (tx) => {
    if (retry) {
      await ctx
        .fenced(tx, job)
        .set({
          status: 'queued',
          error: message,
          locked_by: null,
          locked_until: new Date(now.getTime() + job.attempts * 5_000),
          updated_at: now,
        })
        .execute();
      return;
    }
    const done = await ctx
      .fenced(tx, job)
      .set({ status: 'failed', error: message, locked_by: null, locked_until: null, finished_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirst();
    if (!done) return;
    // Scans split from this import fail with it (what their batches wrote stays, as for its own scan).
    await tx
      .updateTable('scans')
      .set({ status: 'failed', error: message, finished_at: now, updated_at: now })
      .where((eb) => eb.or([eb('id', '=', job.scan_id), eb(sql<string>`options->>'ingestionId'`, '=', job.id)]))
      .where('status', '=', 'ingesting')
      .execute();
  }).catch((err: unknown) => ctx.log.error({ err, ingestionId: job.id }, 'could not record the ingestion outcome'));
}
