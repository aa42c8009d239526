import { z } from 'zod';

export const tenantRoleSchema = z.enum(['owner', 'admin', 'member']);
export type TenantRole = z.infer<typeof tenantRoleSchema>;

export const tenantParamsSchema = z.object({ tenantId: z.uuid({ message: 'tenantId must be a UUID' }) });

export const membershipSchema = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  role: tenantRoleSchema,
});

export const meSchema = z.object({
  user: z.object({
    id: z.string(),
    name: z.string(),
    email: z.string(),
    emailVerified: z.boolean(),
    twoFactorEnabled: z.boolean(),
  }),
  csrfToken: z.string(),
  activeTenantId: z.string().nullable(),
  tenants: z.array(membershipSchema),
  staff: z.boolean(),
  superAdmin: z.boolean(),
  platformRole: z.enum(['staff', 'super_admin']).nullable(),
});

export const memberSchema = z.object({
  id: z.string(),
  userId: z.string(),
  name: z.string(),
  email: z.string(),
  role: tenantRoleSchema,
  joinedAt: z.string(),
  twoFactorEnabled: z.boolean(),
});

export const invitationSchema = z.object({
  id: z.string(),
  email: z.string(),
  role: z.string(),
  status: z.string(),
  expiresAt: z.string(),
  createdAt: z.string(),
});

export const membersResponseSchema = z.object({
  members: z.array(memberSchema),
  invitations: z.array(invitationSchema),
});

const slaDay = z.number().int().min(1).max(3650);
/** Days from first seen to the SLA due date of a finding, per severity (info findings have none). */
export const slaDaysSchema = z.object({ critical: slaDay, high: slaDay, medium: slaDay, low: slaDay }).strict();
export type SlaDaysDto = z.infer<typeof slaDaysSchema>;

export const tenantSettingsBodySchema = z
  .object({
    dailyScanQuota: z.number().int().min(0).max(100_000),
    perAssetConcurrentScans: z.number().int().min(1).max(64),
    /** Left out: unchanged. */
    slaDays: slaDaysSchema.optional(),
  })
  .strict();
export type TenantSettingsInput = z.infer<typeof tenantSettingsBodySchema>;

export const tenantSettingsSchema = tenantSettingsBodySchema.extend({
  slaDays: slaDaysSchema,
  updatedAt: z.string(),
  canEdit: z.boolean(),
});
export type TenantSettingsDto = z.infer<typeof tenantSettingsSchema>;
