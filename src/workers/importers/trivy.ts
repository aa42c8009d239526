// Trivy JSON, streamed item by item: SchemaVersion 2 reports (Results[].Vulnerabilities,
// .Misconfigurations (failures only), .Secrets and .Licenses), the array of results that Trivy
// wrote before 0.20, and `trivy k8s` reports (ClusterName, Resources[].Results, or the older
// Vulnerabilities/Misconfigurations lists of resources). Vulnerability statuses are Trivy's own:
// `fixed` means a fixed version exists (the installed package is still affected), so it is open;
// `not_affected` is skipped; findings suppressed by VEX or an ignore file (ModifiedFindings) are
// skipped with their status and source.
import type { NormalizedFindingInput } from '../../findings/index.ts';
import {
  ImportError,
  arr,
  isObject,
  severityFromText,
  skip,
  str,
  tryFinalize,
  type ImportedFinding,
  type ReportMeta,
} from './common.ts';
import { readJsonRecords, type JsonPath, type JsonPick } from './json-records.ts';

/** Trivy lists CVSS per source; NVD first, then the vendor that reported the severity, then any. */
function pickCvss(v: Record<string, unknown>): { score: number; vector?: string } | undefined {
  if (!isObject(v.CVSS)) return undefined;
  const sources = v.CVSS;
  const order = ['nvd', str(v.SeveritySource), ...Object.keys(sources)].filter((x): x is string => !!x);
  for (const key of order) {
    const c = sources[key];
    if (!isObject(c)) continue;
    if (typeof c.V3Score === 'number') return { score: c.V3Score, vector: str(c.V3Vector) };
    if (typeof c.V40Score === 'number') return { score: c.V40Score, vector: str(c.V40Vector) };
  }
  return undefined;
}

function vulnerability(target: string, v: Record<string, unknown>): NormalizedFindingInput | string {
  const id = str(v.VulnerabilityID);
  const pkg = str(v.PkgName);
  if (!id || !pkg) return 'no VulnerabilityID or PkgName';
  if (str(v.Status) === 'not_affected') return 'status not_affected (the vendor says this package is not affected)';
  const installed = str(v.InstalledVersion);
  const fixed = str(v.FixedVersion);
  const title = str(v.Title);
  return {
    ruleId: id,
    title: `${id}: ${pkg}${installed ? ` ${installed}` : ''}${title ? ` — ${title}` : ''}`,
    description: str(v.Description),
    severity: severityFromText(v.Severity),
    cvss: pickCvss(v),
    cve: /^CVE-/i.test(id) ? [id] : [],
    cwe: arr(v.CweIDs).filter((x): x is string => typeof x === 'string'),
    // The target (image layer file or lockfile) and package identify where it is.
    location: { package: pkg, ...(installed ? { version: installed } : {}), file: str(v.PkgPath) ?? target },
    remediation: fixed
      ? `Upgrade ${pkg} to ${fixed} or later.`
      : `No fixed version of ${pkg} is available yet (status: ${str(v.Status) ?? 'unknown'}).`,
    references: [str(v.PrimaryURL), ...arr(v.References).map(str)].filter((x): x is string => !!x),
    evidence: {
      summary: `${pkg} ${installed ?? '?'} is affected${fixed ? `; fixed in ${fixed}` : ''}`,
      data: {
        target,
        ...(fixed ? { fixedVersion: fixed } : {}),
        ...(str(v.Status) ? { status: str(v.Status) } : {}),
        ...(str(v.SeveritySource) ? { severitySource: str(v.SeveritySource) } : {}),
        ...(str(v.PkgID) ? { pkgId: str(v.PkgID) } : {}),
      },
    },
  };
}

function misconfiguration(target: string, m: Record<string, unknown>): NormalizedFindingInput | string {
  const id = str(m.AVDID) ?? str(m.ID);
  if (!id || !str(m.Title)) return 'no ID or Title';
  if (str(m.Status) && str(m.Status) !== 'FAIL') return `status ${str(m.Status)}`;
  const cause = isObject(m.CauseMetadata) ? m.CauseMetadata : {};
  const line = Number(cause.StartLine);
  return {
    ruleId: id,
    title: str(m.Title)!,
    description: [str(m.Description), str(m.Message)].filter(Boolean).join('\n\n'),
    severity: severityFromText(m.Severity),
    location: { file: target, ...(Number.isInteger(line) && line > 0 ? { line } : {}) },
    remediation: str(m.Resolution),
    references: [str(m.PrimaryURL), ...arr(m.References).map(str)].filter((x): x is string => !!x),
    discriminator: str(cause.Resource),
    evidence: { summary: str(m.Message), data: { target, ...(str(m.Type) ? { type: str(m.Type) } : {}) } },
  };
}

function secret(target: string, s: Record<string, unknown>): NormalizedFindingInput | string {
  const id = str(s.RuleID);
  if (!id) return 'no RuleID';
  const line = Number(s.StartLine);
  return {
    ruleId: id,
    title: str(s.Title) ?? id,
    severity: severityFromText(s.Severity),
    location: { file: target, ...(Number.isInteger(line) && line > 0 ? { line } : {}) },
    remediation:
      'Revoke and rotate the secret, remove it from the image or repository (and its history), and load it at runtime from a secret store.',
    // Trivy masks the secret in Match (****); that is all that is kept.
    evidence: {
      ...(str(s.Match) ? { snippet: str(s.Match) } : {}),
      data: { target, ...(str(s.Category) ? { category: str(s.Category) } : {}) },
    },
  };
}

function license(target: string, l: Record<string, unknown>): NormalizedFindingInput | string {
  const name = str(l.Name);
  if (!name) return 'no license Name';
  const pkg = str(l.PkgName);
  const category = str(l.Category);
  return {
    ruleId: `license:${name}`,
    title: `${name} license${category ? ` (${category})` : ''}${pkg ? ` in ${pkg}` : ''}`,
    description: `Trivy classifies the ${name} license${category ? ` as ${category}` : ''}; check that its terms allow this use.`,
    severity: severityFromText(l.Severity),
    location: { ...(pkg ? { package: pkg } : {}), file: str(l.FilePath) ?? target },
    references: [str(l.Link)].filter((x): x is string => !!x),
    evidence: {
      data: {
        target,
        ...(category ? { category } : {}),
        ...(typeof l.Confidence === 'number' ? { confidence: l.Confidence } : {}),
      },
    },
  };
}

const GROUPS: Record<
  string,
  {
    map: (t: string, x: Record<string, unknown>) => NormalizedFindingInput | string;
    tool: string | null;
    scanner: string;
  }
> = {
  Vulnerabilities: { map: vulnerability, tool: null, scanner: 'vuln' },
  Misconfigurations: { map: misconfiguration, tool: 'trivy', scanner: 'misconfig' },
  Secrets: { map: secret, tool: 'trivy', scanner: 'secret' },
  Licenses: { map: license, tool: 'trivy', scanner: 'license' },
};
const SUPPRESSED = new Set(['ModifiedFindings', 'ExperimentalModifiedFindings']);
const RESOURCE_LISTS = new Set(['Resources', 'Vulnerabilities', 'Misconfigurations']);

/** Inside one result: its context values whole, its findings one by one. */
function resultPick(rest: JsonPath): JsonPick {
  if (rest.length === 0) return 'descend';
  const k = rest[0] as string;
  if (rest.length === 1)
    return k === 'Target' || k === 'Class' || k === 'Type'
      ? 'value'
      : GROUPS[k] || SUPPRESSED.has(k)
        ? 'descend'
        : 'skip';
  return rest.length === 2 && (GROUPS[k] || SUPPRESSED.has(k)) ? 'value' : 'skip';
}

/** Where the result part of a path starts (Results[i], Resources[k].Results[i], or the old root array [i]). */
function resultAt(p: JsonPath): number {
  if (typeof p[0] === 'number') return 1;
  if (p[0] === 'Results') return 2;
  if (RESOURCE_LISTS.has(p[0] as string) && p[2] === 'Results') return 4;
  return -1;
}

function pick(p: JsonPath): JsonPick {
  if (p.length === 0) return 'descend';
  const at = resultAt(p);
  if (at !== -1 && p.length >= at) return resultPick(p.slice(at));
  const top = p[0] as string;
  if (p.length === 1)
    return ['SchemaVersion', 'ArtifactName', 'ArtifactType', 'ClusterName', 'Trivy'].includes(top)
      ? 'value'
      : top === 'Results' || RESOURCE_LISTS.has(top)
        ? 'descend'
        : 'skip';
  if (top === 'Results') return 'descend';
  if (RESOURCE_LISTS.has(top)) {
    if (p.length === 2) return 'descend';
    const k = p[2];
    if (p.length === 3)
      return k === 'Namespace' || k === 'Kind' || k === 'Name' || k === 'Error'
        ? 'value'
        : k === 'Results'
          ? 'descend'
          : 'skip';
  }
  return 'skip';
}

export async function* parseTrivy(
  stream: AsyncIterable<Buffer | string>,
  meta: ReportMeta,
): AsyncGenerator<ImportedFinding> {
  meta.tool = 'trivy';
  let version: string | null = null;
  let artifact: string | undefined;
  let schema: unknown;
  let sawResults = false;
  const resource = { key: '', namespace: '', kind: '', name: '' };
  const result = { key: '', target: '' };
  // Trivy before 0.20 wrote the document `null` when it found nothing: remember a short document.
  const start = { text: '', bytes: 0 };
  async function* watched(): AsyncGenerator<Buffer | string> {
    for await (const chunk of stream) {
      if (start.bytes < 16)
        start.text += typeof chunk === 'string' ? chunk.slice(0, 16) : chunk.subarray(0, 16).toString('latin1');
      start.bytes += chunk.length;
      yield chunk;
    }
  }
  for await (const r of readJsonRecords(watched(), 'trivy', pick, meta.cleaned)) {
    const p = r.path;
    const at = resultAt(p);
    if (at === -1) {
      const v = 'value' in r ? r.value : undefined;
      if (p[0] === 'SchemaVersion') {
        schema = v;
        if (v !== 2)
          throw new ImportError(
            'invalid_report',
            'trivy',
            `Unsupported Trivy SchemaVersion ${JSON.stringify(v).slice(0, 20)} (this server reads 2 and the pre-0.20 array)`,
          );
      } else if (p[0] === 'ArtifactName') artifact = str(v);
      else if (p[0] === 'ArtifactType') meta.coverage.addClass(str(v) ? `artifact:${str(v)}` : undefined);
      else if (p[0] === 'ClusterName') meta.coverage.addTarget(str(v) ? `cluster:${str(v)}` : undefined);
      else if (p[0] === 'Trivy' && isObject(v)) version = str(v.Version) ?? null;
      else if (RESOURCE_LISTS.has(p[0] as string) && p.length === 3) {
        const key = `${String(p[0])}[${String(p[1])}]`;
        if (resource.key !== key) Object.assign(resource, { key, namespace: '', kind: '', name: '' });
        if (p[2] === 'Namespace') resource.namespace = str(v) ?? '';
        else if (p[2] === 'Kind') resource.kind = str(v) ?? '';
        else if (p[2] === 'Name') resource.name = str(v) ?? '';
        else if (p[2] === 'Error' && str(v))
          meta.partial ??= `Trivy could not scan ${resource.kind}/${resource.name}: ${str(v)!.slice(0, 200)}`;
      }
      continue;
    }
    sawResults = true;
    const resultKey = p.slice(0, at).join('.');
    if (result.key !== resultKey) Object.assign(result, { key: resultKey, target: '' });
    const field = p[at] as string;
    if (p.length === at + 1 && 'value' in r) {
      if (field === 'Target') {
        const prefix = resource.kind
          ? `${resource.namespace ? `${resource.namespace}/` : ''}${resource.kind}/${resource.name}: `
          : '';
        result.target = `${prefix}${str(r.value) ?? ''}`;
        meta.coverage.addTarget(result.target);
      } else if (field === 'Class') meta.coverage.addClass(str(r.value));
      continue;
    }
    const where = `${resultKey}.${field}[${String(p[at + 1])}]`;
    meta.records += 1;
    if ('tooLarge' in r) {
      skip(meta, where, 'entry larger than the size Rampart reads');
      continue;
    }
    const item = r.value;
    if (SUPPRESSED.has(field)) {
      const status = isObject(item) ? str(item.Status) : undefined;
      const source = isObject(item) ? str(item.Source) : undefined;
      skip(meta, where, `suppressed in Trivy (${status ?? 'ignored'}${source ? `, ${source.slice(0, 80)}` : ''})`);
      continue;
    }
    const group = GROUPS[field]!;
    meta.coverage.addClass(`scanner:${group.scanner}`);
    const target = result.target || artifact || 'unknown';
    if (field === 'Misconfigurations' && isObject(item) && str(item.Status) && str(item.Status) !== 'FAIL') {
      meta.passed += 1;
      continue;
    }
    const f = isObject(item) ? group.map(target, item) : 'not an object';
    if (typeof f === 'string') {
      skip(meta, where, f);
      continue;
    }
    const out = tryFinalize(meta, where, f, group.tool, group.scanner);
    if (out) yield out;
  }
  const legacyEmpty = start.bytes <= 16 && start.text.trim() === 'null';
  if (!legacyEmpty && !sawResults && schema === undefined && artifact === undefined && !meta.coverage.targets.size) {
    throw new ImportError('invalid_report', 'trivy', 'Not a Trivy JSON report: no Results, Resources or SchemaVersion');
  }
  if (artifact) meta.coverage.addTarget(artifact);
  // Reports before 0.20 (no SchemaVersion) are of the vulnerability scanner only.
  if (schema === undefined && sawResults) meta.coverage.addClass('scanner:vuln');
  meta.coverage.addTool({ name: 'trivy', version, scanner: 'container', key: null });
}
