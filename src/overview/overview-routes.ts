import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { SessionGuards } from '../server/plugins/session.ts';
import { overviewParamsSchema, overviewSchema } from './overview-schemas.ts';
import type { OverviewService } from './overview-service.ts';

export function registerOverviewRoutes(
  app: FastifyInstance,
  deps: { guards: SessionGuards; overview: OverviewService },
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/api/v1/tenants/:tenantId/overview',
    {
      schema: {
        tags: ['tenants'],
        summary: "The tenant's home page: open findings and trend, unfinished scans, assets awaiting proof, CMMC",
        params: overviewParamsSchema,
        response: { 200: overviewSchema },
      },
    },
    async (req) => {
      const s = await deps.guards.requireSession(req);
      return deps.overview.get(req.params.tenantId, { userId: s.user.id, email: s.user.email });
    },
  );
}
