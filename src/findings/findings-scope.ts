// What a scan was authoritative for. After ingesting a scan, open findings of the same asset and
// scanner inside its scope that it did not report are closed as fixed; findings outside it are
// left alone, so one chunk of a split scan never closes what another chunk found.
//
// Each finding remembers the scope key of the scan that last reported it. A scope closes:
//   full        everything of its asset and scanner;
//   ports       findings whose port lies in its ranges, and those its own slice reported before;
//   severities  findings of those severities (narrowed by template ids when given); with tags,
//               only what the same slice reported before (a tag filter says nothing about the rest);
//   paths       only what the same slice reported before: crawling seeded at /api may wander, and
//               chunk 0's passive baseline reports anywhere, so paths alone cannot tell;
//   none        nothing (partial results of a failed or cancelled scan).
// A chunk whose spec this module cannot read is treated like `paths` (its exact key only); a
// chunk without any spec closes nothing.
import { sql, type RawBuilder } from 'kysely';
import { ingestScopeSchema, SEVERITIES, type IngestScope, type Severity } from './findings-schemas.ts';

export type ResolvedScope = ReturnType<typeof ingestScopeSchema.parse> | { kind: 'opaque'; key: string };

function mergeRanges(ranges: [number, number][]): [number, number][] {
  const sorted = ranges.map(([a, b]) => (a <= b ? [a, b] : [b, a]) as [number, number]).sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const r of sorted) {
    const last = out.at(-1);
    if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out;
}

export function resolveScope(scope: IngestScope): ResolvedScope {
  const s = ingestScopeSchema.parse(scope);
  if (s.kind === 'ports') return { kind: 'ports', ranges: mergeRanges(s.ranges) };
  if (s.kind === 'severities')
    return {
      ...s,
      severities: SEVERITIES.filter((v) => s.severities.includes(v)),
      tags: [...new Set(s.tags)].sort(),
      templateIds: [...new Set(s.templateIds)].sort(),
    };
  if (s.kind === 'paths') return { kind: 'paths', paths: [...new Set(s.paths)].sort() };
  return s;
}

export function scopeKey(s: ResolvedScope): string {
  switch (s.kind) {
    case 'full':
    case 'none':
      return s.kind;
    case 'ports':
      return `ports:${s.ranges.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(',')}`;
    case 'severities':
      return `severities:${s.severities.join(',')}${s.tags.length ? `|tags:${s.tags.join(',')}` : ''}${s.templateIds.length ? `|templates:${s.templateIds.join(',')}` : ''}`;
    case 'paths':
      return `paths:${s.paths.join(',')}`;
    case 'opaque':
      return s.key;
  }
}

/**
 * What an unchunked scan's filters left out: a template scan of some severities, tags or
 * templates, or a container scan above a severity threshold or without unfixed vulnerabilities,
 * did not look at the rest, so it must not close it.
 */
function filteredScope(kind: string, options: unknown): ResolvedScope {
  const o = (options ?? {}) as Record<string, unknown>;
  try {
    if (kind === 'template') {
      const severities =
        Array.isArray(o.severities) && o.severities.length ? (o.severities as Severity[]) : [...SEVERITIES];
      const tags = Array.isArray(o.tags) ? (o.tags as string[]) : [];
      const templateIds = Array.isArray(o.templateIds) ? (o.templateIds as string[]) : [];
      if (severities.length < SEVERITIES.length || tags.length || templateIds.length)
        return resolveScope({ kind: 'severities', severities, tags, templateIds });
    }
    if (kind === 'container') {
      const threshold = SEVERITIES.indexOf(
        typeof o.severityThreshold === 'string' ? (o.severityThreshold as Severity) : 'info',
      );
      // Leaving out unfixed vulnerabilities hides findings of every severity: only what the same
      // filter reported before can be closed.
      if (o.ignoreUnfixed === true)
        return { kind: 'opaque', key: `container:ignore-unfixed|from:${SEVERITIES[Math.max(0, threshold)]}` };
      if (threshold > 0)
        return resolveScope({ kind: 'severities', severities: SEVERITIES.slice(threshold), tags: [], templateIds: [] });
    }
  } catch {
    return { kind: 'none' };
  }
  return { kind: 'full' };
}

/** The scope of a scan from its row: a whole scan is `full` (narrowed by its filters); a chunk is read from its chunk_spec. */
export function scopeOfScan(scan: {
  kind: string;
  parent_id: string | null;
  chunk_spec: unknown;
  options?: unknown;
}): ResolvedScope {
  const spec = scan.chunk_spec;
  // A chunk without a spec says nothing about what it covered: it closes nothing.
  if (spec === null || spec === undefined)
    return scan.parent_id ? { kind: 'none' } : filteredScope(scan.kind, scan.options);
  const o = spec as Record<string, unknown>;
  const opaque = { kind: 'opaque' as const, key: `chunk:${stableJson(spec)}`.slice(0, 2_000) };
  try {
    if (scan.kind === 'port') {
      const range = (o.range ?? o) as { from?: unknown; to?: unknown };
      if (Number.isInteger(range.from) && Number.isInteger(range.to))
        return resolveScope({ kind: 'ports', ranges: [[range.from as number, range.to as number]] });
    }
    if (scan.kind === 'template' && Array.isArray(o.severities) && o.severities.length) {
      return resolveScope({
        kind: 'severities',
        severities: o.severities as Severity[],
        tags: Array.isArray(o.tags) ? (o.tags as string[]) : [],
        templateIds: Array.isArray(o.templateIds) ? (o.templateIds as string[]) : [],
      });
    }
    if (scan.kind === 'webapp' && Array.isArray(o.paths) && o.paths.length) {
      // The passive baseline runs in one chunk only; its key must differ from a chunk without it.
      const key = scopeKey(resolveScope({ kind: 'paths', paths: o.paths as string[] }));
      return { kind: 'opaque', key: o.passiveBaseline === true ? `${key}|baseline` : key };
    }
  } catch {
    return opaque;
  }
  return opaque;
}

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** SQL condition on `findings` (unaliased) for "inside this scope"; null when nothing is. */
export function scopeCondition(s: ResolvedScope): RawBuilder<boolean> | null {
  const key = scopeKey(s);
  switch (s.kind) {
    case 'none':
      return null;
    case 'full':
      return sql<boolean>`true`;
    case 'ports': {
      const inRanges = sql.join(
        s.ranges.map(([a, b]) => sql`port between ${a} and ${b}`),
        sql` or `,
      );
      return sql<boolean>`(scope_key = ${key} or (port is not null and (${inRanges})))`;
    }
    case 'severities':
      if (s.tags.length) return sql<boolean>`scope_key = ${key}`;
      return s.templateIds.length
        ? sql<boolean>`(scope_key = ${key} or (severity = any(${s.severities}::text[]) and lower(rule_id) = any(${s.templateIds.map((t) => t.toLowerCase())}::text[])))`
        : sql<boolean>`(scope_key = ${key} or severity = any(${s.severities}::text[]))`;
    case 'paths':
    case 'opaque':
      return sql<boolean>`scope_key = ${key}`;
  }
}
