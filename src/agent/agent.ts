// The worker agent: N lease loops (one scan each at a time) and one heartbeat loop. A scan runs
// under its own AbortController; the heartbeat (cancelled/lost) or a 409 lease_lost /
// scan_cancelled on any write aborts it and its results are dropped. A finished scan is written as
// a native report and uploaded (init → PUT → finalize); a scanner error is reported with `fail`.
//
// Graceful stop: leasing stops at once (an open long poll is abandoned), running scans get a grace
// period to finish and upload, and whatever still runs after it is aborted and given back with
// `release` (the server re-queues it without counting the attempt). The heartbeat keeps leases
// alive until the end. The same code runs in the CLI (`rampart-worker run`) and in-process as the
// server's hosted worker (createHostedAgent below).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EgressPolicy } from '../lib/egress.ts';
import { isAbortError, isLeaseGone, describeError, WorkerApiError } from './errors.ts';
import {
  abortableSleep,
  backoffDelay,
  createWorkerClient,
  type HeldLease,
  type Lease,
  type ScanKind,
  type WorkerClient,
  type WorkerClientConfig,
} from './client.ts';
import { writeNativeReport, NATIVE_CONTENT_TYPE } from './report.ts';
import { isRetryable, type Scanner } from './scanners/types.ts';
import { builtinScanners, type BuiltinScannerSettings } from './scanners/builtin.ts';
import { WORKER_VERSION } from './version.ts';

export interface AgentLogger {
  debug?(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Adapts a pino-style logger (`info(fields, msg)`), such as Fastify's app.log, to the agent's. */
export function pinoAgentLogger(l: {
  info(o: object, m: string): void;
  warn(o: object, m: string): void;
  error(o: object, m: string): void;
  debug?(o: object, m: string): void;
}): AgentLogger {
  return {
    debug: (m, f) => l.debug?.(f ?? {}, m),
    info: (m, f) => l.info(f ?? {}, m),
    warn: (m, f) => l.warn(f ?? {}, m),
    error: (m, f) => l.error(f ?? {}, m),
  };
}

/** What the agent uses of the client (a narrower type, so tests can stand in for the server). */
export type AgentClient = Pick<
  WorkerClient,
  'lease' | 'heartbeat' | 'progress' | 'release' | 'fail' | 'uploadReport' | 'downloadArchive'
> &
  Partial<Pick<WorkerClient, 'interactions'>>;

export interface AgentOptions {
  client: AgentClient;
  scanners: readonly Scanner[];
  /** Scans at once (lease loops); default 1. */
  concurrency?: number;
  log?: AgentLogger;
  /** Aborting it stops the agent gracefully (like stop()). */
  signal?: AbortSignal;
  /** How long running scans may take to finish after a stop (default 30 s). */
  graceMs?: number;
  /** Least time between two progress reports of one scan (default 1 s). */
  progressIntervalMs?: number;
  /** Heartbeat period before a lease names one (default 30 s). */
  heartbeatSeconds?: number;
  /** Long-poll wait per lease request (0–25 s; default 25). */
  leaseWaitSeconds?: number;
  /** Stop the agent when the server no longer accepts this worker's credentials (default true). */
  stopOnAuthFailure?: boolean;
  version?: string;
  /** Directory for report files (a temporary directory by default). */
  reportDir?: string;
  /** The egress policy of one lease's scan (the server's hosted worker only; docs/security.md). */
  egressFor?(lease: Lease): Promise<EgressPolicy>;
}

type DropReason = 'cancelled' | 'lost' | 'shutdown';

class DroppedError extends Error {
  readonly reason: DropReason;
  constructor(reason: DropReason) {
    super(`The scan was dropped: ${reason}`);
    this.name = 'AbortError';
    this.reason = reason;
  }
}

interface Job {
  lease: Lease;
  controller: AbortController;
  dropped: DropReason | null;
  settled: Promise<void>;
  /** A temporary directory of this job's (a downloaded archive), removed when the job ends. */
  scratch?: string;
}

export interface AgentStats {
  leased: number;
  uploaded: number;
  failed: number;
  dropped: number;
  released: number;
}

const AUTH_CODES = new Set(['worker_unauthorized', 'worker_signature_invalid']);
const noopLog: AgentLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

export function createAgent(opts: AgentOptions) {
  const { client } = opts;
  const log = opts.log ?? noopLog;
  const concurrency = Math.max(1, Math.floor(opts.concurrency ?? 1));
  const graceMs = Math.max(0, opts.graceMs ?? 30_000);
  const progressIntervalMs = opts.progressIntervalMs ?? 1_000;
  const version = opts.version ?? WORKER_VERSION;
  const scanners = new Map<ScanKind, Scanner>();
  for (const s of opts.scanners) scanners.set(s.kind, s);
  if (scanners.size === 0) throw new Error('The agent needs at least one scanner');
  const kinds = [...scanners.keys()];

  const jobs = new Map<string, Job>();
  const stats: AgentStats = { leased: 0, uploaded: 0, failed: 0, dropped: 0, released: 0 };
  /** Aborts open long polls and backoff sleeps when stopping. */
  const leasing = new AbortController();
  /** Ends the heartbeat loop after the last job settled. */
  const beating = new AbortController();
  let heartbeatSeconds = opts.heartbeatSeconds ?? 30;
  let stopping: Promise<void> | null = null;
  let started: Promise<void> | null = null;
  let fatal: Error | null = null;

  const held = (): HeldLease[] =>
    [...jobs.values()]
      .filter((j) => !j.dropped)
      .map((j) => ({ scanId: j.lease.scanId, leaseToken: j.lease.leaseToken }));

  function drop(job: Job, reason: DropReason): void {
    if (job.dropped) return;
    job.dropped = reason;
    if (reason !== 'shutdown') stats.dropped += 1;
    log.warn(
      reason === 'shutdown' ? 'Stopping scan for shutdown' : `Scan ${reason} by the server; dropping its results`,
      { scanId: job.lease.scanId },
    );
    job.controller.abort(new DroppedError(reason));
  }

  /** A write answered 409 lease_lost / scan_cancelled: this scan is no longer ours. */
  function onLeaseGone(job: Job, e: unknown): boolean {
    if (!isLeaseGone(e)) return false;
    drop(job, (e as WorkerApiError).code === 'scan_cancelled' ? 'cancelled' : 'lost');
    return true;
  }

  function progressReporter(job: Job) {
    let lastSent = 0;
    let inFlight = false;
    let pending: { percent: number; message?: string } | null = null;
    const send = async () => {
      while (pending && !job.dropped && !job.controller.signal.aborted) {
        const p = pending;
        pending = null;
        inFlight = true;
        lastSent = Date.now();
        try {
          await client.progress(job.lease.scanId, job.lease.leaseToken, p.percent, p.message, {
            signal: job.controller.signal,
          });
        } catch (e) {
          if (!onLeaseGone(job, e) && !isAbortError(e))
            log.warn('Progress report failed', { scanId: job.lease.scanId, error: describeError(e) });
        } finally {
          inFlight = false;
        }
      }
    };
    return (percent: number, message?: string) => {
      // The first report always goes (it moves the scan to running); later ones at most once per interval.
      const first = lastSent === 0;
      pending = { percent: Math.min(99, Math.max(0, percent)), ...(message ? { message } : {}) };
      if (inFlight || (!first && Date.now() - lastSent < progressIntervalMs)) return;
      void send();
    };
  }

  async function runJob(job: Job): Promise<void> {
    const { lease } = job;
    const scanner = scanners.get(lease.kind);
    const ids = { scanId: lease.scanId, kind: lease.kind, attempt: lease.attempt };
    const startedAt = new Date();
    if (!scanner) {
      // Cannot happen when the server honours `kinds`; give the scan back rather than fail it.
      await client
        .release(lease.scanId, lease.leaseToken, `This worker has no ${lease.kind} scanner`)
        .catch(() => undefined);
      return;
    }
    log.info('Scan leased', {
      ...ids,
      target: lease.asset.target,
      chunk: lease.chunk ? `${lease.chunk.index + 1}/${lease.chunk.count}` : null,
    });
    let output;
    try {
      const progress = progressReporter(job);
      let localFile: string | undefined;
      // An uploaded image archive has no registry to pull from: fetch its bytes under the lease.
      if (lease.kind === 'container' && lease.asset.target.startsWith('archive:')) {
        progress(0, 'Downloading the image archive');
        job.scratch = await mkdtemp(join(opts.reportDir ?? tmpdir(), 'rampart-archive-'));
        localFile = (
          await client.downloadArchive(lease.scanId, lease.leaseToken, join(job.scratch, 'image.tar'), {
            signal: job.controller.signal,
          })
        ).path;
      }
      const egress = opts.egressFor ? await opts.egressFor(lease) : undefined;
      output = await scanner.run({
        ...(egress ? { egress } : {}),
        target: lease.asset.target,
        assetKind: lease.asset.kind,
        options: lease.options ?? {},
        chunk: lease.chunk,
        signal: job.controller.signal,
        progress,
        ...(localFile ? { localFile } : {}),
        ...(lease.kind === 'template' && client.interactions
          ? {
              oobInteractions: interactionReader(
                client.interactions,
                lease.scanId,
                lease.leaseToken,
                job.controller.signal,
              ),
            }
          : {}),
      });
      if (job.controller.signal.aborted) throw job.controller.signal.reason;
    } catch (e) {
      if (job.dropped || job.controller.signal.aborted) return;
      const retryable = isRetryable(e);
      log.warn('Scan failed', { ...ids, error: describeError(e), retryable });
      try {
        const res = await client.fail(lease.scanId, lease.leaseToken, describeError(e), retryable);
        stats.failed += 1;
        log.info(res.status === 'queued' ? 'Scan re-queued for another attempt' : 'Scan marked failed', ids);
      } catch (err) {
        if (!onLeaseGone(job, err)) log.error('Could not report the failure', { ...ids, error: describeError(err) });
      }
      return;
    }

    const report = await writeNativeReport({
      scanner: lease.kind,
      tool: scanner.tool,
      target: lease.asset.target,
      startedAt,
      ...(output.partial ? { partial: output.partial } : {}),
      ...(output.inconclusive ? { inconclusive: output.inconclusive } : {}),
      ...(output.coverage ? { coverage: output.coverage } : {}),
      findings: output.findings,
      ...(opts.reportDir ? { dir: opts.reportDir } : {}),
    });
    try {
      if (report.skipped)
        log.warn('Findings left out of the report (invalid)', {
          ...ids,
          skipped: report.skipped,
          reasons: report.skipReasons.slice(0, 3),
        });
      if (job.dropped) return;
      const fin = await client.uploadReport(
        {
          scanId: lease.scanId,
          leaseToken: lease.leaseToken,
          path: report.path,
          size: report.size,
          sha256: report.sha256,
          format: 'native',
          contentType: NATIVE_CONTENT_TYPE,
          fileName: `${lease.kind}-${lease.scanId}.jsonl`,
        },
        { signal: job.controller.signal },
      );
      stats.uploaded += 1;
      log.info('Report uploaded', {
        ...ids,
        findings: report.findings,
        bytes: report.size,
        ingestionId: fin.ingestionId,
      });
    } catch (e) {
      if (job.dropped || onLeaseGone(job, e)) return;
      log.error('Report upload failed', { ...ids, error: describeError(e) });
      await client.fail(lease.scanId, lease.leaseToken, `Report upload failed: ${describeError(e)}`, true).then(
        () => void (stats.failed += 1),
        (err) =>
          void (
            onLeaseGone(job, err) || log.error('Could not report the failure', { ...ids, error: describeError(err) })
          ),
      );
    } finally {
      await report.remove().catch(() => undefined);
    }
  }

  function startJob(lease: Lease): Job {
    const job: Job = { lease, controller: new AbortController(), dropped: null, settled: Promise.resolve() };
    // Beat as often as the most demanding lease asks (but not more than every 5 s on its say-so).
    if (lease.heartbeatSeconds > 0) heartbeatSeconds = Math.min(heartbeatSeconds, Math.max(5, lease.heartbeatSeconds));
    jobs.set(lease.scanId, job);
    stats.leased += 1;
    job.settled = runJob(job)
      .catch((e) => log.error('Scan crashed', { scanId: lease.scanId, error: describeError(e) }))
      .finally(async () => {
        jobs.delete(lease.scanId);
        if (job.scratch) await rm(job.scratch, { recursive: true, force: true }).catch(() => undefined);
      });
    return job;
  }

  function authFailure(e: unknown): boolean {
    if (!(e instanceof WorkerApiError) || !AUTH_CODES.has(e.code)) return false;
    if (opts.stopOnAuthFailure === false) return false;
    fatal = e;
    log.error("The server refused this worker's credentials; stopping", { error: describeError(e) });
    void stop();
    return true;
  }

  async function leaseLoop(n: number): Promise<void> {
    let failures = 0;
    while (!leasing.signal.aborted) {
      try {
        const lease = await client.lease(kinds, { waitSeconds: opts.leaseWaitSeconds ?? 25, signal: leasing.signal });
        failures = 0;
        if (!lease) continue;
        if (leasing.signal.aborted) {
          // Stopping while the lease arrived: give it straight back.
          await client.release(lease.scanId, lease.leaseToken, 'The worker is shutting down').catch(() => undefined);
          stats.released += 1;
          return;
        }
        await startJob(lease).settled;
      } catch (e) {
        if (leasing.signal.aborted) return;
        if (authFailure(e)) return;
        failures += 1;
        const wait = backoffDelay(Math.min(failures, 6), { attempts: 0, baseDelayMs: 1_000, maxDelayMs: 60_000 });
        log.warn('Leasing failed; retrying', { loop: n, error: describeError(e), retryInMs: wait });
        await abortableSleep(wait, leasing.signal).catch(() => undefined);
      }
    }
  }

  async function heartbeatOnce(): Promise<void> {
    const leases = held();
    const res = await client.heartbeat(leases, { version, signal: beating.signal });
    for (const l of res.leases ?? []) {
      const job = jobs.get(l.scanId);
      if (job && (l.state === 'cancelled' || l.state === 'lost')) drop(job, l.state);
    }
  }

  async function heartbeatLoop(): Promise<void> {
    while (!beating.signal.aborted) {
      try {
        await heartbeatOnce();
      } catch (e) {
        if (beating.signal.aborted) return;
        if (authFailure(e)) return;
        log.warn('Heartbeat failed', { error: describeError(e) });
      }
      await abortableSleep(heartbeatSeconds * 1_000, beating.signal).catch(() => undefined);
    }
  }

  async function stop(grace = graceMs): Promise<void> {
    if (stopping) return stopping;
    stopping = (async () => {
      leasing.abort();
      const running = [...jobs.values()];
      if (running.length) log.info('Stopping: waiting for running scans', { scans: running.length, graceMs: grace });
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<'grace'>((r) => (timer = setTimeout(() => r('grace'), grace)));
      await Promise.race([Promise.all(running.map((j) => j.settled)), graceOver]);
      clearTimeout(timer);
      // Whatever still runs goes back to the queue.
      const left = [...jobs.values()];
      for (const job of left) drop(job, 'shutdown');
      await Promise.all(
        left.map(async (job) => {
          await job.settled;
          try {
            await client.release(job.lease.scanId, job.lease.leaseToken, 'The worker is shutting down');
            stats.released += 1;
            log.info('Scan released', { scanId: job.lease.scanId });
          } catch (e) {
            if (!isLeaseGone(e))
              log.warn('Could not release a scan; it will be re-queued when its lease expires', {
                scanId: job.lease.scanId,
                error: describeError(e),
              });
          }
        }),
      );
      beating.abort();
    })();
    return stopping;
  }

  if (opts.signal) {
    if (opts.signal.aborted) void stop();
    else opts.signal.addEventListener('abort', () => void stop(), { once: true });
  }

  return {
    kinds,
    stats,
    /** Leases currently held. */
    held,
    /** Runs until stopped; rejects with the error that stopped it when the server refused the credentials. */
    start(): Promise<void> {
      if (started) return started;
      started = (async () => {
        const loops = [heartbeatLoop(), ...Array.from({ length: concurrency }, (_, i) => leaseLoop(i))];
        await Promise.all(loops.slice(1));
        // Lease loops end only when stopping; wait for the stop (grace, releases) and the heartbeat.
        await stop();
        await loops[0];
        if (fatal) throw fatal;
      })();
      return started;
    },
    stop,
  };
}

export type Agent = ReturnType<typeof createAgent>;

export interface HostedAgentOptions {
  client: Pick<WorkerClientConfig, 'serverUrl' | 'token' | 'signingSecret'> &
    Partial<Pick<WorkerClientConfig, 'fetch' | 'userAgent'>>;
  concurrency?: number;
  log?: AgentLogger;
  signal?: AbortSignal;
  graceMs?: number;
  /** Settings of the built-in scanners (every kind this build carries). */
  scannerSettings?: BuiltinScannerSettings;
  /** Every scan's connections go through this policy (the lease's own, see AgentOptions). */
  egressFor?(lease: Lease): Promise<EgressPolicy>;
}

/**
 * An agent with the built-in scanners and a client, for the server's embedded hosted worker: the
 * same code as `rampart-worker run`, started in-process. `signingSecret` may be a function, so a
 * rotated secret is picked up without a restart.
 */
export function createHostedAgent(o: HostedAgentOptions): Agent {
  const client = createWorkerClient({ userAgent: `rampart-worker/${WORKER_VERSION} (hosted)`, ...o.client });
  const scanners = builtinScanners(o.scannerSettings);
  return createAgent({
    client,
    scanners,
    ...(o.concurrency ? { concurrency: o.concurrency } : {}),
    ...(o.log ? { log: o.log } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.graceMs !== undefined ? { graceMs: o.graceMs } : {}),
    ...(o.egressFor ? { egressFor: o.egressFor } : {}),
    stopOnAuthFailure: false,
  });
}

/** Reads a lease's out-of-band callbacks page by page, each once. */
function interactionReader(
  read: WorkerClient['interactions'],
  scanId: string,
  leaseToken: string,
  signal: AbortSignal,
) {
  let after = '0';
  return async () => {
    const out = [];
    for (;;) {
      const { interactions } = await read(scanId, leaseToken, after, { signal });
      if (!interactions.length) return out;
      after = interactions.at(-1)!.id;
      out.push(...interactions);
    }
  };
}
