// Report importers: detect a report's format from its first bytes and stream it as findings valid
// under the findings schema. No database work here; the caller batches findings into ingestion.
import type { Readable } from 'node:stream';
import type { NormalizedFinding } from '../../findings/index.ts';
import { ImportError, newMeta, REPORT_FORMATS, type ReportFormat, type ReportMeta, type Scanner } from './common.ts';
import { parseNative } from './native.ts';
import { parseNmap } from './nmap.ts';
import { parseNuclei } from './nuclei.ts';
import { parseSarif } from './sarif.ts';
import { parseTrivy } from './trivy.ts';
import { parseZap } from './zap.ts';

export { ImportError, MAX_DOCUMENT_BYTES, MAX_LINE_BYTES, REPORT_FORMATS, type ImportErrorCode, type ReportFormat, type ReportMeta, type Scanner } from './common.ts';
export { NATIVE_VERSION } from './native.ts';
export { scannerForTool } from './sarif.ts';

/** How many leading bytes detectFormat wants to see. */
export const DETECT_BYTES = 4096;

/** The scanner kind of each format; SARIF and native reports may override it from their content. */
export const SCANNER_OF_FORMAT: Record<ReportFormat, Scanner> = { native: 'template', nmap: 'port', nuclei: 'template', zap: 'webapp', trivy: 'container', sarif: 'template' };

/**
 * Guesses the format from the first bytes (DETECT_BYTES is plenty) and, when the content is
 * ambiguous, the file name. Returns null when nothing matches.
 */
export function detectFormat(firstBytes: Uint8Array | string, fileName?: string): ReportFormat | null {
  const head = (typeof firstBytes === 'string' ? firstBytes : Buffer.from(firstBytes.buffer, firstBytes.byteOffset, firstBytes.byteLength).toString('utf8')).replace(/^\uFEFF/, '').trimStart();
  const name = (fileName ?? '').toLowerCase();
  if (head.startsWith('<')) {
    if (/<nmaprun[\s>]|<!DOCTYPE\s+nmaprun/i.test(head)) return 'nmap';
    return null;
  }
  if (!head.startsWith('{')) return null;
  // JSON Lines: the first line is a whole object.
  const nl = head.indexOf('\n');
  if (nl !== -1) {
    try {
      const first: unknown = JSON.parse(head.slice(0, nl));
      if (first && typeof first === 'object' && !Array.isArray(first)) {
        const o = first as Record<string, unknown>;
        if (o.type === 'report' && 'version' in o) return 'native';
        if ('template-id' in o || 'templateID' in o) return 'nuclei';
      }
    } catch {
      // Not a complete first line: a pretty-printed document; fall through to the key checks.
    }
  }
  if (/^\{\s*"type"\s*:\s*"report"/.test(head)) return 'native';
  if (/"template-id"\s*:/.test(head) && /"matched-at"\s*:|"info"\s*:/.test(head)) return 'nuclei';
  if (/"\$schema"\s*:\s*"[^"]*sarif/i.test(head) || (/"version"\s*:\s*"2\.1\.0"/.test(head) && /"runs"\s*:/.test(head))) return 'sarif';
  if (/"SchemaVersion"\s*:\s*2\b/.test(head)) return 'trivy';
  if (/"@programName"\s*:|"@generated"\s*:/.test(head) || /"site"\s*:\s*\[\s*\{\s*"@name"/.test(head)) return 'zap';
  if (name.endsWith('.sarif') || name.endsWith('.sarif.json')) return 'sarif';
  return null;
}

/** Findings as they are read (iterate once: it consumes the stream), plus `meta`, complete once iteration ends. */
export interface ReportStream extends AsyncIterable<NormalizedFinding> {
  readonly meta: ReportMeta;
}

const PARSERS: Record<ReportFormat, (s: Readable, m: ReportMeta) => AsyncGenerator<NormalizedFinding>> = {
  native: parseNative,
  nmap: parseNmap,
  nuclei: parseNuclei,
  zap: parseZap,
  trivy: parseTrivy,
  sarif: parseSarif,
};

/**
 * Streams a report as findings. Errors (ImportError, with line/offset where known) surface from
 * the iteration; records that are readable but unusable are counted in meta.skipped instead.
 */
export function parseReport(format: ReportFormat, stream: Readable): ReportStream {
  if (!REPORT_FORMATS.includes(format)) throw new ImportError('unknown_format', null, `Unknown report format ${JSON.stringify(format)}`);
  const meta = newMeta(format, SCANNER_OF_FORMAT[format]);
  const parser = PARSERS[format];
  return {
    meta,
    [Symbol.asyncIterator]: () => parser(stream, meta),
  };
}

/** Groups findings into arrays of at most `size`, for batched writes into ingestion. */
export async function* batchFindings(findings: AsyncIterable<NormalizedFinding>, size = 1_000): AsyncGenerator<NormalizedFinding[]> {
  if (!Number.isInteger(size) || size < 1) throw new RangeError('Batch size must be a positive integer');
  let batch: NormalizedFinding[] = [];
  for await (const f of findings) {
    batch.push(f);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
