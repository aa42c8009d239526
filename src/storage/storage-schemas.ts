// Request and response shapes of the storage settings API, shared with the web app (type-only imports).
import { z } from 'zod';

/** AWS bucket naming rules (which S3-compatible stores follow): 3–63 of a-z 0-9 . -, letter or digit at both ends. */
export const bucketNameSchema = z
  .string()
  .trim()
  .min(3, 'Bucket names have 3 to 63 characters.')
  .max(63, 'Bucket names have 3 to 63 characters.')
  .regex(
    /^[a-z0-9][a-z0-9.-]*[a-z0-9]$/,
    'Use lower-case letters, digits, dots and hyphens, starting and ending with a letter or digit.',
  )
  .refine(
    (b) => !b.includes('..') && !b.includes('.-') && !b.includes('-.'),
    'No two dots in a row, and no dot next to a hyphen.',
  )
  .refine((b) => !/^\d{1,3}(\.\d{1,3}){3}$/.test(b), 'A bucket name cannot look like an IP address.')
  .refine(
    (b) => !b.startsWith('xn--') && !b.endsWith('-s3alias') && !b.endsWith('--ol-s3'),
    'This bucket name uses a reserved prefix or suffix.',
  );

export const endpointSchema = z
  .string()
  .trim()
  .max(500)
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && !!u.hostname;
    } catch {
      return false;
    }
  }, 'Use an http:// or https:// URL, such as https://s3.eu-central-1.amazonaws.com.')
  .refine(
    (v) => URL.canParse(v) && !new URL(v).username && !new URL(v).password,
    'Put the keys in their own fields, not in the URL.',
  )
  .refine(
    (v) => URL.canParse(v) && !new URL(v).search && !new URL(v).hash,
    'The endpoint URL takes no query string or fragment.',
  )
  .transform((v) => v.replace(/\/+$/, ''));

export const regionSchema = z
  .string()
  .trim()
  .min(1, 'Give the region (for example us-east-1; R2 uses auto).')
  .max(64)
  .regex(/^[a-z0-9][a-z0-9_-]*$/i, 'Letters, digits, hyphens and underscores, such as eu-central-1.');

export const prefixSchema = z
  .string()
  .trim()
  .max(256)
  .transform((v) => v.replace(/^\/+|\/+$/g, ''))
  .refine(
    (v) => v === '' || v.split('/').every((s) => /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(s)),
    'Segments of letters, digits, ".", "_" and "-", separated by "/".',
  );

const keyField = z.string().trim().min(1).max(256);

export const s3SettingsBodySchema = z.object({
  endpoint: endpointSchema,
  region: regionSchema,
  bucket: bucketNameSchema,
  pathStyle: z.boolean().default(false),
  prefix: prefixSchema.default(''),
  /** Omit both to keep the stored keys. */
  accessKeyId: keyField.optional(),
  secretAccessKey: keyField.optional(),
  enabled: z.boolean().default(true),
});
export type S3SettingsBody = z.output<typeof s3SettingsBodySchema>;

/** Test connection: the saved settings (no body), or a candidate (keys omitted = the saved ones). */
export const storageTestBodySchema = z.preprocess(
  (v) => (v !== null && typeof v === 'object' && Object.keys(v).length === 0 ? undefined : v),
  s3SettingsBodySchema.omit({ enabled: true }).optional(),
);

export const storageTestResultSchema = z.object({
  at: z.string(),
  ok: z.boolean(),
  error: z.string().nullable(),
  message: z.string(),
});

export const storageSettingsSchema = z.object({
  /** Where new objects go now. */
  active: z.enum(['builtin', 's3']),
  s3: z
    .object({
      endpoint: z.string(),
      region: z.string(),
      bucket: z.string(),
      pathStyle: z.boolean(),
      prefix: z.string(),
      enabled: z.boolean(),
      hasAccessKeyId: z.boolean(),
      hasSecretAccessKey: z.boolean(),
      lastTest: storageTestResultSchema.nullable(),
      updatedAt: z.string(),
    })
    .nullable(),
  canEdit: z.boolean(),
});
export type StorageSettingsDto = z.infer<typeof storageSettingsSchema>;

export const storageTestResponseSchema = z.object({
  ok: z.literal(true),
  message: z.string(),
  latencyMs: z.number().int(),
  tested: z.enum(['saved', 'candidate']),
});
export const storageParamsSchema = z.object({ tenantId: z.uuid() });
