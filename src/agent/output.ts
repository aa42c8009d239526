// Output of a local scan (`rampart-worker scan`): a table for people, JSON for scripts, and SARIF
// 2.1.0 following the findings export's mapping (src/findings/findings-export.ts): rules
// `<scanner>/<ruleId>`, levels error/warning/note, GitHub's `security-severity`. It loads the
// findings schema, so `scan` imports it once the scan is done (output-text.ts has the rest).
import {
  normaliseLocation,
  normalizedFindingSchema,
  type NormalizedFinding,
  type NormalizedFindingInput,
  type Severity,
} from '../findings/index.ts';
import type { ScanKind } from './client.ts';
import { clip, renderTable } from './output-text.ts';

export interface LocalScanResult {
  target: string;
  kind: ScanKind;
  findings: NormalizedFindingInput[];
  /** The kind's own fields in JSON output (openPorts for port scans, ...). */
  extra?: Record<string, unknown>;
}

/** The findings as the server would store them (schema-checked, text capped); invalid ones left out. */
export function canonicalFindings(findings: readonly NormalizedFindingInput[]): NormalizedFinding[] {
  return findings.flatMap((f) => {
    const r = normalizedFindingSchema.safeParse(f);
    return r.success ? [r.data] : [];
  });
}

/** `{"target", "kind", ...the kind's fields (port: "openPorts": [{"port", "service"?, "banner"?}]), "findings": [...]}` */
export function toJson(r: LocalScanResult): string {
  return `${JSON.stringify({ target: r.target, kind: r.kind, ...r.extra, findings: canonicalFindings(r.findings) }, null, 2)}\n`;
}

const SARIF_LEVEL: Record<Severity, 'error' | 'warning' | 'note'> = {
  critical: 'error',
  high: 'error',
  medium: 'warning',
  low: 'note',
  info: 'note',
};
const SECURITY_SEVERITY: Record<Severity, number> = { critical: 9.5, high: 8.0, medium: 5.5, low: 3.0, info: 0.0 };
const RANK: Record<Severity, number> = { info: 0, low: 1, medium: 2, high: 3, critical: 4 };

export function toSarif(r: LocalScanResult, tool: { name: string; version: string }): string {
  const rules = new Map<
    string,
    { index: number; rule: Record<string, unknown>; worst: Severity; score: number | null; tags: Set<string> }
  >();
  const results = canonicalFindings(r.findings).map((f) => {
    const id = `${r.kind}/${f.ruleId}`;
    let rule = rules.get(id);
    if (!rule) {
      rule = {
        index: rules.size,
        rule: {
          id,
          name: f.ruleId,
          shortDescription: { text: f.title },
          ...(f.description ? { fullDescription: { text: f.description.slice(0, 4_000) } } : {}),
          ...(f.remediation ? { help: { text: f.remediation.slice(0, 4_000) } } : {}),
          ...(f.references?.[0] ? { helpUri: f.references[0] } : {}),
        },
        worst: f.severity,
        score: f.cvss?.score ?? null,
        tags: new Set(['security', r.kind]),
      };
      rules.set(id, rule);
    }
    if (RANK[f.severity] > RANK[rule.worst]) rule.worst = f.severity;
    if (f.cvss && (rule.score === null || f.cvss.score > rule.score)) rule.score = f.cvss.score;
    for (const c of f.cwe ?? []) rule.tags.add(`external/cwe/cwe-${c}`);
    const loc = normaliseLocation(f.location);
    return {
      ruleId: id,
      ruleIndex: rule.index,
      level: SARIF_LEVEL[f.severity],
      message: { text: f.title },
      locations: [
        {
          logicalLocations: [{ fullyQualifiedName: `${r.target} ${loc.text}`, kind: 'resource' }],
          message: { text: loc.text },
        },
      ],
      properties: {
        severity: f.severity,
        target: r.target,
        scanner: r.kind,
        ...(f.evidence?.summary ? { evidence: f.evidence.summary } : {}),
        ...(f.cve?.length ? { cve: f.cve } : {}),
      },
    };
  });
  const ruleList = [...rules.values()].map((x) => ({
    ...x.rule,
    defaultConfiguration: { level: SARIF_LEVEL[x.worst] },
    properties: { tags: [...x.tags], 'security-severity': (x.score ?? SECURITY_SEVERITY[x.worst]).toFixed(1) },
  }));
  const sarif = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: tool.name, version: tool.version, rules: ruleList } },
        results,
        columnKind: 'utf16CodeUnits',
      },
    ],
  };
  return `${JSON.stringify(sarif, null, 2)}\n`;
}

/** A plain-text table: columns padded to their widest cell, a dashed rule under the headers. */
/** The kind's own lines (a summary and its results table), then the findings above info. */
export function toTable(r: LocalScanResult, kindLines: string[]): string {
  const lines = [...kindLines];
  const risky = canonicalFindings(r.findings)
    .filter((f) => f.severity !== 'info')
    .sort((a, b) => RANK[b.severity] - RANK[a.severity]);
  if (risky.length) {
    lines.push('');
    lines.push(
      renderTable(
        ['SEVERITY', 'FINDING', 'RULE'],
        risky.map((f) => [f.severity.toUpperCase(), clip(f.title, 70), f.ruleId]),
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}
