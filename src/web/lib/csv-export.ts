// Exports built in the browser (staff mesh tools): CSV and JSON files of the operations log (the
// mesh records staff see) and of mesh check (sweep) results, named
// `<prefix>-<kind>-<YYYYMMDD>-<HHMMSS>.<csv|json>` (UTC) with prefix = SVC_SELF_NAME.
//
// CSV: csv-stringify (the library the server's findings export uses, in its browser build) with
// the same formula rule as the server (`escape_formulas`: a text cell starting with = + - @ tab
// or CR gets a leading apostrophe), extended here to cells where that character follows leading
// whitespace or line breaks (" =1+1", "\n@cmd"), which spreadsheets also evaluate, and to later
// lines of multi-line cells ("ok\n=cmd" → "ok\n'=cmd"). Numbers are never touched (-5 stays
// -5). The file starts with a UTF-8 BOM so Excel reads it as UTF-8, and records end with CRLF
// (RFC 4180).
import { stringify } from 'csv-stringify/browser/esm/sync';
import type { z } from 'zod';
import type {
  inboundEventSchema,
  outboundEventSchema,
  outboxEntrySchema,
  receivedEventSchema,
} from '../../staff/mesh-records-schemas.ts';
import type { SweepResult } from '../../staff/mesh-health-schemas.ts';

export type CsvValue = string | number | boolean | null | undefined;
export type CsvRow = Record<string, CsvValue>;
/** [key in the row, header] */
export type CsvColumns = readonly (readonly [string, string])[];

/** The characters the server's rule (csv-stringify escape_formulas) guards against at the start of a cell. */
const FORMULA_START = /^[\s\u00A0\uFEFF]*[=+\-@\t\r]/;

/** A line inside a multi-line cell that starts (after blanks) like a formula. */
const FORMULA_LINE = /(\r\n|\n|\r)(?=[ \t\u00A0\uFEFF]*[=+\-@])/g;

/**
 * A text cell a spreadsheet would run as a formula gets a leading apostrophe; so does every later
 * line of a multi-line cell that starts like one (a tool that splits the file on line breaks would
 * otherwise see it as a cell of its own). Anything else is unchanged.
 */
export function defuseFormula(value: string): string {
  const lines = value.replace(FORMULA_LINE, "$1'");
  return FORMULA_START.test(value) ? `'${lines}` : lines;
}

function cell(value: CsvValue): string | number {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? value : '';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return defuseFormula(value);
}

export const BOM = '\uFEFF';

/** A CSV document: BOM, header row, one record per row, CRLF line ends, formula cells defused. */
export function buildCsv(columns: CsvColumns, rows: readonly CsvRow[]): string {
  const records = rows.map((r) => Object.fromEntries(columns.map(([key]) => [key, cell(r[key])])));
  const body = stringify(records, {
    header: true,
    columns: columns.map(([key, header]) => ({ key, header: defuseFormula(header) })),
    escape_formulas: true,
    record_delimiter: 'windows',
    // A lone LF or CR inside a cell must be quoted too, or a spreadsheet starts a new row there.
    quoted_match: /[\r\n]/,
  });
  return BOM + body;
}

/** `<prefix>-<kind>-<YYYYMMDD>-<HHMMSS>.<ext>`, UTC time. */
export function exportFileName(
  prefix: string,
  kind: 'operations-log' | 'mesh-check-results',
  ext: 'csv' | 'json',
  at: Date = new Date(),
): string {
  const stamp = at.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const safe = prefix.replace(/[^A-Za-z0-9._-]/g, '-') || 'rampart';
  return `${safe}-${kind}-${stamp}.${ext}`;
}

// ---- mesh check (sweep) results ----

export const MESH_CHECK_COLUMNS: CsvColumns = [
  ['peer', 'Peer'],
  ['outcome', 'Outcome'],
  ['label', 'Result'],
  ['ok', 'OK'],
  ['httpStatus', 'HTTP status'],
  ['error', 'Error code'],
  ['durationMs', 'Duration (ms)'],
  ['requestId', 'Request id'],
  ['at', 'Time'],
];

export function sweepRows(results: readonly SweepResult[]): CsvRow[] {
  return results.map((r) => ({
    peer: r.peer,
    outcome: r.outcome,
    label: r.label,
    ok: r.ok,
    httpStatus: r.httpStatus,
    error: r.error,
    durationMs: r.durationMs,
    requestId: r.requestId,
    at: r.at,
  }));
}

// ---- operations log (mesh records) ----

type Inbound = z.infer<typeof inboundEventSchema>;
type Outbound = z.infer<typeof outboundEventSchema>;
type Received = z.infer<typeof receivedEventSchema>;
type Outbox = z.infer<typeof outboxEntrySchema>;

export const OPERATIONS_LOG_COLUMNS: CsvColumns = [
  ['record', 'Record'],
  ['at', 'Time'],
  ['peer', 'Peer'],
  ['flow', 'Flow'],
  ['event', 'Event or kind'],
  ['severity', 'Severity'],
  ['ok', 'OK'],
  ['httpStatus', 'HTTP status'],
  ['error', 'Error'],
  ['durationMs', 'Duration (ms)'],
  ['attempt', 'Attempt'],
  ['verified', 'Verified'],
  ['replayed', 'Replayed'],
  ['title', 'Title or status'],
  ['requestId', 'Request id'],
  ['id', 'Record id'],
];

/** One flat row per record, newest first within each list as given. Response bodies and data stay in the JSON export. */
export function operationsLogRows(lists: {
  inbound?: readonly Inbound[];
  outbound?: readonly Outbound[];
  received?: readonly Received[];
  outbox?: readonly Outbox[];
}): CsvRow[] {
  const rows: CsvRow[] = [];
  for (const e of lists.received ?? [])
    rows.push({
      record: 'received',
      at: e.receivedAt,
      peer: e.caller,
      flow: 'event_report',
      event: e.kind,
      severity: e.severity,
      title: e.title,
      requestId: e.requestId,
      id: e.id,
    });
  for (const e of lists.inbound ?? [])
    rows.push({
      record: 'inbound',
      at: e.receivedAt,
      peer: e.caller,
      flow: e.flow,
      ok: e.status < 400,
      httpStatus: e.status,
      error: e.errorCode,
      durationMs: e.durationMs,
      verified: e.verified,
      replayed: e.replayed,
      requestId: e.requestId,
      id: e.id,
    });
  for (const e of lists.outbound ?? [])
    rows.push({
      record: 'outbound',
      at: e.createdAt,
      peer: e.peer,
      flow: e.flow,
      event: e.eventType,
      severity: e.severity,
      ok: e.ok,
      httpStatus: e.httpStatus,
      error: e.error,
      durationMs: e.durationMs,
      attempt: e.attempt,
      requestId: e.requestId,
      id: e.id,
    });
  for (const e of lists.outbox ?? [])
    rows.push({
      record: 'outbox',
      at: e.createdAt,
      peer: e.peer,
      flow: e.flow,
      event: e.eventType,
      severity: e.severity,
      ok: e.status === 'delivered',
      error: e.lastError,
      attempt: e.attempts,
      title: e.status,
      requestId: e.requestId,
      id: e.id,
    });
  return rows;
}

/**
 * The items of an operations-log JSON export: the records as the API gave them, tagged with their
 * kind, without an outbound attempt's `url` (redacted, but still the peer's address: exports are
 * files that travel, and hold only presence booleans and what identifies a call, not where peers
 * live; docs/mesh.md section 11.5).
 */
export function operationsLogItems(
  kind: 'received' | 'inbound' | 'outbound' | 'outbox',
  entries: readonly object[],
): Record<string, unknown>[] {
  return entries.map((e) => {
    const { url: _url, ...rest } = e as Record<string, unknown>;
    return { record: kind, ...rest };
  });
}

/** A JSON export document. */
export function buildJson(
  kind: 'operations-log' | 'mesh-check-results',
  source: string,
  items: readonly unknown[],
  extra: Record<string, unknown> = {},
  at: Date = new Date(),
): string {
  return `${JSON.stringify({ format: `rampart-${kind}`, version: 1, source, generatedAt: at.toISOString(), ...extra, count: items.length, items }, null, 2)}\n`;
}

/** Offers `content` as a download named `name` (browser only). */
export function downloadFile(name: string, content: string, type: 'text/csv' | 'application/json'): void {
  const blob = new Blob([content], { type: `${type};charset=utf-8` });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  a.style.display = 'none';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
