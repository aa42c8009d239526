// Version ordering per ecosystem, as the package managers themselves order versions: an advisory's
// "fixed in 1.0~rc1" only means something under the ordering of the ecosystem that published it.
import * as pep440 from '@renovatebot/pep440';
import semver from 'semver';

/** Negative, zero or positive like Array.prototype.sort; null when a version cannot be read. */
export type VersionCompare = (a: string, b: string) => number | null;

const isDigit = (c: number) => c >= 48 && c <= 57;
const isAlpha = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const sign = (n: number) => (n < 0 ? -1 : n > 0 ? 1 : 0);

/** Compares two digit strings as unbounded numbers (no overflow on long runs of digits). */
function compareDigits(a: string, b: string): number {
  const x = a.replace(/^0+/, '');
  const y = b.replace(/^0+/, '');
  if (x.length !== y.length) return x.length < y.length ? -1 : 1;
  return x < y ? -1 : x > y ? 1 : 0;
}

// ---- dpkg ------------------------------------------------------------------------------------

/** dpkg's character weight: `~` before the end of the string, letters before other symbols. */
function dpkgOrder(c: number): number {
  if (c === 0 || isDigit(c)) return 0;
  if (isAlpha(c)) return c;
  if (c === 126) return -1;
  return c + 256;
}

/** dpkg's verrevcmp: alternating non-digit runs (by dpkgOrder) and digit runs (numerically). */
function verrevcmp(a: string, b: string): number {
  let i = 0;
  let j = 0;
  const at = (s: string, k: number) => (k < s.length ? s.charCodeAt(k) : 0);
  while (i < a.length || j < b.length) {
    while ((i < a.length && !isDigit(at(a, i))) || (j < b.length && !isDigit(at(b, j)))) {
      const ac = dpkgOrder(at(a, i));
      const bc = dpkgOrder(at(b, j));
      if (ac !== bc) return sign(ac - bc);
      i++;
      j++;
    }
    while (at(a, i) === 48) i++;
    while (at(b, j) === 48) j++;
    let firstDiff = 0;
    while (isDigit(at(a, i)) && isDigit(at(b, j))) {
      if (!firstDiff) firstDiff = at(a, i) - at(b, j);
      i++;
      j++;
    }
    if (isDigit(at(a, i))) return 1;
    if (isDigit(at(b, j))) return -1;
    if (firstDiff) return sign(firstDiff);
  }
  return 0;
}

interface DpkgVersion {
  epoch: number;
  upstream: string;
  revision: string;
}

export function parseDpkgVersion(v: string): DpkgVersion | null {
  const s = v.trim();
  if (!s || /\s/.test(s)) return null;
  const colon = s.indexOf(':');
  let epoch = 0;
  let rest = s;
  if (colon >= 0) {
    const e = s.slice(0, colon);
    if (!/^\d{1,9}$/.test(e)) return null;
    epoch = Number(e);
    rest = s.slice(colon + 1);
  }
  const dash = rest.lastIndexOf('-');
  const upstream = dash >= 0 ? rest.slice(0, dash) : rest;
  const revision = dash >= 0 ? rest.slice(dash + 1) : '';
  if (!upstream) return null;
  return { epoch, upstream, revision };
}

/** Debian version order (deb-version(7)): epoch, then upstream, then revision, each by verrevcmp. */
export const compareDpkg: VersionCompare = (a, b) => {
  const x = parseDpkgVersion(a);
  const y = parseDpkgVersion(b);
  if (!x || !y) return null;
  if (x.epoch !== y.epoch) return x.epoch < y.epoch ? -1 : 1;
  return verrevcmp(x.upstream, y.upstream) || verrevcmp(x.revision, y.revision);
};

// ---- apk -------------------------------------------------------------------------------------

// Token kinds in the order apk-tools ranks them when one version runs out before the other.
const T_INITIAL = 0;
const T_DIGIT = 1;
const T_LETTER = 2;
const T_SUFFIX = 3;
const T_SUFFIX_NO = 4;
const T_HASH = 5;
const T_REVISION = 6;
const T_END = 7;
const T_INVALID = 8;

// Pre-release suffixes rank below "no suffix" (4), post-release ones above.
const APK_SUFFIXES: Record<string, number> = { alpha: 0, beta: 1, pre: 2, rc: 3, cvs: 5, svn: 6, git: 7, hg: 8, p: 9 };
const APK_SUFFIX_NONE = 4;

interface ApkToken {
  kind: number;
  value: string;
  suffix: number;
}

/** Yields apk version tokens (digit{.digit}…{letter}{_suf{#}}…{~hash}{-r#}), ending in END or INVALID. */
function* apkTokens(v: string): Generator<ApkToken> {
  let pos = 0;
  const digits = () => {
    const start = pos;
    while (pos < v.length && isDigit(v.charCodeAt(pos))) pos++;
    return v.slice(start, pos);
  };
  let kind = T_INITIAL;
  let value = digits();
  if (!value) kind = T_INVALID;
  yield { kind, value, suffix: 0 };
  while (kind < T_END) {
    if (pos >= v.length) {
      kind = T_END;
      yield { kind, value: '', suffix: 0 };
      return;
    }
    const c = v[pos]!;
    let suffix = 0;
    if (c >= 'a' && c <= 'z') {
      kind = kind > T_DIGIT ? T_INVALID : T_LETTER;
      value = c;
      pos++;
    } else if (c === '.' || (c >= '0' && c <= '9')) {
      if (c === '.') {
        if (kind > T_DIGIT) kind = T_INVALID;
        pos++;
      }
      if (kind === T_INITIAL || kind === T_DIGIT) kind = T_DIGIT;
      else if (kind === T_SUFFIX) kind = T_SUFFIX_NO;
      else kind = T_INVALID;
      if (kind !== T_INVALID) {
        value = digits();
        if (!value) kind = T_INVALID;
      }
    } else if (c === '_') {
      if (kind > T_SUFFIX_NO) kind = T_INVALID;
      else {
        pos++;
        const start = pos;
        while (pos < v.length && v[pos]! >= 'a' && v[pos]! <= 'z') pos++;
        value = v.slice(start, pos);
        const s = APK_SUFFIXES[value];
        if (s === undefined) kind = T_INVALID;
        else {
          kind = T_SUFFIX;
          suffix = s;
        }
      }
    } else if (c === '~') {
      if (kind >= T_HASH) kind = T_INVALID;
      else {
        pos++;
        const start = pos;
        while (pos < v.length && /[0-9a-fA-F]/.test(v[pos]!)) pos++;
        value = v.slice(start, pos);
        kind = value ? T_HASH : T_INVALID;
      }
    } else if (c === '-' && kind < T_REVISION && v[pos + 1] === 'r') {
      pos += 2;
      value = digits();
      kind = value ? T_REVISION : T_INVALID;
    } else kind = T_INVALID;
    yield { kind, value, suffix };
  }
}

function apkTokenCompare(a: ApkToken, b: ApkToken): number {
  switch (a.kind) {
    case T_DIGIT:
      // A leading zero makes apk compare the digits as text (Gentoo's rule: 1.01 < 1.1).
      if (a.value.startsWith('0') || b.value.startsWith('0')) return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
      return compareDigits(a.value, b.value);
    case T_INITIAL:
    case T_SUFFIX_NO:
    case T_REVISION:
      return compareDigits(a.value, b.value);
    case T_LETTER:
      return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
    case T_SUFFIX:
      return sign(a.suffix - b.suffix);
    default:
      return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
  }
}

/** Alpine (apk-tools) version order, including _alpha…_rc < none < _cvs…_p and -rN revisions. */
export const compareApk: VersionCompare = (a, b) => {
  const ta = apkTokens(a.trim());
  const tb = apkTokens(b.trim());
  let x = ta.next().value as ApkToken;
  let y = tb.next().value as ApkToken;
  if (x.kind === T_INVALID || y.kind === T_INVALID) return null;
  while (x.kind === y.kind && x.kind < T_END) {
    const r = apkTokenCompare(x, y);
    if (r) return r;
    x = ta.next().value as ApkToken;
    y = tb.next().value as ApkToken;
  }
  if (x.kind === T_INVALID || y.kind === T_INVALID) return null;
  if (x.kind === y.kind) return 0;
  if (x.kind === T_SUFFIX && x.suffix < APK_SUFFIX_NONE) return -1;
  if (y.kind === T_SUFFIX && y.suffix < APK_SUFFIX_NONE) return 1;
  return x.kind > y.kind ? -1 : 1;
};

// ---- rpm -------------------------------------------------------------------------------------

/** rpm's rpmvercmp: alphanumeric segments, `~` before everything, `^` after the base only. */
export function rpmvercmp(a: string, b: string): number {
  if (a === b) return 0;
  let i = 0;
  let j = 0;
  const alnum = (c: number) => isDigit(c) || isAlpha(c);
  while (i < a.length || j < b.length) {
    while (i < a.length && !alnum(a.charCodeAt(i)) && a[i] !== '~' && a[i] !== '^') i++;
    while (j < b.length && !alnum(b.charCodeAt(j)) && b[j] !== '~' && b[j] !== '^') j++;
    if (a[i] === '~' || b[j] === '~') {
      if (a[i] !== '~') return 1;
      if (b[j] !== '~') return -1;
      i++;
      j++;
      continue;
    }
    if (a[i] === '^' || b[j] === '^') {
      if (i >= a.length) return -1;
      if (j >= b.length) return 1;
      if (a[i] !== '^') return 1;
      if (b[j] !== '^') return -1;
      i++;
      j++;
      continue;
    }
    if (i >= a.length || j >= b.length) break;
    const numeric = isDigit(a.charCodeAt(i));
    const test = numeric ? isDigit : isAlpha;
    let ie = i;
    let je = j;
    while (ie < a.length && test(a.charCodeAt(ie))) ie++;
    while (je < b.length && test(b.charCodeAt(je))) je++;
    // A numeric segment is newer than an alphabetic one.
    if (je === j) return numeric ? 1 : -1;
    const sa = a.slice(i, ie);
    const sb = b.slice(j, je);
    const r = numeric ? compareDigits(sa, sb) : sa < sb ? -1 : sa > sb ? 1 : 0;
    if (r) return r;
    i = ie;
    j = je;
  }
  if (i >= a.length && j >= b.length) return 0;
  return i >= a.length ? -1 : 1;
}

/** rpm EVR order: [epoch:]version[-release], a missing epoch being 0. */
export const compareRpm: VersionCompare = (a, b) => {
  const parse = (v: string) => {
    const m = /^(?:(\d{1,9}):)?([^-\s]+)(?:-([^\s]+))?$/.exec(v.trim());
    return m ? { epoch: Number(m[1] ?? 0), version: m[2]!, release: m[3] ?? '' } : null;
  };
  const x = parse(a);
  const y = parse(b);
  if (!x || !y) return null;
  if (x.epoch !== y.epoch) return x.epoch < y.epoch ? -1 : 1;
  // A range bound without a release matches every release of that version.
  return rpmvercmp(x.version, y.version) || (x.release && y.release ? rpmvercmp(x.release, y.release) : 0);
};

// ---- language ecosystems ---------------------------------------------------------------------

/** SemVer 2.0 precedence (npm, and OSV SEMVER ranges); a leading "v" or "=" is tolerated. */
export const compareSemver: VersionCompare = (a, b) => {
  const x = semver.parse(a.trim(), { loose: true });
  const y = semver.parse(b.trim(), { loose: true });
  return x && y ? semver.compare(x, y) : null;
};

/** PEP 440 order (PyPI): 1.0a1 < 1.0rc1 < 1.0 < 1.0.post1, epochs, local versions. */
export const comparePep440: VersionCompare = (a, b) => {
  if (!pep440.valid(a) || !pep440.valid(b)) return null;
  return sign(pep440.compare(a, b));
};

/** The ordering for an OSV ecosystem name (release suffix ignored), or null when there is none here. */
export function comparatorFor(ecosystem: string): VersionCompare | null {
  const base = ecosystem.split(':')[0]!.toLowerCase();
  switch (base) {
    case 'debian':
    case 'ubuntu':
      return compareDpkg;
    case 'alpine':
    case 'wolfi':
    case 'chainguard':
      return compareApk;
    case 'red hat':
    case 'rocky linux':
    case 'almalinux':
    case 'opensuse':
    case 'suse':
    case 'mageia':
    case 'openeuler':
      return compareRpm;
    case 'npm':
      return compareSemver;
    case 'pypi':
      return comparePep440;
    default:
      return null;
  }
}
