// Shared pieces of the report importers: the typed parse error, byte-bounded line and document
// readers, and `finalizeFinding`, which turns a loosely built finding into one the findings schema
// accepts (clipping over-long text, dropping malformed ids) instead of refusing it.
// Over 500 lines on purpose: the limits every importer shares (byte-bounded readers, finalizeFinding's clipping) kept
// in one file so they are read and changed together.
import {
  normalizedFindingSchema,
  type NormalizedFinding,
  type NormalizedFindingInput,
  type ReportCoverage,
  type Severity,
} from '../../findings/index.ts';
import { cleanString, cleanValue, CleanLog, safeMessage, type CleanKind } from './clean.ts';
import { Coverage, type CoverageJson } from './coverage.ts';

/** The findings model's scanner kinds (findings-schemas.ts SCANNERS). */
export type Scanner = 'port' | 'template' | 'webapp' | 'container' | 'edge';
const CVE_RE = /^CVE-\d{4}-\d{4,9}$/i;

export const REPORT_FORMATS = [
  'native',
  'nmap',
  'nuclei',
  'zap',
  'trivy',
  'sarif',
  'nessus',
  'openvas',
  'burp',
  'grype',
  'testssl',
] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** Longest accepted JSON Lines line (a nuclei line carries request + response: 1 MiB is generous). */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;
/** Skipped records are counted; the first few keep their reason for the import summary. */
const MAX_SKIP_SAMPLES = 20;

export type ImportErrorCode =
  'invalid_json' | 'line_too_long' | 'value_too_large' | 'invalid_xml' | 'invalid_report' | 'unknown_format';

/** A report that cannot be read; `line` (1-based) and `offset` (0-based characters) say where. */
export class ImportError extends Error {
  readonly code: ImportErrorCode;
  readonly format: ReportFormat | null;
  readonly line: number | undefined;
  readonly offset: number | undefined;
  /** `where` is appended to the message unless `located` says the message already names it. */
  constructor(
    code: ImportErrorCode,
    format: ReportFormat | null,
    message: string,
    where: { line?: number; offset?: number } = {},
    located = false,
  ) {
    const at = located
      ? ''
      : where.line !== undefined
        ? ` (line ${where.line}${where.offset !== undefined ? `, offset ${where.offset}` : ''})`
        : where.offset !== undefined
          ? ` (at byte ${where.offset})`
          : '';
    // The message is stored and shown: never raw report bytes (a NUL cannot even be stored).
    super(safeMessage(`${message}${at}`));
    this.name = 'ImportError';
    this.code = code;
    this.format = format;
    this.line = where.line;
    this.offset = where.offset;
  }
}

/**
 * A finding as the importers hand it over: valid under the findings schema, plus the tool whose
 * rule namespace it belongs to when its rule id is that tool's own (a SARIF rule, a ZAP plugin
 * id, a Nessus plugin id). Findings of different tools then never merge; rule ids that name the
 * same thing whoever reports it (an open port, a CVE in a package, a nuclei template) carry none.
 */
export type ImportedFinding = NormalizedFinding & {
  tool?: string;
  /** The class of check that reported it (Trivy's vuln, misconfig, secret, license): a result closes only the classes it ran. */
  checkClass?: string;
  /** Other names of the finding's host in the report (an nmap host's address and names): used to match it to an asset. */
  aliases?: string[];
};

/** Why records were skipped: the reason, how often, and the first few places. */
export interface SkipReason {
  reason: string;
  count: number;
  where: string[];
}

/** Filled in while a report is read: the scanner kind, what was skipped and cleaned, coverage. */
export interface ReportMeta {
  format: ReportFormat;
  scanner: Scanner;
  tool: string | null;
  /** Records (results, alerts, ports, ...) read from the report, used or not. */
  records: number;
  /** Records that report a check that passed (not a problem): neither findings nor skipped. */
  passed: number;
  findings: number;
  skipped: number;
  skipSamples: { where: string; reason: string }[];
  /** Skips grouped by reason (at most MAX_SKIP_REASONS reasons; the rest under "other"). */
  skipReasons: SkipReason[];
  /** Values cleaned so the rest of the report could be kept. */
  cleaned: CleanLog;
  /** What the report says was looked at: tools, checks, hosts, ports, targets. */
  coverage: Coverage;
  /** The native header's `partial` reason: findings are recorded, nothing is closed. */
  partial?: string;
  /** The native header's `inconclusive` reason: nothing was looked at, so nothing is closed. */
  inconclusive?: string;
  /**
   * What a native report's header says it covered (Rampart's scanners; nmap imports derive one
   * from their scan info): stored on the scan for coverage-based closing.
   */
  scanCoverage?: ReportCoverage;
}

/** ReportMeta as plain data (stored in the import's summary, sent between threads). */
export interface ReportMetaJson {
  format: ReportFormat;
  scanner: Scanner;
  tool: string | null;
  records: number;
  passed: number;
  findings: number;
  skipped: number;
  skipSamples: { where: string; reason: string }[];
  skipReasons: SkipReason[];
  cleaned: { counts: Record<CleanKind, number>; samples: { kind: CleanKind; where: string }[] };
  coverage: CoverageJson;
  partial?: string;
  inconclusive?: string;
  scanCoverage?: ReportCoverage;
}

export function metaJson(m: ReportMeta): ReportMetaJson {
  return {
    format: m.format,
    scanner: m.scanner,
    tool: m.tool,
    records: m.records,
    passed: m.passed,
    findings: m.findings,
    skipped: m.skipped,
    skipSamples: m.skipSamples,
    skipReasons: m.skipReasons,
    cleaned: { counts: { ...m.cleaned.counts }, samples: [...m.cleaned.samples] },
    coverage: m.coverage.toJSON(),
    ...(m.partial ? { partial: m.partial } : {}),
    ...(m.inconclusive ? { inconclusive: m.inconclusive } : {}),
    ...(m.scanCoverage ? { scanCoverage: m.scanCoverage } : {}),
  };
}

export function newMeta(format: ReportFormat, scanner: Scanner): ReportMeta {
  return {
    format,
    scanner,
    tool: null,
    records: 0,
    passed: 0,
    findings: 0,
    skipped: 0,
    skipSamples: [],
    skipReasons: [],
    cleaned: new CleanLog(),
    coverage: new Coverage(),
  };
}

const MAX_SKIP_REASONS = 30;

/** Counts a skipped record under its reason (the reason is a short, stable sentence). */
export function skip(meta: ReportMeta, where: string, reason: string): void {
  meta.skipped += 1;
  const r = safeMessage(reason, 300);
  if (meta.skipSamples.length < MAX_SKIP_SAMPLES) meta.skipSamples.push({ where, reason: r });
  const key =
    meta.skipReasons.length >= MAX_SKIP_REASONS && !meta.skipReasons.some((x) => x.reason === r) ? 'other reasons' : r;
  let entry = meta.skipReasons.find((x) => x.reason === key);
  if (!entry) {
    entry = { reason: key, count: 0, where: [] };
    meta.skipReasons.push(entry);
  }
  entry.count += 1;
  if (entry.where.length < 5) entry.where.push(where);
}

// ---- readers --------------------------------------------------------------------------------

/**
 * The stream's lines (without CR/LF), 1-based numbers, blank lines left out. A line longer than
 * `maxBytes` is an error as soon as it is seen, so memory stays bounded by the limit.
 */
export async function* readLines(
  stream: AsyncIterable<Buffer | string>,
  format: ReportFormat,
  maxBytes = MAX_LINE_BYTES,
): AsyncGenerator<{ text: string; lineNo: number }> {
  let parts: Buffer[] = [];
  let partLen = 0;
  let lineNo = 0;
  const finish = (buf: Buffer) => {
    lineNo += 1;
    let end = buf.length;
    if (end > 0 && buf[end - 1] === 0x0d) end -= 1;
    // A byte-order mark (some Windows tools write one) would make the first line invalid JSON.
    const start = lineNo === 1 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
    return buf.toString('utf8', start, Math.max(start, end));
  };
  for await (const raw of stream) {
    const chunk: Buffer = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : (raw as Buffer);
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) break;
      if (partLen + (nl - start) > maxBytes)
        throw new ImportError('line_too_long', format, `A line is longer than ${maxBytes} bytes`, { line: lineNo + 1 });
      const piece = chunk.subarray(start, nl);
      const whole = partLen === 0 ? piece : Buffer.concat([...parts, piece]);
      parts = [];
      partLen = 0;
      const text = finish(whole);
      if (text.trim() !== '') yield { text, lineNo };
      start = nl + 1;
    }
    if (start < chunk.length) {
      partLen += chunk.length - start;
      if (partLen > maxBytes)
        throw new ImportError('line_too_long', format, `A line is longer than ${maxBytes} bytes`, { line: lineNo + 1 });
      // Copy: the stream may reuse its buffer.
      parts.push(Buffer.from(chunk.subarray(start)));
    }
  }
  if (partLen > 0) {
    const text = finish(Buffer.concat(parts));
    if (text.trim() !== '') yield { text, lineNo };
  }
}

/** Parses one JSON Lines line; a syntax error names the line and the column. */
export function parseJsonLine(text: string, lineNo: number, format: ReportFormat): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const pos = /position (\d+)/.exec(String((err as Error).message));
    const msg = (err as Error).message.replace(/, "[^]*$/, '');
    throw new ImportError('invalid_json', format, `Line is not valid JSON: ${msg}`, {
      line: lineNo,
      offset: pos ? Number(pos[1]) : undefined,
    });
  }
}

// ---- value helpers --------------------------------------------------------------------------

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() !== '' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined;
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

export function clip(s: string | undefined, max: number): string | undefined {
  if (s === undefined) return undefined;
  const t = s.trim();
  if (t === '') return undefined;
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** nuclei, Trivy and native severities; anything unknown is info (never refused). */
export function severityFromText(v: unknown): Severity {
  const s = typeof v === 'string' ? v.trim().toLowerCase() : '';
  if (s === 'critical' || s === 'high' || s === 'medium' || s === 'low' || s === 'info') return s;
  if (s === 'moderate') return 'medium';
  if (s === 'informational' || s === 'information' || s === 'unknown' || s === 'none') return 'info';
  return 'info';
}

/** CVSS v3 qualitative rating of a base score. */
export function severityFromScore(score: number): Severity {
  if (score >= 9) return 'critical';
  if (score >= 7) return 'high';
  if (score >= 4) return 'medium';
  if (score > 0) return 'low';
  return 'info';
}

/** Collapses HTML (ZAP descriptions) to plain text. */
export function htmlToText(html: string): string {
  return html
    .replace(/<\s*(br|\/p|\/li|\/div)\s*\/?>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export function extractUrls(text: string): string[] {
  return [...text.matchAll(/https?:\/\/[^\s<>"']+/g)].map((m) => m[0].replace(/[.,;)]+$/, ''));
}

const CWE_ANY = /^(?:CWE-)?(\d{1,6})$/i;
const CVSS_VECTOR = /^(?:CVSS:\d\.\d\/)?[A-Za-z]{1,3}:[A-Za-z0-9.]+(?:\/[A-Za-z]{1,3}:[A-Za-z0-9.]+)*$/;

const LOCATION_CAPS: Record<string, number> = {
  url: 2_000,
  host: 253,
  protocol: 20,
  path: 2_000,
  param: 200,
  package: 300,
  version: 200,
  file: 1_000,
};

/**
 * Makes a best-effort finding valid: text clipped to the schema caps, malformed CWE/CVE ids,
 * references and CVSS dropped, evidence over its size cap trimmed. Throws only if the finding
 * still fails (no rule id or title), which callers count as a skipped record.
 */
export function finalizeFinding(input: NormalizedFindingInput, log?: CleanLog): NormalizedFinding {
  const f = cleanFinding(input, log);
  const location: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(f.location ?? {})) {
    if (v === undefined || v === null) continue;
    if (k === 'port') {
      if (Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 65_535) location.port = v;
    } else if (k === 'line') {
      if (Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 10_000_000) location.line = v;
    } else if (LOCATION_CAPS[k] !== undefined) {
      const c = clip(String(v), LOCATION_CAPS[k]);
      if (c) location[k] = c;
    }
  }
  const cwe = f.cwe
    ?.map((x) => (typeof x === 'number' ? x : Number(CWE_ANY.exec(String(x).trim())?.[1] ?? NaN)))
    .filter((n) => Number.isInteger(n) && n >= 1 && n <= 999_999)
    .slice(0, 20);
  const cve = f.cve
    ?.map((x) => String(x).trim())
    .filter((x) => CVE_RE.test(x))
    .slice(0, 50);
  const references = [...new Set(f.references ?? [])]
    .filter((u) => {
      if (typeof u !== 'string' || u.length > 2_000) return false;
      try {
        return /^https?:$/.test(new URL(u).protocol);
      } catch {
        return false;
      }
    })
    .slice(0, 20);
  let cvss = f.cvss;
  if (cvss) {
    const score = Number(cvss.score);
    const vector =
      typeof cvss.vector === 'string' && cvss.vector.length <= 200 && CVSS_VECTOR.test(cvss.vector.trim())
        ? cvss.vector.trim()
        : undefined;
    cvss = Number.isFinite(score) && score >= 0 && score <= 10 ? { score, ...(vector ? { vector } : {}) } : undefined;
  }
  let evidence = f.evidence;
  if (evidence) {
    evidence = { ...evidence };
    if (evidence.extracted)
      evidence.extracted = evidence.extracted
        .filter((x) => typeof x === 'string')
        .slice(0, 50)
        .map((x) => x.slice(0, 100_000));
    if (evidence.data) evidence.data = cleanValue(evidence.data, log) as Record<string, unknown>;
    if (evidence.data && JSON.stringify(evidence.data).length > 16_384) {
      // Keep the small scalar fields; the bulky ones are what overflowed.
      const small: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(evidence.data)) if (JSON.stringify(v ?? null).length <= 1_024) small[k] = v;
      evidence.data = JSON.stringify(small).length <= 16_384 ? small : undefined;
      if (!evidence.data) delete evidence.data;
    }
    for (const k of ['summary', 'request', 'response', 'curl', 'snippet'] as const) {
      const v = evidence[k];
      if (typeof v !== 'string' || v === '') delete evidence[k];
      else if (v.length > 1_000_000) evidence[k] = v.slice(0, 1_000_000);
    }
    if (Object.keys(evidence).length === 0) evidence = undefined;
  }
  const candidate: NormalizedFindingInput = {
    ruleId: clip(f.ruleId, 200) ?? '',
    title: clip(f.title, 500) ?? '',
    severity: f.severity,
    location,
    ...(clip(f.description, 20_000) ? { description: clip(f.description, 20_000) } : {}),
    ...(clip(f.remediation, 10_000) ? { remediation: clip(f.remediation, 10_000) } : {}),
    ...(cvss ? { cvss } : {}),
    ...(cwe && cwe.length ? { cwe } : {}),
    ...(cve && cve.length ? { cve } : {}),
    ...(references.length ? { references } : {}),
    ...(evidence ? { evidence } : {}),
    ...(clip(f.discriminator, 200) ? { discriminator: clip(f.discriminator, 200) } : {}),
  };
  const parsed = normalizedFindingSchema.safeParse(candidate);
  if (!parsed.success)
    throw new Error(parsed.error.issues.map((i) => `${i.path.join('.') || 'finding'}: ${i.message}`).join('; '));
  return parsed.data;
}

/** Every text field of a finding with NUL and unpaired surrogates replaced (counted in `log`). */
function cleanFinding(f: NormalizedFindingInput, log?: CleanLog): NormalizedFindingInput {
  const s = (v: string | undefined) => (typeof v === 'string' ? cleanString(v, log) : v);
  const location: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(f.location ?? {})) location[k] = typeof v === 'string' ? cleanString(v, log) : v;
  const ev = f.evidence;
  return {
    ...f,
    ruleId: s(f.ruleId)!,
    title: s(f.title)!,
    description: s(f.description),
    remediation: s(f.remediation),
    discriminator: s(f.discriminator),
    location,
    ...(ev
      ? {
          evidence: {
            ...ev,
            summary: s(ev.summary),
            request: s(ev.request),
            response: s(ev.response),
            curl: s(ev.curl),
            snippet: s(ev.snippet),
            ...(ev.extracted
              ? { extracted: ev.extracted.map((x) => (typeof x === 'string' ? cleanString(x, log) : x)) }
              : {}),
          },
        }
      : {}),
  };
}

/**
 * finalizeFinding that counts the result: a finding (with its tool namespace, when given), or a
 * skipped record with its reason.
 */
export function tryFinalize(
  meta: ReportMeta,
  where: string,
  f: NormalizedFindingInput,
  tool?: string | null,
  checkClass?: string,
): ImportedFinding | null {
  meta.cleaned.where = where;
  try {
    const out: ImportedFinding = finalizeFinding(f, meta.cleaned);
    if (tool) out.tool = tool;
    if (checkClass) out.checkClass = checkClass;
    meta.findings += 1;
    return out;
  } catch (err) {
    skip(meta, where, (err as Error).message);
    return null;
  }
}

/**
 * The first non-blank characters of a stream (after a byte-order mark), and a stream that still
 * yields every byte. For parsers whose tool writes more than one layout (an array or JSON Lines).
 */
export async function peekStream(
  stream: AsyncIterable<Buffer | string>,
  want = 64,
): Promise<{ head: string; stream: AsyncIterable<Buffer> }> {
  const it = (stream as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
  const seen: Buffer[] = [];
  let head = '';
  while (head.length < want) {
    const r = await it.next();
    if (r.done) break;
    const chunk = typeof r.value === 'string' ? Buffer.from(r.value) : r.value;
    seen.push(chunk);
    head = Buffer.concat(seen)
      .toString('utf8')
      .replace(/^\uFEFF/, '')
      .trimStart();
  }
  async function* rest(): AsyncGenerator<Buffer> {
    yield* seen;
    for (;;) {
      const r = await it.next();
      if (r.done) return;
      yield typeof r.value === 'string' ? Buffer.from(r.value) : r.value;
    }
  }
  return { head, stream: rest() };
}

/** Resolves when a writable stream can take more, or is gone (a failed spool must not hang the import). */
export function drained(
  out: NodeJS.WritableStream & { once(e: string, f: () => void): unknown; off(e: string, f: () => void): unknown },
): Promise<void> {
  return new Promise<void>((resolve) => {
    // Whichever comes first removes the other: a spool drains many times, and a 'close' listener
    // left behind by each drain would pile up for the life of the stream.
    const done = () => {
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    out.once('drain', done);
    out.once('close', done);
  });
}
