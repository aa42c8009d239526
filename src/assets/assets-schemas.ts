// Request and response shapes of the assets API, shared with the web app (type-only imports).
import { z } from 'zod';

export const assetKindSchema = z.enum(['domain', 'host', 'webapp', 'container_image']);
export type AssetKind = z.infer<typeof assetKindSchema>;
export const verificationStatusSchema = z.enum(['verified', 'pending', 'bypassed']);
export type VerificationStatus = z.infer<typeof verificationStatusSchema>;
export const checkOutcomeSchema = z.enum(['verified', 'pending', 'failed']);
export type CheckOutcome = z.infer<typeof checkOutcomeSchema>;

export const assetSchema = z.object({
  id: z.string(),
  kind: assetKindSchema,
  target: z.string(),
  name: z.string(),
  tags: z.array(z.string()),
  owner: z.string().nullable(),
  notes: z.string().nullable(),
  verification: z.object({
    status: verificationStatusSchema,
    /** upload: an image archive the tenant uploaded, owned by construction. */
    via: z.enum(['txt', 'covered', 'bypass', 'upload']).nullable(),
    coveredBy: z.object({ assetId: z.string(), target: z.string() }).nullable(),
    verifiedAt: z.string().nullable(),
    lastCheckedAt: z.string().nullable(),
    lastResult: checkOutcomeSchema.nullable(),
    lastError: z.string().nullable(),
    bypass: z.object({ reason: z.string(), by: z.string(), at: z.string() }).nullable(),
  }),
  /** Container images: a registry reference, or an uploaded image archive (`archive` then describes it). */
  source: z.enum(['reference', 'archive']),
  archive: z
    .object({
      fileName: z.string(),
      size: z.number().int(),
      sha256: z.string(),
      format: z.enum(['tar', 'tar+gzip']),
      uploadedAt: z.string(),
    })
    .nullable(),
  archivedAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type AssetDto = z.infer<typeof assetSchema>;

const tags = z.array(z.string().trim().min(1).max(50)).max(30);
export const createAssetBodySchema = z.object({
  kind: assetKindSchema,
  target: z.string().trim().min(1).max(500),
  name: z.string().trim().min(1).max(200).optional(),
  tags: tags.optional(),
  owner: z.string().trim().max(200).optional(),
  notes: z.string().max(5000).optional(),
});
export const updateAssetBodySchema = z
  .object({
    name: z.string().trim().min(1).max(200),
    tags,
    owner: z.string().trim().max(200).nullable(),
    notes: z.string().max(5000).nullable(),
  })
  .partial()
  .strict();

export const listAssetsQuerySchema = z.object({
  q: z.string().trim().min(1).max(200).optional(),
  kind: assetKindSchema.optional(),
  status: verificationStatusSchema.optional(),
  tag: z.string().trim().min(1).max(50).optional(),
  archived: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  /** Opaque cursor from nextBefore: the row's creation time to the microsecond, then its id. */
  before: z
    .string()
    .regex(
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      'Pass nextBefore from the previous page unchanged.',
    )
    .optional(),
});

export const assetParamsSchema = z.object({ tenantId: z.uuid(), assetId: z.uuid() });

export const verificationLogEntrySchema = z.object({
  id: z.number().int(),
  at: z.string(),
  event: z.enum([
    'created',
    'check',
    'verified',
    'pending',
    'failed',
    'proof_lost',
    'bypassed',
    'bypass_revoked',
    'archived',
    'restored',
    'archive_uploaded',
    'archive_replaced',
  ]),
  detail: z.string().nullable(),
  actorEmail: z.string().nullable(),
});

export const assetDetailSchema = z.object({
  asset: assetSchema,
  instructions: z.object({ recordName: z.string(), recordType: z.literal('TXT'), recordValue: z.string() }).nullable(),
  log: z.array(verificationLogEntrySchema),
});
export const assetResponseSchema = z.object({ asset: assetSchema });
export const assetListSchema = z.object({ assets: z.array(assetSchema), nextBefore: z.string().nullable() });
export const verifyResponseSchema = z.object({
  asset: assetSchema,
  result: z.object({ outcome: checkOutcomeSchema, detail: z.string() }),
});
export const bypassBodySchema = z.object({
  reason: z.string().trim().min(10, 'Give a reason of at least 10 characters.').max(500),
});

/** Image-archive uploads: the body is the file itself (application/octet-stream), streamed. */
export const ARCHIVE_CONTENT_TYPES = [
  'application/octet-stream',
  'application/x-tar',
  'application/gzip',
  'application/x-gzip',
  'application/x-compressed-tar',
] as const;
const fileName = z
  .string()
  .trim()
  .min(1)
  .max(255)
  // Only the last path segment, without control characters: it is shown and sent back in Content-Disposition.
  .transform((v) => [...(v.split(/[\\/]/).pop() ?? '')].filter((c) => c >= ' ' && c !== '\u007f').join(''))
  .refine((v) => v.length > 0, 'Give the file name.');
export const archiveUploadQuerySchema = z.object({ fileName, name: z.string().trim().min(1).max(200).optional() });
export const archiveReplaceQuerySchema = z.object({ fileName });
