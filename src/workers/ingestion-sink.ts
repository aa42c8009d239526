// Where an ingestion's findings go: batched into the findings ingest of the scan they belong to.
// A worker's report belongs to its scan. An import is routed by host (ingestion-routing.ts): the
// asset the user chose, another asset of the tenant (a scan of its own is created for it, with
// an id derived from the import so a re-run after a crash finds the same scan), or no asset.
// Findings of hosts that match no asset wait in a spool file until the end: if the report
// matched nothing and names a single host, they are the chosen asset's (the user said so); if it
// matched something, they are left out and the hosts named; if it names several hosts and none
// matches, the import is refused naming them.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { withService } from '../db/tenant.ts';
import type { BatchedFindingsIngest, ClosingCoverage, IngestSummary } from '../findings/index.ts';
import type { Clock } from '../lib/clock.ts';
import { ImportError, type ImportedFinding } from './importers/index.ts';
import { drained, readLines } from './importers/common.ts';
import { canonicalFinding, normHost, type HostRouter, type RoutingAsset } from './ingestion-routing.ts';

type Session = Awaited<ReturnType<BatchedFindingsIngest['begin']>>;

interface Target {
  asset: RoutingAsset | null;
  scanId: string;
  session: Session;
  batch: ImportedFinding[];
  findings: number;
}

export interface SplitOutcome {
  assetId: string | null;
  assetName: string | null;
  scanId: string;
  findings: number;
  summary: IngestSummary;
}

export interface SinkOutcome {
  /** The chosen asset's (or worker scan's) ingest summary. */
  primary: IngestSummary;
  /** Other assets the report was split to. */
  splits: SplitOutcome[];
  /** Hosts that match no asset; their findings were not imported. */
  unmatchedHosts: string[];
  unmatchedFindings: number;
  /** Whether the report said anything about the chosen asset (a host of it, or no hosts at all). */
  primaryCovered: boolean;
}

export interface SinkDeps {
  db: Kysely<DB>;
  findings: BatchedFindingsIngest;
  clock: Clock;
  batchSize: number;
  writers: number;
  checkpoint: () => void;
}

const MAX_NAMED_HOSTS = 50;

/** A stable scan id for the split of one import to one asset. */
export function splitScanId(ingestionId: string, assetId: string): string {
  const h = createHash('sha256').update(`rampart-import-split:${ingestionId}:${assetId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export class IngestionSink {
  readonly #deps: SinkDeps;
  readonly #job: { id: string; tenantId: string; scanId: string; kind: string; createdBy: string | null };
  readonly #router: HostRouter | null;
  readonly #primary: Target;
  readonly #targets = new Map<string, Target>();
  readonly #inflight: Promise<void>[] = [];
  readonly #unmatched = new Map<string, number>();
  readonly #coverageUnmatched = new Set<string>();
  #matchedHosts = 0;
  #hostless = 0;
  #spool: { dir: string; out: WriteStream; count: number } | null = null;

  constructor(
    deps: SinkDeps,
    job: SinkOutcomeJob,
    primary: { asset: RoutingAsset | null; session: Session },
    router: HostRouter | null,
  ) {
    this.#deps = deps;
    this.#job = job;
    this.#router = router;
    this.#primary = { asset: primary.asset, scanId: job.scanId, session: primary.session, batch: [], findings: 0 };
    if (primary.asset) this.#targets.set(primary.asset.id, this.#primary);
  }

  /** Hosts the report says it looked at (an nmap host with no open port still covers its asset). */
  noteHost(host: string, up: boolean | null): void {
    if (!this.#router || up === false) return;
    const a = this.#router.match(host);
    if (!a) this.#coverageUnmatched.add(normHost(host));
    else if (a.id === this.#primary.asset?.id) this.#matchedHosts += 1;
  }

  async add(f: ImportedFinding): Promise<void> {
    if (!this.#router) return this.#push(this.#primary, f);
    const route = this.#router.route(f);
    if (route.kind === 'hostless') {
      this.#hostless += 1;
      return this.#push(this.#primary, canonicalFinding(f, null, null));
    }
    if (route.kind === 'asset') {
      if (route.asset.id === this.#primary.asset?.id) this.#matchedHosts += 1;
      const target = await this.#target(route.asset);
      return this.#push(target, canonicalFinding(f, route.asset, route.host));
    }
    this.#unmatched.set(route.host, (this.#unmatched.get(route.host) ?? 0) + 1);
    await this.#toSpool(route.host, f);
  }

  async #target(asset: RoutingAsset): Promise<Target> {
    const known = this.#targets.get(asset.id);
    if (known) return known;
    const scanId = splitScanId(this.#job.id, asset.id);
    const now = this.#deps.clock.now();
    await withService(this.#deps.db, (tx) =>
      tx
        .insertInto('scans')
        .values({
          id: scanId,
          tenant_id: this.#job.tenantId,
          asset_id: asset.id,
          kind: this.#job.kind as 'port',
          options: JSON.stringify({ importOf: this.#job.scanId, ingestionId: this.#job.id }),
          status: 'ingesting',
          percent: 0,
          source: 'import',
          requested_by: this.#job.createdBy,
          quota_day: null,
          started_at: now,
          created_at: now,
          updated_at: now,
        })
        .onConflict((c) => c.column('id').doNothing())
        .execute(),
    );
    const session = await this.#deps.findings.begin(scanId, { validate: false });
    const t: Target = { asset, scanId, session, batch: [], findings: 0 };
    this.#targets.set(asset.id, t);
    return t;
  }

  async #push(t: Target, f: ImportedFinding): Promise<void> {
    t.batch.push(f);
    t.findings += 1;
    if (t.batch.length >= this.#deps.batchSize) await this.#write(t);
  }

  async #write(t: Target): Promise<void> {
    if (t.batch.length === 0) return;
    this.#deps.checkpoint();
    while (this.#inflight.length >= this.#deps.writers) await this.#inflight.shift();
    const written = t.session.batch(t.batch);
    written.catch(() => undefined);
    this.#inflight.push(written);
    t.batch = [];
  }

  async #toSpool(host: string, f: ImportedFinding): Promise<void> {
    if (!this.#spool) {
      const dir = mkdtempSync(join(tmpdir(), 'rampart-import-'));
      const out = createWriteStream(join(dir, 'unmatched.jsonl'));
      // A write error surfaces from finished() when the spool is read back; none goes unhandled.
      out.on('error', () => undefined);
      this.#spool = { dir, out, count: 0 };
    }
    const s = this.#spool;
    s.count += 1;
    if (!s.out.write(`${JSON.stringify([host, f])}\n`)) await drained(s.out);
  }

  /** Waits for every batch (also after a failure, before the outcome is recorded). */
  async settle(): Promise<void> {
    await Promise.allSettled(this.#inflight);
  }

  dispose(): void {
    if (!this.#spool) return;
    this.#spool.out.destroy();
    rmSync(this.#spool.dir, { recursive: true, force: true });
    this.#spool = null;
  }

  /** `coverage`: what the report covered; only findings inside it that it no longer reports close. */
  async end(opts: { partial: boolean; coverage: ClosingCoverage }): Promise<SinkOutcome> {
    const matchedAny =
      this.#matchedHosts > 0 ||
      this.#targets.size > 1 ||
      this.#hostless > 0 ||
      (!this.#router && this.#primary.findings > 0);
    const hosts = [...new Set([...this.#unmatched.keys(), ...this.#coverageUnmatched])];
    let unmatchedFindings = 0;
    if (this.#router && !matchedAny && hosts.length === 1) {
      // One host, not recognised: the asset the user chose (its host written as Rampart's).
      await this.#replaySpool();
      this.#matchedHosts += 1;
    } else if (this.#router && !matchedAny && hosts.length > 1) {
      this.dispose();
      const named = hosts.slice(0, MAX_NAMED_HOSTS).join(', ');
      throw new ImportError(
        'invalid_report',
        null,
        `The report covers ${hosts.length} hosts and none is an asset of this tenant that takes these findings: ${named}${hosts.length > MAX_NAMED_HOSTS ? ', …' : ''}. Add them as assets, or import a report of one host.`,
      );
    } else {
      unmatchedFindings = [...this.#unmatched.values()].reduce((a, b) => a + b, 0);
      this.dispose();
    }
    for (const t of new Set([this.#primary, ...this.#targets.values()])) await this.#write(t);
    while (this.#inflight.length) await this.#inflight.shift();
    this.#deps.checkpoint();
    const noHosts = hosts.length === 0 && this.#targets.size <= 1;
    const primaryCovered = !this.#router || this.#matchedHosts > 0 || this.#hostless > 0 || noHosts;
    const primary = await this.#primary.session.finish({
      closeMissing: !opts.partial && primaryCovered,
      coverage: opts.coverage,
    });
    const splits: SplitOutcome[] = [];
    for (const t of this.#targets.values()) {
      if (t === this.#primary) continue;
      const summary = await t.session.finish({ closeMissing: !opts.partial, coverage: opts.coverage });
      splits.push({
        assetId: t.asset?.id ?? null,
        assetName: t.asset?.name ?? null,
        scanId: t.scanId,
        findings: t.findings,
        summary,
      });
    }
    const named = this.#unmatched.size ? [...this.#unmatched.keys()] : [];
    return { primary, splits, unmatchedHosts: named.slice(0, MAX_NAMED_HOSTS), unmatchedFindings, primaryCovered };
  }

  async #replaySpool(): Promise<void> {
    const s = this.#spool;
    if (!s) return;
    s.out.end();
    await finished(s.out);
    try {
      for await (const { text } of readLines(
        createReadStream(join(s.dir, 'unmatched.jsonl')),
        'native',
        Number.MAX_SAFE_INTEGER,
      )) {
        const [host, f] = JSON.parse(text) as [string, ImportedFinding];
        await this.#push(this.#primary, canonicalFinding(f, this.#primary.asset, host));
      }
    } finally {
      this.dispose();
    }
  }

  /** Split scans of this import, for the summary and the scans' final status. */
  splitScanIds(): string[] {
    return [...this.#targets.values()].filter((t) => t !== this.#primary).map((t) => t.scanId);
  }
}

export type SinkOutcomeJob = { id: string; tenantId: string; scanId: string; kind: string; createdBy: string | null };
