// Findings exports, streamed page by page: CSV (spreadsheet formulas neutralised), JSON, and
// SARIF 2.1.0 for code-scanning tools. Raw request/response evidence stays out of every export
// (it may hold session tokens a scanner saw); the detail page shows it.
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { APP_VERSION } from '../ops/version.ts';
import type { Severity } from './findings-schemas.ts';
import type { ExportRow } from './findings-service.ts';

export type ExportFormat = 'csv' | 'json' | 'sarif';

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  json: 'application/json; charset=utf-8',
  sarif: 'application/sarif+json; charset=utf-8',
};

/** rampart-findings-YYYYMMDD-HHMMSS.<ext>, in UTC. */
export function exportFilename(format: ExportFormat, at: Date): string {
  const stamp = at.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `rampart-findings-${stamp}.${format}`;
}

const CSV_COLUMNS: [string, string][] = [
  ['id', 'ID'],
  ['severity', 'Severity'],
  ['status', 'Status'],
  ['title', 'Title'],
  ['assetName', 'Asset'],
  ['assetTarget', 'Asset target'],
  ['scanner', 'Scanner'],
  ['ruleId', 'Rule'],
  ['cvssScore', 'CVSS score'],
  ['cvssVector', 'CVSS vector'],
  ['cwe', 'CWE'],
  ['cve', 'CVE'],
  ['locationText', 'Location'],
  ['firstSeenAt', 'First seen'],
  ['lastSeenAt', 'Last seen'],
  ['fixedAt', 'Fixed'],
  ['slaDueAt', 'SLA due'],
  ['overdue', 'Overdue'],
  ['statusReason', 'Status reason'],
  ['statusExpiresAt', 'Accepted until'],
  ['remediation', 'Remediation'],
  ['references', 'References'],
  ['fingerprint', 'Fingerprint'],
];

function csvRecord(r: ExportRow): Record<string, string | number | null> {
  return {
    id: r.id,
    severity: r.severity,
    status: r.status,
    title: r.title,
    assetName: r.asset.name,
    assetTarget: r.asset.target,
    scanner: r.scanner,
    ruleId: r.ruleId,
    cvssScore: r.cvssScore,
    cvssVector: r.cvssVector,
    cwe: r.cweIds.map((c) => `CWE-${c}`).join(' '),
    cve: r.cveIds.join(' '),
    locationText: r.locationText,
    firstSeenAt: r.firstSeenAt,
    lastSeenAt: r.lastSeenAt,
    fixedAt: r.fixedAt,
    slaDueAt: r.slaDueAt,
    overdue: r.overdue ? 'yes' : 'no',
    statusReason: r.statusReason,
    statusExpiresAt: r.statusExpiresAt,
    remediation: r.remediation,
    references: r.references.join(' '),
    fingerprint: r.fingerprint,
  };
}

/**
 * CSV through csv-stringify. escape_formulas prefixes a value starting with =, +, -, @, tab or CR
 * with a single quote, so a spreadsheet shows it as text instead of running it (CSV injection).
 */
export function csvStream(rows: AsyncIterable<ExportRow>): Readable {
  const stringifier = stringify({
    header: true,
    columns: CSV_COLUMNS.map(([key, header]) => ({ key, header })),
    escape_formulas: true,
  });
  const source = Readable.from(
    (async function* () {
      for await (const r of rows) yield csvRecord(r);
    })(),
  );
  source.on('error', (e) => stringifier.destroy(e));
  return source.pipe(stringifier);
}

export function jsonStream(
  rows: AsyncIterable<ExportRow>,
  meta: { generatedAt: Date; filters: Record<string, unknown> },
): Readable {
  return Readable.from(
    (async function* () {
      yield `{"format":"rampart-findings","version":1,"generatedAt":${JSON.stringify(meta.generatedAt.toISOString())},"filters":${JSON.stringify(meta.filters)},"findings":[`;
      let n = 0;
      for await (const r of rows) {
        yield `${n ? ',' : ''}\n${JSON.stringify(r)}`;
        n += 1;
      }
      yield `\n],"count":${n}}\n`;
    })(),
  );
}

const SARIF_LEVEL: Record<Severity, 'error' | 'warning' | 'note'> = {
  critical: 'error',
  high: 'error',
  medium: 'warning',
  low: 'note',
  info: 'note',
};
/** GitHub code scanning reads `security-severity` (a CVSS-like number) to rank results. */
const SECURITY_SEVERITY: Record<Severity, number> = { critical: 9.5, high: 8.0, medium: 5.5, low: 3.0, info: 0.0 };
const RANK: Record<Severity, number> = { info: 0, low: 1, medium: 2, high: 3, critical: 4 };

function sarifLocation(r: ExportRow): Record<string, unknown> {
  const loc = r.location;
  const url = typeof loc.url === 'string' && /^[a-z][a-z0-9+.-]*:\/\//i.test(loc.url) ? loc.url : null;
  if (url) return { physicalLocation: { artifactLocation: { uri: url } }, message: { text: r.locationText } };
  if (typeof loc.file === 'string') {
    const region = typeof loc.line === 'number' && loc.line > 0 ? { region: { startLine: loc.line } } : {};
    return { physicalLocation: { artifactLocation: { uri: loc.file }, ...region }, message: { text: r.locationText } };
  }
  return {
    logicalLocations: [{ fullyQualifiedName: `${r.asset.target} ${r.locationText}`, kind: 'resource' }],
    message: { text: r.locationText },
  };
}

/** SARIF 2.1.0: one run, tool "Rampart"; rules are the scanner/rule pairs of the results. */
export function sarifStream(rows: AsyncIterable<ExportRow>, meta: { baseUrl: string }): Readable {
  return Readable.from(
    (async function* () {
      yield '{"$schema":"https://json.schemastore.org/sarif-2.1.0.json","version":"2.1.0","runs":[{"results":[';
      const rules = new Map<
        string,
        { index: number; rule: Record<string, unknown>; worst: Severity; score: number | null; tags: Set<string> }
      >();
      let n = 0;
      for await (const r of rows) {
        const ruleId = `${r.scanner}/${r.ruleId}`;
        let rule = rules.get(ruleId);
        if (!rule) {
          rule = {
            index: rules.size,
            rule: {
              id: ruleId,
              name: r.ruleId,
              shortDescription: { text: r.title },
              ...(r.description ? { fullDescription: { text: r.description.slice(0, 4_000) } } : {}),
              ...(r.remediation ? { help: { text: r.remediation.slice(0, 4_000) } } : {}),
              ...(r.references[0] ? { helpUri: r.references[0] } : {}),
            },
            worst: r.severity,
            score: r.cvssScore,
            tags: new Set(['security', r.scanner]),
          };
          rules.set(ruleId, rule);
        }
        if (RANK[r.severity] > RANK[rule.worst]) rule.worst = r.severity;
        if (r.cvssScore !== null && (rule.score === null || r.cvssScore > rule.score)) rule.score = r.cvssScore;
        for (const c of r.cweIds) rule.tags.add(`external/cwe/cwe-${c}`);
        const suppressed = r.status === 'accepted_risk' || r.status === 'false_positive';
        const result = {
          ruleId,
          ruleIndex: rule.index,
          level: SARIF_LEVEL[r.severity],
          message: { text: r.title },
          locations: [sarifLocation(r)],
          partialFingerprints: { 'rampartFinding/v1': r.fingerprint },
          ...(suppressed
            ? {
                suppressions: [
                  {
                    kind: 'external',
                    status: 'accepted',
                    justification: `${r.status === 'accepted_risk' ? 'Accepted risk' : 'False positive'}${r.statusReason ? `: ${r.statusReason}` : ''}`,
                  },
                ],
              }
            : {}),
          properties: {
            severity: r.severity,
            status: r.status,
            asset: r.asset.target,
            scanner: r.scanner,
            cvssScore: r.cvssScore,
            cvssVector: r.cvssVector,
            cwe: r.cweIds.map((c) => `CWE-${c}`),
            cve: r.cveIds,
            firstSeenAt: r.firstSeenAt,
            lastSeenAt: r.lastSeenAt,
            slaDueAt: r.slaDueAt,
            findingId: r.id,
          },
        };
        yield `${n ? ',' : ''}\n${JSON.stringify(result)}`;
        n += 1;
      }
      const ruleList = [...rules.values()].map((x) => ({
        ...x.rule,
        defaultConfiguration: { level: SARIF_LEVEL[x.worst] },
        properties: { tags: [...x.tags], 'security-severity': (x.score ?? SECURITY_SEVERITY[x.worst]).toFixed(1) },
      }));
      const driver = { name: 'Rampart', version: APP_VERSION, informationUri: meta.baseUrl, rules: ruleList };
      yield `\n],"tool":${JSON.stringify({ driver })},"columnKind":"utf16CodeUnits"}]}\n`;
    })(),
  );
}
