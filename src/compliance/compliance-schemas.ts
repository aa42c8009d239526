// Request and response shapes of the frameworks API, shared with the web app (type-only imports).
import { z } from 'zod';
import { FRAMEWORK_IDS } from './catalogues/catalogue-types.ts';

export const frameworkIdSchema = z.enum(FRAMEWORK_IDS);
export type FrameworkIdDto = z.infer<typeof frameworkIdSchema>;

/**
 * Control status, computed the same way every time (docs/frameworks.md):
 * failing — at least one open finding maps to the control;
 * evidenced — no open mapped findings and at least one current evidence file;
 * evidence_expired — no open mapped findings, no current evidence, some expired;
 * no_evidence — none of the above. A control is never shown as passing without evidence.
 */
export const controlStatusSchema = z.enum(['failing', 'evidenced', 'evidence_expired', 'no_evidence']);
export type ControlStatus = z.infer<typeof controlStatusSchema>;
export const evidenceStateSchema = z.enum(['current', 'expired', 'upcoming']);
export const severitySchema = z.enum(['critical', 'high', 'medium', 'low', 'info']);

const severityCounts = z.object({
  critical: z.number().int(),
  high: z.number().int(),
  medium: z.number().int(),
  low: z.number().int(),
  info: z.number().int(),
});

export const frameworkSummarySchema = z.object({
  controls: z.number().int(),
  withOpenFindings: z.number().int(),
  withCurrentEvidence: z.number().int(),
  /** Controls whose evidence has all lapsed: expired evidence and none current. */
  withExpiredEvidence: z.number().int(),
  byStatus: z.object({
    failing: z.number().int(),
    evidenced: z.number().int(),
    evidence_expired: z.number().int(),
    no_evidence: z.number().int(),
  }),
});

export const frameworkMetaSchema = z.object({
  id: frameworkIdSchema,
  name: z.string(),
  shortName: z.string(),
  edition: z.string(),
  catalogueVersion: z.string(),
  publisher: z.string(),
  licence: z.object({ name: z.string(), textIncluded: z.boolean(), note: z.string() }),
  controlNoun: z.string(),
});

export const groupSchema = z.object({
  id: z.string(),
  title: z.string(),
  parentId: z.string().nullable(),
  kind: z.string(),
  description: z.string().nullable(),
});

export const frameworkListSchema = z.object({
  frameworks: z.array(frameworkMetaSchema.extend({ summary: frameworkSummarySchema })),
  asOf: z.string(),
});

export const controlRowSchema = z.object({
  id: z.string(),
  title: z.string(),
  groupId: z.string(),
  implementationGroup: z.number().int().nullable(),
  status: controlStatusSchema,
  openFindings: z.number().int(),
  openBySeverity: severityCounts,
  evidence: z.object({
    current: z.number().int(),
    expired: z.number().int(),
    upcoming: z.number().int(),
    nextExpiry: z.string().nullable(),
  }),
});
export type ControlRowDto = z.infer<typeof controlRowSchema>;

export const listControlsQuerySchema = z.object({
  q: z.string().trim().min(1).max(200).optional(),
  status: controlStatusSchema.optional(),
  group: z.string().trim().min(1).max(40).optional(),
});

export const frameworkDetailSchema = z.object({
  framework: frameworkMetaSchema.extend({ groups: z.array(groupSchema) }),
  summary: frameworkSummarySchema,
  /** Controls matching the filters, in catalogue order. */
  controls: z.array(controlRowSchema),
  asOf: z.string(),
});

export const evidenceSchema = z.object({
  id: z.string(),
  framework: frameworkIdSchema,
  controlId: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  fileName: z.string(),
  contentType: z.string(),
  size: z.number().int(),
  sha256: z.string(),
  effectiveDate: z.string(),
  expiresAt: z.string().nullable(),
  state: evidenceStateSchema,
  uploadedBy: z.object({ userId: z.string().nullable(), email: z.string().nullable() }),
  createdAt: z.string(),
  /** The caller may delete it: the uploader, or a tenant owner or admin. */
  canDelete: z.boolean(),
});
export type EvidenceDto = z.infer<typeof evidenceSchema>;

export const mappedFindingSchema = z.object({
  id: z.string(),
  title: z.string(),
  severity: severitySchema,
  ruleId: z.string(),
  scanner: z.string(),
  asset: z.object({ id: z.string(), name: z.string(), target: z.string() }),
  /** Where on the asset (the finding's location, as the findings list shows it). */
  location: z.string(),
  /** Places the scanner saw it (a site-wide web finding's URLs; 1 for one place). */
  instances: z.number().int().min(1),
  lastSeenAt: z.string(),
});

export const controlDetailSchema = z.object({
  framework: frameworkMetaSchema,
  control: z.object({
    id: z.string(),
    title: z.string(),
    description: z.string().nullable(),
    implementationGroup: z.number().int().nullable(),
    group: groupSchema,
    parentGroup: groupSchema.nullable(),
  }),
  status: controlStatusSchema,
  findings: z.object({
    open: z.number().int(),
    bySeverity: severityCounts,
    items: z.array(mappedFindingSchema),
    truncated: z.boolean(),
  }),
  evidence: z.array(evidenceSchema),
  asOf: z.string(),
});

export const evidenceListSchema = z.object({ evidence: z.array(evidenceSchema) });
export const evidenceResponseSchema = z.object({ evidence: evidenceSchema });

const isoDate = z.iso.date('Use a date like 2025-01-31.');
/** The multipart text fields of an upload (they must come before the file part). */
export const evidenceFieldsSchema = z
  .object({
    title: z.string().trim().min(1, 'Give the evidence a title.').max(200),
    description: z
      .string()
      .trim()
      .max(2000)
      .optional()
      .transform((v) => v || undefined),
    effectiveDate: isoDate,
    expiresAt: z
      .union([isoDate, z.literal('')])
      .optional()
      .transform((v) => v || undefined),
  })
  .refine((v) => !v.expiresAt || v.expiresAt > v.effectiveDate, {
    path: ['expiresAt'],
    message: 'The expiry date must be after the effective date.',
  });

/** Unknown frameworks and controls are 404s (framework_not_found, control_not_found), checked by the service. */
export const frameworkParamsSchema = z.object({ tenantId: z.uuid(), framework: z.string().min(1).max(40) });
export const controlParamsSchema = frameworkParamsSchema.extend({ controlId: z.string().min(1).max(32) });
export const evidenceParamsSchema = z.object({ tenantId: z.uuid(), evidenceId: z.uuid() });
