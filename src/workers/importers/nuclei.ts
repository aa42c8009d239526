// nuclei results, as every nuclei version writes them:
// - JSON Lines (-json / -jsonl), one result per line; an empty file (what nuclei writes when it
//   finds nothing) is a report of zero findings;
// - the JSON array export (-je / -json-export), read as a stream of array elements;
// - keys of nuclei 2.x before 2.6 (`templateID`, `matched`, `matcher_name`, `extracted_results`,
//   `curl_command`) as well as today's (`template-id`, `matched-at`, `matcher-name`, ...).
// A line that is not JSON (a corrupt or truncated file) stops the import with its line number; a
// JSON record that is not a usable result is skipped and counted.
import type { NormalizedFindingInput } from '../../findings/index.ts';
import {
  arr,
  isObject,
  parseJsonLine,
  peekStream,
  readLines,
  severityFromText,
  skip,
  str,
  tryFinalize,
  type ImportedFinding,
  type ReportMeta,
} from './common.ts';
import { readJsonRecords } from './json-records.ts';

const list = (v: unknown): string[] =>
  (typeof v === 'string' ? v.split(',') : arr(v).map((x) => (typeof x === 'string' ? x : '')))
    .map((x) => x.trim())
    .filter(Boolean);

/** The first present key of several spellings (nuclei renamed its keys in 2.6). */
const pick = (r: Record<string, unknown>, ...keys: string[]) => {
  for (const k of keys) if (r[k] !== undefined && r[k] !== null) return r[k];
  return undefined;
};

/** Where a result matched: a URL for web templates, host:port for network ones. */
function locationOf(r: Record<string, unknown>): NormalizedFindingInput['location'] | null {
  const matched = str(pick(r, 'matched-at', 'matched')) ?? str(r.url) ?? str(r.host);
  if (!matched) return null;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(matched)) {
    try {
      const u = new URL(matched);
      if (u.protocol === 'http:' || u.protocol === 'https:') return { url: matched };
      return { host: u.hostname, ...(u.port ? { port: Number(u.port) } : {}), protocol: u.protocol.replace(/:$/, '') };
    } catch {
      return { host: matched };
    }
  }
  const m = /^\[?([^\]\s]+?)\]?:(\d{1,5})$/.exec(matched);
  const port = m ? Number(m[2]) : Number(str(r.port) ?? NaN);
  const type = str(r.type);
  return {
    host: m ? m[1]! : matched,
    ...(Number.isInteger(port) && port <= 65_535 ? { port } : {}),
    ...(type === 'tcp' || type === 'network' || type === 'javascript'
      ? { protocol: 'tcp' }
      : type === 'dns'
        ? { protocol: 'dns' }
        : {}),
  };
}

export function nucleiResultToFinding(r: Record<string, unknown>): NormalizedFindingInput | string {
  const templateId = str(pick(r, 'template-id', 'templateID', 'template_id'));
  if (!templateId) return 'no template-id';
  if (pick(r, 'matcher-status', 'matcher_status') === false) return 'not a match (matcher-status false)';
  const info = isObject(r.info) ? r.info : {};
  const cls = isObject(info.classification) ? info.classification : {};
  const location = locationOf(r);
  if (!location) return 'no matched-at, url or host';
  const matcher = str(pick(r, 'matcher-name', 'matcher_name')) ?? str(pick(r, 'extractor-name', 'extractor_name'));
  const name = str(info.name) ?? templateId;
  const score = Number(cls['cvss-score']);
  const extracted = arr(pick(r, 'extracted-results', 'extracted_results')).filter(
    (x): x is string => typeof x === 'string',
  );
  const tags = list(info.tags);
  const data: Record<string, unknown> = {};
  if (tags.length) data.tags = tags.slice(0, 30);
  for (const k of ['type', 'ip', 'template-path', 'timestamp'] as const) if (str(r[k])) data[k] = str(r[k]);
  const extractor = str(pick(r, 'extractor-name', 'extractor_name'));
  if (extractor) data.extractor = extractor;
  const matchedAt = str(pick(r, 'matched-at', 'matched'));
  return {
    ruleId: templateId,
    title: matcher ? `${name} (${matcher})` : name,
    description: str(info.description),
    severity: severityFromText(info.severity),
    location,
    ...(Number.isFinite(score) && str(cls['cvss-score']) ? { cvss: { score, vector: str(cls['cvss-metrics']) } } : {}),
    cwe: list(cls['cwe-id']),
    cve: list(cls['cve-id']),
    references: list(info.reference),
    remediation: str(info.remediation),
    discriminator: matcher,
    evidence: {
      summary: matchedAt ? `Matched at ${matchedAt}${matcher ? ` by ${matcher}` : ''}` : undefined,
      request: str(r.request),
      response: str(r.response),
      curl: str(pick(r, 'curl-command', 'curl_command')),
      ...(extracted.length ? { extracted } : {}),
      ...(Object.keys(data).length ? { data } : {}),
    },
  };
}

function* oneResult(meta: ReportMeta, rec: unknown, where: string): Generator<ImportedFinding> {
  meta.records += 1;
  if (!isObject(rec)) {
    skip(meta, where, 'not a JSON object');
    return;
  }
  const f = nucleiResultToFinding(rec);
  if (typeof f === 'string') {
    skip(meta, where, f);
    return;
  }
  meta.coverage.addRule(f.ruleId);
  meta.coverage.addHost(f.location.host ?? (f.location.url ? URL.parse(f.location.url)?.hostname : undefined), true);
  const out = tryFinalize(meta, where, f);
  if (out) yield out;
}

export async function* parseNuclei(
  input: AsyncIterable<Buffer | string>,
  meta: ReportMeta,
): AsyncGenerator<ImportedFinding> {
  meta.tool = 'nuclei';
  meta.coverage.addTool({ name: 'nuclei', version: null, scanner: 'template', key: null });
  const { head, stream } = await peekStream(input, 1);
  if (head.startsWith('[')) {
    // -je: one array of results.
    const records = readJsonRecords(
      stream,
      'nuclei',
      (p) => (p.length === 0 ? 'descend' : p.length === 1 ? 'value' : 'skip'),
      meta.cleaned,
    );
    for await (const r of records) {
      const where = `[${String(r.path[0])}]`;
      if ('tooLarge' in r) {
        meta.records += 1;
        skip(meta, where, 'result larger than the size Rampart reads');
        continue;
      }
      yield* oneResult(meta, r.value, where);
    }
    return;
  }
  for await (const { text, lineNo } of readLines(stream, 'nuclei')) {
    yield* oneResult(meta, parseJsonLine(text, lineNo, 'nuclei'), `line ${lineNo}`);
  }
}
