// What the agent and the CLI need from a scanner: one kind, a tool name for the report header, and
// run(), which scans one target (one lease, or one CLI invocation) and returns its findings.
import type { NormalizedFindingInput, ReportCoverage } from '../../findings/index.ts';
import type { EgressPolicy } from '../../lib/egress.ts';
import type { ScanKind } from '../client.ts';

export interface ScanTask {
  /** What to scan: a host name, an IP address or a URL, as the asset names it. */
  target: string;
  /** The asset's kind (host, domain, webapp, container_image) when the scan came from a lease. */
  assetKind?: string;
  /** The scan's options as stored by the server (untrusted input all the same). */
  options: Record<string, unknown>;
  /** The chunk this lease covers, when the scan is split. */
  chunk: { index: number; count: number; spec: Record<string, unknown> } | null;
  signal: AbortSignal;
  /**
   * A file the agent fetched for this lease: the uploaded image archive of an `archive:sha256:`
   * container asset. Scanners that read files use it instead of the target.
   */
  localFile?: string;
  /**
   * Out-of-band callbacks the server received for this lease since the last call (template scans
   * whose lease carries `options.oob`); absent where there is no server (the CLI).
   */
  oobInteractions?(): Promise<{ token: string; protocol: 'http' | 'dns'; request: string; remoteAddress: string }[]>;
  /**
   * The egress policy of the server's in-process hosted worker: every address the scan connects to
   * is resolved and checked through it (docs/security.md). Absent for enrolled workers and the CLI.
   */
  egress?: EgressPolicy;
  /** Progress 0–100 with a short message; callers throttle what they send. */
  progress(percent: number, message?: string): void;
}

export interface ScanOutput {
  findings: NormalizedFindingInput[];
  /**
   * Set (to the reason) when the scan did not look at everything it covers: requests failed, a
   * time budget ran out. The report says so and the server closes nothing as fixed.
   */
  partial?: string;
  /**
   * Set (to the reason) when nothing was actually looked at: every probe was refused or timed out,
   * a crawl fetched no page, no port could be connected. The server records the scan as
   * inconclusive and closes nothing.
   */
  inconclusive?: string;
  /** What the scan covered: hosts, ports, URLs, templates, rules, image (docs/report-format.md). */
  coverage?: ReportCoverage;
  /** Scanner-specific results for local output (the CLI's table and JSON). */
  details?: Record<string, unknown>;
}

export interface Scanner {
  kind: ScanKind;
  tool: { name: string; version: string };
  run(task: ScanTask): Promise<ScanOutput>;
}

/** A scanner failure; `retryable` says whether another attempt may succeed. */
export class ScannerError extends Error {
  readonly retryable: boolean;
  constructor(message: string, retryable: boolean, opts: { cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.name = 'ScannerError';
    this.retryable = retryable;
  }
}

export const isRetryable = (e: unknown): boolean =>
  typeof e === 'object' && e !== null && (e as { retryable?: unknown }).retryable === true;

/** A parsed command-line flag value (node:util parseArgs). */
export type CliFlagValue = string | boolean | string[] | boolean[] | undefined;

/**
 * How `rampart-worker scan <kind>` drives one scanner kind: its own flags (beyond --target,
 * --format and --help, which the command owns), help text, and the kind's share of the output.
 * Each kind exports one from src/agent/scanners/<kind>/cli.ts.
 */
export interface LocalScanCli {
  kind: ScanKind;
  /** The options block of the kind's help, one flag per line, e.g. `  --ports R   ports and ranges`. */
  help: string;
  /** node:util parseArgs option specs for the kind's own flags. */
  options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;
  /**
   * The scanner and the task options for these flags and target. Throws UsageError (from
   * src/agent/commands/common.ts) for a bad flag value or a target this kind cannot scan.
   */
  prepare(values: Record<string, CliFlagValue>, target: string): { scanner: Scanner; options: Record<string, unknown> };
  /** Lines printed above the findings table in table output (a summary, a results table). */
  table(details: Record<string, unknown>, meta: { durationMs: number }): string[];
  /** Kind-specific fields added to the JSON output next to target, kind and findings. */
  json(details: Record<string, unknown>): Record<string, unknown>;
}
