// Rampart's native report (docs/report-format.md): JSON Lines, a "report" header first, then
// "finding", "progress" and an optional closing "end" line. It is our own format, so it is strict:
// any invalid line stops the import with its line number rather than being skipped.
import type { Readable } from 'node:stream';
import { normalizedFindingSchema, type NormalizedFinding } from '../../findings/index.ts';
import { ImportError, SCANNER_KINDS, isObject, parseJsonLine, readLines, str, type ReportMeta, type Scanner } from './common.ts';

export const NATIVE_VERSION = 1;

export async function* parseNative(stream: Readable, meta: ReportMeta): AsyncGenerator<NormalizedFinding> {
  let header = false;
  let ended = false;
  for await (const { text, lineNo } of readLines(stream, 'native')) {
    const rec = parseJsonLine(text, lineNo, 'native');
    const bad = (msg: string) => new ImportError('invalid_report', 'native', msg, { line: lineNo });
    if (!isObject(rec) || typeof rec.type !== 'string') throw bad('Each line must be a JSON object with a "type"');
    if (ended) throw bad('Nothing may follow the "end" line');
    if (!header) {
      if (rec.type !== 'report') throw bad('The first line must be the {"type":"report",...} header');
      if (rec.version !== NATIVE_VERSION) throw bad(`Unsupported report version ${JSON.stringify(rec.version)}; this server reads version ${NATIVE_VERSION}`);
      if (!SCANNER_KINDS.includes(rec.scanner as Scanner)) throw bad(`"scanner" must be one of ${SCANNER_KINDS.join(', ')}`);
      meta.scanner = rec.scanner as Scanner;
      const tool = isObject(rec.tool) ? rec.tool : {};
      if (str(rec.partial)) meta.partial = str(rec.partial)!.slice(0, 500);
      meta.tool = str(tool.name) ? `${str(tool.name)}${str(tool.version) ? ` ${str(tool.version)}` : ''}`.slice(0, 200) : null;
      header = true;
      continue;
    }
    if (rec.type === 'finding') {
      const { type: _type, ...finding } = rec;
      const parsed = normalizedFindingSchema.safeParse(finding);
      if (!parsed.success) throw bad(`Invalid finding: ${parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || 'finding'}: ${i.message}`).join('; ')}`);
      meta.findings += 1;
      yield parsed.data;
    } else if (rec.type === 'end') {
      if (typeof rec.findings === 'number' && rec.findings !== meta.findings) throw bad(`The end line announces ${rec.findings} findings but ${meta.findings} were read (truncated report?)`);
      ended = true;
    } else if (rec.type === 'report') {
      throw bad('A second "report" header');
    } else if (rec.type !== 'progress' && rec.type !== 'log') {
      throw bad(`Unknown line type ${JSON.stringify(rec.type).slice(0, 50)}`);
    }
  }
  if (!header) throw new ImportError('invalid_report', 'native', 'The report is empty: it has no {"type":"report",...} header');
}
