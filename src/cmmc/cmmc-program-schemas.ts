// Request and response shapes of the CMMC program routes (attestations, policies, score, SPRS,
// exports, handoff, staff, renewals). The web app imports their types (type-only).
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { cageCodeSchema, cageCodeShapeSchema, profileStatusSchema } from './cmmc-schemas.ts';
import { POLICY_KINDS, type PolicyKind } from './cmmc-scoring.ts';

const isoDay = z.iso.date('A date as YYYY-MM-DD.');

export const itemParamsSchema = z.object({
  tenantId: z.uuid(),
  itemId: z.string().regex(/^[a-z0-9]+\.[a-z0-9_]+$/, 'An attestation item id such as ac1.roster.'),
});
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

/** Answers of several items at once (a section's "Save section", or "Save all"), stored together or not at all. */
export const answersBodySchema = z
  .object({
    answers: z
      .array(answerBodySchema.extend({ itemId: itemParamsSchema.shape.itemId }).strict())
      .min(1, 'Send at least one answer.')
      .max(200, 'At most 200 answers.'),
  })
  .strict();

export const generatePoliciesBodySchema = z
  .object({
    kinds: z
      .array(z.enum(POLICY_KINDS as unknown as [string, ...string[]]))
      .min(1)
      .max(8)
      .nullish(),
  })
  .strict();

/** The Affirming Official approves the policies (the service checks the caller is them). */
export const approvePolicyBodySchema = z
  .object({
    effectiveDate: isoDay,
    /** The review-by date; by default one year after the approval day. */
    reviewDate: isoDay.nullish(),
    forAffirmingOfficial: z.literal(
      true,
      'Policies are approved by the Affirming Official: confirm you approve as the Affirming Official.',
    ),
  })
  .strict();

/** Several drafts approved in one confirmation (all or none). */
export const approvePoliciesBodySchema = approvePolicyBodySchema.extend({
  documentIds: z.array(z.uuid()).min(1, 'Name at least one draft.').max(8, 'At most the 8 policies of the set.'),
});

/** A review of an approved policy: its next review-by date. */
export const reviewDateBodySchema = z.object({ reviewDate: isoDay }).strict();

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

/** cmmc_handoff payload (docs/mesh.md §4). */
export const handoffPayloadSchema = z.object({
  cageCode: cageCodeSchema,
  companyName: z.string().trim().min(1).max(200),
  contactEmail: z.string().trim().toLowerCase().pipe(z.email()).pipe(z.string().max(320)),
});
/** cmmc_status payload. */
export const statusPayloadSchema = z.object({ cageCode: cageCodeSchema });

export const STAFF_FILTERS = [
  'all',
  'compliant',
  'in_progress',
  'expired',
  'renewing_soon',
  'devices_pending',
] as const;
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

// ---- responses ----------------------------------------------------------------------------------
// Every program route answers with one of these (the serializer encodes through them, so a field
// the service adds without adding it here never reaches a client); the web app takes its types
// from them.

const nullableString = z.string().nullable();
const answerSchema = z.enum(['yes', 'no', 'not_applicable']);
const policyKindSchema = z.enum(POLICY_KINDS as unknown as [PolicyKind, ...PolicyKind[]]);

/** A file download (attachment); the body is the file itself, not JSON. */
export const fileDownloadSchema = (description: string) =>
  z.custom<Buffer | Readable | string>(() => true).meta({ type: 'string', format: 'binary', description });

export const evidenceFileSchema = z.object({
  id: z.string(),
  requirementId: z.string(),
  itemId: z.string(),
  fileName: z.string(),
  contentType: z.string(),
  sizeBytes: z.number(),
  sha256: z.string(),
  uploadedByEmail: nullableString,
  createdAt: z.string(),
});
export const evidenceUploadResponseSchema = z.object({ evidence: evidenceFileSchema });

export const attestationItemSchema = z.object({
  id: z.string(),
  text: z.string(),
  answer: answerSchema.nullable(),
  note: nullableString,
  answeredByEmail: nullableString,
  answeredAt: nullableString,
  evidence: z.array(evidenceFileSchema),
});
export const attestationsResponseSchema = z.object({
  canManage: z.boolean(),
  requirements: z.array(
    z.object({ id: z.string(), title: z.string(), statement: z.string(), items: z.array(attestationItemSchema) }),
  ),
});
export const answerResponseSchema = z.object({
  itemId: z.string(),
  answer: answerSchema,
  note: nullableString,
  answeredByEmail: z.string(),
  answeredAt: z.string(),
});
export const answersResponseSchema = z.object({
  /** Items whose answer or note changed (and are now recorded as answered by the caller). */
  saved: z.number(),
  /** Items sent with the answer and note they already had (left as they were). */
  unchanged: z.number(),
  answers: z.array(answerResponseSchema),
});

/** The Affirming Official named in Scope; isCaller: the signed-in user is them. */
export const affirmingOfficialViewSchema = z.object({
  name: z.string(),
  title: z.string(),
  email: z.string(),
  isCaller: z.boolean(),
});

export const policyDocSchema = z.object({
  id: z.string(),
  kind: policyKindSchema,
  version: z.number(),
  title: z.string(),
  status: z.enum(['draft', 'approved']),
  effectiveDate: nullableString,
  /** Approved and effective today. */
  inForce: z.boolean(),
  /** In force, but today is past its review date (that date): it counts no more until reviewed. */
  reviewOverdueSince: nullableString,
  /** In force and not past its review date: counts for scoring. */
  countsForScoring: z.boolean(),
  approvedAt: nullableString,
  approvedByEmail: nullableString,
  nextReviewDate: nullableString,
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const policyDocWithBodySchema = policyDocSchema.extend({ body: z.string() });
export const policiesResponseSchema = z.object({
  canManage: z.boolean(),
  affirmingOfficial: affirmingOfficialViewSchema,
  canApprove: z.boolean(),
  documents: z.array(
    z.object({
      kind: policyKindSchema,
      title: z.string(),
      latest: policyDocSchema.nullable(),
      inForce: policyDocSchema.nullable(),
    }),
  ),
});
export const generatePoliciesResponseSchema = z.object({ generated: z.number() });
export const approvePoliciesResponseSchema = z.object({ documents: z.array(policyDocSchema) });

export const coverageSchema = z.object({
  /** The Scope's number of in-scope computers; null when Scope does not declare it. */
  declared: z.number().nullable(),
  /** Computers with a current passing run, or a current attestation and no current run. */
  covered: z.number(),
  attested: z.number(),
  /** Computers known at all: latest runs (not retired) and attestation-only computers. */
  known: z.number(),
  /** In-scope computers with neither a run nor an attestation. */
  unaccounted: z.number(),
});

export const requirementScoreSchema = z.object({
  requirementId: z.string(),
  status: z.enum(['MET', 'NOT_MET', 'NA']),
  implemented: z.boolean(),
  missingItems: z.array(z.string()),
  noItems: z.array(z.string()),
  unjustifiedNa: z.array(z.string()),
  failingChecks: z.array(
    z.object({
      hostname: z.string(),
      checkId: z.string(),
      result: z.enum(['fail', 'unknown']),
      reason: z.string().optional(),
      attestItem: z.string().optional(),
    }),
  ),
  attestedChecks: z.array(
    z.object({ hostname: z.string(), checkId: z.string(), reason: z.string(), itemId: z.string() }),
  ),
  pendingDevices: z.array(z.string()),
  needsDeviceRun: z.boolean(),
  /** Requirements with device checks: covered computers of the Scope's number ("5 of 6 computers"). */
  coverage: coverageSchema.nullable(),
  missingPolicy: policyKindSchema.nullable(),
  /** The missing policy is approved but past its review date (this date). */
  policyReviewOverdueSince: nullableString,
  naJustification: nullableString,
});

export const scoreResponseSchema = z.object({
  profileStatus: profileStatusSchema,
  statusDate: nullableString,
  renewalDueAt: nullableString,
  met: z.number(),
  total: z.number(),
  allMet: z.boolean(),
  requirements: z.array(
    requirementScoreSchema.extend({ title: z.string(), aliases: z.array(z.string()), far: z.string() }),
  ),
  devices: z.object({
    count: z.number(),
    pending: z.number(),
    latestRunAt: nullableString,
    /** Over all required device checks (a computer is covered when it passes for every requirement). */
    coverage: coverageSchema,
  }),
  lastConfirmation: z
    .object({
      statusDate: z.string(),
      nextDue: z.string(),
      confirmedAt: z.string(),
      affirmedInSprsOn: z.string(),
      proofFileName: nullableString,
    })
    .nullable(),
  affirmationText: z.string(),
  affirmationTextVersion: z.string(),
  /** While not_compliant: what regressed after the confirmation, and when (the requirements above say what is missing now). */
  regression: z
    .object({
      at: z.string(),
      requirements: z.array(z.object({ requirementId: z.string(), title: z.string(), reasons: z.array(z.string()) })),
    })
    .nullable(),
  affirmingOfficial: affirmingOfficialViewSchema,
  /** Who may confirm the SPRS entry: the Affirming Official (an owner or admin). */
  canConfirm: z.boolean(),
});

export const sprsConfirmationResponseSchema = z.object({
  confirmationId: z.string(),
  status: z.literal('compliant'),
  statusDate: z.string(),
  nextDue: z.string(),
  reminderAt: z.string(),
  assessmentSnapshotSha256: z.string(),
  /** Events enqueued (one per peer). */
  events: z.number(),
});
export const sprsProofResponseSchema = z.object({
  confirmationId: z.string(),
  fileName: z.string(),
  sha256: z.string(),
});

export const controlsJsonSchema = z.object({
  company: z.string(),
  cageCode: z.string(),
  cageCodes: z.array(z.string()),
  sprsStatus: z.string(),
  profileStatus: profileStatusSchema,
  statusDate: nullableString,
  renewalDueAt: nullableString,
  latestDeviceCheck: nullableString,
  met: z.number(),
  total: z.number(),
  controls: z.array(
    z.object({
      controlCode: z.string(),
      aliases: z.array(z.string()),
      title: z.string(),
      status: z.enum(['implemented', 'not_implemented']),
      result: z.enum(['MET', 'NOT_MET', 'NA']),
      missingAttestationItems: z.array(z.string()),
      failingDeviceChecks: requirementScoreSchema.shape.failingChecks,
      attestedDeviceChecks: requirementScoreSchema.shape.attestedChecks,
      pendingDevices: z.array(z.string()),
      deviceCoverage: coverageSchema.nullable(),
      missingPolicy: policyKindSchema.nullable(),
      policyReviewOverdueSince: nullableString,
    }),
  ),
});

export const handoffPreviewResponseSchema = z.object({
  prefill: z.record(z.string(), z.unknown()),
  expiresAt: z.string(),
});
export const handoffClaimResponseSchema = z.object({
  prefill: z.record(z.string(), z.unknown()),
  profileExists: z.boolean(),
});

export const staffProfileSchema = z.object({
  id: z.string(),
  tenantId: z.string(),
  cageCode: z.string(),
  companyName: z.string(),
  status: profileStatusSchema,
  statusDate: nullableString,
  renewalDueAt: nullableString,
  device_link_issued: z.boolean(),
  device_count: z.number(),
  failing_devices: z.number(),
  pendingDevices: z.number(),
  latestRunAt: nullableString,
  updatedAt: z.string(),
});
export const staffListResponseSchema = z.object({
  tiles: z.object({
    customers: z.number(),
    compliant: z.number(),
    inProgress: z.number(),
    expired: z.number(),
    renewingSoon: z.number(),
    devicesPending: z.number(),
  }),
  total: z.number(),
  profiles: z.array(staffProfileSchema),
});

export const renewalSweepResponseSchema = z.object({
  ok: z.literal(true),
  day: z.string(),
  renewalDue: z.number(),
  expired: z.number(),
  /** Policy review reminders claimed by this run (one per policy and threshold; mailed per company). */
  policyReviewReminders: z.number(),
  events: z.array(
    z.object({ profileId: z.string(), cageCode: z.string(), event: z.string(), requestIds: z.array(z.string()) }),
  ),
});

export type AttestationsResponse = z.infer<typeof attestationsResponseSchema>;
export type AnswerResponse = z.infer<typeof answerResponseSchema>;
export type AnswersResponse = z.infer<typeof answersResponseSchema>;
export type EvidenceFileDto = z.infer<typeof evidenceFileSchema>;
export type EvidenceUploadResponse = z.infer<typeof evidenceUploadResponseSchema>;
export type PoliciesResponse = z.infer<typeof policiesResponseSchema>;
export type PolicyDocDto = z.infer<typeof policyDocSchema>;
export type PolicyDocWithBody = z.infer<typeof policyDocWithBodySchema>;
export type ScoreResponse = z.infer<typeof scoreResponseSchema>;
export type SprsConfirmationResponse = z.infer<typeof sprsConfirmationResponseSchema>;
export type SprsProofResponse = z.infer<typeof sprsProofResponseSchema>;
export type ControlsJson = z.infer<typeof controlsJsonSchema>;
export type HandoffPreviewResponse = z.infer<typeof handoffPreviewResponseSchema>;
export type HandoffClaimResponse = z.infer<typeof handoffClaimResponseSchema>;
export type StaffListResponse = z.infer<typeof staffListResponseSchema>;
export type StaffProfileDto = z.infer<typeof staffProfileSchema>;
export type RenewalSweepResponse = z.infer<typeof renewalSweepResponseSchema>;
