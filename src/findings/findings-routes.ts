import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { SessionGuards } from '../server/plugins/session.ts';
import { csvStream, EXPORT_CONTENT_TYPES, exportFilename, jsonStream, sarifStream } from './findings-export.ts';
import {
  bulkStatusBodySchema,
  bulkStatusResponseSchema,
  exportFindingsQuerySchema,
  findingDetailSchema,
  findingListSchema,
  findingParamsSchema,
  listFindingsQuerySchema,
} from './findings-schemas.ts';
import type { FindingsService } from './findings-service.ts';

export function registerFindingRoutes(
  app: FastifyInstance,
  deps: { guards: SessionGuards; findings: FindingsService; baseUrl: string },
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, findings } = deps;
  const tags = ['findings'];
  const base = '/api/v1/tenants/:tenantId/findings';
  const caller = (s: { user: { id: string; email: string } }) => ({ userId: s.user.id, email: s.user.email });
  const tenantParams = z.object({ tenantId: z.uuid() });

  r.get(
    base,
    {
      schema: {
        tags,
        params: tenantParams,
        querystring: listFindingsQuerySchema,
        response: { 200: findingListSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return findings.list(req.params.tenantId, caller(s), req.query);
    },
  );

  r.get(
    `${base}/export`,
    { schema: { tags, params: tenantParams, querystring: exportFindingsQuerySchema } },
    async (req, reply) => {
      const s = await guards.requireSession(req);
      const { format, sort, dir, ...filters } = req.query;
      const { generatedAt, rows } = await findings.openExport(req.params.tenantId, caller(s), { filters, sort, dir });
      const body =
        format === 'csv'
          ? csvStream(rows)
          : format === 'json'
            ? jsonStream(rows, { generatedAt, filters })
            : sarifStream(rows, { baseUrl: deps.baseUrl });
      return reply
        .header('content-type', EXPORT_CONTENT_TYPES[format])
        .header('content-disposition', `attachment; filename="${exportFilename(format, generatedAt)}"`)
        .header('cache-control', 'no-store')
        .send(body);
    },
  );

  r.post(
    `${base}/status`,
    { schema: { tags, params: tenantParams, body: bulkStatusBodySchema, response: { 200: bulkStatusResponseSchema } } },
    async (req) => {
      const s = await guards.requireSession(req);
      return findings.bulkStatus(req.params.tenantId, caller(s), req.body);
    },
  );

  r.get(
    `${base}/:findingId`,
    { schema: { tags, params: findingParamsSchema, response: { 200: findingDetailSchema } } },
    async (req) => {
      const s = await guards.requireSession(req);
      return findings.get(req.params.tenantId, caller(s), req.params.findingId);
    },
  );
}
