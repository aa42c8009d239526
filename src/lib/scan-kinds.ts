// The kinds of scan, which are also the scanners a finding comes from, written once for the
// server, the worker program and the web app (no Node imports here, so the browser bundle can
// take it). The database's check constraints on scans.kind and findings.scanner list the same five.
export const SCAN_KINDS = ['port', 'template', 'webapp', 'container', 'edge'] as const;
export type ScanKind = (typeof SCAN_KINDS)[number];

/** Kinds whose work splits into chunks that several workers lease. */
export const CHUNKABLE_KINDS: readonly ScanKind[] = ['port', 'template', 'webapp'];

export const isScanKind = (value: unknown): value is ScanKind =>
  typeof value === 'string' && (SCAN_KINDS as readonly string[]).includes(value);
