// Alerts become findings: one finding per rule, path, parameter and discriminator, its instances
// (the URLs it was seen on, query strings included) counted and sampled in the evidence. A
// site-wide header problem therefore yields one finding per crawled path, as ZAP's per-URL
// instances do once imported, but never more than MAX_PATHS_PER_RULE per rule: the first paths in
// sorted order are kept, so the same site gives the same findings run after run.
import type { NormalizedFindingInput } from '../../../findings/index.ts';
import { RULES, type Alert } from './rules.ts';

export const MAX_PATHS_PER_RULE = 25;
const SECRET_PARAM = /([?&;](?:pass(?:word|wd)?|pwd|passphrase|secret|client_secret|token|access_token|auth_token|id_token|refresh_token|api[_-]?key|apikey|auth|credentials?|session(?:id)?|sess(?:ion)?_?id|jsessionid|phpsessid|aspsessionid\w*|sid|cfid|cftoken)=)[^&#?\s;"'<>]+/gi;

const SECRET_HEADER = /^((?:set-cookie|cookie|authorization|proxy-authorization)[ \t]*:)[^\r\n]*/gim;

/** Values of credential and session parameters in URLs, and of cookie and credential headers, replaced. */
export function maskSecrets(text: string): string {
  return text.replace(SECRET_PARAM, '$1***').replace(SECRET_HEADER, '$1 [masked]');
}
const SAMPLE_URLS = 5;

export interface FoldResult {
  findings: NormalizedFindingInput[];
  /** Alerts per rule id (instances, before folding). */
  counts: Record<string, number>;
  /** Rules whose findings were cut at MAX_PATHS_PER_RULE, with how many were left out. */
  capped: Record<string, number>;
}

export function foldAlerts(alerts: Alert[]): FoldResult {
  const groups = new Map<string, { alert: Alert; path: string; urls: Set<string>; count: number }>();
  const counts: Record<string, number> = {};
  for (const a of alerts) {
    counts[a.ruleId] = (counts[a.ruleId] ?? 0) + 1;
    // Masked before grouping: a session id rewritten into the path must not split a finding.
    const path = maskSecrets(new URL(a.url).pathname);
    const key = JSON.stringify([a.ruleId, path, a.param ?? '', a.discriminator ?? '']);
    const g = groups.get(key);
    if (g) {
      g.count += 1;
      if (g.urls.size < SAMPLE_URLS) g.urls.add(a.url);
    } else groups.set(key, { alert: a, path, urls: new Set([a.url]), count: 1 });
  }
  const perRule = new Map<string, number>();
  const capped: Record<string, number> = {};
  const findings: NormalizedFindingInput[] = [];
  const sorted = [...groups.values()].sort((x, y) => (x.alert.ruleId === y.alert.ruleId ? (x.path < y.path ? -1 : x.path > y.path ? 1 : 0) : x.alert.ruleId < y.alert.ruleId ? -1 : 1));
  for (const g of sorted) {
    const r = RULES[g.alert.ruleId]!;
    const n = perRule.get(r.id) ?? 0;
    if (n >= MAX_PATHS_PER_RULE) {
      capped[r.id] = (capped[r.id] ?? 0) + 1;
      continue;
    }
    perRule.set(r.id, n + 1);
    const a = g.alert;
    const more = g.count > 1 ? `\nSeen ${g.count} times on this path.` : '';
    findings.push({
      ruleId: r.id,
      title: r.title,
      description: r.description,
      severity: r.severity,
      cwe: [r.cwe],
      location: { url: maskSecrets(a.url), path: g.path, ...(a.param ? { param: a.param } : {}) },
      evidence: {
        summary: maskSecrets(`${a.method ?? 'GET'} ${a.url}\n${a.evidence}${more}`),
        ...(a.request ? { request: maskSecrets(a.request) } : {}),
        ...(a.response ? { response: maskSecrets(a.response) } : {}),
        data: { pluginId: r.id.split('-')[0], instances: g.count, urls: [...g.urls].map(maskSecrets) },
      },
      remediation: r.remediation,
      references: r.references,
      ...(a.discriminator ? { discriminator: a.discriminator } : {}),
    });
  }
  return { findings, counts, capped };
}
