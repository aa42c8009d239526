// Request and response shapes of the CMMC API, shared with the web app (type-only imports there).
import { z } from 'zod';
import { CAGE_CODE_MESSAGE, CAGE_CODE_RE, cageCodeProblem } from './cage-code.ts';
import { checkIdsFor, reasonCodesOf, reasonInfo, UNKNOWN_REASONS, type DeviceOs } from './cmmc-checks.ts';

/** Device-check runs a profile may send per hour (docs/cmmc.md). */
export const VERIFY_RUNS_PER_HOUR = 30;
/** A device's latest run older than this counts as pending. */
export const DEVICE_STALE_DAYS = 30;
/** A computer attestation counts as long as a run does: recorded in the last DEVICE_STALE_DAYS days. */
export const attestationCurrent = (a: { at: string }, now: Date): boolean =>
  now.getTime() - Date.parse(a.at) <= DEVICE_STALE_DAYS * 86_400_000;
export const VERIFY_BODY_LIMIT = 64 * 1024;

export const cageCodeSchema = z
  .string()
  .trim()
  .toUpperCase()
  .regex(CAGE_CODE_RE, {
    error: (iss) =>
      typeof iss.input === 'string' ? (cageCodeProblem(iss.input) ?? CAGE_CODE_MESSAGE) : CAGE_CODE_MESSAGE,
  });
/** The CAGE code shape without the I/O rule: the SPRS form sends the profile's codes, which the service checks by name. */
export const cageCodeShapeSchema = z
  .string()
  .trim()
  .toUpperCase()
  .regex(/^[0-9A-Z]{5}$/, CAGE_CODE_MESSAGE);

const text = (max: number) => z.string().trim().min(1, 'Required.').max(max, `At most ${max} characters.`);
const optionalText = (max: number) =>
  z
    .string()
    .trim()
    .max(max, `At most ${max} characters.`)
    .nullish()
    .transform((v) => (v ? v : null));

export const mailPlatformSchema = z.enum(['m365', 'google']);
export const profileStatusSchema = z.enum(['in_progress', 'compliant', 'renewal_due', 'not_compliant', 'expired']);

export const biddingUserSchema = z
  .object({
    name: text(200),
    email: z.string().trim().toLowerCase().pipe(z.email('A valid e-mail address.')).pipe(z.string().max(320)),
    role: optionalText(100),
  })
  .strict();

export const affirmingOfficialSchema = z
  .object({
    name: text(200),
    title: text(200),
    email: z.string().trim().toLowerCase().pipe(z.email('A valid e-mail address.')).pipe(z.string().max(320)),
  })
  .strict();

export const profileBodySchema = z
  .object({
    cageCode: cageCodeSchema,
    additionalCageCodes: z.array(cageCodeSchema).max(50, 'At most 50 further CAGE codes.').default([]),
    companyName: text(200),
    companyAddress: optionalText(500),
    companyPhone: optionalText(40),
    companyWebsite: optionalText(300).refine(
      (v) => v === null || /^https?:\/\/[^\s]+$/i.test(v),
      'A web address starting with http:// or https://.',
    ),
    uei: z
      .string()
      .trim()
      .toUpperCase()
      .regex(/^([0-9A-Z]{12})?$/, 'A UEI is 12 letters or digits.')
      .nullish()
      .transform((v) => (v ? v : null)),
    scopeDescription: optionalText(4000),
    /** Computers that handle FCI: the denominator of device coverage. Omitted keeps the saved number. */
    deviceCount: z
      .int('A whole number of computers.')
      .min(1, 'At least 1 computer.')
      .max(10000, 'At most 10000 computers.')
      .nullish(),
    biddingUsers: z
      .array(biddingUserSchema)
      .min(1, 'Name at least one person who bids or handles FCI.')
      .max(100, 'At most 100 people.'),
    mailPlatform: mailPlatformSchema,
    affirmingOfficial: affirmingOfficialSchema,
  })
  .strict();
export type ProfileBody = z.infer<typeof profileBodySchema>;

export const deviceScriptInfoSchema = z.object({
  os: z.enum(['windows', 'macos']),
  fileName: z.string(),
  sha256: z.string(),
  version: z.string(),
});

export const profileSchema = z.object({
  id: z.string(),
  cageCode: z.string(),
  additionalCageCodes: z.array(z.string()),
  companyName: z.string(),
  companyAddress: z.string().nullable(),
  companyPhone: z.string().nullable(),
  companyWebsite: z.string().nullable(),
  uei: z.string().nullable(),
  scopeDescription: z.string().nullable(),
  /** The number of in-scope computers Scope declares; null when not declared yet. */
  deviceCount: z.number().nullable(),
  biddingUsers: z.array(z.object({ name: z.string(), email: z.string(), role: z.string().nullable() })),
  mailPlatform: mailPlatformSchema,
  affirmingOfficial: z.object({ name: z.string(), title: z.string(), email: z.string() }),
  status: profileStatusSchema,
  statusDate: z.string().nullable(),
  deviceToken: z.object({
    issued: z.boolean(),
    issuedAt: z.string().nullable(),
    scripts: z.array(deviceScriptInfoSchema),
  }),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type ProfileDto = z.infer<typeof profileSchema>;

export const profileResponseSchema = z.object({ profile: profileSchema.nullable(), canManage: z.boolean() });
export type ProfileResponse = z.infer<typeof profileResponseSchema>;

export const signingKeySchema = z.object({
  algorithm: z.literal('Ed25519'),
  publicKey: z.string(),
  publicKeyPem: z.string(),
  fingerprint: z.string(),
});
export type SigningKeyDto = z.infer<typeof signingKeySchema>;

export const issuedTokenSchema = z.object({
  /** Shown once; only its hash is stored. */
  token: z.string(),
  issuedAt: z.string(),
  scripts: z.array(deviceScriptInfoSchema.extend({ content: z.string() })),
  signingKey: z.object({ algorithm: z.literal('Ed25519'), fingerprint: z.string() }),
  verifyUrl: z.string(),
  /** Set when the scripts' address (PUBLIC_BASE_URL) is one the company's laptops may not reach. */
  baseUrlWarning: z.string().nullable(),
});
export type IssuedTokenDto = z.infer<typeof issuedTokenSchema>;

const checkResultSchema = z.enum(['pass', 'fail', 'unknown']);
const detailSchema = z.string().max(1000, 'At most 1000 characters.');

const reasonSchema = z.enum(UNKNOWN_REASONS as [string, ...string[]]);

function resultsFor(os: DeviceOs) {
  const ids = checkIdsFor(os);
  // Only checks with reason codes in the catalogue take one (win.scan_recent, win.local_admins).
  const reasonIds = ids.filter((id) => reasonCodesOf(id).length > 0);
  return {
    results: z
      .strictObject(
        Object.fromEntries(ids.map((id) => [id, checkResultSchema.optional()])) as Record<
          string,
          z.ZodOptional<typeof checkResultSchema>
        >,
      )
      .refine((r) => Object.values(r).some((v) => v !== undefined), 'At least one check result.'),
    details: z
      .strictObject(
        Object.fromEntries(ids.map((id) => [id, detailSchema.optional()])) as Record<
          string,
          z.ZodOptional<typeof detailSchema>
        >,
      )
      .optional(),
    /** Why a result is unknown, when the script knows (`{"win.scan_recent": "third_party_av"}`). */
    reasons: z
      .strictObject(
        Object.fromEntries(reasonIds.map((id) => [id, reasonSchema.optional()])) as Record<
          string,
          z.ZodOptional<typeof reasonSchema>
        >,
      )
      .optional(),
  };
}

// zod's issue code for a refinement (a constant, so the error-code docs check does not read it as an API error code).
const CUSTOM_ISSUE = 'custom' as const;

/** A reason code goes with an unknown result only, and must be one the check's catalogue entry names. */
function reasonsMatchResults(
  v: { results: Record<string, string | undefined>; reasons?: Record<string, string | undefined> | undefined },
  ctx: z.RefinementCtx,
) {
  for (const [id, reason] of Object.entries(v.reasons ?? {})) {
    if (reason === undefined) continue;
    if (v.results[id] !== 'unknown')
      ctx.addIssue({
        code: CUSTOM_ISSUE,
        path: ['reasons', id],
        message: 'A reason code is only sent with an unknown result.',
      });
    else if (!reasonInfo(id, reason))
      ctx.addIssue({ code: CUSTOM_ISSUE, path: ['reasons', id], message: `Not a reason code of ${id}.` });
  }
}

/**
 * A computer name as the scripts send it (macOS: `scutil --get ComputerName`, e.g. "MacBook Pro
 * (2)" or "Smith & Sons, Front Desk"): starts with a letter or digit, then letters, digits, spaces
 * and . _ ' - ( ) & , + # ! @. No control characters, quotes, backslashes, slashes or angle
 * brackets. The scripts replace anything else with "-" before sending.
 */
export const HOSTNAME_RE = /^[\p{L}\p{N}][\p{L}\p{N} ._'()&,+#!@-]*$/u;
export const HOSTNAME_MESSAGE =
  "Starts with a letter or digit; then letters, digits, spaces and . _ ' - ( ) & , + # ! @ only.";

const runCommon = {
  scriptVersion: z.string().regex(/^\d{1,3}\.\d{1,3}\.\d{1,3}$/, 'A version such as 1.0.0.'),
  hostname: z
    .string()
    .trim()
    .min(1, 'Required.')
    .max(253, 'At most 253 characters.')
    .regex(HOSTNAME_RE, HOSTNAME_MESSAGE),
  osVersion: z.string().max(200, 'At most 200 characters.').nullish(),
};

/** What a device-check script posts to POST /api/public/compliance/verify. */
export const verifyBodySchema = z.discriminatedUnion('os', [
  z.strictObject({ os: z.literal('windows'), ...runCommon, ...resultsFor('windows') }).superRefine(reasonsMatchResults),
  z.strictObject({ os: z.literal('macos'), ...runCommon, ...resultsFor('macos') }).superRefine(reasonsMatchResults),
]);
export type VerifyBody = z.infer<typeof verifyBodySchema>;

export const verifyResponseSchema = z.object({
  ok: z.literal(true),
  runId: z.string(),
  hostname: z.string(),
  receivedAt: z.string(),
  summary: z.object({ pass: z.number(), fail: z.number(), unknown: z.number() }),
  runsLeftThisHour: z.number(),
});

export const deviceSchema = z.object({
  hostname: z.string(),
  os: z.enum(['windows', 'macos']),
  osVersion: z.string().nullable(),
  scriptVersion: z.string(),
  runId: z.string(),
  receivedAt: z.string(),
  /** The latest run is older than DEVICE_STALE_DAYS: the device counts as pending. */
  pending: z.boolean(),
  summary: z.object({ pass: z.number(), fail: z.number(), unknown: z.number() }),
  results: z.record(z.string(), checkResultSchema),
  details: z.record(z.string(), z.string()),
  /**
   * Reason codes of unknown results (e.g. third_party_av), with what they mean for scoring;
   * attestItem is the item that settles it, null when no attestation can (admin_groups_unresolved).
   */
  reasons: z.record(
    z.string(),
    z.object({ code: z.string(), explanation: z.string(), attestItem: z.string().nullable() }),
  ),
  /** Retired computers are listed (to un-retire them) but never counted. */
  retired: z.object({ at: z.string(), byEmail: z.string().nullable(), note: z.string().nullable() }).nullable(),
});
export type DeviceDto = z.infer<typeof deviceSchema>;

export const deviceAttestationSchema = z.object({
  hostname: z.string(),
  statement: z.string(),
  at: z.string(),
  byEmail: z.string(),
  /** Recorded in the last DEVICE_STALE_DAYS days: it counts. */
  current: z.boolean(),
});
export type DeviceAttestationDto = z.infer<typeof deviceAttestationSchema>;

export const deviceListSchema = z.object({
  devices: z.array(deviceSchema),
  /** Computers an owner or admin attested (no run, or a run gone stale), latest per computer. */
  attestations: z.array(deviceAttestationSchema),
  /** The Scope's number of in-scope computers (null: not declared). */
  declaredDevices: z.number().nullable(),
  checks: z.array(
    z.object({
      id: z.string(),
      os: z.enum(['windows', 'macos']),
      title: z.string(),
      requirementIds: z.array(z.string()),
      supporting: z.boolean(),
    }),
  ),
  staleDays: z.number(),
});
export type DeviceListDto = z.infer<typeof deviceListSchema>;

export const tenantParamsSchema = z.object({ tenantId: z.uuid() });

const hostnameField = z.string().trim().min(1, 'Required.').max(253, 'At most 253 characters.');
const reasonField = z
  .string()
  .trim()
  .max(500, 'At most 500 characters.')
  .nullish()
  .transform((v) => (v ? v : null));

/**
 * POST .../cmmc/devices/retire: the computer by its hostname (case-insensitive) and why it leaves
 * scope. `note` is the reason's older name; a missing or blank reason is 400
 * cmmc_retire_reason_required (the service says so, not the schema, so the code is stable).
 */
export const retireBodySchema = z.object({ hostname: hostnameField, reason: reasonField, note: reasonField }).strict();

/** POST .../cmmc/devices/attest: an owner or admin vouches for a computer that sends no run. */
export const attestDeviceBodySchema = z
  .object({
    hostname: z
      .string()
      .trim()
      .min(1, 'Required.')
      .max(253, 'At most 253 characters.')
      .regex(HOSTNAME_RE, HOSTNAME_MESSAGE),
    statement: z
      .string()
      .trim()
      .min(20, 'Say what was checked on this computer, how and by whom (at least 20 characters).')
      .max(2000, 'At most 2000 characters.'),
  })
  .strict();
export type AttestDeviceBody = z.infer<typeof attestDeviceBodySchema>;
export const withdrawAttestationBodySchema = z.object({ hostname: hostnameField }).strict();

export const unretireBodySchema = z
  .object({ hostname: z.string().trim().min(1, 'Required.').max(253, 'At most 253 characters.') })
  .strict();
