import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { SessionGuards } from '../server/plugins/session.ts';
import {
  s3SettingsBodySchema,
  storageParamsSchema,
  storageSettingsSchema,
  storageTestBodySchema,
  storageTestResponseSchema,
} from './storage-schemas.ts';
import type { StorageSettingsService } from './storage-service.ts';

export function registerStorageRoutes(
  app: FastifyInstance,
  deps: { guards: SessionGuards; settings: StorageSettingsService },
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, settings } = deps;
  const tags = ['storage'];
  const base = '/api/v1/tenants/:tenantId/storage';
  const caller = (s: { user: { id: string; email: string } }) => ({ userId: s.user.id, email: s.user.email });

  r.get(
    base,
    { schema: { tags, params: storageParamsSchema, response: { 200: storageSettingsSchema } } },
    async (req) => {
      const s = await guards.requireSession(req);
      return settings.get(req.params.tenantId, caller(s));
    },
  );

  r.put(
    base,
    {
      schema: {
        tags,
        params: storageParamsSchema,
        body: s3SettingsBodySchema,
        response: { 200: storageSettingsSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return settings.put(req.params.tenantId, caller(s), req.body);
    },
  );

  r.delete(
    base,
    { schema: { tags, params: storageParamsSchema, response: { 200: storageSettingsSchema } } },
    async (req) => {
      const s = await guards.requireSession(req);
      return settings.remove(req.params.tenantId, caller(s));
    },
  );

  r.post(
    `${base}/test`,
    {
      schema: {
        tags,
        params: storageParamsSchema,
        body: storageTestBodySchema,
        response: { 200: storageTestResponseSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return settings.test(req.params.tenantId, caller(s), req.body);
    },
  );
}
