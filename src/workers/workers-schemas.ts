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

export const staffEnrollmentBodySchema = z.object({ tenantId: z.uuid() });
