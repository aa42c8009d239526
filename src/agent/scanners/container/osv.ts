// OSV advisories (ossf/osv-schema) and their evaluation against an installed package: ecosystem
// and name match, the explicit versions list, and SEMVER/ECOSYSTEM ranges walked as the schema's
// reference algorithm does (introduced / fixed / last_affected / limit). GIT ranges need commit
// history and are ignored.
import { z } from 'zod';
import { CVE_RE, type Severity } from '../../../findings/findings-schemas.ts';
import { cvss3BaseScore, severityOfScore } from './cvss.ts';
import { comparatorFor, compareSemver, comparePep440, type VersionCompare } from './versions.ts';

const version = z.string().trim().min(1).max(300);

const eventSchema = z
  .object({ introduced: version, fixed: version, last_affected: version, limit: version })
  .partial()
  .refine(
    (e) => Object.keys(e).length === 1,
    'An OSV range event has exactly one of introduced, fixed, last_affected, limit.',
  );

const rangeSchema = z.object({
  type: z.string().min(1).max(50),
  repo: z.string().max(2_000).optional(),
  events: z.array(eventSchema).min(1).max(5_000),
});

const specificSchema = z.record(z.string(), z.unknown());

const affectedSchema = z.object({
  package: z
    .object({
      ecosystem: z.string().trim().min(1).max(200),
      name: z.string().trim().min(1).max(500),
      purl: z.string().max(2_000).optional(),
    })
    .optional(),
  ranges: z.array(rangeSchema).max(1_000).optional(),
  versions: z.array(z.string().max(300)).max(100_000).optional(),
  ecosystem_specific: specificSchema.optional(),
  database_specific: specificSchema.optional(),
});

/** One OSV record as published (unknown fields are dropped). */
export const osvRecordSchema = z.object({
  id: z.string().trim().min(1).max(200),
  modified: z.string().max(100).optional(),
  published: z.string().max(100).optional(),
  withdrawn: z.string().max(100).optional(),
  aliases: z.array(z.string().max(200)).max(500).optional(),
  upstream: z.array(z.string().max(200)).max(500).optional(),
  summary: z.string().max(100_000).optional(),
  details: z.string().max(1_000_000).optional(),
  severity: z
    .array(z.object({ type: z.string().max(50), score: z.string().max(500) }))
    .max(20)
    .optional(),
  affected: z.array(affectedSchema).max(10_000).optional(),
  references: z
    .array(z.object({ type: z.string().max(50).optional(), url: z.string().max(2_000) }))
    .max(10_000)
    .optional(),
  database_specific: specificSchema.optional(),
});
export type OsvRecord = z.infer<typeof osvRecordSchema>;
export type OsvAffected = z.infer<typeof affectedSchema>;
type OsvEvent = z.infer<typeof eventSchema>;

/** A package found in the image, named the way OSV names it. */
export interface InstalledPackage {
  /** OSV ecosystem, with the distribution release for OS packages: `Debian:12`, `Alpine:v3.19`, `npm`. */
  ecosystem: string;
  name: string;
  version: string;
  /** The binary packages behind a distribution source package (dpkg `Source:`, apk origin). */
  binaries?: string[];
  /** Where the package's metadata was found in the image. */
  file?: string;
}

/** PEP 503 normalisation: PyPI names compare case-insensitively with -, _ and . runs equal. */
export const normalizePypiName = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

/** The key a package is indexed under: lower-cased ecosystem base and the ecosystem's name form. */
export function packageKey(ecosystem: string, name: string): { ecosystem: string; name: string } {
  const base = ecosystem.split(':')[0]!.trim().toLowerCase();
  return { ecosystem: base, name: base === 'pypi' ? normalizePypiName(name) : name };
}

/**
 * Whether an advisory's ecosystem covers the image's: the bases must agree, and an advisory with a
 * release (`Debian:12`, `Ubuntu:22.04:LTS`, `Alpine:v3.19`) applies only to that release.
 */
export function ecosystemMatches(advisory: string, installed: string): boolean {
  const [aBase, ...aRest] = advisory.split(':');
  const [iBase, ...iRest] = installed.split(':');
  if (aBase!.trim().toLowerCase() !== iBase!.trim().toLowerCase()) return false;
  if (aRest.length === 0) return true;
  const aRelease = aRest.filter((p, i) => !(i === aRest.length - 1 && p === 'LTS')).join(':');
  return aRelease === iRest.join(':');
}

const compareFn = (ecosystem: string, rangeType: string): VersionCompare | null =>
  rangeType === 'SEMVER' ? compareSemver : rangeType === 'ECOSYSTEM' ? comparatorFor(ecosystem) : null;

/**
 * One range's verdict for a version (the schema's evaluation): below a limit (if any), then walk
 * the events in version order. `fixed` is the lowest fix above the version. Null when the
 * version cannot be ordered in this ecosystem.
 */
export function evaluateRange(
  events: OsvEvent[],
  installed: string,
  cmp: VersionCompare,
): { affected: boolean; fixed?: string } | null {
  const rank = (e: OsvEvent) => e.introduced ?? e.fixed ?? e.last_affected ?? e.limit!;
  if (cmp(installed, installed) === null) return null;
  const limits = events.filter((e) => e.limit !== undefined).map((e) => e.limit!);
  if (limits.length && !limits.some((l) => l === '*' || (cmp(installed, l) ?? 1) < 0)) return { affected: false };
  const walk = events
    .filter((e) => e.limit === undefined)
    .sort((a, b) => {
      if (a.introduced === '0') return b.introduced === '0' ? 0 : -1;
      if (b.introduced === '0') return 1;
      return cmp(rank(a), rank(b)) ?? 0;
    });
  let affected = false;
  for (const e of walk) {
    if (e.introduced !== undefined) {
      if (e.introduced === '0' || (cmp(installed, e.introduced) ?? -1) >= 0) affected = true;
    } else if (e.fixed !== undefined) {
      if ((cmp(installed, e.fixed) ?? -1) >= 0) affected = false;
    } else if (e.last_affected !== undefined) {
      if ((cmp(installed, e.last_affected) ?? -1) > 0) affected = false;
    }
  }
  if (!affected) return { affected };
  let fixed: string | undefined;
  for (const e of walk) {
    if (e.fixed === undefined || (cmp(e.fixed, installed) ?? 0) <= 0) continue;
    if (fixed === undefined || (cmp(e.fixed, fixed) ?? 0) < 0) fixed = e.fixed;
  }
  return fixed === undefined ? { affected } : { affected, fixed };
}

function sameVersion(ecosystem: string, a: string, b: string): boolean {
  if (a === b) return true;
  const cmp = comparatorFor(ecosystem);
  return cmp === comparePep440 && cmp(a, b) === 0;
}

export interface AdvisoryMatch {
  record: OsvRecord;
  affected: OsvAffected;
  /** The lowest version that fixes it, when the advisory names one. */
  fixed?: string;
}

/** Whether the record affects the package, and which entry and fix apply. */
export function matchAdvisory(record: OsvRecord, pkg: InstalledPackage): AdvisoryMatch | null {
  if (record.withdrawn) return null;
  const want = packageKey(pkg.ecosystem, pkg.name);
  let best: AdvisoryMatch | null = null;
  for (const affected of record.affected ?? []) {
    const p = affected.package;
    if (!p || !ecosystemMatches(p.ecosystem, pkg.ecosystem)) continue;
    if (packageKey(p.ecosystem, p.name).name !== want.name) continue;
    let hit = (affected.versions ?? []).some((v) => sameVersion(pkg.ecosystem, v, pkg.version));
    let fixed: string | undefined;
    for (const range of affected.ranges ?? []) {
      const cmp = compareFn(p.ecosystem, range.type);
      if (!cmp) continue;
      const verdict = evaluateRange(range.events, pkg.version, cmp);
      if (!verdict?.affected) continue;
      hit = true;
      if (verdict.fixed !== undefined && (fixed === undefined || (cmp(verdict.fixed, fixed) ?? 0) < 0))
        fixed = verdict.fixed;
    }
    if (!hit) continue;
    const m: AdvisoryMatch = fixed === undefined ? { record, affected } : { record, affected, fixed };
    if (!best || (best.fixed === undefined && fixed !== undefined)) best = m;
  }
  return best;
}

const LABELS: Record<string, Severity> = {
  critical: 'critical',
  high: 'high',
  important: 'high',
  moderate: 'medium',
  medium: 'medium',
  low: 'low',
  negligible: 'info',
  unimportant: 'info',
};

const labelOf = (v: unknown): Severity | undefined =>
  typeof v === 'string' ? LABELS[v.trim().toLowerCase()] : undefined;

// Debian's security tracker urgency ("low**" marks an unconfirmed guess; "unimportant" is Debian
// saying the issue does not matter for its build, still worth a low rather than nothing).
const DEBIAN_URGENCY: Record<string, Severity> = { unimportant: 'low', low: 'low', medium: 'medium', high: 'high' };
const urgencyOf = (v: unknown): Severity | undefined =>
  typeof v === 'string' ? DEBIAN_URGENCY[v.replace(/\*+$/, '').trim().toLowerCase()] : undefined;

/**
 * An advisory's severity: a curated label (database_specific.severity, the affected entry's, an
 * Ubuntu priority, a Debian urgency) first, then the CVSS v3 base score, else medium. The v3 vector is returned
 * with its score when there is one.
 */
export function advisorySeverity(
  record: OsvRecord,
  affected?: OsvAffected,
): { severity: Severity; cvss?: { score: number; vector: string } } {
  let cvss: { score: number; vector: string } | undefined;
  for (const s of record.severity ?? []) {
    if (s.type !== 'CVSS_V3') continue;
    const score = cvss3BaseScore(s.score);
    if (score !== null) {
      cvss = { score, vector: s.score.trim() };
      break;
    }
  }
  const label =
    labelOf(record.database_specific?.severity) ??
    labelOf(affected?.database_specific?.severity) ??
    labelOf(affected?.ecosystem_specific?.severity) ??
    labelOf(record.severity?.find((s) => s.type === 'Ubuntu')?.score) ??
    urgencyOf(affected?.ecosystem_specific?.urgency);
  const severity = label ?? (cvss ? severityOfScore(cvss.score) : 'medium');
  return cvss ? { severity, cvss } : { severity };
}

/** CVE ids among the record's id, aliases and upstream ids (Debian/Ubuntu records name the CVE there). */
export function cveIds(record: OsvRecord): string[] {
  const ids = [record.id, ...(record.aliases ?? []), ...(record.upstream ?? [])].map((x) =>
    x.replace(/^(?:DEBIAN|UBUNTU)-(?=CVE-)/, ''),
  );
  return [...new Set(ids.filter((x) => CVE_RE.test(x)).map((x) => x.toUpperCase()))].sort();
}
