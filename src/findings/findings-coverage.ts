// What a result may close (docs/findings-lifecycle.md). A finding is closed as fixed only when a
// result that covered exactly its tool, class of check, rule and place no longer reports it; the
// scan's scope (findings-scope.ts) narrows further. Each field that is present narrows; an
// absent field says "everything of this kind": a Rampart port scan covers its probed port ranges
// and its rules, an nmap import its scaninfo ranges, a Trivy license report the license class of
// its own tool, a SARIF log the rule namespaces of its drivers.
import { sql, type RawBuilder } from 'kysely';
import { z } from 'zod';
import { severitySchema, type ReportCoverage, type Scanner } from './findings-schemas.ts';
import { normaliseLocation } from './fingerprint.ts';

const portRange = z.tuple([z.int().min(0).max(65_535), z.int().min(0).max(65_535)]);

export const closingCoverageSchema = z
  .object({
    /** Rule namespaces (findings.tool, lower case); null stands for shared rule ids (CVEs, open ports, templates). */
    tools: z.array(z.string().min(1).max(100).nullable()).max(200),
    /** Classes of check (findings.check_class). */
    classes: z.array(z.string().min(1).max(40)).max(50).optional(),
    /** Rule ids, case-insensitive; a trailing `*` matches any suffix. */
    rules: z.array(z.string().min(1).max(200)).max(20_000).optional(),
    /** Inclusive port ranges; a finding without a port is not inside any. */
    ports: z.array(portRange).max(65_535).optional(),
    /** URLs fetched (normalised as finding locations are); a site-wide finding is covered by its origin. */
    urls: z.array(z.string().min(1).max(2_000)).max(20_000).optional(),
    severities: z.array(severitySchema).max(5).optional(),
  })
  .strict();
export type ClosingCoverage = z.infer<typeof closingCoverageSchema>;

/** Everything of shared rule namespaces: what a result without any coverage record may close (older workers). */
export const SHARED_TOOLS_ONLY: ClosingCoverage = { tools: [null] };

/**
 * The class of check a finding comes from, when its source says (an importer's `checkClass`) or
 * its scanner implies it: a container scanner's `container/…` rules check the image's
 * configuration, its other findings are package vulnerabilities.
 */
export function checkClassOf(scanner: Scanner, ruleId: string, tool: string | null, explicit: unknown): string | null {
  if (typeof explicit === 'string' && explicit) return explicit.slice(0, 40);
  if (scanner !== 'container' || tool) return null;
  return ruleId.startsWith('container/') ? 'image-config' : 'vuln';
}

/** A normalised URL and its site root, as finding locations store them. */
function normalisedUrl(u: string): { url: string; origin: string } | null {
  const loc = normaliseLocation({ url: u });
  const url = loc.stored.url;
  if (typeof url !== 'string' || !loc.stored.scheme) return null;
  return { url, origin: url.slice(0, url.indexOf('/', url.indexOf('//') + 2) + 1) };
}

/**
 * What a native report's coverage record lets the result close. Rampart's scanners write shared
 * rule ids; the URLs narrow only a crawl's findings (a template scan's base URL is not where its
 * matches are).
 */
export function closingCoverageOfReport(scanner: Scanner, c: ReportCoverage | null | undefined): ClosingCoverage {
  if (!c) return SHARED_TOOLS_ONLY;
  const rules = c.rules || c.templates ? [...(c.rules ?? []), ...(c.templates ?? [])] : undefined;
  return {
    tools: [null],
    ...(rules ? { rules } : {}),
    ...(c.ports ? { ports: c.ports } : {}),
    ...(scanner === 'webapp' && c.urls ? { urls: c.urls } : {}),
    ...(c.severities ? { severities: c.severities } : {}),
  };
}

function ruleCondition(rules: string[]): RawBuilder<boolean> {
  const exact = [...new Set(rules.filter((r) => !r.endsWith('*')).map((r) => r.toLowerCase()))];
  const prefixes = [...new Set(rules.filter((r) => r.endsWith('*')).map((r) => r.slice(0, -1).toLowerCase()))];
  const parts: RawBuilder<boolean>[] = [];
  if (exact.length) parts.push(sql<boolean>`lower(rule_id) = any(${exact}::text[])`);
  // starts_with, not LIKE: a rule id may hold % or _.
  if (prefixes.length)
    parts.push(
      sql<boolean>`exists (select 1 from unnest(${prefixes}::text[]) as p(x) where starts_with(lower(rule_id), p.x))`,
    );
  return parts.length ? sql<boolean>`(${sql.join(parts, sql` or `)})` : sql<boolean>`false`;
}

/** SQL condition on `findings` (unaliased) for "covered by this result". */
export function coverageCondition(input: ClosingCoverage): RawBuilder<boolean> {
  const c = closingCoverageSchema.parse(input);
  const parts: RawBuilder<boolean>[] = [];
  const named = [...new Set(c.tools.filter((t): t is string => t !== null).map((t) => t.trim().toLowerCase()))];
  const shared = c.tools.includes(null);
  parts.push(
    named.length
      ? shared
        ? sql<boolean>`(tool is null or tool = any(${named}::text[]))`
        : sql<boolean>`tool = any(${named}::text[])`
      : shared
        ? sql<boolean>`tool is null`
        : sql<boolean>`false`,
  );
  if (c.classes)
    parts.push(c.classes.length ? sql<boolean>`check_class = any(${c.classes}::text[])` : sql<boolean>`false`);
  if (c.rules) parts.push(ruleCondition(c.rules));
  if (c.ports) {
    const within = c.ports.map(([a, b]) => sql`port between ${Math.min(a, b)} and ${Math.max(a, b)}`);
    parts.push(
      within.length ? sql<boolean>`(port is not null and (${sql.join(within, sql` or `)}))` : sql<boolean>`false`,
    );
  }
  if (c.urls) {
    const urls = new Set<string>();
    const origins = new Set<string>();
    for (const u of c.urls) {
      const n = normalisedUrl(u);
      if (!n) continue;
      urls.add(n.url);
      origins.add(n.origin);
    }
    parts.push(
      sql<boolean>`(location->>'url' = any(${[...urls]}::text[])
        or (evidence->'data'->>'siteWide' = 'true' and location->>'url' = any(${[...origins]}::text[])))`,
    );
  }
  if (c.severities)
    parts.push(c.severities.length ? sql<boolean>`severity = any(${c.severities}::text[])` : sql<boolean>`false`);
  return sql<boolean>`(${sql.join(parts, sql` and `)})`;
}
