// New findings in PostgreSQL's COPY text format, for the bulk paths of both databases (the
// embedded database's copy_findings_from_blob, migration 0040; PostgreSQL's COPY FROM STDIN into
// a temporary table): one COPY of a batch instead of an insert that parses the batch as a JSON
// document first. Text rather than binary: every column type of a finding
// (uuid, arrays, jsonb, numeric) reads its ordinary text form, which needs no type-specific
// encoder here, and the rows' bulk is text and JSON that binary COPY would carry as text anyway.
//
// Format (PostgreSQL docs, "COPY > File Formats > Text Format"): one line per row, columns
// separated by tabs, \N for null; in a value, backslash, tab, newline and carriage return are
// written as \\, \t, \n and \r. Array values use the array literal syntax ({1,2}, {"a","b"}),
// escaped again as a value.

/** The columns of copy_findings_from_blob, in its order. */
export const COPY_COLUMNS = [
  'id',
  'tenant_id',
  'asset_id',
  'scan_id',
  'first_scan_id',
  'scanner',
  'scope_key',
  'status',
  'first_seen_at',
  'last_seen_at',
  'rule_id',
  'tool',
  'check_class',
  'title',
  'description',
  'severity',
  'cvss_score',
  'cvss_vector',
  'cwe_ids',
  'cve_ids',
  'location',
  'location_text',
  'search_text',
  'port',
  'path',
  'evidence',
  'remediation',
  'reference_urls',
  'fingerprint',
  'sla_due_at',
] as const;

export type CopyFindingRow = Record<(typeof COPY_COLUMNS)[number], CopyCell>;
/** A text, number or timestamp value; an array (integer[] / text[]); or an object (jsonb). */
export type CopyCell = string | number | Date | null | readonly (string | number)[] | Record<string, unknown>;

const SPECIAL = /[\\\t\n\r\0]/;

/** A value as COPY text reads it. A text value cannot hold NUL: it becomes U+FFFD (as on every other path). */
function escape(s: string): string {
  if (!SPECIAL.test(s)) return s;
  return s
    .replaceAll('\\', '\\\\')
    .replaceAll('\t', '\\t')
    .replaceAll('\n', '\\n')
    .replaceAll('\r', '\\r')
    .replaceAll('\0', '\uFFFD');
}

/** An array literal: numbers bare, strings double-quoted with " and \ escaped. */
function arrayLiteral(a: readonly (string | number)[]): string {
  let out = '{';
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    if (i > 0) out += ',';
    if (typeof x === 'number') {
      if (!Number.isFinite(x)) throw new TypeError('COPY array: a number must be finite');
      out += String(x);
    } else out += `"${x.replace(/["\\]/g, '\\$&')}"`;
  }
  return `${out}}`;
}

function cell(v: CopyCell): string {
  if (v === null) return '\\N';
  if (typeof v === 'string') return escape(v);
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new TypeError('COPY: a number must be finite');
    return String(v);
  }
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return escape(arrayLiteral(v));
  // JSON text has no raw control characters (JSON.stringify escapes them): only its backslashes
  // need escaping; a NUL it holds is the six characters \u0000, which jsonb refuses on every path.
  return JSON.stringify(v).replaceAll('\\', '\\\\');
}

/**
 * The rows as one COPY text document (UTF-8; lone surrogates become U+FFFD), written cell by cell
 * into one buffer: joining strings first left megabytes of short-lived ropes for the collector.
 */
export function encodeFindingRows(rows: readonly CopyFindingRow[]): Uint8Array {
  let buf = Buffer.allocUnsafeSlow(rows.length * 2_048);
  let at = 0;
  const put = (s: string) => {
    // UTF-8 takes at most three bytes per UTF-16 unit; the tab or newline after it one more.
    if (at + s.length * 3 + 1 > buf.length) {
      const next = Buffer.allocUnsafeSlow(Math.max(buf.length * 2, at + s.length * 3 + 1));
      buf.copy(next, 0, 0, at);
      buf = next;
    }
    at += buf.write(s, at);
  };
  for (const r of rows) {
    for (let i = 0; i < COPY_COLUMNS.length; i++) {
      put(cell(r[COPY_COLUMNS[i]!]));
      buf[at++] = i === COPY_COLUMNS.length - 1 ? 0x0a : 0x09;
    }
  }
  return buf.subarray(0, at);
}
