import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { safeEqual } from '../lib/crypto.ts';
import { appError } from '../lib/errors.ts';
import type { SessionGuards } from '../server/plugins/session.ts';
import {
  createScanBodySchema,
  createScheduleBodySchema,
  cronPreviewQuerySchema,
  cronPreviewSchema,
  listScansQuerySchema,
  listSchedulesQuerySchema,
  scanDetailSchema,
  scanListSchema,
  scanParamsSchema,
  scanUsageSchema,
  scheduleDetailSchema,
  scheduleListSchema,
  scheduleParamsSchema,
  scheduleResponseSchema,
  tenantParamsSchema,
  tickResultSchema,
  updateScheduleBodySchema,
} from './scans-schemas.ts';
import type { ScansService } from './scans-service.ts';
import type { SchedulesService } from './schedules-service.ts';

export const SCHEDULES_TICK_PATH = '/api/public/hooks/scan-schedules-tick';

/** Cron hooks: `Authorization: Bearer <CRON_SECRET>` or `x-cron-secret`, compared in constant time; an unset secret keeps the hook shut. */
export function cronAuthorized(req: Pick<FastifyRequest, 'headers'>, secret: string | undefined): boolean {
  if (!secret) return false;
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && auth.startsWith('Bearer ') && safeEqual(auth.slice(7), secret)) return true;
  const header = req.headers['x-cron-secret'];
  return typeof header === 'string' && safeEqual(header, secret);
}

export function registerScanRoutes(
  app: FastifyInstance,
  deps: { guards: SessionGuards; scans: ScansService; schedules: SchedulesService; cronSecret: string | undefined },
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, scans, schedules } = deps;
  const caller = (s: { user: { id: string; email: string } }) => ({ userId: s.user.id, email: s.user.email });

  // ---- scans
  const tags = ['scans'];
  const base = '/api/v1/tenants/:tenantId/scans';

  r.get(
    base,
    {
      schema: {
        tags,
        params: tenantParamsSchema,
        querystring: listScansQuerySchema,
        response: { 200: scanListSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return scans.list(req.params.tenantId, caller(s), req.query);
    },
  );

  r.post(
    base,
    {
      schema: {
        tags,
        summary: 'Queue a scan (optionally split into 2–8 chunks)',
        params: tenantParamsSchema,
        body: createScanBodySchema,
        response: { 201: scanDetailSchema },
      },
    },
    async (req, reply) => {
      const s = await guards.requireSession(req);
      return reply.code(201).send(await scans.create(req.params.tenantId, caller(s), req.body));
    },
  );

  r.get(
    '/api/v1/tenants/:tenantId/scan-usage',
    {
      schema: {
        tags,
        summary: "Today's scan quota use (UTC) and the tenant's limits",
        params: tenantParamsSchema,
        response: { 200: scanUsageSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return scans.usage(req.params.tenantId, caller(s));
    },
  );

  r.get(
    `${base}/:scanId`,
    { schema: { tags, params: scanParamsSchema, response: { 200: scanDetailSchema } } },
    async (req) => {
      const s = await guards.requireSession(req);
      return scans.get(req.params.tenantId, caller(s), req.params.scanId);
    },
  );

  r.post(
    `${base}/:scanId/cancel`,
    {
      schema: {
        tags,
        summary: 'Cancel a scan and its unfinished chunks',
        params: scanParamsSchema,
        response: { 200: scanDetailSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return scans.cancel(req.params.tenantId, caller(s), req.params.scanId);
    },
  );

  // ---- schedules
  const stags = ['scan schedules'];
  const sbase = '/api/v1/tenants/:tenantId/scan-schedules';

  r.get(
    sbase,
    {
      schema: {
        tags: stags,
        params: tenantParamsSchema,
        querystring: listSchedulesQuerySchema,
        response: { 200: scheduleListSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return schedules.list(req.params.tenantId, caller(s), req.query);
    },
  );

  r.post(
    sbase,
    {
      schema: {
        tags: stags,
        params: tenantParamsSchema,
        body: createScheduleBodySchema,
        response: { 201: scheduleResponseSchema },
      },
    },
    async (req, reply) => {
      const s = await guards.requireSession(req);
      return reply.code(201).send(await schedules.create(req.params.tenantId, caller(s), req.body));
    },
  );

  r.get(
    `${sbase}/preview`,
    {
      schema: {
        tags: stags,
        summary: 'The next runs of a cron expression in a time zone',
        params: tenantParamsSchema,
        querystring: cronPreviewQuerySchema,
        response: { 200: cronPreviewSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return schedules.preview(req.params.tenantId, caller(s), req.query);
    },
  );

  r.get(
    `${sbase}/:scheduleId`,
    { schema: { tags: stags, params: scheduleParamsSchema, response: { 200: scheduleDetailSchema } } },
    async (req) => {
      const s = await guards.requireSession(req);
      return schedules.get(req.params.tenantId, caller(s), req.params.scheduleId);
    },
  );

  r.patch(
    `${sbase}/:scheduleId`,
    {
      schema: {
        tags: stags,
        params: scheduleParamsSchema,
        body: updateScheduleBodySchema,
        response: { 200: scheduleResponseSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return schedules.update(req.params.tenantId, caller(s), req.params.scheduleId, req.body);
    },
  );

  for (const [action, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    r.post(
      `${sbase}/:scheduleId/${action}`,
      { schema: { tags: stags, params: scheduleParamsSchema, response: { 200: scheduleResponseSchema } } },
      async (req) => {
        const s = await guards.requireSession(req);
        return schedules.update(req.params.tenantId, caller(s), req.params.scheduleId, { enabled });
      },
    );
  }

  r.delete(
    `${sbase}/:scheduleId`,
    { schema: { tags: stags, params: scheduleParamsSchema, response: { 204: z.null() } } },
    async (req, reply) => {
      const s = await guards.requireSession(req);
      await schedules.remove(req.params.tenantId, caller(s), req.params.scheduleId);
      return reply.code(204).send(null);
    },
  );

  // ---- cron hook (POST /api/public/hooks/scan-schedules-tick; docs/operations.md)
  r.post(
    SCHEDULES_TICK_PATH,
    {
      schema: {
        tags: ['cron'],
        summary: 'Dispatch due scan schedules (each exactly once)',
        response: { 200: tickResultSchema },
      },
      // Authenticated before anything else runs, body included.
      onRequest: async (req) => {
        if (!cronAuthorized(req, deps.cronSecret))
          throw appError('Unauthorized', 'Send Authorization: Bearer <CRON_SECRET> or x-cron-secret.');
        // The hook reads no body; schedulers that label an empty body as JSON are not refused for it.
        if (!req.headers['content-length'] || req.headers['content-length'] === '0') delete req.headers['content-type'];
      },
    },
    async () => schedules.tick(),
  );
}
