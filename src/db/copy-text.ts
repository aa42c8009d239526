// Rows in PostgreSQL's COPY text format (tab-separated, one line per row, \N for null), for bulk
// appends to the embedded database (Database.copyRows). Backslash, tab, newline and carriage
// return are escaped, so no value can end a field, a row or the data; NUL, which a text value
// cannot hold, becomes U+FFFD instead of failing the whole batch.
export type CopyValue = string | number | boolean | null;

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\uFFFD' };
const SPECIAL = /[\\\t\n\r\0]/g;

function field(v: CopyValue): string {
  if (v === null) return '\\N';
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (typeof v === 'number') return String(v);
  return v.replace(SPECIAL, (c) => ESCAPES[c]!);
}

export function copyText(rows: readonly (readonly CopyValue[])[]): string {
  let out = '';
  for (const row of rows) out += `${row.map(field).join('\t')}\n`;
  return out;
}
