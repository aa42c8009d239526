// Rampart's native report (docs/report-format.md): JSON Lines, a "report" header first, then
// "finding", "progress" and an optional closing "end" line. It is our own format, so the framing
// is strict: a line that is not JSON, a missing header or a wrong count stops the import with its
// line number. One invalid finding does not: it is skipped with its reason and the report counts
// as partial (its findings are recorded, nothing is closed), since what it said is unknown.
// Values PostgreSQL cannot store (NUL, lone surrogates, nesting past MAX_NESTING) are cleaned.
import { normalizedFindingSchema, reportCoverageSchema } from '../../findings/index.ts';
import { cleanValue } from './clean.ts';
import { isScanKind, SCAN_KINDS } from '../../lib/scan-kinds.ts';
import {
  ImportError,
  isObject,
  parseJsonLine,
  readLines,
  skip,
  str,
  type ImportedFinding,
  type ReportMeta,
  type Scanner,
} from './common.ts';

export const NATIVE_VERSION = 1;

export async function* parseNative(
  stream: AsyncIterable<Buffer | string>,
  meta: ReportMeta,
): AsyncGenerator<ImportedFinding> {
  let header = false;
  let ended = false;
  for await (const { text, lineNo } of readLines(stream, 'native')) {
    const rec = parseJsonLine(text, lineNo, 'native');
    const bad = (msg: string) => new ImportError('invalid_report', 'native', msg, { line: lineNo });
    if (!isObject(rec) || typeof rec.type !== 'string') throw bad('Each line must be a JSON object with a "type"');
    if (ended) throw bad('Nothing may follow the "end" line');
    if (!header) {
      if (rec.type !== 'report') throw bad('The first line must be the {"type":"report",...} header');
      if (rec.version !== NATIVE_VERSION)
        throw bad(
          `Unsupported report version ${JSON.stringify(rec.version)}; this server reads version ${NATIVE_VERSION}`,
        );
      if (!isScanKind(rec.scanner)) throw bad(`"scanner" must be one of ${SCAN_KINDS.join(', ')}`);
      meta.scanner = rec.scanner as Scanner;
      const tool = isObject(rec.tool) ? rec.tool : {};
      if (str(rec.partial)) meta.partial = str(rec.partial)!.slice(0, 500);
      if (str(rec.inconclusive)) meta.inconclusive = str(rec.inconclusive)!.slice(0, 500);
      if (rec.coverage !== undefined) {
        const coverage = reportCoverageSchema.safeParse(rec.coverage);
        if (!coverage.success)
          throw bad(
            `Invalid coverage: ${coverage.error.issues
              .slice(0, 3)
              .map((i) => `${i.path.join('.') || 'coverage'}: ${i.message}`)
              .join('; ')}`,
          );
        meta.scanCoverage = coverage.data;
        // The same facts on the import's result page.
        for (const h of coverage.data.hosts ?? []) meta.coverage.addHost(h, null);
        if (coverage.data.ports) meta.coverage.addPorts('tcp', coverage.data.ports);
        for (const id of [...(coverage.data.rules ?? []), ...(coverage.data.templates ?? [])])
          meta.coverage.addRule(id);
        if (coverage.data.rules?.length || coverage.data.templates?.length) meta.coverage.rulesDeclared = true;
        for (const u of coverage.data.urls ?? []) meta.coverage.addTarget(u);
      }
      meta.tool = str(tool.name)
        ? `${str(tool.name)}${str(tool.version) ? ` ${str(tool.version)}` : ''}`.slice(0, 200)
        : null;
      if (str(tool.name))
        meta.coverage.addTool({
          name: str(tool.name)!.slice(0, 200),
          version: str(tool.version)?.slice(0, 100) ?? null,
          scanner: meta.scanner,
          key: null,
        });
      if (str(rec.target)) meta.coverage.addTarget(str(rec.target));
      header = true;
      continue;
    }
    if (rec.type === 'finding') {
      meta.records += 1;
      meta.cleaned.where = `line ${lineNo}`;
      const { type: _type, ...finding } = cleanValue(rec, meta.cleaned, 0, 20) as Record<string, unknown>;
      const parsed = normalizedFindingSchema.safeParse(finding);
      if (!parsed.success) {
        const why = parsed.error.issues
          .slice(0, 3)
          .map((i) => `${i.path.join('.') || 'finding'}: ${i.message}`)
          .join('; ');
        skip(meta, `line ${lineNo}`, `invalid finding (${why})`);
        meta.partial ??= 'Some finding lines were invalid and skipped; nothing is closed as fixed.';
        continue;
      }
      meta.findings += 1;
      yield parsed.data;
    } else if (rec.type === 'end') {
      if (typeof rec.findings === 'number' && rec.findings !== meta.records)
        throw bad(`The end line announces ${rec.findings} findings but ${meta.records} were read (truncated report?)`);
      ended = true;
    } else if (rec.type === 'report') {
      throw bad('A second "report" header');
    } else if (rec.type !== 'progress' && rec.type !== 'log') {
      throw bad(`Unknown line type ${JSON.stringify(rec.type).slice(0, 50)}`);
    }
  }
  if (!header)
    throw new ImportError('invalid_report', 'native', 'The report is empty: it has no {"type":"report",...} header');
}
