import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { appError } from '../lib/errors.ts';
import type { SessionGuards } from '../server/plugins/session.ts';
import {
  controlDetailSchema,
  controlParamsSchema,
  evidenceFieldsSchema,
  evidenceListSchema,
  evidenceParamsSchema,
  evidenceResponseSchema,
  frameworkDetailSchema,
  frameworkListSchema,
  frameworkParamsSchema,
  listControlsQuerySchema,
} from './compliance-schemas.ts';
import type { ComplianceService } from './compliance-service.ts';
import { attachmentDisposition } from './evidence-files.ts';
import { parseFields, readOneFile } from '../server/multipart.ts';

const TEXT_FIELDS = new Set(['title', 'description', 'effectiveDate', 'expiresAt']);

export async function registerComplianceRoutes(
  app: FastifyInstance,
  deps: { guards: SessionGuards; compliance: ComplianceService; evidenceMaxBytes: number },
): Promise<void> {
  const { guards, compliance, evidenceMaxBytes } = deps;
  const tags = ['compliance'];
  const base = '/api/v1/tenants/:tenantId/frameworks';
  const caller = (s: { user: { id: string; email: string } }) => ({ userId: s.user.id, email: s.user.email });
  const tenantParams = z.object({ tenantId: z.uuid() });
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(base, { schema: { tags, params: tenantParams, response: { 200: frameworkListSchema } } }, async (req) => {
    const s = await guards.requireSession(req);
    return compliance.listFrameworks(req.params.tenantId, caller(s));
  });

  r.get(
    `${base}/:framework`,
    {
      schema: {
        tags,
        params: frameworkParamsSchema,
        querystring: listControlsQuerySchema,
        response: { 200: frameworkDetailSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return compliance.getFramework(req.params.tenantId, caller(s), req.params.framework, req.query);
    },
  );

  r.get(
    `${base}/:framework/controls/:controlId`,
    { schema: { tags, params: controlParamsSchema, response: { 200: controlDetailSchema } } },
    async (req) => {
      const s = await guards.requireSession(req);
      return compliance.getControl(req.params.tenantId, caller(s), req.params.framework, req.params.controlId);
    },
  );

  r.get(
    `${base}/:framework/controls/:controlId/evidence`,
    { schema: { tags, params: controlParamsSchema, response: { 200: evidenceListSchema } } },
    async (req) => {
      const s = await guards.requireSession(req);
      return compliance.listEvidence(req.params.tenantId, caller(s), req.params.framework, req.params.controlId);
    },
  );

  r.get(
    '/api/v1/tenants/:tenantId/evidence/:evidenceId/download',
    { schema: { tags, params: evidenceParamsSchema } },
    async (req, reply) => {
      const s = await guards.requireSession(req);
      const file = await compliance.openEvidence(req.params.tenantId, caller(s), req.params.evidenceId);
      // Always a download, never rendered by the browser: attachment, nosniff and a sandboxing CSP.
      return reply
        .header('content-type', file.contentType)
        .header('content-length', String(file.size))
        .header('content-disposition', attachmentDisposition(file.fileName))
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('cache-control', 'private, no-store')
        .header('x-evidence-sha256', file.sha256)
        .send(file.body);
    },
  );

  r.delete(
    '/api/v1/tenants/:tenantId/evidence/:evidenceId',
    { schema: { tags, params: evidenceParamsSchema, response: { 204: z.null() } } },
    async (req, reply) => {
      const s = await guards.requireSession(req);
      await compliance.deleteEvidence(req.params.tenantId, caller(s), req.params.evidenceId);
      return reply.code(204).send(null);
    },
  );

  // Multipart only here: the parser is registered in this child scope, streaming, one file.
  await app.register(async (scope) => {
    // One byte over the limit: storage refuses at the limit itself; a truncated part never passes.
    // Browsers send file names as raw UTF-8 (busboy's default would read them as Latin-1); the
    // option passes through to busboy, though the plugin's types do not list it.
    const options = {
      defParamCharset: 'utf8',
      limits: { fileSize: evidenceMaxBytes + 1, files: 1, fields: 8, fieldSize: 4096, parts: 10, headerPairs: 100 },
    };
    await scope.register(multipart, options);
    scope.withTypeProvider<ZodTypeProvider>().post(
      `${base}/:framework/controls/:controlId/evidence`,
      {
        schema: {
          tags,
          params: controlParamsSchema,
          consumes: ['multipart/form-data'],
          response: { 201: evidenceResponseSchema },
        },
      },
      async (req, reply) => {
        const s = await guards.requireSession(req);
        if (!req.isMultipart())
          throw appError(
            'unsupported_media_type',
            'Send the evidence as multipart/form-data with the fields first and the file last.',
          );
        const result = await readOneFile(
          req.parts(),
          {
            fields: TEXT_FIELDS,
            missing: () =>
              appError(
                'evidence_file_missing',
                'Attach the evidence file in the form field "file", after the title and dates.',
              ),
          },
          // Fields precede the file, so they are checked before a byte is stored.
          (file, fields) =>
            compliance.uploadEvidence(
              req.params.tenantId,
              caller(s),
              req.params.framework,
              req.params.controlId,
              parseFields(evidenceFieldsSchema, fields),
              file,
            ),
        );
        return reply.code(201).send(result);
      },
    );
  });
}
