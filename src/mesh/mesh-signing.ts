// Mesh dispatch signing (spec "Authentication > Mesh dispatch", DESIGN §5.2). Pure functions, no I/O.
//
//   bodyHash  = lowercase hex SHA-256 of the exact body bytes (empty body → e3b0c442…b855)
//   canonical = caller \n timestamp \n METHOD \n path \n bodyHash   (no trailing newline)
//   signature = lowercase hex HMAC-SHA256(secret, canonical)
//
// `path` is always the logical route DISPATCH_PATH, never the transport URL. Vectors a peer team
// can check against are in docs/mesh-vectors.md.
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
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

// Secrets come from configuration, so there are few; a key object per secret spares each call
// the key set-up (about a fifth of an HMAC over a canonical string). Bounded all the same.
const keys = new Map<string, KeyObject>();

function hmacHex(secret: string, message: string): string {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= 64) keys.clear();
    key = createSecretKey(Buffer.from(secret, 'utf8'));
    keys.set(secret, key);
  }
  return createHmac('sha256', key).update(message, 'utf8').digest('hex');
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
