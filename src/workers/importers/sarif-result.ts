// One SARIF result as findings: one per location (a result with several locations is several
// problems), its rule resolved by id, index or the message (gitleaks 7 writes no ruleId), its
// message template filled in, CWE ids from taxa, relationships, tags and properties, and an
// identity that merges only true duplicates (see `identity`).
import { createHash } from 'node:crypto';
import type { NormalizedFindingInput, Severity } from '../../findings/index.ts';
import { arr, isObject, severityFromScore, str } from './common.ts';

export interface SarifRun {
  toolName: string;
  rules: Record<string, unknown>[];
  ruleById: Map<string, Record<string, unknown>>;
  globalMessages: Record<string, unknown>;
  artifacts: string[];
  logical: string[];
  taxa: Map<number, Record<string, unknown>[]>;
}

const LEVEL = new Map<string, Severity>([
  ['error', 'high'],
  ['warning', 'medium'],
  ['note', 'low'],
  ['none', 'info'],
]);

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

/** A message with its template ({0}, {1}, ...) filled from `arguments`, looked up by `id` if needed. */
export function messageText(msg: unknown, rule: Record<string, unknown>, run: SarifRun): string | undefined {
  if (!isObject(msg)) return undefined;
  let t = text(msg);
  const id = str(msg.id);
  if (!t && id) {
    const own = isObject(rule.messageStrings) ? rule.messageStrings[id] : undefined;
    t = text(own) ?? text(run.globalMessages[id]);
  }
  if (!t) return undefined;
  const args = arr(msg.arguments).map((a) => (typeof a === 'string' || typeof a === 'number' ? String(a) : ''));
  return args.length ? t.replace(/\{(\d+)\}/g, (m, n: string) => args[Number(n)] ?? m) : t;
}

const CWE_IN = /\bCWE[-_ :]?0*(\d{1,6})\b/gi;
const CVE_IN = /\bCVE-\d{4}-\d{4,9}\b/gi;

function cwesOf(result: Record<string, unknown>, rule: Record<string, unknown>, run: SarifRun): number[] {
  const out = new Set<number>();
  const isCweComponent = (tc: unknown) => isObject(tc) && /cwe/i.test(str(tc.name) ?? '');
  const add = (s: string | undefined) => {
    for (const m of (s ?? '').matchAll(CWE_IN)) out.add(Number(m[1]));
  };
  for (const taxon of arr(result.taxa)) {
    if (!isObject(taxon)) continue;
    if (isCweComponent(taxon.toolComponent)) {
      const id = str(taxon.id);
      if (id && /^\d+$/.test(id)) out.add(Number(id));
      else add(id);
    } else if (
      typeof taxon.index === 'number' &&
      isObject(taxon.toolComponent) &&
      typeof taxon.toolComponent.index === 'number'
    ) {
      const t = run.taxa.get(taxon.toolComponent.index)?.[taxon.index];
      add(str(t?.id) ? `CWE-${str(t?.id)!.replace(/^CWE-/i, '')}` : undefined);
    }
  }
  for (const rel of arr(rule.relationships)) {
    const target = isObject(rel) && isObject(rel.target) ? rel.target : null;
    if (!target) continue;
    const id = str(target.id);
    if (isCweComponent(target.toolComponent)) add(id && /^\d+$/.test(id) ? `CWE-${id}` : id);
  }
  for (const props of [rule.properties, result.properties]) {
    if (!isObject(props)) continue;
    for (const t of arr(props.tags)) if (typeof t === 'string' && /cwe/i.test(t)) add(t.replace(/.*\//, ''));
    for (const key of ['cwe', 'CWE', 'cwe_id', 'cwe-id', 'cwes']) {
      const v = props[key];
      for (const x of Array.isArray(v) ? v : [v])
        add(
          typeof x === 'number' ? `CWE-${x}` : typeof x === 'string' ? (/^\d+$/.test(x) ? `CWE-${x}` : x) : undefined,
        );
    }
  }
  return [...out].filter((n) => n > 0).slice(0, 20);
}

function cvesOf(ruleId: string, result: Record<string, unknown>, rule: Record<string, unknown>): string[] {
  const out = new Set<string>();
  const add = (s: unknown) => {
    if (typeof s === 'string') for (const m of s.matchAll(CVE_IN)) out.add(m[0].toUpperCase());
  };
  add(ruleId);
  add(str(rule.name));
  for (const props of [rule.properties, result.properties]) {
    if (!isObject(props)) continue;
    for (const t of arr(props.tags)) add(t);
    for (const key of ['cve', 'CVE', 'cves', 'cve_id', 'cve-id', 'vulnerabilityId'])
      for (const x of Array.isArray(props[key]) ? arr(props[key]) : [props[key]]) add(x);
  }
  return [...out].slice(0, 50);
}

/** A file URI as a path: `file:///src/a.c` and `file:////src/a.c` → `/src/a.c`, escapes decoded. */
export function filePath(uri: string): string {
  let p = uri.trim();
  if (/^file:/i.test(p)) {
    p = p.replace(/^file:(\/\/[^/]*)?/i, (m, authority: string | undefined) =>
      authority && authority !== '//' && !/^\/\/localhost$/i.test(authority) ? `//${authority.slice(2)}` : '',
    );
    p = p.replace(/^\/+/, '/').replace(/^\/([A-Za-z]:[\\/])/, '$1');
  }
  try {
    p = decodeURIComponent(p);
  } catch {
    /* keep a malformed escape as written */
  }
  return p.replace(/^\.\//, '');
}

/** What a result's location is, physical (a file or URL) or logical (a function, an image layer). */
function locationOf(
  loc: Record<string, unknown>,
  run: SarifRun,
): { location: NormalizedFindingInput['location']; line?: number; column?: number } | null {
  const phys = isObject(loc.physicalLocation) ? loc.physicalLocation : null;
  if (phys) {
    const artifact = isObject(phys.artifactLocation) ? phys.artifactLocation : {};
    const uri = str(artifact.uri) ?? (typeof artifact.index === 'number' ? run.artifacts[artifact.index] : undefined);
    const region = isObject(phys.region) ? phys.region : {};
    const line = typeof region.startLine === 'number' && region.startLine > 0 ? region.startLine : undefined;
    const column = typeof region.startColumn === 'number' ? region.startColumn : undefined;
    if (uri) {
      if (/^https?:\/\//i.test(uri)) return { location: { url: uri }, line, column };
      return { location: { file: filePath(uri), ...(line ? { line } : {}) }, line, column };
    }
  }
  for (const l of arr(loc.logicalLocations)) {
    if (!isObject(l)) continue;
    const name =
      str(l.fullyQualifiedName) ?? str(l.name) ?? (typeof l.index === 'number' ? run.logical[l.index] : undefined);
    if (name) return { location: { path: name } };
  }
  return null;
}

const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 24);
/** Fingerprint keys known to be unique per occurrence: no line is needed to tell results apart. */
const OCCURRENCE_UNIQUE = /primaryLocationLineHash|matchBasedId/i;

/**
 * The discriminator of one result at one location. Fingerprints (all keys, full or partial) keep
 * a result's identity when unrelated edits move it, but several tools write one fingerprint for
 * identical lines of a file (flawfinder's contextHash) or per commit (gitleaks): unless a key is
 * known to count occurrences (CodeQL's primaryLocationLineHash, semgrep's matchBasedId), the
 * line and column are part of the identity, so only true duplicates merge.
 */
function identity(
  result: Record<string, unknown>,
  at: { line?: number; column?: number },
  index: number,
): string | undefined {
  const fps: string[] = [];
  let unique = false;
  for (const bag of [result.fingerprints, result.partialFingerprints]) {
    if (!isObject(bag)) continue;
    for (const k of Object.keys(bag).sort()) {
      const v = str(bag[k]);
      if (!v) continue;
      fps.push(`${k}=${v}`);
      if (OCCURRENCE_UNIQUE.test(k)) unique = true;
    }
  }
  const props = isObject(result.properties) ? result.properties : {};
  const commit = str(props.commit) ?? str(props.commitSha);
  if (commit) fps.push(`commit=${commit}`);
  const parts: string[] = [];
  if (fps.length) parts.push(`fp:${hash(fps.join('\n'))}`);
  if ((!unique || index > 0) && at.line !== undefined)
    parts.push(`L${at.line}${at.column !== undefined ? `:${at.column}` : ''}`);
  return parts.length ? parts.join(' ') : undefined;
}

export type ResultOutcome = { skip: string } | { passed: true } | { findings: NormalizedFindingInput[] };

/** The rule a result names: by id, by index, or (no rule id) the rule its message starts with. */
function ruleOf(
  res: Record<string, unknown>,
  run: SarifRun,
  message: string | undefined,
): { id: string; rule: Record<string, unknown> } | null {
  const ref = isObject(res.rule) ? res.rule : {};
  const index = typeof res.ruleIndex === 'number' ? res.ruleIndex : typeof ref.index === 'number' ? ref.index : -1;
  const id = str(res.ruleId) ?? str(ref.id) ?? str(run.rules[index]?.id);
  if (id) return { id, rule: run.ruleById.get(id) ?? run.ruleById.get(id.split('/')[0]!) ?? run.rules[index] ?? {} };
  if (!message) return null;
  let best: Record<string, unknown> | null = null;
  for (const r of run.rules) {
    const rid = str(r.id);
    if (rid && message.startsWith(rid) && (!best || rid.length > str(best.id)!.length)) best = r;
  }
  return best ? { id: str(best.id)!, rule: best } : { id: message.slice(0, 200), rule: {} };
}

/** Suppressed results (in source, by a baseline file, ...) are not open problems. */
function suppression(res: Record<string, unknown>): string | null {
  const sups = arr(res.suppressions).filter(isObject);
  if (sups.length === 0) return null;
  if (sups.some((s) => str(s.status) === 'underReview')) return null;
  const accepted = sups.find((s) => str(s.status) === undefined || str(s.status) === 'accepted');
  return accepted
    ? `suppressed (${str(accepted.kind) ?? 'external'}${str(accepted.justification) ? `: ${str(accepted.justification)!.slice(0, 100)}` : ''})`
    : null;
}

export function sarifResult(res: Record<string, unknown>, run: SarifRun): ResultOutcome {
  const kind = str(res.kind) ?? 'fail';
  if (kind === 'pass' || kind === 'notApplicable' || kind === 'informational') return { passed: true };
  if (kind !== 'fail' && kind !== 'open' && kind !== 'review') return { skip: `unknown kind ${kind.slice(0, 40)}` };
  const suppressed = suppression(res);
  if (suppressed) return { skip: suppressed };
  if (str(res.baselineState) === 'absent') return { skip: 'baselineState absent (no longer present)' };
  const rawMessage = isObject(res.message) ? (text(res.message) ?? '') : '';
  const found = ruleOf(res, run, rawMessage || undefined);
  if (!found) return { skip: 'no ruleId and no message' };
  const { id: ruleId, rule } = found;
  const message = messageText(res.message, rule, run);
  const props = isObject(rule.properties) ? rule.properties : {};
  const score = securitySeverity(res.properties, props);
  const defaultLevel = isObject(rule.defaultConfiguration) ? str(rule.defaultConfiguration.level) : undefined;
  const level = str(res.level) ?? defaultLevel ?? 'warning';
  const severity: Severity = score !== undefined ? severityFromScore(score) : (LEVEL.get(level) ?? 'info');
  const locs = arr(res.locations).filter(isObject);
  const places = locs.map((l) => ({ l, at: locationOf(l, run) })).filter((p) => p.at !== null);
  const base = {
    ruleId,
    title: text(rule.shortDescription) ?? str(rule.name) ?? message ?? ruleId,
    description: [message, text(rule.fullDescription)].filter(Boolean).join('\n\n'),
    severity,
    cwe: cwesOf(res, rule, run),
    cve: cvesOf(ruleId, res, rule),
    remediation: text(rule.help),
    references: [str(rule.helpUri)].filter((x): x is string => !!x),
  };
  const data = { tool: run.toolName, level, kind, ...(score !== undefined ? { securitySeverity: score } : {}) };
  if (places.length === 0) {
    // No location (dockle checks an image's configuration): a finding about the asset itself.
    return {
      findings: [
        {
          ...base,
          location: {},
          discriminator: identity(res, {}, 0),
          evidence: { ...(message ? { summary: message } : {}), data },
        },
      ],
    };
  }
  const seen = new Set<string>();
  const findings: NormalizedFindingInput[] = [];
  places.forEach(({ l, at }, i) => {
    const key = JSON.stringify([at!.location, at!.line, at!.column]);
    if (seen.has(key)) return;
    seen.add(key);
    const phys = isObject(l.physicalLocation) ? l.physicalLocation : {};
    const region = isObject(phys.region) ? phys.region : {};
    const snippet = isObject(region.snippet) ? str(region.snippet.text) : undefined;
    findings.push({
      ...base,
      location: at!.location,
      discriminator: identity(res, at!, i),
      evidence: {
        ...(message ? { summary: message } : {}),
        ...(snippet ? { snippet } : {}),
        data: {
          ...data,
          ...(at!.line ? { startLine: at!.line } : {}),
          ...(places.length > 1 ? { locations: places.length } : {}),
        },
      },
    });
  });
  return { findings };
}
