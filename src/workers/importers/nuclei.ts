// nuclei -jsonl: one result per line. A line that is not JSON (a corrupt or truncated file) stops
// the import with its line number; a JSON line that is not a usable result is skipped and counted.
import type { Readable } from 'node:stream';
import type { NormalizedFinding, NormalizedFindingInput } from '../../findings/index.ts';
import { arr, isObject, parseJsonLine, readLines, severityFromText, skip, str, tryFinalize, type ReportMeta } from './common.ts';

const list = (v: unknown): string[] => (typeof v === 'string' ? v.split(',') : arr(v).map((x) => (typeof x === 'string' ? x : ''))).map((x) => x.trim()).filter(Boolean);

/** Where a result matched: a URL for web templates, host:port for network ones. */
function locationOf(r: Record<string, unknown>): NormalizedFindingInput['location'] | null {
  const matched = str(r['matched-at']) ?? str(r.url) ?? str(r.host);
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
    ...(type === 'tcp' || type === 'network' || type === 'javascript' ? { protocol: 'tcp' } : type === 'dns' ? { protocol: 'dns' } : {}),
  };
}

export function nucleiResultToFinding(r: Record<string, unknown>): NormalizedFindingInput | string {
  const templateId = str(r['template-id']) ?? str(r.templateID);
  if (!templateId) return 'no template-id';
  if (r['matcher-status'] === false) return 'not a match (matcher-status false)';
  const info = isObject(r.info) ? r.info : {};
  const cls = isObject(info.classification) ? info.classification : {};
  const location = locationOf(r);
  if (!location) return 'no matched-at, url or host';
  const matcher = str(r['matcher-name']) ?? str(r['extractor-name']);
  const name = str(info.name) ?? templateId;
  const score = Number(cls['cvss-score']);
  const extracted = arr(r['extracted-results']).filter((x): x is string => typeof x === 'string');
  const tags = list(info.tags);
  const data: Record<string, unknown> = {};
  if (tags.length) data.tags = tags.slice(0, 30);
  for (const k of ['type', 'ip', 'template-path', 'timestamp'] as const) if (str(r[k])) data[k] = str(r[k]);
  if (str(r['extractor-name'])) data.extractor = str(r['extractor-name']);
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
      summary: str(r['matched-at']) ? `Matched at ${str(r['matched-at'])}${matcher ? ` by ${matcher}` : ''}` : undefined,
      request: str(r.request),
      response: str(r.response),
      curl: str(r['curl-command']),
      ...(extracted.length ? { extracted } : {}),
      ...(Object.keys(data).length ? { data } : {}),
    },
  };
}

export async function* parseNuclei(stream: Readable, meta: ReportMeta): AsyncGenerator<NormalizedFinding> {
  meta.tool = 'nuclei';
  for await (const { text, lineNo } of readLines(stream, 'nuclei')) {
    const rec = parseJsonLine(text, lineNo, 'nuclei');
    const where = `line ${lineNo}`;
    if (!isObject(rec)) {
      skip(meta, where, 'not a JSON object');
      continue;
    }
    const f = nucleiResultToFinding(rec);
    if (typeof f === 'string') {
      skip(meta, where, f);
      continue;
    }
    const out = tryFinalize(meta, where, f);
    if (out) yield out;
  }
}
