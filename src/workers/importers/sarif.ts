// SARIF 2.1.0: runs[].results[], described by runs[].tool.driver.rules[]. Parsed whole under
// MAX_DOCUMENT_BYTES (no streaming JSON parser is installed).
import type { Readable } from 'node:stream';
import type { NormalizedFinding, Severity } from '../../findings/index.ts';
import { ImportError, arr, isObject, readJsonDocument, severityFromScore, skip, str, tryFinalize, type ReportMeta, type Scanner } from './common.ts';

// SARIF result.level → severity (a Map, since `error` here is a SARIF level, not one of our error codes).
const LEVEL = new Map<string, Severity>([
  ['error', 'high'],
  ['warning', 'medium'],
  ['note', 'low'],
  ['none', 'info'],
]);

/** The scanner kind a SARIF producer stands for; generic code and config tools are 'template'. */
export function scannerForTool(name: string): Scanner {
  const n = name.toLowerCase();
  if (/\b(zap|owasp zap|zaproxy|burp|nikto|arachni|wapiti)\b/.test(n)) return 'webapp';
  if (/\b(trivy|grype|clair|snyk container|docker scout|anchore)\b/.test(n)) return 'container';
  if (/\b(nmap|naabu|masscan|rustscan)\b/.test(n)) return 'port';
  if (/\b(testssl|sslyze|sslscan)\b/.test(n)) return 'edge';
  return 'template';
}

const text = (v: unknown): string | undefined => (isObject(v) ? (str(v.text) ?? str(v.markdown)) : undefined);

/** security-severity (GitHub convention): a CVSS-like 0–10 score as a string or number. */
function securitySeverity(...bags: unknown[]): number | undefined {
  for (const b of bags) {
    if (!isObject(b)) continue;
    const raw = b['security-severity'];
    const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
    if (Number.isFinite(n) && n >= 0 && n <= 10) return n;
  }
  return undefined;
}

function cwesFromTags(tags: unknown[]): string[] {
  const out: string[] = [];
  for (const t of tags) {
    const m = typeof t === 'string' ? /(?:^|\/)cwe-0*(\d{1,6})$/i.exec(t.trim()) : null;
    if (m) out.push(`CWE-${m[1]}`);
  }
  return out;
}

export async function* parseSarif(stream: Readable, meta: ReportMeta): AsyncGenerator<NormalizedFinding> {
  const doc = await readJsonDocument(stream, 'sarif');
  if (!isObject(doc) || !Array.isArray(doc.runs)) throw new ImportError('invalid_report', 'sarif', 'Not a SARIF log: there is no "runs" array');
  if (doc.version !== undefined && doc.version !== '2.1.0') throw new ImportError('invalid_report', 'sarif', `Only SARIF 2.1.0 is supported (found ${JSON.stringify(doc.version)})`);
  for (const [runIdx, run] of doc.runs.entries()) {
    if (!isObject(run)) continue;
    const driver = isObject(run.tool) && isObject(run.tool.driver) ? run.tool.driver : {};
    const toolName = str(driver.name) ?? 'unknown';
    if (runIdx === 0) {
      meta.tool = `${toolName}${str(driver.version) ? ` ${str(driver.version)}` : ''}`;
      meta.scanner = scannerForTool(toolName);
    }
    const rules = arr(driver.rules).map((r) => (isObject(r) ? r : {}));
    const byId = new Map<string, Record<string, unknown>>();
    for (const r of rules) if (str(r.id)) byId.set(str(r.id)!, r);
    for (const [i, res] of arr(run.results).entries()) {
      const where = `runs[${runIdx}].results[${i}]`;
      if (!isObject(res)) {
        skip(meta, where, 'not an object');
        continue;
      }
      if (res.kind !== undefined && res.kind !== 'fail' && res.kind !== 'open') {
        skip(meta, where, `kind ${String(res.kind)}`);
        continue;
      }
      const ruleRef = isObject(res.rule) ? res.rule : {};
      const ruleIndex = typeof res.ruleIndex === 'number' ? res.ruleIndex : typeof ruleRef.index === 'number' ? ruleRef.index : -1;
      const ruleId = str(res.ruleId) ?? str(ruleRef.id) ?? str(rules[ruleIndex]?.id);
      const rule = (ruleId ? byId.get(ruleId) : undefined) ?? rules[ruleIndex] ?? {};
      if (!ruleId) {
        skip(meta, where, 'no ruleId');
        continue;
      }
      const props = isObject(rule.properties) ? rule.properties : {};
      const score = securitySeverity(res.properties, props);
      const defaultLevel = isObject(rule.defaultConfiguration) ? str(rule.defaultConfiguration.level) : undefined;
      const level = str(res.level) ?? defaultLevel ?? 'warning';
      const severity: Severity = score !== undefined ? severityFromScore(score) : (LEVEL.get(level) ?? 'info');
      const message = text(res.message);
      const loc = arr(res.locations).find(isObject);
      const phys = loc && isObject(loc.physicalLocation) ? loc.physicalLocation : {};
      const artifact = isObject(phys.artifactLocation) ? phys.artifactLocation : {};
      const region = isObject(phys.region) ? phys.region : {};
      const uri = str(artifact.uri);
      const startLine = typeof region.startLine === 'number' ? region.startLine : undefined;
      const location = uri && /^https?:\/\//i.test(uri) ? { url: uri } : uri ? { file: uri.replace(/^file:\/\//i, ''), ...(startLine ? { line: startLine } : {}) } : {};
      if (!uri) {
        skip(meta, where, 'no location');
        continue;
      }
      // partialFingerprints keep a result's identity when unrelated edits move its line.
      const fps = isObject(res.partialFingerprints) ? res.partialFingerprints : {};
      const fpKey = Object.keys(fps).sort()[0];
      const snippet = isObject(region.snippet) ? str(region.snippet.text) : undefined;
      const tags = [...arr(props.tags), ...(isObject(res.properties) ? arr(res.properties.tags) : [])];
      const out = tryFinalize(meta, where, {
        ruleId,
        title: text(rule.shortDescription) ?? str(rule.name) ?? message ?? ruleId,
        description: [message, text(rule.fullDescription)].filter(Boolean).join('\n\n'),
        severity,
        location,
        cwe: cwesFromTags(tags),
        cve: tags.filter((t): t is string => typeof t === 'string' && /^CVE-\d{4}-\d{4,9}$/i.test(t)),
        remediation: text(rule.help),
        references: str(rule.helpUri) ? [str(rule.helpUri)!] : [],
        discriminator: fpKey ? str(fps[fpKey]) : undefined,
        evidence: {
          ...(message ? { summary: message } : {}),
          ...(snippet ? { snippet } : {}),
          data: { tool: toolName, level, ...(score !== undefined ? { securitySeverity: score } : {}), ...(startLine ? { startLine } : {}) },
        },
      });
      if (out) yield out;
    }
  }
}
