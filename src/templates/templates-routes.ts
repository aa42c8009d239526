import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { SessionGuards } from '../server/plugins/session.ts';
import {
  templateBodySchema,
  templateDetailSchema,
  templateListSchema,
  templateParamsSchema,
  templateTenantParamsSchema,
} from './templates-schemas.ts';
import type { TemplatesService } from './templates-service.ts';

/**
 * A 64 KiB template and 512 KiB of payload files grow when escaped into JSON (newlines, quotes);
 * this leaves room for that.
 */
const BODY_LIMIT = 2 * 1024 * 1024;

export function registerTemplateRoutes(
  app: FastifyInstance,
  deps: { guards: SessionGuards; templates: TemplatesService },
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, templates } = deps;
  const caller = (s: { user: { id: string; email: string } }) => ({ userId: s.user.id, email: s.user.email });
  const tags = ['scan templates'];
  const base = '/api/v1/tenants/:tenantId/scan-templates';

  r.get(
    base,
    {
      schema: {
        tags,
        summary: "The tenant's scan templates (without YAML), the built-in ones, usage and limits",
        params: templateTenantParamsSchema,
        response: { 200: templateListSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return templates.list(req.params.tenantId, caller(s));
    },
  );

  r.post(
    base,
    {
      bodyLimit: BODY_LIMIT,
      schema: {
        tags,
        summary: 'Upload a template (nuclei-subset YAML, validated); owner or admin',
        params: templateTenantParamsSchema,
        body: templateBodySchema,
        response: { 201: templateDetailSchema },
      },
    },
    async (req, reply) => {
      const s = await guards.requireSession(req);
      return reply.code(201).send(await templates.create(req.params.tenantId, caller(s), req.body));
    },
  );

  r.get(
    `${base}/:templateId`,
    {
      schema: {
        tags,
        summary: 'A scan template with its YAML',
        params: templateParamsSchema,
        response: { 200: templateDetailSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return templates.get(req.params.tenantId, caller(s), req.params.templateId);
    },
  );

  r.put(
    `${base}/:templateId`,
    {
      bodyLimit: BODY_LIMIT,
      schema: {
        tags,
        summary: "Replace a template's YAML (same template id); owner or admin",
        params: templateParamsSchema,
        body: templateBodySchema,
        response: { 200: templateDetailSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return templates.replace(req.params.tenantId, caller(s), req.params.templateId, req.body);
    },
  );

  r.delete(
    `${base}/:templateId`,
    {
      schema: {
        tags,
        summary: 'Delete a scan template; owner or admin',
        params: templateParamsSchema,
        response: { 204: z.null() },
      },
    },
    async (req, reply) => {
      const s = await guards.requireSession(req);
      await templates.remove(req.params.tenantId, caller(s), req.params.templateId);
      return reply.code(204).send(null);
    },
  );
}
