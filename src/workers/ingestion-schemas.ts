// Report ingestion and "Import results": request and response schemas, shared with the web app.
import { z } from 'zod';

/** The report formats the importers read (src/workers/importers REPORT_FORMATS). */
export const IMPORT_FORMATS = ['native', 'nmap', 'nuclei', 'zap', 'trivy', 'sarif'] as const;
export const importFormatSchema = z.enum(IMPORT_FORMATS);
export type ImportFormat = z.infer<typeof importFormatSchema>;

export const FORMAT_LABELS: Record<ImportFormat, string> = {
  native: 'Rampart native (JSON Lines)',
  nmap: 'nmap XML',
  nuclei: 'nuclei JSON Lines',
  zap: 'OWASP ZAP JSON',
  trivy: 'Trivy JSON (v2)',
  sarif: 'SARIF 2.1.0',
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
});

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

export const scanIngestionsSchema = z.object({ uploads: z.array(reportUploadDtoSchema), ingestions: z.array(ingestionDtoSchema) });
export type ScanIngestions = z.infer<typeof scanIngestionsSchema>;

export const tenantParamsSchema = z.object({ tenantId: z.uuid() });
export const importParamsSchema = z.object({ tenantId: z.uuid(), ingestionId: z.uuid() });
export const scanIngestionParamsSchema = z.object({ tenantId: z.uuid(), scanId: z.uuid() });
