import { z } from 'zod';

export const platformRoleSchema = z.enum(['staff', 'super_admin']);

export const platformRoleEntrySchema = z.object({
  userId: z.string(),
  email: z.string(),
  name: z.string(),
  role: platformRoleSchema,
  grantedAt: z.string(),
  domainApproved: z.boolean(),
  emailVerified: z.boolean(),
});

export const grantRoleBodySchema = z.object({
  email: z
    .email()
    .max(320)
    .transform((e) => e.toLowerCase()),
  role: platformRoleSchema,
});

export const staffTenantSchema = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  createdAt: z.string(),
  memberCount: z.number().int(),
});

export const staffTenantsResponseSchema = z.object({ tenants: z.array(staffTenantSchema) });
export const platformRolesResponseSchema = z.object({ roles: z.array(platformRoleEntrySchema) });
export const platformRoleResponseSchema = z.object({ role: platformRoleEntrySchema });
