// Report ingestion and "Import results": request and response schemas, shared with the web app.
import { z } from 'zod';
import { SCAN_KINDS } from '../lib/scan-kinds.ts';

/** The report formats the importers read (src/workers/importers REPORT_FORMATS). */
export const IMPORT_FORMATS = [
  'native',
  'nmap',
  'nuclei',
  'zap',
  'trivy',
  'sarif',
  'nessus',
  'openvas',
  'burp',
  'grype',
  'testssl',
] as const;
export const importFormatSchema = z.enum(IMPORT_FORMATS);
export type ImportFormat = z.infer<typeof importFormatSchema>;

export const FORMAT_LABELS: Record<ImportFormat, string> = {
  native: 'Rampart native (JSON Lines)',
  nmap: 'nmap XML',
  nuclei: 'nuclei JSON (Lines or array)',
  zap: 'OWASP ZAP (XML or JSON)',
  trivy: 'Trivy JSON',
  sarif: 'SARIF 2.1.0',
  nessus: 'Nessus (.nessus v2)',
  openvas: 'OpenVAS / Greenbone XML',
  burp: 'Burp Suite issues XML',
  grype: 'grype JSON',
  testssl: 'testssl.sh JSON',
};

export const ingestionStatusSchema = z.enum(['queued', 'running', 'succeeded', 'failed']);
export type IngestionStatus = z.infer<typeof ingestionStatusSchema>;

/** The multipart text fields of an import; they must come before the file part. */
export const importFieldsSchema = z.object({
  assetId: z.uuid('Choose the asset the report is about.'),
  /** Empty or "auto": detect from the first bytes. */
  format: z
    .union([importFormatSchema, z.literal('auto'), z.literal('')])
    .optional()
    .transform((v) => (v === 'auto' || v === '' || v === undefined ? null : v)),
});
export type ImportFields = z.output<typeof importFieldsSchema>;

/** What an import says it looked at (src/workers/importers/coverage.ts). */
export const coverageSchema = z.object({
  tools: z.array(
    z.object({
      name: z.string(),
      version: z.string().nullable(),
      scanner: z.enum(SCAN_KINDS),
      key: z.string().nullable(),
    }),
  ),
  classes: z.array(z.string()),
  rules: z.object({ declared: z.boolean(), ids: z.array(z.string()) }),
  hosts: z.array(z.object({ name: z.string(), up: z.boolean().nullable() })),
  ports: z.array(z.object({ protocol: z.string(), ranges: z.array(z.tuple([z.number().int(), z.number().int()])) })),
  targets: z.array(z.string()),
  truncated: z.boolean(),
});
export type Coverage = z.infer<typeof coverageSchema>;

export const ingestionSummarySchema = z.object({
  received: z.number().int(),
  distinct: z.number().int(),
  created: z.number().int(),
  seen: z.number().int(),
  reopened: z.number().int(),
  fixed: z.number().int(),
  tool: z.string().nullable(),
  skipped: z.number().int(),
  skipSamples: z.array(z.object({ where: z.string(), reason: z.string() })),
  /** What the report was worth; partial and inconclusive reports close no finding. */
  outcome: z.enum(['complete', 'partial', 'inconclusive']).optional(),
  outcomeReason: z.string().optional(),
  /** Records read (results, alerts, ports, ...), and of them checks that passed (not problems). */
  records: z.number().int(),
  passed: z.number().int(),
  skipReasons: z.array(z.object({ reason: z.string(), count: z.number().int(), where: z.array(z.string()) })),
  /** Values cleaned so the rest could be kept (NUL, lone surrogates, too-deep nesting, ...). */
  cleaned: z.array(
    z.object({ kind: z.string(), label: z.string(), count: z.number().int(), where: z.array(z.string()) }),
  ),
  coverage: coverageSchema.nullable(),
  /** Why the report counts as partial (its findings are recorded, nothing is closed). */
  partial: z.string().nullable(),
  closedNothing: z.boolean(),
  /** Other assets a multi-host report was split to, each with a scan of its own. */
  splits: z.array(
    z.object({
      assetId: z.string().nullable(),
      assetName: z.string().nullable(),
      scanId: z.string(),
      findings: z.number().int(),
      distinct: z.number().int(),
      created: z.number().int(),
      fixed: z.number().int(),
    }),
  ),
  /** Hosts that match no asset of the tenant; their findings were not imported. */
  unmatchedHosts: z.array(z.string()),
});
export type IngestionSummaryDto = z.infer<typeof ingestionSummarySchema>;

export const ingestionDtoSchema = z.object({
  id: z.uuid(),
  scanId: z.uuid(),
  uploadId: z.uuid().nullable(),
  source: z.enum(['worker', 'import']),
  status: ingestionStatusSchema,
  format: importFormatSchema.nullable(),
  fileName: z.string().nullable(),
  size: z.number().int(),
  sha256: z.string(),
  bytesRead: z.number().int(),
  findingsRead: z.number().int(),
  skipped: z.number().int(),
  /** Share of the report's bytes read, 0–100. */
  percent: z.number().int().min(0).max(100),
  summary: ingestionSummarySchema.nullable(),
  error: z.string().nullable(),
  attempts: z.number().int(),
  scan: z.object({ id: z.uuid(), kind: z.string(), status: z.string() }),
  asset: z.object({ id: z.uuid(), name: z.string(), target: z.string() }),
  createdBy: z.object({ id: z.string().nullable(), email: z.string() }).nullable(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  updatedAt: z.string(),
});
export type IngestionDto = z.infer<typeof ingestionDtoSchema>;

export const importResponseSchema = z.object({ import: ingestionDtoSchema });
export const importListSchema = z.object({ imports: z.array(ingestionDtoSchema), nextBefore: z.string().nullable() });
export type ImportList = z.infer<typeof importListSchema>;

export const importListQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(25),
  /** nextBefore of the previous page. */
  before: z
    .string()
    .regex(/^[0-9T:.Z-]+_[0-9a-f-]{36}$/i, 'Pass nextBefore from the previous page unchanged.')
    .optional(),
});

export const reportUploadDtoSchema = z.object({
  id: z.uuid(),
  status: z.enum(['pending', 'finalized']),
  storage: z.enum(['builtin', 's3']),
  size: z.number().int(),
  sha256: z.string(),
  format: importFormatSchema.nullable(),
  fileName: z.string().nullable(),
  createdAt: z.string(),
  finalizedAt: z.string().nullable(),
  ingestionId: z.uuid().nullable(),
});
export type ReportUploadDto = z.infer<typeof reportUploadDtoSchema>;

export const scanIngestionsSchema = z.object({
  uploads: z.array(reportUploadDtoSchema),
  ingestions: z.array(ingestionDtoSchema),
});
export type ScanIngestions = z.infer<typeof scanIngestionsSchema>;

export const tenantParamsSchema = z.object({ tenantId: z.uuid() });
export const importParamsSchema = z.object({ tenantId: z.uuid(), ingestionId: z.uuid() });
export const scanIngestionParamsSchema = z.object({ tenantId: z.uuid(), scanId: z.uuid() });
