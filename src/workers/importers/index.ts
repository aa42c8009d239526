// Report importers: detect a report's format from its first bytes and stream it as findings valid
// under the findings schema. No database work here; the caller batches findings into ingestion.
import type { Readable } from 'node:stream';
import { parseBurp } from './burp.ts';
import {
  ImportError,
  newMeta,
  REPORT_FORMATS,
  type ImportedFinding,
  type ReportFormat,
  type ReportMeta,
  type Scanner,
} from './common.ts';
import { parseGrype } from './grype.ts';
import { parseNative } from './native.ts';
import { parseNessus } from './nessus.ts';
import { parseNmap } from './nmap.ts';
import { parseNuclei } from './nuclei.ts';
import { parseOpenvas } from './openvas.ts';
import { parseSarif } from './sarif.ts';
import { parseTestssl } from './testssl.ts';
import { parseTrivy } from './trivy.ts';
import { parseZap } from './zap.ts';

export { CLEAN_LABELS, type CleanKind } from './clean.ts';
export {
  ImportError,
  MAX_LINE_BYTES,
  REPORT_FORMATS,
  type ImportedFinding,
  type ImportErrorCode,
  type ReportFormat,
  type ReportMeta,
  type ReportMetaJson,
  type Scanner,
  type SkipReason,
} from './common.ts';
export type { CoverageJson } from './coverage.ts';
export { DETECT_BYTES, describeContent, detectFormat, plausibleFormat } from './detect.ts';
export { NATIVE_VERSION } from './native.ts';
export { scannerForTool } from './sarif.ts';

/** The scanner kind of each format; SARIF and native reports may override it from their content. */
export const SCANNER_OF_FORMAT: Record<ReportFormat, Scanner> = {
  native: 'template',
  nmap: 'port',
  nuclei: 'template',
  zap: 'webapp',
  trivy: 'container',
  sarif: 'template',
  nessus: 'template',
  openvas: 'template',
  burp: 'webapp',
  grype: 'container',
  testssl: 'edge',
};

/** Findings as they are read (iterate once: it consumes the stream), plus `meta`, complete once iteration ends. */
export interface ReportStream extends AsyncIterable<ImportedFinding> {
  readonly meta: ReportMeta;
}

type Parser = (s: AsyncIterable<Buffer | string>, m: ReportMeta) => AsyncGenerator<ImportedFinding>;
const PARSERS: Record<ReportFormat, Parser> = {
  native: parseNative,
  nmap: parseNmap,
  nuclei: parseNuclei,
  zap: parseZap,
  trivy: parseTrivy,
  sarif: parseSarif,
  nessus: parseNessus,
  openvas: parseOpenvas,
  burp: parseBurp,
  grype: parseGrype,
  testssl: parseTestssl,
};

/**
 * Streams a report as findings. Errors (ImportError, with line/offset where known) surface from
 * the iteration; records that are readable but unusable are counted in meta.skipped instead.
 */
export function parseReport(format: ReportFormat, stream: Readable | AsyncIterable<Buffer | string>): ReportStream {
  if (!REPORT_FORMATS.includes(format))
    throw new ImportError('unknown_format', null, `Unknown report format ${JSON.stringify(format)}`);
  const meta = newMeta(format, SCANNER_OF_FORMAT[format]);
  const parser = PARSERS[format];
  return {
    meta,
    [Symbol.asyncIterator]: () => parser(stream, meta),
  };
}

/** Groups findings into arrays of at most `size`, for batched writes into ingestion. */
export async function* batchFindings<T>(findings: AsyncIterable<T>, size = 1_000): AsyncGenerator<T[]> {
  if (!Number.isInteger(size) || size < 1) throw new RangeError('Batch size must be a positive integer');
  let batch: T[] = [];
  for await (const f of findings) {
    batch.push(f);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
