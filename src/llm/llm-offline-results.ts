// Offline analysis of a result file: the report is read by the platform's own importers
// (src/workers/importers: every import format), findings are grouped by rule
// and ranked, and a Markdown summary is written: counts by severity and the top fixes. The same
// facts are the evidence a language model is given when one is configured.
//
// The file is untrusted and read while a person waits: it is parsed on a thread with a capped heap
// (the importers' parse thread), so a file built to exhaust memory ends that thread, never the
// server, and the groups kept here are bounded whatever the number of rules in the file.
import { SEVERITIES, SEVERITY_RANK } from '../findings/findings-schemas.ts';
import type { NormalizedFinding, Severity } from '../findings/index.ts';
import { DETECT_BYTES, detectFormat, ImportError, type ReportFormat } from '../workers/importers/index.ts';
import { parseOnThread, ResourceExhausted } from '../workers/importers/parse-on-thread.ts';
import { FORMAT_LABELS } from '../workers/ingestion-schemas.ts';
import { llmError } from './llm-errors.ts';
import { OFFLINE_LABEL, type SeverityCounts } from './llm-schemas.ts';

export const FORMAT_NAMES: Record<ReportFormat, string> = { ...FORMAT_LABELS, native: 'Rampart native report' };

/** Findings of one rule, ranked for "top fixes". */
export interface FindingGroup {
  ruleId: string;
  title: string;
  severity: Severity;
  count: number;
  /** Up to 5 example places (host:port, URL, package@version, file:line). */
  places: string[];
  remediation: string | null;
  description: string | null;
  cves: string[];
}

export interface ResultAnalysis {
  fileName: string;
  format: ReportFormat;
  tool: string | null;
  counts: SeverityCounts;
  skipped: number;
  groups: FindingGroup[];
  /** Findings of rules beyond MAX_GROUPS: counted, not grouped. */
  ungrouped: number;
}

const MAX_PLACES = 5;
/** Rules kept with their details; a file with more counts the rest without keeping them. */
export const MAX_GROUPS = 2_000;
/** Bytes handed to the parse thread at a time. */
const CHUNK_BYTES = 64 * 1024;

export interface AnalyzeOptions {
  /** Heap of the parse thread, MB (IMPORT_PARSE_HEAP_MB). */
  heapMb?: number | undefined;
}

async function* chunksOf(data: Buffer): AsyncGenerator<Buffer> {
  for (let at = 0; at < data.length; at += CHUNK_BYTES) yield data.subarray(at, at + CHUNK_BYTES);
}
const clip = (s: string | undefined | null, n: number) => (s ? (s.length > n ? `${s.slice(0, n - 1)}…` : s) : null);

function placeOf(f: NormalizedFinding): string | null {
  const l = f.location ?? {};
  if (l.url) return l.url;
  if (l.package) return `${l.package}${l.version ? `@${l.version}` : ''}`;
  if (l.file) return `${l.file}${l.line !== undefined ? `:${l.line}` : ''}`;
  if (l.host) return `${l.host}${l.port !== undefined ? `:${l.port}` : ''}${l.path ?? ''}`;
  return null;
}

/** Reads a result file with the importers; a file that is not a known report is llm_result_file_unreadable. */
export async function analyzeResultFile(
  fileName: string,
  data: Buffer,
  opts: AnalyzeOptions = {},
): Promise<ResultAnalysis> {
  const format = detectFormat(data.subarray(0, DETECT_BYTES), fileName);
  if (!format)
    throw llmError(
      'llm_result_file_unreadable',
      'This file is not a result file Rampart can read. Upload an nmap XML, nuclei JSON Lines, OWASP ZAP JSON, Trivy JSON, SARIF 2.1.0 or Rampart native report.',
    );
  const report = parseOnThread(format, chunksOf(data), {
    batchSize: 500,
    ...(opts.heapMb ? { heapMb: opts.heapMb } : {}),
  });
  const counts: SeverityCounts = { critical: 0, high: 0, medium: 0, low: 0, info: 0, total: 0 };
  const groups = new Map<string, FindingGroup>();
  let ungrouped = 0;
  const add = (f: NormalizedFinding) => {
    counts[f.severity] += 1;
    counts.total += 1;
    const key = `${f.ruleId}\u0000${f.title}`;
    let g = groups.get(key);
    if (!g) {
      if (groups.size >= MAX_GROUPS) {
        ungrouped += 1;
        return;
      }
      g = {
        ruleId: f.ruleId,
        title: f.title,
        severity: f.severity,
        count: 0,
        places: [],
        remediation: null,
        description: null,
        cves: [],
      };
      groups.set(key, g);
    }
    g.count += 1;
    if (SEVERITY_RANK[f.severity] > SEVERITY_RANK[g.severity]) g.severity = f.severity;
    const place = placeOf(f);
    if (place && g.places.length < MAX_PLACES && !g.places.includes(place)) g.places.push(place);
    g.remediation ??= clip(f.remediation, 600);
    g.description ??= clip(f.description, 600);
    for (const c of f.cve ?? []) if (g.cves.length < 5 && !g.cves.includes(c)) g.cves.push(c);
  };
  try {
    for await (const batch of report) batch.findings.forEach(add);
  } catch (e) {
    if (e instanceof ImportError)
      throw llmError('llm_result_file_unreadable', `The ${FORMAT_NAMES[format]} file could not be read: ${e.message}`);
    if (e instanceof ResourceExhausted)
      throw llmError(
        'llm_result_file_too_complex',
        `The ${FORMAT_NAMES[format]} file needs more memory or time to read than an explanation may use.`,
      );
    throw e;
  }
  const meta = report.meta();
  const ranked = [...groups.values()].sort(
    (a, b) =>
      SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || b.count - a.count || a.title.localeCompare(b.title),
  );
  return { fileName, format, tool: meta.tool, counts, skipped: meta.skipped, groups: ranked, ungrouped };
}

const SEVERITY_WORD: Record<Severity, string> = {
  critical: 'Critical',
  high: 'High',
  medium: 'Medium',
  low: 'Low',
  info: 'Info',
};

/** One line of Markdown with no way to break out of the list item or inject links/HTML. */
export function mdInline(s: string): string {
  return s
    .replace(/[\r\n]+/g, ' ')
    .replace(/([\\`*_[\]<>|#])/g, '\\$1')
    .trim();
}

/** The offline answer: Markdown, labelled "offline analysis". */
export function offlineResultSummary(a: ResultAnalysis, topN = 10): string {
  const lines: string[] = [];
  lines.push(
    `**${OFFLINE_LABEL[0]!.toUpperCase()}${OFFLINE_LABEL.slice(1)}** of \`${mdInline(a.fileName)}\` (${FORMAT_NAMES[a.format]}${a.tool ? `, ${mdInline(a.tool)}` : ''}).`,
  );
  lines.push('');
  if (a.counts.total === 0) {
    lines.push('The file holds no findings. Nothing to fix from this result.');
    if (a.skipped) lines.push('', `${a.skipped} record(s) could not be read and were skipped.`);
    return lines.join('\n');
  }
  lines.push('## Summary by severity', '', '| Severity | Findings |', '|---|---|');
  for (const s of [...SEVERITIES].reverse()) lines.push(`| ${SEVERITY_WORD[s]} | ${a.counts[s]} |`);
  lines.push(`| **Total** | **${a.counts.total}** |`, '');
  const urgent = a.counts.critical + a.counts.high;
  lines.push(
    urgent > 0 ? `${urgent} finding(s) are critical or high: fix those first.` : 'No critical or high findings.',
  );
  lines.push('', '## Top fixes', '');
  const top = a.groups.filter((g) => g.severity !== 'info').slice(0, topN);
  const list = top.length ? top : a.groups.slice(0, topN);
  list.forEach((g, i) => {
    const where = g.places.length
      ? ` in ${g.places.map((p) => `\`${mdInline(p)}\``).join(', ')}${g.count > g.places.length ? ' and more' : ''}`
      : '';
    lines.push(
      `${i + 1}. **${SEVERITY_WORD[g.severity]}: ${mdInline(g.title)}** (${g.count} finding${g.count === 1 ? '' : 's'}${where})${g.cves.length ? ` [${g.cves.join(', ')}]` : ''}`,
    );
    lines.push(
      `   Fix: ${g.remediation ? mdInline(g.remediation) : 'no remediation in the file; see the finding for details.'}`,
    );
  });
  if (a.groups.length > list.length)
    lines.push('', `${a.groups.length - list.length} more rule(s) with findings are not listed here.`);
  if (a.ungrouped)
    lines.push(
      '',
      `${a.ungrouped} finding(s) of rules beyond the first ${MAX_GROUPS} are counted above but not grouped.`,
    );
  if (a.skipped) lines.push('', `${a.skipped} record(s) could not be read and were skipped.`);
  return lines.join('\n');
}
