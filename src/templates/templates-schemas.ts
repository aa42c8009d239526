// Request and response shapes of the scan-templates API, shared with the web app (type-only
// imports there). The YAML itself is checked by the template engine's validator, not here.
import { z } from 'zod';

/** Largest template text (the engine's TEMPLATE_LIMITS.bytes). */
export const TEMPLATE_MAX_BYTES = 64 * 1024;
/** Tenant templates per tenant (the engine runs at most this many custom templates per scan). */
export const TENANT_TEMPLATE_LIMIT = 500;
/** All of a tenant's template texts together: what one template lease may carry. */
export const TENANT_TEMPLATE_TOTAL_BYTES = 2 * 1024 * 1024;

/** Payload files one template may carry, and their size together (each counts to the tenant total). */
export const TEMPLATE_PAYLOAD_FILES = 20;
export const TEMPLATE_PAYLOAD_FILES_MAX_BYTES = 512 * 1024;
/** A path as templates name payload files (`helpers/wordlists/users.txt`), relative, no `..`. */
const PAYLOAD_PATH = /^(?!.*(?:^|\/)\.\.(?:\/|$))[\w.-]+(?:\/[\w.-]+)*$/;

const severity = z.enum(['info', 'low', 'medium', 'high', 'critical']);

export const templateBodySchema = z
  .object({
    yaml: z
      .string()
      .min(1, 'Paste or upload a template.')
      .refine((s) => Buffer.byteLength(s, 'utf8') <= TEMPLATE_MAX_BYTES, `At most ${TEMPLATE_MAX_BYTES / 1024} KiB.`),
    /**
     * The payload files the template names, by that path → their text (one value a line). Absent
     * on a replacement: the stored files stay.
     */
    payloadFiles: z
      .record(
        z.string().max(200).regex(PAYLOAD_PATH, 'A relative file path such as helpers/wordlists/users.txt.'),
        // Each file within the template's whole payload budget (the refine below checks the sum).
        z.string().max(TEMPLATE_PAYLOAD_FILES_MAX_BYTES),
      )
      .refine(
        (f) => Object.keys(f).length <= TEMPLATE_PAYLOAD_FILES,
        `At most ${TEMPLATE_PAYLOAD_FILES} payload files.`,
      )
      .refine(
        (f) =>
          Object.values(f).reduce((n, t) => n + Buffer.byteLength(t, 'utf8'), 0) <= TEMPLATE_PAYLOAD_FILES_MAX_BYTES,
        `Payload files of a template take at most ${TEMPLATE_PAYLOAD_FILES_MAX_BYTES / 1024} KiB together.`,
      )
      .optional(),
  })
  .strict();
export type TemplateBody = z.infer<typeof templateBodySchema>;

export const scanTemplateSchema = z.object({
  id: z.uuid(),
  templateId: z.string(),
  name: z.string(),
  severity,
  tags: z.array(z.string()),
  size: z.number(),
  sha256: z.string(),
  createdBy: z.object({ id: z.string(), email: z.string() }).nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type ScanTemplateDto = z.infer<typeof scanTemplateSchema>;

export const builtinTemplateSchema = z.object({
  templateId: z.string(),
  name: z.string(),
  severity,
  tags: z.array(z.string()),
});
export type BuiltinTemplateDto = z.infer<typeof builtinTemplateSchema>;

export const templateListSchema = z.object({
  templates: z.array(scanTemplateSchema),
  builtin: z.array(builtinTemplateSchema),
  usage: z.object({ count: z.number(), totalBytes: z.number() }),
  limits: z.object({ templates: z.number(), totalBytes: z.number(), templateBytes: z.number() }),
  canManage: z.boolean(),
});
export const templateDetailSchema = z.object({
  template: scanTemplateSchema.extend({
    yaml: z.string(),
    payloadFiles: z.array(z.object({ path: z.string(), size: z.number() })),
  }),
});
export type ScanTemplateDetailDto = z.infer<typeof templateDetailSchema>['template'];

export const templateTenantParamsSchema = z.object({ tenantId: z.uuid() });
export const templateParamsSchema = z.object({ tenantId: z.uuid(), templateId: z.uuid() });
