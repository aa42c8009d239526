// Staff → mesh health routes:
//   GET  /api/v1/staff/mesh/health?window=24h|7d|30d   getMeshHealthHistory (super-admin)
//   POST /api/v1/staff/mesh/health/sweep               runMeshHealthSweep (super-admin), NDJSON stream
//   GET  /api/v1/staff/mesh/self                       SVC_SELF_NAME for export file names (staff)
// The sweep answers 200 `application/x-ndjson` at once and writes one JSON object per line as
// results arrive: {"type":"start",...}, one {"type":"result",...} per configured peer, then
// {"type":"done",...}, or {"type":"error",...} instead of the done line when the sweep stops
// unexpectedly (docs/mesh.md "Staff tools"). Access errors come before the stream, as ordinary
// JSON errors.
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AuditService } from '../audit/index.ts';
import type { SessionGuards } from '../server/plugins/session.ts';
import {
  healthQuerySchema,
  healthResponseSchema,
  selfInfoSchema,
  sweepBodySchema,
  type SweepLine,
} from './mesh-health-schemas.ts';
import type { MeshHealthService } from './mesh-health-service.ts';

export function registerMeshHealthRoutes(
  app: FastifyInstance,
  deps: { guards: SessionGuards; health: MeshHealthService; audit: AuditService; selfName: string },
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, health, audit } = deps;
  const tags = ['staff'];

  r.get(
    '/api/v1/staff/mesh/health',
    {
      schema: {
        tags,
        summary: 'Mesh health rollup per peer over 24h, 7d or 30d (super-admin)',
        querystring: healthQuerySchema,
        response: { 200: healthResponseSchema },
      },
    },
    async (req) => {
      await guards.requireSuperAdmin(req);
      return health.health(req.query.window);
    },
  );

  r.get(
    '/api/v1/staff/mesh/self',
    { schema: { tags, summary: 'This server’s mesh name (export file prefix)', response: { 200: selfInfoSchema } } },
    async (req) => {
      await guards.requireStaff(req);
      return { selfName: deps.selfName };
    },
  );

  r.post(
    '/api/v1/staff/mesh/health/sweep',
    {
      schema: {
        tags,
        summary: 'Signed ping to every configured peer (super-admin); streams NDJSON lines as results arrive',
        body: sweepBodySchema,
      },
    },
    async (req, reply) => {
      const me = await guards.requireSuperAdmin(req);
      const { timeoutMs } = req.body;
      await audit.record({
        actorUserId: me.user.id,
        actorEmail: me.user.email,
        action: 'mesh.health_sweep',
        targetType: 'mesh',
        targetId: null,
        details: { timeoutMs },
      });
      const stream = new PassThrough();
      void health
        .sweep({ timeoutMs }, (line) => {
          if (!stream.destroyed) stream.write(`${JSON.stringify(line)}\n`);
        })
        .catch((err: unknown) => {
          req.log.error({ err }, 'mesh health sweep failed');
          const line: SweepLine = {
            type: 'error',
            error: 'internal_error',
            message:
              'The sweep stopped unexpectedly. The results above stand; peers without a result may not have been pinged.',
          };
          if (!stream.destroyed) stream.write(`${JSON.stringify(line)}\n`);
        })
        .finally(() => stream.end());
      return reply
        .header('content-type', 'application/x-ndjson; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('x-accel-buffering', 'no')
        .send(stream);
    },
  );
}
