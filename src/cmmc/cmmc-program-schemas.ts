// Request shapes of the CMMC program routes (attestations, policies, score, SPRS, exports,
// handoff, staff). Responses are the service's objects; the web app imports their types.
import { z } from 'zod';
import { cageCodeSchema, cageCodeShapeSchema } from './cmmc-schemas.ts';
import { POLICY_KINDS } from './cmmc-scoring.ts';

const isoDay = z.iso.date('A date as YYYY-MM-DD.');

export const itemParamsSchema = z.object({ tenantId: z.uuid(), itemId: z.string().regex(/^[a-z0-9]+\.[a-z0-9_]+$/, 'An attestation item id such as ac1.roster.') });
export const evidenceParamsSchema = z.object({ tenantId: z.uuid(), evidenceId: z.uuid() });
export const policyParamsSchema = z.object({ tenantId: z.uuid(), docId: z.uuid() });

export const answerBodySchema = z
  .object({
    answer: z.enum(['yes', 'no', 'not_applicable']),
    note: z
      .string()
      .trim()
      .max(4000, 'At most 4000 characters.')
      .nullish()
      .transform((v) => (v ? v : null)),
  })
  .strict();

export const generatePoliciesBodySchema = z.object({ kinds: z.array(z.enum(POLICY_KINDS as unknown as [string, ...string[]])).min(1).max(8).nullish() }).strict();

/** The Affirming Official approves the policies (the service checks the caller is them). */
export const approvePolicyBodySchema = z.object({ effectiveDate: isoDay, forAffirmingOfficial: z.literal(true, 'Policies are approved by the Affirming Official: confirm you approve as the Affirming Official.') }).strict();

export const sprsConfirmBodySchema = z
  .object({
    statusDate: isoDay,
    affirmedInSprsOn: isoDay,
    scopeDescription: z.string().trim().min(1, 'Describe the assessment scope as entered in SPRS.').max(4000),
    // The profile's codes: a code saved before I and O were refused gets cmmc_cage_code_invalid,
    // naming it, from the service rather than an anonymous validation error here.
    cageCodes: z.array(cageCodeShapeSchema).min(1).max(51),
    affirm: z.literal(true, 'The Affirming Official must accept the affirmation.'),
    affirmationTextVersion: z.string().min(1).max(100),
  })
  .strict();
export type SprsConfirmBody = z.infer<typeof sprsConfirmBodySchema>;

export const handoffTokenSchema = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'Not a handoff link token.');
export const handoffClaimBodySchema = z.object({ token: handoffTokenSchema }).strict();
export const handoffPreviewQuerySchema = z.object({ token: handoffTokenSchema });

/** cmmc_handoff payload (DESIGN §5.2). */
export const handoffPayloadSchema = z.object({
  cageCode: cageCodeSchema,
  companyName: z.string().trim().min(1).max(200),
  contactEmail: z.string().trim().toLowerCase().pipe(z.email()).pipe(z.string().max(320)),
});
/** cmmc_status payload. */
export const statusPayloadSchema = z.object({ cageCode: cageCodeSchema });

export const STAFF_FILTERS = ['all', 'compliant', 'in_progress', 'expired', 'renewing_soon', 'devices_pending'] as const;
export const staffQuerySchema = z.object({
  filter: z.enum(STAFF_FILTERS).default('all'),
  q: z
    .string()
    .trim()
    .max(200)
    .optional()
    .transform((v) => (v ? v : null)),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});
