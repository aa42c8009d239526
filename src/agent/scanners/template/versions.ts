// compare_versions(v, constraints…) as nuclei evaluates it (HashiCorp go-version): versions with
// any number of numeric segments, an optional `v` and pre-release/metadata; constraints such as
// `< 2.4.50`, `>= 1.0, < 1.2` (comma means and), `= 1.0`, `!= 1.0`, `~> 1.2`. Every constraint
// argument must hold. An unparsable version or constraint is an error (undefined).

interface Version {
  segments: number[];
  pre: string;
}

const VERSION_RE = /^v?(\d+(?:\.\d+)*)(?:-?([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

export function parseVersion(text: string): Version | null {
  const m = VERSION_RE.exec(text.trim());
  if (!m) return null;
  return { segments: m[1]!.split('.').map(Number), pre: m[2] ?? '' };
}

function comparePre(a: string, b: string): number {
  if (a === b) return 0;
  if (!a) return 1;
  if (!b) return -1;
  const x = a.split('.');
  const y = b.split('.');
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] === undefined) return -1;
    if (y[i] === undefined) return 1;
    const nx = /^\d+$/.test(x[i]!);
    const ny = /^\d+$/.test(y[i]!);
    if (nx && ny && Number(x[i]) !== Number(y[i])) return Number(x[i]) < Number(y[i]) ? -1 : 1;
    if (nx !== ny) return nx ? -1 : 1;
    if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
  }
  return 0;
}

export function compare(a: Version, b: Version): number {
  const n = Math.max(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const x = a.segments[i] ?? 0;
    const y = b.segments[i] ?? 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return comparePre(a.pre, b.pre);
}

function holds(v: Version, constraint: string): boolean | null {
  const m = /^\s*(~>|>=|<=|!=|=|>|<)?\s*(\S+)\s*$/.exec(constraint);
  if (!m) return null;
  const c = parseVersion(m[2]!);
  if (!c) return null;
  // go-version: a pre-release version only satisfies constraints that name a pre-release.
  if (v.pre && !c.pre && m[1] !== '!=') {
    if (compare({ segments: v.segments, pre: '' }, { segments: c.segments, pre: '' }) !== 0) return false;
  }
  const r = compare(v, c);
  switch (m[1] ?? '=') {
    case '=':
      return r === 0;
    case '!=':
      return r !== 0;
    case '>':
      return r > 0;
    case '<':
      return r < 0;
    case '>=':
      return r >= 0;
    case '<=':
      return r <= 0;
    default: {
      // ~> 1.2.3 means >= 1.2.3 and < 1.3; ~> 1.2 means >= 1.2 and < 2.
      if (r < 0) return false;
      const keep = Math.max(1, c.segments.length - 1);
      for (let i = 0; i < keep; i++) if ((v.segments[i] ?? 0) !== c.segments[i]) return false;
      return true;
    }
  }
}

export function compareVersions(version: string, constraints: readonly string[]): boolean | undefined {
  const v = parseVersion(version);
  if (!v) return undefined;
  for (const arg of constraints) {
    for (const part of arg.split(',')) {
      const ok = holds(v, part);
      if (ok === null) return undefined;
      if (!ok) return false;
    }
  }
  return true;
}
