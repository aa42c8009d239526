// Writes a native report (docs/report-format.md: JSON Lines, version 1) to a temporary file,
// hashing the bytes as they are written, so the upload can declare size and SHA-256 up front
// without reading the file twice. Findings are checked against the findings schema first: the
// server's import is strict and refuses a whole report for one bad line, so a finding that
// would not pass is left out here (and counted) instead.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  MAX_COVERAGE_BYTES,
  MAX_COVERAGE_URLS,
  normalizedFindingSchema,
  reportCoverageSchema,
  type NormalizedFindingInput,
  type ReportCoverage,
} from '../findings/index.ts';
import type { ScanKind } from './client.ts';

export const NATIVE_REPORT_VERSION = 1;
export const NATIVE_CONTENT_TYPE = 'application/x-ndjson';

export interface NativeReportInput {
  scanner: ScanKind;
  tool: { name: string; version: string };
  target: string;
  startedAt: Date;
  /** Why the scan's results are partial (the server then closes nothing as fixed). */
  partial?: string;
  /** Why nothing was looked at (the server records the scan as inconclusive and closes nothing). */
  inconclusive?: string;
  /** What the scan covered (docs/report-format.md "coverage"); checked and trimmed to fit. */
  coverage?: ReportCoverage;
  findings: Iterable<NormalizedFindingInput> | AsyncIterable<NormalizedFindingInput>;
  /** Log lines to include (ignored by imports, useful to a person reading the report). */
  logs?: { level: 'info' | 'warn' | 'error'; message: string }[];
  /** Directory for the file; a fresh temporary directory by default. */
  dir?: string;
}

export interface WrittenReport {
  path: string;
  size: number;
  sha256: string;
  findings: number;
  /** Findings left out because they did not pass the schema, with the first reasons. */
  skipped: number;
  skipReasons: string[];
  /** Removes the file (and its temporary directory). */
  remove(): Promise<void>;
}

/**
 * The coverage as the server will accept it: URL lists cut to MAX_COVERAGE_URLS (urlCount keeps
 * the total) and, should the record still be too big, to what fits. A coverage record the schema
 * refuses is left out (the report stays readable; the server then knows less, never more).
 */
export function fitCoverage(c: ReportCoverage): ReportCoverage | undefined {
  const total = Math.max(c.urlCount ?? 0, c.urls?.length ?? 0);
  const cut = (urls: string[]): ReportCoverage => ({ ...c, urls, ...(urls.length < total ? { urlCount: total } : {}) });
  let out = c.urls ? cut(c.urls.slice(0, MAX_COVERAGE_URLS)) : c;
  while (out.urls?.length && JSON.stringify(out).length > MAX_COVERAGE_BYTES)
    out = cut(out.urls.slice(0, Math.floor(out.urls.length / 2)));
  const parsed = reportCoverageSchema.safeParse(out);
  return parsed.success ? parsed.data : undefined;
}

export async function writeNativeReport(input: NativeReportInput): Promise<WrittenReport> {
  const ownDir = input.dir ? null : await mkdtemp(join(tmpdir(), 'rampart-report-'));
  const dir = input.dir ?? ownDir!;
  const path = join(dir, `report-${Date.now()}-${Math.random().toString(36).slice(2, 8)}.jsonl`);
  const hash = createHash('sha256');
  let size = 0;
  const out = createWriteStream(path, { mode: 0o600 });
  const failed = new Promise<never>((_, reject) => out.once('error', reject));
  failed.catch(() => undefined);

  async function line(rec: Record<string, unknown>): Promise<void> {
    const bytes = Buffer.from(`${JSON.stringify(rec)}\n`, 'utf8');
    hash.update(bytes);
    size += bytes.length;
    if (!out.write(bytes)) await Promise.race([new Promise<void>((r) => out.once('drain', () => r())), failed]);
  }

  const remove = async () => {
    await rm(ownDir ?? path, { recursive: true, force: true });
  };
  let findings = 0;
  let skipped = 0;
  const skipReasons: string[] = [];
  try {
    const coverage = input.coverage ? fitCoverage(input.coverage) : undefined;
    await line({
      type: 'report',
      version: NATIVE_REPORT_VERSION,
      scanner: input.scanner,
      tool: input.tool,
      target: input.target,
      startedAt: input.startedAt.toISOString(),
      ...(input.partial ? { partial: input.partial.slice(0, 500) } : {}),
      ...(input.inconclusive ? { inconclusive: input.inconclusive.slice(0, 500) } : {}),
      ...(coverage ? { coverage } : {}),
    });
    for (const l of input.logs ?? []) await line({ type: 'log', level: l.level, message: l.message.slice(0, 2_000) });
    for await (const f of input.findings) {
      const parsed = normalizedFindingSchema.safeParse(f);
      if (!parsed.success) {
        skipped += 1;
        if (skipReasons.length < 20)
          skipReasons.push(
            `${String((f as { ruleId?: unknown }).ruleId ?? '?').slice(0, 100)}: ${parsed.error.issues
              .slice(0, 2)
              .map((i) => `${i.path.join('.') || 'finding'} ${i.message}`)
              .join('; ')}`,
          );
        continue;
      }
      await line({ type: 'finding', ...parsed.data });
      findings += 1;
    }
    await line({ type: 'end', findings });
    await Promise.race([new Promise<void>((resolve) => out.end(resolve)), failed]);
  } catch (e) {
    out.destroy();
    await remove();
    throw e;
  }
  return { path, size, sha256: hash.digest('hex'), findings, skipped, skipReasons, remove };
}
