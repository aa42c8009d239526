// nuclei's DSL helper functions that real templates use, with nuclei's results (Go formats:
// base64_py's 76-character lines, mmh3 as a signed 32-bit number, hex_encode lower case,
// url_encode as Go's QueryEscape). Each takes evaluated arguments and returns a value, or
// undefined for an error (the expression then fails, as in nuclei). Every function is pure and
// bounded: sizes are capped so a template cannot make a worker build gigabyte strings.
import { createHash, createHmac, randomInt } from 'node:crypto';
import { gunzipSync, gzipSync, inflateSync, deflateSync, inflateRawSync, deflateRawSync } from 'node:zlib';
import { runtimeRegex } from './regex.ts';
import { compareVersions } from './versions.ts';

export type DslValue = string | number | boolean | DslValue[];

/** An evaluation error: the expression fails (nuclei logs it and moves on). */
export class DslEvalError extends Error {}

// Bytes that are not UTF-8 (a favicon, a gzip body) travel as latin1 strings, one character per
// byte; they are remembered so hashing and encoding functions see the original bytes again.
const binary = new Set<string>();
/** A string holding these bytes: UTF-8 text when they are valid UTF-8, else one character per byte. */
export function bytesToString(b: Buffer): string {
  const text = b.toString('utf8');
  if (!text.includes('\uFFFD') || Buffer.byteLength(text) === b.length) return text;
  const raw = b.toString('latin1');
  if (binary.size >= 256) binary.delete(binary.values().next().value!);
  binary.add(raw);
  return raw;
}

export interface FnSpec {
  min: number;
  max: number;
  fn: (args: DslValue[]) => DslValue | undefined;
  /** The argument that is a regex: checked at validation when it is a literal. */
  regexArg?: number;
}

/** The longest string a function may build (repeat, padding, random text). */
export const MAX_BUILT = 1024 * 1024;
const MAX_DECOMPRESSED = 4 * 1024 * 1024;

const s = (v: DslValue | undefined): string =>
  v === undefined
    ? ''
    : Array.isArray(v)
      ? v.map((x) => s(x)).join(' ')
      : typeof v === 'number'
        ? Number.isInteger(v) && Math.abs(v) < 1e21
          ? v.toFixed(0)
          : String(v)
        : String(v);
const int = (v: DslValue | undefined): number | undefined => {
  const n = typeof v === 'number' ? v : Number(s(v).trim());
  return Number.isFinite(n) ? Math.trunc(n) : undefined;
};
const bytes = (v: DslValue | undefined) => (binary.has(s(v)) ? Buffer.from(s(v), 'latin1') : Buffer.from(s(v), 'utf8'));
const fromBytes = bytesToString;
/** The bytes a string stands for: one per character when it came from non-UTF-8 bytes, else UTF-8. */
export const stringBytes = (v: string): Buffer => bytes(v);

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';

function random(length: number | undefined, charset: string, bad = ''): string | undefined {
  if (length === undefined || length < 0 || length > MAX_BUILT) return undefined;
  const set = [...charset].filter((c) => !bad.includes(c));
  if (!set.length) return undefined;
  let out = '';
  for (let i = 0; i < length; i++) out += set[randomInt(set.length)];
  return out;
}

/** Go's url.QueryEscape: space as +, unreserved kept. */
function queryEscape(v: string, all: boolean): string {
  const enc = encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  if (all) return [...Buffer.from(v, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  return enc.replace(/%20/g, '+');
}

function mmh3(data: Buffer): number {
  let h = 0;
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  const blocks = data.length >> 2;
  for (let i = 0; i < blocks; i++) {
    let k = data.readUInt32LE(i * 4);
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  let k = 0;
  const tail = blocks * 4;
  const rest = data.length & 3;
  if (rest >= 3) k ^= data[tail + 2]! << 16;
  if (rest >= 2) k ^= data[tail + 1]! << 8;
  if (rest >= 1) {
    k ^= data[tail]!;
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
  }
  h ^= data.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
/** nuclei's date_time: %Y %M %D %H %m %S (and %y), or a Go layout such as 2006-01-02. */
function dateTime(format: string, when: Date): string {
  const utc = {
    Y: when.getUTCFullYear(),
    M: when.getUTCMonth() + 1,
    D: when.getUTCDate(),
    H: when.getUTCHours(),
    m: when.getUTCMinutes(),
    S: when.getUTCSeconds(),
  };
  if (format.includes('%')) {
    return format.replace(/%([YyMDHmS])/g, (_, c: string) =>
      c === 'Y' ? String(utc.Y) : c === 'y' ? pad(utc.Y % 100) : pad(utc[c as 'M' | 'D' | 'H' | 'm' | 'S']),
    );
  }
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const tokens: [string, () => string][] = [
    ['2006', () => String(utc.Y)],
    ['Jan', () => months[utc.M - 1]!],
    ['Mon', () => days[when.getUTCDay()]!],
    ['MST', () => 'UTC'],
    ['01', () => pad(utc.M)],
    ['02', () => pad(utc.D)],
    ['15', () => pad(utc.H)],
    ['04', () => pad(utc.m)],
    ['05', () => pad(utc.S)],
    ['06', () => pad(utc.Y % 100)],
  ];
  let out = '';
  for (let i = 0; i < format.length;) {
    const t = tokens.find(([k]) => format.startsWith(k, i));
    if (t) {
      out += t[1]();
      i += t[0].length;
    } else out += format[i++];
  }
  return out;
}

function timeArg(v: DslValue | undefined): Date | undefined {
  if (v === undefined) return new Date();
  const n = int(v);
  if (n !== undefined && /^\s*-?\d+\s*$/.test(s(v))) return new Date(n * 1000);
  const t = Date.parse(s(v));
  return Number.isNaN(t) ? undefined : new Date(t);
}

function decompress(
  fn: (b: Buffer, o: { maxOutputLength: number }) => Buffer,
  v: DslValue | undefined,
): string | undefined {
  return fromBytes(fn(bytes(v), { maxOutputLength: MAX_DECOMPRESSED }));
}

const bounded = (out: string) => (out.length > MAX_BUILT ? undefined : out);
const hash = (alg: string) => (a: DslValue[]) => createHash(alg).update(bytes(a[0])).digest('hex');
const f = (min: number, max: number, fn: FnSpec['fn'], regexArg?: number): FnSpec => ({
  min,
  max,
  fn,
  ...(regexArg !== undefined ? { regexArg } : {}),
});
const ANY = Infinity;

export const FUNCTIONS: Record<string, FnSpec> = {
  len: f(1, 1, ([v]) => (Array.isArray(v) ? v.length : s(v).length)),
  to_lower: f(1, 1, ([v]) => s(v).toLowerCase()),
  to_upper: f(1, 1, ([v]) => s(v).toUpperCase()),
  tolower: f(1, 1, ([v]) => s(v).toLowerCase()),
  toupper: f(1, 1, ([v]) => s(v).toUpperCase()),
  to_title: f(1, 1, ([v]) => s(v).replace(/\b\w/g, (c) => c.toUpperCase())),
  contains: f(2, 2, ([a, b]) => s(a).includes(s(b))),
  contains_all: f(2, ANY, ([a, ...r]) => r.every((x) => s(a).includes(s(x)))),
  contains_any: f(2, ANY, ([a, ...r]) => r.some((x) => s(a).includes(s(x)))),
  equals_any: f(2, ANY, ([a, ...r]) => r.some((x) => s(x) === s(a))),
  starts_with: f(2, ANY, ([a, ...r]) => r.some((x) => s(a).startsWith(s(x)))),
  ends_with: f(2, ANY, ([a, ...r]) => r.some((x) => s(a).endsWith(s(x)))),
  line_starts_with: f(2, ANY, ([a, ...r]) =>
    s(a)
      .split('\n')
      .some((l) => r.some((x) => l.startsWith(s(x)))),
  ),
  line_ends_with: f(2, ANY, ([a, ...r]) =>
    s(a)
      .split('\n')
      .some((l) => r.some((x) => l.endsWith(s(x)))),
  ),
  regex: f(2, 2, ([p, v]) => regexOf(p).test(s(v)), 0),
  regex_all: f(2, ANY, ([p, ...r]) => r.every((v) => regexOf(p).test(s(v))), 0),
  regex_any: f(2, ANY, ([p, ...r]) => r.some((v) => regexOf(p).test(s(v))), 0),
  replace: f(3, 3, ([a, b, c]) => bounded(s(a).split(s(b)).join(s(c)))),
  replace_regex: f(
    3,
    3,
    ([a, p, c]) =>
      bounded(
        s(a).replace(new RegExp(regexOf(p).source, `${regexOf(p).flags}g`), s(c).replace(/\$\{?(\d+)\}?/g, '$$$1')),
      ),
    1,
  ),
  trim: f(2, 2, ([a, b]) => trimSet(s(a), s(b), true, true)),
  trim_left: f(2, 2, ([a, b]) => trimSet(s(a), s(b), true, false)),
  trim_right: f(2, 2, ([a, b]) => trimSet(s(a), s(b), false, true)),
  trim_space: f(1, 1, ([a]) => s(a).trim()),
  trim_prefix: f(2, 2, ([a, b]) => (s(a).startsWith(s(b)) ? s(a).slice(s(b).length) : s(a))),
  trim_suffix: f(2, 2, ([a, b]) => (s(b) && s(a).endsWith(s(b)) ? s(a).slice(0, -s(b).length) : s(a))),
  reverse: f(1, 1, ([a]) => [...s(a)].reverse().join('')),
  repeat: f(2, 2, ([a, n]) => {
    const count = int(n);
    return count === undefined || count < 0 || s(a).length * count > MAX_BUILT ? undefined : s(a).repeat(count);
  }),
  concat: f(0, ANY, (a) => bounded(a.map(s).join(''))),
  join: f(2, ANY, ([sep, ...r]) => (r.length === 1 && Array.isArray(r[0]) ? r[0] : r).map(s).join(s(sep))),
  split: f(2, 3, ([a, sep]) => {
    const n = /^\d+$/.test(s(sep)) ? Number(s(sep)) : undefined;
    if (n === undefined) return s(a).split(s(sep));
    if (n <= 0) return undefined;
    const out: string[] = [];
    for (let i = 0; i < s(a).length; i += n) out.push(s(a).slice(i, i + n));
    return out;
  }),
  substr: f(2, 3, ([a, b, c]) => {
    const str = s(a);
    const start = int(b);
    const end = c === undefined ? str.length : int(c);
    if (!str || start === undefined || end === undefined || start < 0 || end > str.length || start > end)
      return undefined;
    return str.slice(start, end);
  }),
  index: f(2, 2, ([a, i]) => (Array.isArray(a) ? a[int(i) ?? -1] : s(a)[int(i) ?? -1])),
  count: f(2, 2, ([a, b]) => (s(b) ? s(a).split(s(b)).length - 1 : s(a).length + 1)),
  padding: f(4, 4, ([a, p, n, where]) => {
    const len = int(n);
    if (len === undefined || len > MAX_BUILT || !s(p)) return undefined;
    const str = s(a);
    if (str.length >= len) return str;
    const fill = s(p)
      .repeat(Math.ceil((len - str.length) / s(p).length))
      .slice(0, len - str.length);
    return s(where) === 'prefix' ? fill + str : str + fill;
  }),
  base64: f(1, 1, ([a]) => bytes(a).toString('base64')),
  base64_py: f(
    1,
    1,
    ([a]) =>
      bytes(a)
        .toString('base64')
        .replace(/(.{76})/g, '$1\n') + '\n',
  ),
  base64_decode: f(1, 1, ([a]) =>
    /^[A-Za-z0-9+/]*={0,2}$/.test(s(a).replace(/\s/g, '')) ? fromBytes(Buffer.from(s(a), 'base64')) : undefined,
  ),
  url_encode: f(1, 2, ([a, all]) => queryEscape(s(a), all === true || all === 1)),
  url_decode: f(1, 1, ([a]) => {
    try {
      return decodeURIComponent(s(a).replace(/\+/g, ' '));
    } catch {
      return undefined;
    }
  }),
  hex_encode: f(1, 1, ([a]) => bytes(a).toString('hex')),
  hex_decode: f(1, 1, ([a]) => (/^(?:[0-9a-fA-F]{2})*$/.test(s(a)) ? fromBytes(Buffer.from(s(a), 'hex')) : undefined)),
  html_escape: f(1, 1, ([a]) =>
    s(a)
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&#34;')
      .replace(/'/g, '&#39;'),
  ),
  html_unescape: f(1, 1, ([a]) =>
    s(a)
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&#34;|&quot;/g, '"')
      .replace(/&#39;|&apos;/g, "'")
      .replace(/&amp;/g, '&'),
  ),
  md5: f(1, 1, hash('md5')),
  sha1: f(1, 1, hash('sha1')),
  sha256: f(1, 1, hash('sha256')),
  sha512: f(1, 1, hash('sha512')),
  hmac: f(3, 3, ([alg, data, key]) => {
    const a = s(alg).toLowerCase();
    return ['sha1', 'sha256', 'sha512', 'md5'].includes(a)
      ? createHmac(a, bytes(key)).update(bytes(data)).digest('hex')
      : undefined;
  }),
  mmh3: f(1, 1, ([a]) => String(mmh3(bytes(a)))),
  gzip: f(1, 1, ([a]) => fromBytes(gzipSync(bytes(a)))),
  gzip_decode: f(1, 1, ([a]) => decompress(gunzipSync, a)),
  zlib: f(1, 1, ([a]) => fromBytes(deflateSync(bytes(a)))),
  zlib_decode: f(1, 1, ([a]) => decompress(inflateSync, a)),
  deflate: f(1, 1, ([a]) => fromBytes(deflateRawSync(bytes(a)))),
  inflate: f(1, 1, ([a]) => decompress(inflateRawSync, a)),
  xor: f(2, ANY, (args) => {
    const bufs = args.map(bytes);
    if (bufs.some((b) => b.length !== bufs[0]!.length)) return undefined;
    return fromBytes(Buffer.from(bufs[0]!.map((_, i) => bufs.reduce((x, b) => x ^ b[i]!, 0))));
  }),
  rand_base: f(1, 2, ([n, set]) => random(int(n), s(set) || LETTERS + DIGITS)),
  rand_char: f(0, 1, ([set]) => random(1, s(set) || LETTERS + DIGITS)),
  rand_text_alphanumeric: f(1, 2, ([n, bad]) => random(int(n), LETTERS + DIGITS, s(bad))),
  rand_text_alpha: f(1, 2, ([n, bad]) => random(int(n), LETTERS, s(bad))),
  rand_text_numeric: f(1, 2, ([n, bad]) => random(int(n), DIGITS, s(bad))),
  rand_int: f(0, 2, ([lo, hi]) => {
    const min = lo === undefined ? 0 : int(lo);
    const max = hi === undefined ? 2_147_483_647 : int(hi);
    return min === undefined || max === undefined || max <= min ? undefined : randomInt(min, max);
  }),
  rand_ip: f(1, 1, ([cidr]) => {
    const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(s(cidr));
    if (!m) return undefined;
    const base = ((Number(m[1]) << 24) | (Number(m[2]) << 16) | (Number(m[3]) << 8) | Number(m[4])) >>> 0;
    const bits = Number(m[5]);
    const size = bits >= 32 ? 1 : 2 ** (32 - bits);
    const ip = ((base & ~(size - 1)) + randomInt(Math.max(1, Math.min(size, 2 ** 31)))) >>> 0;
    return [24, 16, 8, 0].map((sh) => (ip >>> sh) & 255).join('.');
  }),
  unix_time: f(0, 1, ([off]) => Math.floor(Date.now() / 1000) + (off === undefined ? 0 : (int(off) ?? 0))),
  to_unix_time: f(1, 2, ([v]) => {
    const d = timeArg(v);
    return d ? Math.floor(d.getTime() / 1000) : undefined;
  }),
  date_time: f(1, 2, ([fmt, when]) => {
    const d = timeArg(when);
    return d ? dateTime(s(fmt), d) : undefined;
  }),
  compare_versions: f(2, ANY, ([v, ...c]) => compareVersions(s(v), c.map(s))),
  to_number: f(1, 1, ([a]) => (/^\s*-?\d+(?:\.\d+)?\s*$/.test(s(a)) ? Number(s(a)) : undefined)),
  to_string: f(1, 1, ([a]) => s(a)),
  to_bool: f(1, 1, ([a]) => (/^(?:1|t|true)$/i.test(s(a)) ? true : /^(?:0|f|false)$/i.test(s(a)) ? false : undefined)),
  dec_to_hex: f(1, 1, ([a]) => (int(a) === undefined ? undefined : int(a)!.toString(16))),
  hex_to_dec: f(1, 1, ([a]) => parseBase(s(a).replace(/^0x/i, ''), 16)),
  oct_to_dec: f(1, 1, ([a]) => parseBase(s(a).replace(/^0o?/i, ''), 8)),
  bin_to_dec: f(1, 1, ([a]) => parseBase(s(a).replace(/^0b/i, ''), 2)),
  json_minify: f(1, 1, ([a]) => jsonText(s(a), 0)),
  json_prettify: f(1, 1, ([a]) => jsonText(s(a), 4)),
  uniq: f(1, ANY, (a) =>
    a.length === 1 && Array.isArray(a[0]) ? [...new Set(a[0].map(s))] : [...new Set([...s(a[0])])].join(''),
  ),
  sort: f(1, ANY, (a) =>
    a.length === 1 && Array.isArray(a[0])
      ? a[0].map(s).sort()
      : a.length === 1
        ? [...s(a[0])].sort().join('')
        : a.map(s).sort(),
  ),
  print_debug: f(0, ANY, () => true),
};

function regexOf(p: DslValue | undefined): RegExp {
  // Literal patterns were checked at validation; runtime ones are compiled by the same rules.
  const re = runtimeRegex(s(p));
  if (!re) throw new DslEvalError(`unsupported regex ${JSON.stringify(s(p).slice(0, 60))}`);
  return re;
}

function trimSet(v: string, set: string, left: boolean, right: boolean): string {
  let a = 0;
  let b = v.length;
  while (left && a < b && set.includes(v[a]!)) a++;
  while (right && b > a && set.includes(v[b - 1]!)) b--;
  return v.slice(a, b);
}

function parseBase(v: string, base: number): number | undefined {
  const digits = base === 16 ? /^[0-9a-f]+$/i : base === 8 ? /^[0-7]+$/ : /^[01]+$/;
  return digits.test(v) ? parseInt(v, base) : undefined;
}

function jsonText(v: string, indent: number): string | undefined {
  try {
    return JSON.stringify(JSON.parse(v), null, indent);
  } catch {
    return undefined;
  }
}
