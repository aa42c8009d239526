// Request and response shapes of the workers API (tenant pages, staff, and the public worker
// routes), shared with the web app (type-only imports).
import { z } from 'zod';

/** Crockford base32 without I, L, O, U (docs/worker-protocol.md). */
export const CODE_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
export const CODE_LENGTH = 8;
export const ENROLLMENT_TTL_MS = 15 * 60 * 1000;
/** Rotation grace period: default and bounds (hours). */
export const GRACE_DEFAULT_HOURS = 24;
export const GRACE_MAX_HOURS = 168;
export const SENT_AT_WINDOW_MS = 5 * 60 * 1000;
export const NONCE_TTL_MS = 10 * 60 * 1000;
export const ENROLL_FAILURES_PER_MINUTE = 10;

export const tenantParamsSchema = z.object({ tenantId: z.uuid() });
export const workerParamsSchema = z.object({ tenantId: z.uuid(), workerId: z.uuid() });

export const enrollmentCreatedSchema = z.object({
  id: z.uuid(),
  /** Shown once; only its hash is stored. */
  code: z.string(),
  expiresAt: z.string(),
  hosted: z.boolean(),
});
export type EnrollmentCreatedDto = z.infer<typeof enrollmentCreatedSchema>;

export const workerSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  platform: z.string(),
  version: z.string(),
  hosted: z.boolean(),
  status: z.enum(['active', 'revoked']),
  enrolledAt: z.string(),
  lastSeenAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  currentScan: z.object({ id: z.uuid(), kind: z.string(), status: z.string(), percent: z.number() }).nullable(),
});
export type WorkerDto = z.infer<typeof workerSchema>;
export const workerListSchema = z.object({ workers: z.array(workerSchema), canManage: z.boolean() });
export type WorkerListDto = z.infer<typeof workerListSchema>;

export const webhookSecretStatusSchema = z.object({
  configured: z.boolean(),
  createdAt: z.string().nullable(),
  rotatedAt: z.string().nullable(),
  /** While set and in the future, the previous secret still verifies. */
  previousValidUntil: z.string().nullable(),
  canManage: z.boolean(),
});
export type WebhookSecretStatusDto = z.infer<typeof webhookSecretStatusSchema>;

export const rotateSecretBodySchema = z.object({
  /** How long the previous secret keeps verifying after a rotation; 0 ends it at once. */
  graceHours: z.number().int().min(0).max(GRACE_MAX_HOURS).default(GRACE_DEFAULT_HOURS),
});
export const webhookSecretCreatedSchema = webhookSecretStatusSchema.extend({
  /** Shown once; stored sealed. */
  secret: z.string(),
});
export type WebhookSecretCreatedDto = z.infer<typeof webhookSecretCreatedSchema>;

const text = (max: number) => z.string().trim().min(1).max(max);

export const enrollBodySchema = z.object({
  code: z.string().trim().min(1).max(32),
  name: text(100),
  platform: text(100),
  version: text(64),
});
export const enrollResponseSchema = z.object({ workerId: z.uuid(), tenantId: z.uuid(), token: z.string() });

/** Every signed worker body carries these two (docs/worker-protocol.md). */
export const signedEnvelopeSchema = z.object({
  sentAt: z.string().max(64),
  nonce: z
    .string()
    .min(16)
    .max(128)
    .regex(/^[A-Za-z0-9_-]+$/, 'Use 16 to 128 URL-safe characters.'),
});
export const heartbeatBodySchema = signedEnvelopeSchema.extend({
  version: text(64).optional(),
});
export const heartbeatResponseSchema = z.object({ ok: z.literal(true), workerId: z.uuid(), serverTime: z.string() });

export const staffEnrollmentBodySchema = z.object({ tenantId: z.uuid() });

// Leasing and uploads (docs/worker-protocol.md).
export const SCAN_KINDS_FOR_LEASE = ['port', 'template', 'webapp', 'container', 'edge'] as const;
export const REPORT_FORMAT_NAMES = ['native', 'nmap', 'nuclei', 'zap', 'trivy', 'sarif'] as const;
const sha256Schema = z
  .string()
  .regex(/^[0-9a-fA-F]{64}$/, 'Use the 64 hex digits of the SHA-256.')
  .transform((s) => s.toLowerCase());
const leaseTokenSchema = z.uuid();

export const leaseBodySchema = signedEnvelopeSchema.extend({
  kinds: z.array(z.enum(SCAN_KINDS_FOR_LEASE)).min(1).max(5),
  waitSeconds: z.number().int().min(0).max(25).default(25),
});
export const leaseSchema = z.object({
  scanId: z.uuid(),
  leaseToken: z.uuid(),
  leaseExpiresAt: z.string(),
  leaseSeconds: z.number(),
  heartbeatSeconds: z.number(),
  attempt: z.number(),
  maxAttempts: z.number(),
  kind: z.enum(SCAN_KINDS_FOR_LEASE),
  options: z.record(z.string(), z.unknown()),
  chunk: z.object({ index: z.number(), count: z.number(), spec: z.record(z.string(), z.unknown()) }).nullable(),
  asset: z.object({ id: z.uuid(), kind: z.string(), target: z.string(), name: z.string() }),
});
export const leaseResponseSchema = z.object({ lease: leaseSchema.nullable() });

export const heartbeatLeasesBodySchema = heartbeatBodySchema.extend({
  leases: z
    .array(z.object({ scanId: z.uuid(), leaseToken: leaseTokenSchema }))
    .max(64)
    .default([]),
});
export const heartbeatLeasesResponseSchema = heartbeatResponseSchema.extend({
  leases: z.array(
    z.object({
      scanId: z.uuid(),
      state: z.enum(['active', 'cancelled', 'lost']),
      leaseExpiresAt: z.string().nullable(),
    }),
  ),
});

export const scanIdParamsSchema = z.object({ scanId: z.uuid() });
export const progressBodySchema = signedEnvelopeSchema.extend({
  leaseToken: leaseTokenSchema,
  percent: z.number().min(0).max(100),
  message: z.string().max(500).optional(),
});
export const progressResponseSchema = z.object({ ok: z.literal(true), leaseExpiresAt: z.string() });
export const releaseBodySchema = signedEnvelopeSchema.extend({
  leaseToken: leaseTokenSchema,
  reason: z.string().max(500).optional(),
});
export const okResponseSchema = z.object({ ok: z.literal(true) });
export const archiveBodySchema = signedEnvelopeSchema.extend({ leaseToken: leaseTokenSchema });
export const failBodySchema = signedEnvelopeSchema.extend({
  leaseToken: leaseTokenSchema,
  error: z.string().trim().min(1).max(2000),
  retryable: z.boolean().default(false),
});
export const failResponseSchema = z.object({ ok: z.literal(true), status: z.enum(['queued', 'failed']) });

export const reportInitBodySchema = signedEnvelopeSchema.extend({
  scanId: z.uuid(),
  leaseToken: leaseTokenSchema,
  size: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  sha256: sha256Schema,
  contentType: z.string().max(200).optional(),
  format: z.enum(REPORT_FORMAT_NAMES).optional(),
  fileName: z.string().trim().min(1).max(255).optional(),
});
export const reportInitResponseSchema = z.object({
  uploadId: z.uuid(),
  method: z.literal('PUT'),
  url: z.string(),
  headers: z.record(z.string(), z.string()),
  expiresAt: z.string(),
  storage: z.enum(['builtin', 's3']),
});
export const reportFinalizeBodySchema = signedEnvelopeSchema.extend({
  uploadId: z.uuid(),
  leaseToken: leaseTokenSchema,
});
export const reportFinalizedSchema = z.object({
  uploadId: z.uuid(),
  scanId: z.uuid(),
  status: z.literal('finalized'),
  ingestionId: z.uuid(),
});
export const legacyReportBodySchema = signedEnvelopeSchema.extend({
  scanId: z.uuid(),
  leaseToken: leaseTokenSchema,
  format: z.enum(REPORT_FORMAT_NAMES).optional(),
  report: z.string(),
});
export const uploadParamsSchema = z.object({ uploadId: z.uuid() });
export const uploadQuerySchema = z.object({
  expires: z.coerce.number().int().min(0),
  signature: z.string().regex(/^[0-9a-fA-F]{64}$/),
});
export const uploadPutResponseSchema = z.object({ uploadId: z.uuid(), size: z.number(), sha256: z.string() });
