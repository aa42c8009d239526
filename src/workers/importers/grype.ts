// Grype JSON (-o json), streamed one match at a time: matches[].vulnerability, .artifact and
// .relatedVulnerabilities (the CVE behind a GHSA or distro advisory), with `descriptor` (the
// grype version) and `source` (the scanned image or directory) as coverage. Every match is an
// affected package, whatever its fix state (`fixed` names the version that fixes it); matches
// the configuration ignored (ignoredMatches) are skipped with that reason.
import type { NormalizedFindingInput } from '../../findings/index.ts';
import {
  arr,
  ImportError,
  isObject,
  severityFromText,
  skip,
  str,
  tryFinalize,
  type ImportedFinding,
  type ReportMeta,
} from './common.ts';
import { readJsonRecords, type JsonPath, type JsonPick } from './json-records.ts';

function cvssOf(...vulns: Record<string, unknown>[]): { score: number; vector?: string } | undefined {
  for (const v of vulns) {
    const list = arr(v.cvss).filter(isObject);
    const best = list.find((c) => /^3|^4/.test(str(c.version) ?? '')) ?? list[0];
    const metrics = best && isObject(best.metrics) ? best.metrics : null;
    if (metrics && typeof metrics.baseScore === 'number')
      return { score: metrics.baseScore, vector: str(best!.vector) };
  }
  return undefined;
}

function matchFinding(m: Record<string, unknown>): NormalizedFindingInput | string {
  const v = isObject(m.vulnerability) ? m.vulnerability : {};
  const a = isObject(m.artifact) ? m.artifact : {};
  const id = str(v.id);
  const pkg = str(a.name);
  if (!id || !pkg) return 'no vulnerability id or package name';
  const related = arr(m.relatedVulnerabilities).filter(isObject);
  const installed = str(a.version);
  const fix = isObject(v.fix) ? v.fix : {};
  const fixed = arr(fix.versions).filter((x): x is string => typeof x === 'string');
  const state = str(fix.state) ?? (str(v.fixedInVersion) ? 'fixed' : 'unknown');
  if (str(v.fixedInVersion)) fixed.push(str(v.fixedInVersion)!);
  const path = arr(a.locations)
    .filter(isObject)
    .map((l) => str(l.path))
    .find(Boolean);
  const description = str(v.description) ?? related.map((r) => str(r.description)).find(Boolean);
  const severity = str(v.severity)?.toLowerCase() === 'negligible' ? 'info' : severityFromText(v.severity);
  return {
    ruleId: id,
    title: `${id}: ${pkg}${installed ? ` ${installed}` : ''}`,
    description,
    severity,
    cvss: cvssOf(v, ...related),
    cve: [id, ...related.map((r) => str(r.id) ?? '')].filter((x) => /^CVE-/i.test(x)),
    location: { package: pkg, ...(installed ? { version: installed } : {}), ...(path ? { file: path } : {}) },
    remediation: fixed.length
      ? `Upgrade ${pkg} to ${fixed.join(' or ')} or later.`
      : `No fixed version of ${pkg} is known (fix state: ${state}).`,
    references: [str(v.dataSource), ...arr(v.urls).map(str)].filter((x): x is string => !!x),
    evidence: {
      summary: `${pkg} ${installed ?? '?'} (${str(a.type) ?? 'package'}) is affected${fixed.length ? `; fixed in ${fixed.join(', ')}` : ''}`,
      data: {
        fixState: state,
        ...(str(a.type) ? { type: str(a.type) } : {}),
        ...(str(a.purl) ? { purl: str(a.purl) } : {}),
        ...(str(v.namespace) ? { namespace: str(v.namespace) } : {}),
      },
    },
  };
}

function pick(p: JsonPath): JsonPick {
  if (p.length === 0) return 'descend';
  if (p.length === 1)
    return p[0] === 'matches' || p[0] === 'ignoredMatches'
      ? 'descend'
      : p[0] === 'source' || p[0] === 'distro' || p[0] === 'descriptor'
        ? 'value'
        : 'skip';
  return p.length === 2 && (p[0] === 'matches' || p[0] === 'ignoredMatches') ? 'value' : 'skip';
}

export async function* parseGrype(
  stream: AsyncIterable<Buffer | string>,
  meta: ReportMeta,
): AsyncGenerator<ImportedFinding> {
  meta.tool = 'grype';
  let version: string | null = null;
  let sawMatches = false;
  for await (const r of readJsonRecords(stream, 'grype', pick, meta.cleaned)) {
    const key = r.path[0];
    const v = 'value' in r ? r.value : undefined;
    if (key === 'descriptor' && isObject(v)) {
      version = str(v.version) ?? null;
      continue;
    }
    if (key === 'source' && isObject(v)) {
      const t = v.target;
      meta.coverage.addTarget(
        typeof t === 'string' ? t : isObject(t) ? (str(t.userInput) ?? str(t.imageID)) : undefined,
      );
      meta.coverage.addClass(str(v.type) ? `source:${str(v.type)}` : undefined);
      continue;
    }
    if (key === 'distro' && isObject(v)) {
      meta.coverage.addClass(
        str(v.name) ? `distro:${str(v.name)}${str(v.version) ? ` ${str(v.version)}` : ''}` : undefined,
      );
      continue;
    }
    if (key !== 'matches' && key !== 'ignoredMatches') continue;
    sawMatches = true;
    meta.records += 1;
    const where = `${String(key)}[${String(r.path[1])}]`;
    if ('tooLarge' in r) {
      skip(meta, where, 'match larger than the size Rampart reads');
      continue;
    }
    if (key === 'ignoredMatches') {
      skip(meta, where, 'ignored by the grype configuration');
      continue;
    }
    const f = isObject(v) ? matchFinding(v) : 'not an object';
    if (typeof f === 'string') {
      skip(meta, where, f);
      continue;
    }
    const out = tryFinalize(meta, where, f, null, 'vuln');
    if (out) yield out;
  }
  if (!sawMatches && version === null)
    throw new ImportError('invalid_report', 'grype', 'Not a grype JSON report: there is no "matches" array');
  meta.coverage.addTool({ name: 'grype', version, scanner: 'container', key: null });
}
