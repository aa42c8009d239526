// Alerts become findings. A site-wide problem (a missing or leaking header, a cookie's
// attributes, caching headers: SITE_WIDE_RULE_IDS) is one finding per site, header or cookie, with
// the URLs it was seen on as its instances; anything else is one finding per rule, path, parameter
// and discriminator, never more than MAX_PATHS_PER_RULE per rule: the first paths in sorted order
// are kept, so the same site gives the same findings run after run.
import type { NormalizedFindingInput } from '../../../findings/index.ts';
import { RULES, SITE_WIDE_RULE_IDS, type Alert } from './rules.ts';

export const MAX_PATHS_PER_RULE = 25;
const SECRET_PARAM =
  /([?&;](?:pass(?:word|wd)?|pwd|passphrase|secret|client_secret|token|access_token|auth_token|id_token|refresh_token|api[_-]?key|apikey|auth|credentials?|session(?:id)?|sess(?:ion)?_?id|jsessionid|phpsessid|aspsessionid\w*|sid|cfid|cftoken)=)[^&#?\s;"'<>]+/gi;

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

/** URLs a site-wide finding lists as its instances (its evidence also counts them all). */
export const MAX_INSTANCE_URLS = 50;
/** Room for the instance list in evidence.data (16 KiB in all). */
const INSTANCE_BYTES = 12_000;

interface Group {
  alert: Alert;
  path: string;
  siteWide: boolean;
  urls: Set<string>;
  count: number;
}

/** The first URLs of a site-wide finding, sorted, as many as fit its evidence. */
function instanceUrls(urls: Set<string>): string[] {
  const out: string[] = [];
  let bytes = 0;
  for (const u of [...urls].sort()) {
    const masked = maskSecrets(u);
    if (out.length >= MAX_INSTANCE_URLS || bytes + masked.length + 3 > INSTANCE_BYTES) break;
    out.push(masked);
    bytes += masked.length + 3;
  }
  return out;
}

export function foldAlerts(alerts: Alert[]): FoldResult {
  const groups = new Map<string, Group>();
  const counts: Record<string, number> = {};
  for (const a of alerts) {
    counts[a.ruleId] = (counts[a.ruleId] ?? 0) + 1;
    const u = new URL(a.url);
    const siteWide = SITE_WIDE_RULE_IDS.has(a.ruleId);
    // Masked before grouping: a session id rewritten into the path must not split a finding.
    const path = siteWide ? '/' : maskSecrets(u.pathname);
    const key = JSON.stringify([a.ruleId, siteWide ? u.origin : path, a.param ?? '', a.discriminator ?? '']);
    const g = groups.get(key);
    if (g) {
      // A site-wide finding counts the URLs it was seen on (each page once); others count alerts.
      if (!siteWide) g.count += 1;
      else if (!g.urls.has(a.url)) g.count += 1;
      if (siteWide || g.urls.size < SAMPLE_URLS) g.urls.add(a.url);
    } else groups.set(key, { alert: a, path, siteWide, urls: new Set([a.url]), count: 1 });
  }
  const perRule = new Map<string, number>();
  const capped: Record<string, number> = {};
  const findings: NormalizedFindingInput[] = [];
  const sorted = [...groups.values()].sort((x, y) =>
    x.alert.ruleId === y.alert.ruleId
      ? x.path < y.path
        ? -1
        : x.path > y.path
          ? 1
          : 0
      : x.alert.ruleId < y.alert.ruleId
        ? -1
        : 1,
  );
  for (const g of sorted) {
    const r = RULES[g.alert.ruleId]!;
    const n = perRule.get(r.id) ?? 0;
    if (n >= MAX_PATHS_PER_RULE) {
      capped[r.id] = (capped[r.id] ?? 0) + 1;
      continue;
    }
    perRule.set(r.id, n + 1);
    const a = g.alert;
    const urls = g.siteWide ? instanceUrls(g.urls) : [...g.urls].map(maskSecrets);
    const more = g.siteWide
      ? `\nSeen on ${g.count} URL${g.count === 1 ? '' : 's'} of the site.`
      : g.count > 1
        ? `\nSeen ${g.count} times on this path.`
        : '';
    findings.push({
      ruleId: r.id,
      title: r.title,
      description: g.siteWide
        ? `${r.description} Seen across the site: ${g.count} URL${g.count === 1 ? '' : 's'} (its instances).`
        : r.description,
      severity: r.severity,
      cwe: [r.cwe],
      location: g.siteWide
        ? { url: `${new URL(a.url).origin}/`, ...(a.param ? { param: a.param } : {}) }
        : { url: maskSecrets(a.url), path: g.path, ...(a.param ? { param: a.param } : {}) },
      evidence: {
        summary: maskSecrets(`${a.method ?? 'GET'} ${a.url}\n${a.evidence}${more}`),
        ...(a.request ? { request: maskSecrets(a.request) } : {}),
        ...(a.response ? { response: maskSecrets(a.response) } : {}),
        data: { pluginId: r.id.split('-')[0], instances: g.count, urls, ...(g.siteWide ? { siteWide: true } : {}) },
      },
      remediation: r.remediation,
      references: r.references,
      ...(a.discriminator ? { discriminator: a.discriminator } : {}),
    });
  }
  return { findings, counts, capped };
}
