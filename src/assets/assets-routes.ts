import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { SessionGuards } from '../server/plugins/session.ts';
import {
  assetDetailSchema,
  assetListSchema,
  assetParamsSchema,
  assetResponseSchema,
  bypassBodySchema,
  createAssetBodySchema,
  listAssetsQuerySchema,
  updateAssetBodySchema,
  verifyResponseSchema,
} from './assets-schemas.ts';
import type { AssetsService } from './assets-service.ts';

export function registerAssetRoutes(app: FastifyInstance, deps: { guards: SessionGuards; assets: AssetsService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, assets } = deps;
  const tags = ['assets'];
  const base = '/api/v1/tenants/:tenantId/assets';
  const caller = (s: { user: { id: string; email: string } }) => ({ userId: s.user.id, email: s.user.email });
  const tenantParams = z.object({ tenantId: z.uuid() });

  r.get(base, { schema: { tags, params: tenantParams, querystring: listAssetsQuerySchema, response: { 200: assetListSchema } } }, async (req) => {
    const s = await guards.requireSession(req);
    return assets.list(req.params.tenantId, caller(s), req.query);
  });

  r.post(base, { schema: { tags, params: tenantParams, body: createAssetBodySchema, response: { 201: assetResponseSchema } } }, async (req, reply) => {
    const s = await guards.requireSession(req);
    return reply.code(201).send(await assets.create(req.params.tenantId, caller(s), req.body));
  });

  r.get(`${base}/:assetId`, { schema: { tags, params: assetParamsSchema, response: { 200: assetDetailSchema } } }, async (req) => {
    const s = await guards.requireSession(req);
    return assets.get(req.params.tenantId, caller(s), req.params.assetId);
  });

  r.patch(`${base}/:assetId`, { schema: { tags, params: assetParamsSchema, body: updateAssetBodySchema, response: { 200: assetResponseSchema } } }, async (req) => {
    const s = await guards.requireSession(req);
    return assets.update(req.params.tenantId, caller(s), req.params.assetId, req.body);
  });

  r.post(`${base}/:assetId/verify`, { schema: { tags, params: assetParamsSchema, response: { 200: verifyResponseSchema } } }, async (req) => {
    const s = await guards.requireSession(req);
    return assets.verifyNow(req.params.tenantId, caller(s), req.params.assetId);
  });

  for (const [action, archived] of [['archive', true], ['restore', false]] as const) {
    r.post(`${base}/:assetId/${action}`, { schema: { tags, params: assetParamsSchema, response: { 200: assetResponseSchema } } }, async (req) => {
      const s = await guards.requireSession(req);
      return assets.setArchived(req.params.tenantId, caller(s), req.params.assetId, archived);
    });
  }

  const staffParams = z.object({ assetId: z.uuid() });
  r.post('/api/v1/staff/assets/:assetId/bypass', { schema: { tags: ['staff'], params: staffParams, body: bypassBodySchema, response: { 200: assetResponseSchema } } }, async (req) => {
    const me = await guards.requireSuperAdmin(req);
    return assets.bypass(req.params.assetId, caller(me), req.body.reason, false);
  });
  r.post('/api/v1/staff/assets/:assetId/bypass/revoke', { schema: { tags: ['staff'], params: staffParams, body: bypassBodySchema, response: { 200: assetResponseSchema } } }, async (req) => {
    const me = await guards.requireSuperAdmin(req);
    return assets.bypass(req.params.assetId, caller(me), req.body.reason, true);
  });
}
