// Staff → mesh client console routes (super-admin):
//   GET  /api/v1/staff/mesh/console/peers   configured peers, presence booleans only
//   POST /api/v1/staff/mesh/console/send    one signed call through the outbound client (audited)
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AuditService } from '../audit/index.ts';
import type { SessionGuards } from '../server/plugins/session.ts';
import {
  consolePeersResponseSchema,
  consoleSendBodySchema,
  consoleSendResponseSchema,
} from './mesh-console-schemas.ts';
import type { MeshConsoleService } from './mesh-console-service.ts';

export function registerMeshConsoleRoutes(
  app: FastifyInstance,
  deps: { guards: SessionGuards; console: MeshConsoleService; audit: AuditService },
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, audit } = deps;
  const tags = ['staff'];

  r.get(
    '/api/v1/staff/mesh/console/peers',
    {
      schema: {
        tags,
        summary: 'Configured mesh peers, presence only (super-admin)',
        response: { 200: consolePeersResponseSchema },
      },
    },
    async (req) => {
      await guards.requireSuperAdmin(req);
      return deps.console.peers();
    },
  );

  r.post(
    '/api/v1/staff/mesh/console/send',
    {
      schema: {
        tags,
        summary: 'One signed call to a peer through the outbound mesh client (super-admin, audited)',
        body: consoleSendBodySchema,
        response: { 200: consoleSendResponseSchema },
      },
    },
    async (req) => {
      const me = await guards.requireSuperAdmin(req);
      const result = await deps.console.send(req.body);
      // The payload is not audited (it may carry customer data); what was called, and the answer's status, are.
      await audit.record({
        actorUserId: me.user.id,
        actorEmail: me.user.email,
        action: 'mesh.console_call',
        targetType: 'mesh_peer',
        targetId: result.peer,
        details: {
          flow: result.flow,
          requestId: result.requestId,
          reusedRequestId: Boolean(req.body.requestId),
          ok: result.ok,
          httpStatus: result.httpStatus,
          error: result.error,
        },
      });
      return result;
    },
  );
}
