import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { auditPageSchema, auditQuerySchema } from '../audit/audit-schemas.ts';
import type { AuditService } from '../audit/audit-service.ts';
import type { SessionGuards } from '../server/plugins/session.ts';
import {
  grantRoleBodySchema,
  platformRoleResponseSchema,
  platformRolesResponseSchema,
  staffTenantsResponseSchema,
} from './staff-schemas.ts';
import type { StaffService } from './staff-service.ts';

export function registerStaffRoutes(
  app: FastifyInstance,
  deps: { guards: SessionGuards; staff: StaffService; audit: AuditService },
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, staff, audit } = deps;
  const tags = ['staff'];

  r.get(
    '/api/v1/staff/audit-log',
    { schema: { tags, querystring: auditQuerySchema, response: { 200: auditPageSchema } } },
    async (req) => {
      await guards.requireStaff(req);
      return audit.list(req.query);
    },
  );

  r.get('/api/v1/staff/tenants', { schema: { tags, response: { 200: staffTenantsResponseSchema } } }, async (req) => {
    await guards.requireStaff(req);
    return { tenants: await staff.listTenants() };
  });

  r.get(
    '/api/v1/staff/platform-roles',
    { schema: { tags, response: { 200: platformRolesResponseSchema } } },
    async (req) => {
      await guards.requireSuperAdmin(req);
      return { roles: await staff.listRoles() };
    },
  );

  r.put(
    '/api/v1/staff/platform-roles',
    { schema: { tags, body: grantRoleBodySchema, response: { 200: platformRoleResponseSchema } } },
    async (req) => {
      const me = await guards.requireSuperAdmin(req);
      return { role: await staff.grantRole(req.body, me.user) };
    },
  );

  r.delete(
    '/api/v1/staff/platform-roles/:userId',
    { schema: { tags, params: z.object({ userId: z.uuid() }) } },
    async (req, reply) => {
      const me = await guards.requireSuperAdmin(req);
      await staff.revokeRole(req.params.userId, me.user);
      return reply.code(204).send();
    },
  );
}
