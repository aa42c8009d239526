// Mesh dispatch signing (docs/mesh.md §3). Pure functions, no I/O.
//
//   bodyHash  = lowercase hex SHA-256 of the exact body bytes (empty body → e3b0c442…b855)
//   canonical = caller \n timestamp \n METHOD \n path \n bodyHash   (no trailing newline)
//   signature = lowercase hex HMAC-SHA256(secret, canonical)
//
// `path` is always the logical route DISPATCH_PATH, never the transport URL. Vectors a peer team
// can check against are in docs/mesh-vectors.md.
import { hash } from 'node:crypto';
import { safeEqual, sha256Hex } from '../lib/crypto.ts';

export const DISPATCH_PATH = '/api/public/svc/dispatch';

const SIGNATURE_RE = /^[0-9a-f]{64}$/;

/** SHA-256 of the exact bytes, lowercase hex. Strings are encoded as UTF-8 (never re-serialise parsed JSON). */
export function bodyHashHex(body: Uint8Array | string): string {
  return sha256Hex(body);
}

export interface CanonicalFields {
  caller: string;
  timestamp: string;
  method: string;
  path: string;
  bodyHash: string;
}

/** The five fields joined by `\n`, method upper-cased, no trailing newline. */
export function canonicalString({ caller, timestamp, method, path, bodyHash }: CanonicalFields): string {
  return [caller, timestamp, method.toUpperCase(), path, bodyHash].join('\n');
}

export interface DispatchToSign {
  caller: string;
  timestamp: string;
  method: string;
  path: string;
  body: Uint8Array | string;
}

// HMAC (RFC 2104) over node:crypto's one-shot SHA-256: H((K ^ opad) || H((K ^ ipad) || m)).
// createHmac builds a stream object per call, which cost about 2.3 µs a dispatch; two one-shot
// hashes over buffers kept per secret cost about 1.2 µs (verified against createHmac and Python's
// hmac in mesh-signing.test.ts). Secrets come from configuration, so there are few; bounded all
// the same.
interface Pads {
  /** K ^ ipad (64 bytes). */
  inner: Buffer;
  /** K ^ opad (64 bytes), then room for the inner digest. */
  outer: Buffer;
}
const pads = new Map<string, Pads>();
/** (K ^ ipad) || message, reused by every call (hashing is synchronous); zeroed after use. */
let scratch = Buffer.alloc(1_024);

function padsFor(secret: string): Pads {
  let p = pads.get(secret);
  if (p) return p;
  if (pads.size >= 64) pads.clear();
  let key = Buffer.from(secret, 'utf8');
  if (key.length > 64) key = hash('sha256', key, 'buffer'); // longer keys are hashed first (RFC 2104)
  p = { inner: Buffer.alloc(64, 0x36), outer: Buffer.alloc(96, 0x5c) };
  for (let i = 0; i < key.length; i++) {
    p.inner[i]! ^= key[i]!;
    p.outer[i]! ^= key[i]!;
  }
  pads.set(secret, p);
  return p;
}

function hmacHex(secret: string, message: string): string {
  const p = padsFor(secret);
  const room = 64 + message.length * 3; // UTF-8 takes at most 3 bytes per UTF-16 unit
  if (room > scratch.length) scratch = Buffer.alloc(room);
  p.inner.copy(scratch, 0);
  const n = scratch.write(message, 64, 'utf8');
  const innerHex = hash('sha256', scratch.subarray(0, 64 + n), 'hex');
  scratch.fill(0, 0, 64);
  p.outer.write(innerHex, 64, 'hex');
  return hash('sha256', p.outer, 'hex');
}

/** HMAC-SHA256(secret, canonical) as 64 lowercase hex characters. Throws on an empty secret. */
export function signDispatch(secret: string, req: DispatchToSign): string {
  if (typeof secret !== 'string' || secret.length === 0) throw new Error('mesh signing secret is empty');
  const canonical = canonicalString({ ...req, bodyHash: bodyHashHex(req.body) });
  return hmacHex(secret, canonical);
}

/**
 * Constant-time check of `signature` against HMAC-SHA256(secret, canonical). Never throws: anything
 * that is not exactly 64 lowercase hex characters (upper case, `sha256=` prefix, base64, a joined
 * duplicate header, a non-string) is false, as is an empty secret.
 */
export function verifyDispatchSignature(secret: string, canonical: string, signature: string): boolean {
  if (typeof secret !== 'string' || secret.length === 0) return false;
  if (typeof canonical !== 'string') return false;
  if (typeof signature !== 'string' || !SIGNATURE_RE.test(signature)) return false;
  return safeEqual(hmacHex(secret, canonical), signature);
}

/** ISO 8601 UTC with a `Z` suffix and milliseconds, e.g. `2025-01-01T00:00:00.000Z`. */
export function formatTimestamp(date: Date): string {
  return date.toISOString();
}

// YYYY-MM-DDTHH:MM:SS[.fraction]Z, upper-case T and Z only, nothing around it.
const TIMESTAMP_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;

/**
 * Parses a full ISO 8601 UTC date-time ending in `Z` (fractional seconds optional, 1–9 digits,
 * truncated to milliseconds). Returns null for anything else: offsets such as `+00:00`, a missing
 * `Z`, date-only values, epoch numbers, out-of-range fields (month 13, 31 April, hour 24, second 60),
 * lower-case `t`/`z`, and surrounding whitespace.
 */
export function parseTimestamp(value: string): Date | null {
  if (typeof value !== 'string') return null;
  const m = TIMESTAMP_RE.exec(value);
  if (!m) return null;
  const year = +m[1]!;
  const month = +m[2]!;
  const day = +m[3]!;
  const hour = +m[4]!;
  const minute = +m[5]!;
  const second = +m[6]!;
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // setUTCFullYear keeps years 0–99 literal (Date.UTC maps them to 19xx)
  date.setUTCHours(hour, minute, second, ms);
  // Day overflow (2025-02-30 → March 2) shows up as a different calendar date.
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return Number.isNaN(date.getTime()) ? null : date;
}

/** Two-sided window: `ok` when |ts − now| ≤ maxDriftMs (inclusive at exactly ±maxDriftMs), else `stale`. */
export function checkTimestamp(ts: Date, now: Date, maxDriftMs: number): 'ok' | 'stale' {
  const drift = Math.abs(ts.getTime() - now.getTime());
  return drift <= maxDriftMs ? 'ok' : 'stale'; // NaN compares false → stale
}
