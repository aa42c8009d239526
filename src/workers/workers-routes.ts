// Workers API: tenant pages (enrollments, workers, webhook signing secret), the staff route for
// hosted workers, and the public enroll route (the signed worker routes are in lease-routes.ts).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { SessionGuards } from '../server/plugins/session.ts';
import type { EnrollmentService } from './enrollment-service.ts';
import type { WebhookService } from './webhook-service.ts';
import { enrollBodySchema, enrollResponseSchema, WORKER_API_PREFIX } from '../lib/worker-wire.ts';
import type { WorkerAuth } from './worker-auth.ts';
import {
  enrollmentCreatedSchema,
  rotateSecretBodySchema,
  staffEnrollmentBodySchema,
  tenantParamsSchema,
  webhookSecretCreatedSchema,
  webhookSecretStatusSchema,
  workerListSchema,
  workerParamsSchema,
  workerSchema,
} from './workers-schemas.ts';

export function registerWorkersRoutes(
  app: FastifyInstance,
  deps: {
    guards: SessionGuards;
    enrollments: EnrollmentService;
    webhooks: WebhookService;
    workerAuth: WorkerAuth;
    clock: { now(): Date };
  },
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, enrollments, webhooks } = deps;
  const tags = ['workers'];
  const base = '/api/v1/tenants/:tenantId';
  const caller = (s: { user: { id: string; email: string } }) => ({ userId: s.user.id, email: s.user.email });

  r.post(
    `${base}/worker-enrollments`,
    {
      schema: {
        tags,
        summary: 'Create a one-time worker enrollment code (shown once)',
        params: tenantParamsSchema,
        response: { 201: enrollmentCreatedSchema },
      },
    },
    async (req, reply) => {
      const s = await guards.requireSession(req);
      return reply.code(201).send(await enrollments.createEnrollment(req.params.tenantId, caller(s)));
    },
  );

  r.get(
    `${base}/workers`,
    { schema: { tags, params: tenantParamsSchema, response: { 200: workerListSchema } } },
    async (req) => {
      const s = await guards.requireSession(req);
      return enrollments.list(req.params.tenantId, caller(s));
    },
  );

  r.post(
    `${base}/workers/:workerId/revoke`,
    { schema: { tags, params: workerParamsSchema, response: { 200: workerSchema } } },
    async (req) => {
      const s = await guards.requireSession(req);
      return enrollments.revoke(req.params.tenantId, caller(s), req.params.workerId);
    },
  );

  r.get(
    `${base}/webhook-secret`,
    {
      schema: {
        tags,
        summary: 'Whether a webhook signing secret exists (never the secret)',
        params: tenantParamsSchema,
        response: { 200: webhookSecretStatusSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return webhooks.get(req.params.tenantId, caller(s));
    },
  );

  r.post(
    `${base}/webhook-secret`,
    {
      schema: {
        tags,
        summary: 'Generate or rotate the webhook signing secret (shown once)',
        params: tenantParamsSchema,
        body: rotateSecretBodySchema.optional(),
        response: { 201: webhookSecretCreatedSchema },
      },
    },
    async (req, reply) => {
      const s = await guards.requireSession(req);
      return reply
        .code(201)
        .send(
          await webhooks.rotate(
            req.params.tenantId,
            caller(s),
            req.body?.graceHours ?? rotateSecretBodySchema.parse({}).graceHours,
          ),
        );
    },
  );

  r.post(
    '/api/v1/staff/worker-enrollments',
    {
      schema: {
        tags: ['staff'],
        summary: 'Create an enrollment code for a Rampart-hosted worker serving a tenant',
        body: staffEnrollmentBodySchema,
        response: { 201: enrollmentCreatedSchema },
      },
    },
    async (req, reply) => {
      const me = await guards.requireSuperAdmin(req);
      return reply.code(201).send(await enrollments.createHostedEnrollment(req.body.tenantId, caller(me)));
    },
  );

  // Public: no session, hence no CSRF; the code is the credential and failures are throttled.
  r.post(
    `${WORKER_API_PREFIX}/enroll`,
    {
      schema: {
        tags: ['worker'],
        summary: 'Redeem an enrollment code for a worker token (shown once)',
        body: enrollBodySchema,
        response: { 201: enrollResponseSchema },
      },
    },
    async (req, reply) => {
      return reply.code(201).send(await enrollments.enroll(req.ip, req.body));
    },
  );
}
