// Trivy JSON (SchemaVersion 2): Results[].Vulnerabilities, .Misconfigurations (failures only) and
// .Secrets. Parsed whole under MAX_DOCUMENT_BYTES (no streaming JSON parser is installed).
import type { Readable } from 'node:stream';
import type { NormalizedFinding, NormalizedFindingInput } from '../../findings/index.ts';
import { ImportError, arr, isObject, readJsonDocument, severityFromText, skip, str, tryFinalize, type ReportMeta } from './common.ts';

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
    remediation: fixed ? `Upgrade ${pkg} to ${fixed} or later.` : `No fixed version of ${pkg} is available yet (status: ${str(v.Status) ?? 'unknown'}).`,
    references: [str(v.PrimaryURL), ...arr(v.References).map(str)].filter((x): x is string => !!x),
    evidence: {
      summary: `${pkg} ${installed ?? '?'} is affected${fixed ? `; fixed in ${fixed}` : ''}`,
      data: { target, ...(fixed ? { fixedVersion: fixed } : {}), ...(str(v.Status) ? { status: str(v.Status) } : {}), ...(str(v.SeveritySource) ? { severitySource: str(v.SeveritySource) } : {}), ...(str(v.PkgID) ? { pkgId: str(v.PkgID) } : {}) },
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
    remediation: 'Revoke and rotate the secret, remove it from the image or repository (and its history), and load it at runtime from a secret store.',
    // Trivy masks the secret in Match (****); that is all that is kept.
    evidence: { ...(str(s.Match) ? { snippet: str(s.Match) } : {}), data: { target, ...(str(s.Category) ? { category: str(s.Category) } : {}) } },
  };
}

export async function* parseTrivy(stream: Readable, meta: ReportMeta): AsyncGenerator<NormalizedFinding> {
  const doc = await readJsonDocument(stream, 'trivy');
  if (!isObject(doc) || doc.SchemaVersion !== 2) throw new ImportError('invalid_report', 'trivy', `Not a Trivy JSON report with SchemaVersion 2 (found ${isObject(doc) ? JSON.stringify(doc.SchemaVersion ?? null) : 'no object'})`);
  meta.tool = 'trivy';
  for (const [ri, result] of arr(doc.Results).entries()) {
    if (!isObject(result)) continue;
    const target = str(result.Target) ?? str(doc.ArtifactName) ?? 'unknown';
    const groups: [string, unknown, (t: string, x: Record<string, unknown>) => NormalizedFindingInput | string][] = [
      ['Vulnerabilities', result.Vulnerabilities, vulnerability],
      ['Misconfigurations', result.Misconfigurations, misconfiguration],
      ['Secrets', result.Secrets, secret],
    ];
    for (const [key, items, map] of groups) {
      for (const [i, item] of arr(items).entries()) {
        const where = `Results[${ri}].${key}[${i}]`;
        const f = isObject(item) ? map(target, item) : 'not an object';
        if (typeof f === 'string') {
          skip(meta, where, f);
          continue;
        }
        const out = tryFinalize(meta, where, f);
        if (out) yield out;
      }
    }
  }
}
