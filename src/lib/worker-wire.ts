// The worker protocol's wire format (docs/worker-protocol.md), written once for both sides: the
// server's worker routes validate with these schemas (src/workers, src/templates/oob-routes.ts)
// and the rampart-worker program (src/agent) types its requests and answers with them. Only zod
// and node:crypto here, so the worker binary carries no server code.
import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { SCAN_KINDS } from './scan-kinds.ts';

/** Where every worker route lives. */
export const WORKER_API_PREFIX = '/api/public/worker/v1';

/** What a worker sends in X-Rampart-Signature: `sha256=` + lowercase hex HMAC-SHA256 of the body bytes. */
export const signBody = (secret: string, body: string | Uint8Array): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

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

// Leasing and uploads.
export const REPORT_FORMAT_NAMES = ['native', 'nmap', 'nuclei', 'zap', 'trivy', 'sarif'] as const;
const sha256Schema = z
  .string()
  .regex(/^[0-9a-fA-F]{64}$/, 'Use the 64 hex digits of the SHA-256.')
  .transform((s) => s.toLowerCase());
const leaseTokenSchema = z.uuid();

export const leaseBodySchema = signedEnvelopeSchema.extend({
  kinds: z.array(z.enum(SCAN_KINDS)).min(1).max(5),
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
  kind: z.enum(SCAN_KINDS),
  options: z.record(z.string(), z.unknown()),
  chunk: z.object({ index: z.number(), count: z.number(), spec: z.record(z.string(), z.unknown()) }).nullable(),
  asset: z.object({ id: z.uuid(), kind: z.string(), target: z.string(), name: z.string() }),
});
export const leaseResponseSchema = z.object({ lease: leaseSchema.nullable() });

export const heldLeaseSchema = z.object({ scanId: z.uuid(), leaseToken: leaseTokenSchema });
export const heartbeatLeasesBodySchema = heartbeatBodySchema.extend({
  leases: z.array(heldLeaseSchema).max(64).default([]),
});
export const leaseStateSchema = z.enum(['active', 'cancelled', 'lost']);
export const heartbeatLeasesResponseSchema = heartbeatResponseSchema.extend({
  leases: z.array(
    z.object({
      scanId: z.uuid(),
      state: leaseStateSchema,
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

// Out-of-band callbacks of a leased template scan (src/templates/oob-routes.ts).
export const interactionsBodySchema = signedEnvelopeSchema.extend({
  leaseToken: z.string().min(1).max(200),
  /** The id of the last interaction read ("0" at first). */
  after: z
    .string()
    .regex(/^\d{1,19}$/)
    .default('0'),
});
export const interactionsResponseSchema = z.object({
  interactions: z.array(
    z.object({
      id: z.string(),
      token: z.string(),
      protocol: z.enum(['http', 'dns']),
      remoteAddress: z.string(),
      request: z.string(),
      receivedAt: z.string(),
    }),
  ),
});

// What the worker program reads, as the server's response schemas give it.
export type WorkerReportFormat = (typeof REPORT_FORMAT_NAMES)[number];
export type EnrollResult = z.infer<typeof enrollResponseSchema>;
export type Lease = z.infer<typeof leaseSchema>;
export type HeldLease = z.infer<typeof heldLeaseSchema>;
export type LeaseState = z.infer<typeof leaseStateSchema>;
export type HeartbeatResult = z.infer<typeof heartbeatLeasesResponseSchema>;
export type ProgressResult = z.infer<typeof progressResponseSchema>;
export type OkResult = z.infer<typeof okResponseSchema>;
export type FailResult = z.infer<typeof failResponseSchema>;
export type InitUploadResult = z.infer<typeof reportInitResponseSchema>;
export type FinalizeResult = z.infer<typeof reportFinalizedSchema>;
export type InteractionsResult = z.infer<typeof interactionsResponseSchema>;
