import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { SessionGuards } from '../server/plugins/session.ts';
import { isAppError } from '../lib/errors.ts';
import {
  ARCHIVE_CONTENT_TYPES,
  archiveReplaceQuerySchema,
  archiveUploadQuerySchema,
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

export function registerAssetRoutes(
  app: FastifyInstance,
  deps: { guards: SessionGuards; assets: AssetsService },
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, assets } = deps;
  const tags = ['assets'];
  const base = '/api/v1/tenants/:tenantId/assets';
  const caller = (s: { user: { id: string; email: string } }) => ({ userId: s.user.id, email: s.user.email });
  const tenantParams = z.object({ tenantId: z.uuid() });

  r.get(
    base,
    { schema: { tags, params: tenantParams, querystring: listAssetsQuerySchema, response: { 200: assetListSchema } } },
    async (req) => {
      const s = await guards.requireSession(req);
      return assets.list(req.params.tenantId, caller(s), req.query);
    },
  );

  r.post(
    base,
    { schema: { tags, params: tenantParams, body: createAssetBodySchema, response: { 201: assetResponseSchema } } },
    async (req, reply) => {
      const s = await guards.requireSession(req);
      return reply.code(201).send(await assets.create(req.params.tenantId, caller(s), req.body));
    },
  );

  r.get(
    `${base}/:assetId`,
    { schema: { tags, params: assetParamsSchema, response: { 200: assetDetailSchema } } },
    async (req) => {
      const s = await guards.requireSession(req);
      return assets.get(req.params.tenantId, caller(s), req.params.assetId);
    },
  );

  r.patch(
    `${base}/:assetId`,
    {
      schema: { tags, params: assetParamsSchema, body: updateAssetBodySchema, response: { 200: assetResponseSchema } },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return assets.update(req.params.tenantId, caller(s), req.params.assetId, req.body);
    },
  );

  r.post(
    `${base}/:assetId/verify`,
    { schema: { tags, params: assetParamsSchema, response: { 200: verifyResponseSchema } } },
    async (req) => {
      const s = await guards.requireSession(req);
      return assets.verifyNow(req.params.tenantId, caller(s), req.params.assetId);
    },
  );

  for (const [action, archived] of [
    ['archive', true],
    ['restore', false],
  ] as const) {
    r.post(
      `${base}/:assetId/${action}`,
      { schema: { tags, params: assetParamsSchema, response: { 200: assetResponseSchema } } },
      async (req) => {
        const s = await guards.requireSession(req);
        return assets.setArchived(req.params.tenantId, caller(s), req.params.assetId, archived);
      },
    );
  }

  // Image archives: the request body is the file, streamed to storage as it arrives (never
  // buffered, never subject to the 1 MiB JSON limit). The parsers live in this scope only.
  void app.register(async (scope) => {
    for (const type of ARCHIVE_CONTENT_TYPES) {
      if (!scope.hasContentTypeParser(type))
        scope.addContentTypeParser(type, (_req, payload, done) => done(null, payload));
    }
    const rs = scope.withTypeProvider<ZodTypeProvider>();
    const declared = (req: FastifyRequest) => {
      const n = Number(req.headers['content-length']);
      return Number.isSafeInteger(n) && n >= 0 ? n : null;
    };
    const stream = (req: FastifyRequest): Readable =>
      req.body instanceof Readable ? req.body : Readable.from(Buffer.isBuffer(req.body) ? [req.body] : []);
    // A refused upload may still be arriving: answer and close rather than read the rest.
    const refuse = async <T>(reply: FastifyReply, fn: () => Promise<T>): Promise<T> => {
      try {
        return await fn();
      } catch (e) {
        if (isAppError(e) && (e.code === 'payload_too_large' || e.code === 'invalid_image_archive'))
          void reply.header('connection', 'close');
        throw e;
      }
    };

    rs.post(
      `${base}/archives`,
      {
        schema: {
          tags,
          params: tenantParams,
          querystring: archiveUploadQuerySchema,
          response: { 201: assetResponseSchema },
        },
      },
      async (req, reply) => {
        const s = await guards.requireSession(req);
        const created = await refuse(reply, () =>
          assets.createFromArchive(req.params.tenantId, caller(s), req.query, stream(req), declared(req)),
        );
        return reply.code(201).send(created);
      },
    );

    rs.put(
      `${base}/:assetId/archive`,
      {
        schema: {
          tags,
          params: assetParamsSchema,
          querystring: archiveReplaceQuerySchema,
          response: { 200: assetResponseSchema },
        },
      },
      async (req, reply) => {
        const s = await guards.requireSession(req);
        return refuse(reply, () =>
          assets.replaceArchive(
            req.params.tenantId,
            caller(s),
            req.params.assetId,
            req.query,
            stream(req),
            declared(req),
          ),
        );
      },
    );
  });

  r.get(`${base}/:assetId/archive`, { schema: { tags, params: assetParamsSchema } }, async (req, reply) => {
    const s = await guards.requireSession(req);
    const a = await assets.openArchive(req.params.tenantId, caller(s), req.params.assetId);
    const ascii = a.fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
    return reply
      .type(a.format === 'tar+gzip' ? 'application/gzip' : 'application/x-tar')
      .header('content-length', a.size)
      .header(
        'content-disposition',
        `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(a.fileName)}`,
      )
      .send(a.body);
  });

  const staffParams = z.object({ assetId: z.uuid() });
  r.post(
    '/api/v1/staff/assets/:assetId/bypass',
    {
      schema: { tags: ['staff'], params: staffParams, body: bypassBodySchema, response: { 200: assetResponseSchema } },
    },
    async (req) => {
      const me = await guards.requireSuperAdmin(req);
      return assets.bypass(req.params.assetId, caller(me), req.body.reason, false);
    },
  );
  r.post(
    '/api/v1/staff/assets/:assetId/bypass/revoke',
    {
      schema: { tags: ['staff'], params: staffParams, body: bypassBodySchema, response: { 200: assetResponseSchema } },
    },
    async (req) => {
      const me = await guards.requireSuperAdmin(req);
      return assets.bypass(req.params.assetId, caller(me), req.body.reason, true);
    },
  );
}
