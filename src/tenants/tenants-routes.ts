import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { auditPageSchema, auditQuerySchema } from '../audit/audit-schemas.ts';
import type { SessionGuards } from '../server/plugins/session.ts';
import type { StaffService } from '../staff/index.ts';
import {
  meSchema,
  membersResponseSchema,
  tenantParamsSchema,
  tenantSettingsBodySchema,
  tenantSettingsSchema,
} from './tenants-schemas.ts';
import type { TenantsService } from './tenants-service.ts';

export function registerTenantRoutes(
  app: FastifyInstance,
  deps: { guards: SessionGuards; tenants: TenantsService; staff: StaffService },
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, tenants, staff } = deps;
  const caller = (s: { user: { id: string; email: string } }) => ({ userId: s.user.id, email: s.user.email });

  r.get('/api/v1/me', { schema: { tags: ['account'], response: { 200: meSchema } } }, async (req) => {
    const s = await guards.requireSession(req);
    const [memberships, role] = await Promise.all([tenants.membershipsOf(s.user.id), staff.staffRoleOf(s.user)]);
    const active = memberships.some((m) => m.id === s.activeTenantId) ? s.activeTenantId : null;
    return {
      user: s.user,
      csrfToken: guards.csrfTokenFor(s),
      activeTenantId: active,
      tenants: memberships,
      staff: role !== null,
      superAdmin: role === 'super_admin',
      platformRole: role,
    };
  });

  r.get(
    '/api/v1/tenants/:tenantId/members',
    { schema: { tags: ['tenants'], params: tenantParamsSchema, response: { 200: membersResponseSchema } } },
    async (req) => {
      const s = await guards.requireSession(req);
      return tenants.listMembers(req.params.tenantId, caller(s));
    },
  );

  r.get(
    '/api/v1/tenants/:tenantId/settings',
    { schema: { tags: ['tenants'], params: tenantParamsSchema, response: { 200: tenantSettingsSchema } } },
    async (req) => {
      const s = await guards.requireSession(req);
      return tenants.getSettings(req.params.tenantId, caller(s));
    },
  );

  r.put(
    '/api/v1/tenants/:tenantId/settings',
    {
      schema: {
        tags: ['tenants'],
        params: tenantParamsSchema,
        body: tenantSettingsBodySchema,
        response: { 200: tenantSettingsSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return tenants.updateSettings(req.params.tenantId, caller(s), req.body);
    },
  );

  r.get(
    '/api/v1/tenants/:tenantId/audit-log',
    {
      schema: {
        tags: ['tenants'],
        params: tenantParamsSchema,
        querystring: auditQuerySchema.omit({ tenantId: true }),
        response: { 200: auditPageSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return tenants.auditLog(req.params.tenantId, caller(s), req.query);
    },
  );
}
