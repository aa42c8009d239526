// Staff routes of the embedded hosted worker: start one for a tenant, list them all. Super-admins
// only, like the hosted enrollment code: a hosted worker scans the tenant's assets.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { SessionGuards } from '../server/plugins/session.ts';
import { hostedWorkerBodySchema, hostedWorkerListSchema, hostedWorkerSchema } from './hosted-schemas.ts';
import type { HostedWorkers } from './hosted-service.ts';

export function registerHostedWorkerRoutes(
  app: FastifyInstance,
  deps: { guards: SessionGuards; hostedWorkers: HostedWorkers },
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, hostedWorkers } = deps;
  const tags = ['staff'];

  r.post(
    '/api/v1/staff/hosted-workers',
    {
      schema: {
        tags,
        summary: 'Start a Rampart-hosted worker for a tenant (run in-process when EMBEDDED_WORKER is on)',
        body: hostedWorkerBodySchema,
        response: { 201: hostedWorkerSchema },
      },
    },
    async (req, reply) => {
      const me = await guards.requireSuperAdmin(req);
      return reply
        .code(201)
        .send(await hostedWorkers.create(req.body.tenantId, { userId: me.user.id, email: me.user.email }));
    },
  );

  r.get(
    '/api/v1/staff/hosted-workers',
    {
      schema: {
        tags,
        summary: 'Hosted workers of every tenant, and whether this server process runs them',
        response: { 200: hostedWorkerListSchema },
      },
    },
    async (req) => {
      await guards.requireSuperAdmin(req);
      return hostedWorkers.list();
    },
  );
}
