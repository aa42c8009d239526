// "Import results" and the scan page's report/ingestion panel (/api/v1/tenants/:tenantId/...).
import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ConcurrencyLimiter } from '../lib/concurrency.ts';
import { appError } from '../lib/errors.ts';
import type { SessionGuards } from '../server/plugins/session.ts';
import type { ImportsService } from './ingestion-imports.ts';
import {
  importFieldsSchema,
  importListQuerySchema,
  importListSchema,
  importParamsSchema,
  importResponseSchema,
  scanIngestionParamsSchema,
  scanIngestionsSchema,
  tenantParamsSchema,
} from './ingestion-schemas.ts';
import { parseFields, readOneFile } from '../server/multipart.ts';

const TEXT_FIELDS = new Set(['assetId', 'format']);
/** Room for the multipart framing and the text fields around the file. */
const MULTIPART_OVERHEAD = 64 * 1024;

export async function registerIngestionRoutes(
  app: FastifyInstance,
  deps: { guards: SessionGuards; imports: ImportsService; reportMaxBytes: number; fileAnalysis: ConcurrencyLimiter },
): Promise<void> {
  const { guards, imports, reportMaxBytes, fileAnalysis } = deps;
  const tags = ['imports'];
  const base = '/api/v1/tenants/:tenantId';
  const caller = (s: { user: { id: string; email: string } }) => ({ userId: s.user.id, email: s.user.email });
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    `${base}/imports`,
    {
      schema: {
        tags,
        params: tenantParamsSchema,
        querystring: importListQuerySchema,
        response: { 200: importListSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return imports.list(req.params.tenantId, caller(s), req.query);
    },
  );

  r.get(
    `${base}/imports/:ingestionId`,
    { schema: { tags, params: importParamsSchema, response: { 200: importResponseSchema } } },
    async (req) => {
      const s = await guards.requireSession(req);
      return { import: await imports.get(req.params.tenantId, caller(s), req.params.ingestionId) };
    },
  );

  r.get(
    `${base}/scans/:scanId/ingestions`,
    { schema: { tags, params: scanIngestionParamsSchema, response: { 200: scanIngestionsSchema } } },
    async (req) => {
      const s = await guards.requireSession(req);
      return imports.forScan(req.params.tenantId, caller(s), req.params.scanId);
    },
  );

  // Multipart only here: the parser is registered in this child scope, streaming, one file.
  await app.register(async (scope) => {
    // One byte over the limit: storage refuses at the limit itself; a truncated part never passes.
    const options = {
      defParamCharset: 'utf8',
      limits: { fileSize: reportMaxBytes + 1, files: 1, fields: 4, fieldSize: 256, parts: 6, headerPairs: 100 },
    };
    await scope.register(multipart, options);
    scope.withTypeProvider<ZodTypeProvider>().post(
      `${base}/imports`,
      {
        schema: {
          tags,
          params: tenantParamsSchema,
          consumes: ['multipart/form-data'],
          response: { 202: importResponseSchema },
        },
      },
      async (req, reply) => {
        const s = await guards.requireSession(req);
        if (!req.isMultipart())
          throw appError(
            'unsupported_media_type',
            'Send the report as multipart/form-data: the fields assetId and format first, the file last.',
          );
        // A declared length far over the limit is refused before a byte is read.
        const declared = Number(req.headers['content-length']);
        if (Number.isFinite(declared) && declared > reportMaxBytes + MULTIPART_OVERHEAD) throw imports.tooLarge();
        // The server-wide budget of file analyses (shared with the explainer), per user and in
        // all: refused with 429 before a byte of the file is read, never queued.
        const slot = fileAnalysis.acquire(s.user.id);
        try {
          const result = await readOneFile(
            req.parts(),
            {
              fields: TEXT_FIELDS,
              missing: () =>
                appError(
                  'import_file_missing',
                  'Attach the report in the form field "file", after assetId and format.',
                ),
            },
            // Fields precede the file, so they are checked before a byte is stored.
            async (file, fields) => {
              const input = parseFields(importFieldsSchema, fields);
              await imports.precheck(req.params.tenantId, caller(s), input.assetId);
              return imports.importReport(req.params.tenantId, caller(s), input, file);
            },
          );
          return reply.code(202).send({ import: result });
        } finally {
          slot.release();
        }
      },
    );
  });
}
