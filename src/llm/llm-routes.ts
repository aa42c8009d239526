// Routes of the language-model helpers (docs/llm.md):
//   GET    /api/v1/staff/llm/status                                  staff: {configured} (never the model, URL or key)
//   POST   /api/v1/tenants/:tenantId/llm/explain                      multipart `file` → text/event-stream
//   GET    /api/v1/tenants/:tenantId/llm/explanations                 the caller's own history
//   GET    /api/v1/tenants/:tenantId/llm/explanations/:explanationId
//   GET    /api/v1/tenants/:tenantId/llm/explanations/:explanationId/file   the uploaded result file (attachment)
//   DELETE /api/v1/tenants/:tenantId/llm/explanations/:explanationId        (with its file)
//   POST   /api/v1/tenants/:tenantId/llm/evidence-review              multipart `files` (≤8), `notes`, `requirements`? → JSON, or SSE preliminary/done
//   POST   /api/v1/tenants/:tenantId/llm/device-check/explain         JSON {pastedOutput?, notes?, hostnames?} → text/event-stream
// A client that hangs up (the stop button) aborts the upstream model call.
import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ConcurrencyLimiter } from '../lib/concurrency.ts';
import { appError } from '../lib/errors.ts';
import type { SessionGuards } from '../server/plugins/session.ts';
import { clientGone, createEventStream, logFallback, sendAnswerStream } from './llm-answer.ts';
import { DEVICE_NOTES_MAX, PASTED_OUTPUT_MAX } from './llm-device-check.ts';
import { llmError } from './llm-errors.ts';
import { uploadedFileName, EXTRACT_LIMITS, type UploadedFile } from './llm-extract.ts';
import { LlmAbortedError } from './llm-gateway.ts';
import {
  evidenceReviewSchema,
  explanationDetailSchema,
  explanationListSchema,
  llmExplanationParamsSchema,
  llmStatusSchema,
  llmTenantParamsSchema,
  reviewRequirementSchema,
  type EvidenceReview,
  type ReviewRequirement,
} from './llm-schemas.ts';
import { EXPLAIN_MAX_BYTES, type LlmService } from './llm-service.ts';
import { readAll, readOneFile, readUpload } from '../server/multipart.ts';

const MULTIPART_OVERHEAD = 64 * 1024;
const NOTES_MAX = 4_000;

const cancelled = () => appError('llm_cancelled', 'The request was cancelled.');

/** Content-Disposition for a download: a plain ASCII name, and the exact name per RFC 5987. */
export function attachmentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\%;]/g, '_').trim() || 'result-file';
  const exact = encodeURIComponent(fileName).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`;
}

const REVIEW_FIELDS: ReadonlySet<string> = new Set(['notes', 'requirements']);

function reviewNotes(value: string): string {
  if (value.length > NOTES_MAX)
    throw appError('validation_failed', `Notes are limited to ${NOTES_MAX} characters.`, {
      details: [{ path: 'notes', message: `At most ${NOTES_MAX} characters.` }],
    });
  return value;
}

/** The review's own requirements, as a JSON form field. */
function reviewRequirements(value: string): ReviewRequirement[] {
  let raw: unknown;
  try {
    raw = JSON.parse(value);
  } catch {
    throw appError('validation_failed', 'The requirements field is not valid JSON.', {
      details: [{ path: 'requirements', message: 'Not valid JSON.' }],
    });
  }
  const parsed = z.array(reviewRequirementSchema).min(1).max(50).safeParse(raw);
  if (!parsed.success)
    throw appError('validation_failed', 'The requirements are not valid.', {
      details: parsed.error.issues.map((i) => ({
        path: ['requirements', ...i.path].join('.'),
        message: i.message,
      })),
    });
  return parsed.data;
}

const deviceCheckBodySchema = z
  .object({
    pastedOutput: z.string().max(PASTED_OUTPUT_MAX).optional(),
    notes: z.string().max(DEVICE_NOTES_MAX).optional(),
    hostnames: z.array(z.string().trim().min(1).max(253)).max(200).optional(),
  })
  .strict();

export async function registerLlmRoutes(
  app: FastifyInstance,
  deps: { guards: SessionGuards; llm: LlmService; fileAnalysis: ConcurrencyLimiter },
): Promise<void> {
  const { guards, llm, fileAnalysis } = deps;
  const tags = ['language-model helpers'];
  const base = '/api/v1/tenants/:tenantId/llm';
  const caller = (s: { user: { id: string; email: string } }) => ({ userId: s.user.id, email: s.user.email });
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/api/v1/staff/llm/status',
    {
      schema: {
        tags,
        summary: 'Whether a language model is configured (never its name, address or key); staff',
        response: { 200: llmStatusSchema },
      },
    },
    async (req) => {
      await guards.requireStaff(req);
      return llm.status();
    },
  );

  r.get(
    `${base}/explanations`,
    {
      schema: {
        tags,
        summary: "The caller's own result-file explanations, newest first",
        params: llmTenantParamsSchema,
        response: { 200: explanationListSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return llm.listExplanations(req.params.tenantId, caller(s));
    },
  );

  r.get(
    `${base}/explanations/:explanationId`,
    {
      schema: {
        tags,
        summary: 'One of the caller’s explanations with its answer',
        params: llmExplanationParamsSchema,
        response: { 200: explanationDetailSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return llm.getExplanation(req.params.tenantId, caller(s), req.params.explanationId);
    },
  );

  r.get(
    `${base}/explanations/:explanationId/file`,
    {
      schema: {
        tags,
        summary: 'The result file kept with one of the caller’s explanations, as uploaded (a download; never rendered)',
        params: llmExplanationParamsSchema,
      },
    },
    async (req, reply) => {
      const s = await guards.requireSession(req);
      const f = await llm.getExplanationFile(req.params.tenantId, caller(s), req.params.explanationId);
      // The file is untrusted (an XML or JSON report may hold markup): always a download of opaque
      // bytes, never sniffed, and inert even if opened directly.
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-disposition', attachmentDisposition(f.fileName))
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('cache-control', 'private, no-store')
        .send(f.data);
    },
  );

  r.delete(
    `${base}/explanations/:explanationId`,
    {
      schema: {
        tags,
        summary: 'Delete one of the caller’s explanations',
        params: llmExplanationParamsSchema,
        response: { 204: z.null() },
      },
    },
    async (req, reply) => {
      const s = await guards.requireSession(req);
      await llm.deleteExplanation(req.params.tenantId, caller(s), req.params.explanationId);
      return reply.code(204).send(null);
    },
  );

  r.post(
    `${base}/device-check/explain`,
    {
      schema: {
        tags,
        summary:
          'Explain the latest device-check run per computer (and pasted output), streamed as text/event-stream; nothing is stored',
        params: llmTenantParamsSchema,
        body: deviceCheckBodySchema,
      },
    },
    async (req, reply) => {
      const s = await guards.requireSession(req);
      return sendAnswerStream(req, reply, (signal) =>
        llm.explainDeviceCheck(req.params.tenantId, caller(s), req.body, signal),
      );
    },
  );

  // The explainer: one result file in, a text/event-stream out.
  await app.register(async (scope) => {
    const options = {
      defParamCharset: 'utf8',
      limits: { fileSize: EXPLAIN_MAX_BYTES + 1, files: 1, fields: 2, fieldSize: 256, parts: 4, headerPairs: 100 },
    };
    await scope.register(multipart, options);
    scope.withTypeProvider<ZodTypeProvider>().post(
      `${base}/explain`,
      {
        schema: {
          tags,
          summary: 'Explain a result file (streamed as text/event-stream; see docs/llm.md)',
          params: llmTenantParamsSchema,
          consumes: ['multipart/form-data'],
        },
      },
      async (req, reply) => {
        const s = await guards.requireSession(req);
        if (!req.isMultipart())
          throw appError(
            'unsupported_media_type',
            'Send the result file as multipart/form-data in the form field "file".',
          );
        const declared = Number(req.headers['content-length']);
        const tooLarge = () =>
          llmError('llm_files_too_large', `The result file is larger than ${EXPLAIN_MAX_BYTES / 1024 / 1024} MB.`, {
            details: { maxBytes: EXPLAIN_MAX_BYTES },
          });
        if (Number.isFinite(declared) && declared > EXPLAIN_MAX_BYTES + MULTIPART_OVERHEAD) throw tooLarge();
        // Refused before a byte of the file is read: a waiting upload would hold its memory.
        const slot = fileAnalysis.acquire(s.user.id);
        try {
          const f: UploadedFile = await readOneFile(
            req.parts(),
            { missing: () => llmError('llm_file_missing', 'Attach the result file in the form field "file".') },
            async (file) => ({
              fileName: uploadedFileName(file.fileName, 0),
              data: await readAll(file.stream, EXPLAIN_MAX_BYTES, tooLarge),
            }),
          );
          return await sendAnswerStream(req, reply, (signal) =>
            llm.explain(req.params.tenantId, caller(s), f, signal).finally(() => slot.release()),
          );
        } finally {
          slot.release();
        }
      },
    );
  });

  // Evidence review: up to 8 documents in, verdicts out; nothing stored.
  await app.register(async (scope) => {
    const limits = {
      defParamCharset: 'utf8',
      limits: {
        fileSize: EXTRACT_LIMITS.totalBytes + 1,
        files: EXTRACT_LIMITS.files + 1,
        fields: 4,
        fieldSize: 64 * 1024,
        parts: EXTRACT_LIMITS.files + 6,
        headerPairs: 100,
      },
    };
    await scope.register(multipart, limits);
    scope.withTypeProvider<ZodTypeProvider>().post(
      `${base}/evidence-review`,
      {
        schema: {
          tags,
          summary:
            'Review evidence documents against requirements (default: the 15 CMMC Level 1 requirements); nothing is stored',
          params: llmTenantParamsSchema,
          consumes: ['multipart/form-data'],
          response: { 200: evidenceReviewSchema },
        },
      },
      async (req, reply) => {
        const s = await guards.requireSession(req);
        if (!req.isMultipart())
          throw appError(
            'unsupported_media_type',
            'Send the documents as multipart/form-data in the form field "files".',
          );
        const declared = Number(req.headers['content-length']);
        const tooLarge = () =>
          llmError(
            'llm_files_too_large',
            `The files are larger than ${EXTRACT_LIMITS.totalBytes / 1024 / 1024} MB in all.`,
            { details: { maxTotalBytes: EXTRACT_LIMITS.totalBytes } },
          );
        if (Number.isFinite(declared) && declared > EXTRACT_LIMITS.totalBytes + MULTIPART_OVERHEAD) throw tooLarge();
        const signal = clientGone(req, reply);
        const files: UploadedFile[] = [];
        let notes: string | undefined;
        let requirements: ReviewRequirement[] | undefined;
        let total = 0;
        await readUpload(req.parts(), {
          fileField: 'files',
          maxFiles: EXTRACT_LIMITS.files,
          tooMany: () =>
            llmError('llm_too_many_files', `Upload at most ${EXTRACT_LIMITS.files} files at once.`, {
              details: { maxFiles: EXTRACT_LIMITS.files },
            }),
          fields: REVIEW_FIELDS,
          onField: (name, value) => {
            if (name === 'notes') notes = reviewNotes(value);
            else requirements = reviewRequirements(value);
          },
          onFile: async (file, _fields, index) => {
            const data = await readAll(file.stream, EXTRACT_LIMITS.totalBytes - total, tooLarge);
            total += data.length;
            files.push({ fileName: uploadedFileName(file.fileName, index), data });
          },
        });
        const input = { files, ...(notes ? { notes } : {}), ...(requirements ? { requirements } : {}) };
        if (!String(req.headers.accept ?? '').includes('text/event-stream')) {
          try {
            const review = await llm.reviewEvidence(req.params.tenantId, caller(s), input, signal);
            logFallback(req, review.fallbackError);
            return review;
          } catch (e) {
            if (e instanceof LlmAbortedError) throw cancelled();
            throw e;
          }
        }
        // Streamed: the offline review as `preliminary` as soon as the documents are read (when a
        // model then reviews them), the final review as `done`. Errors before the first event are
        // plain JSON errors, later ones an `error` event.
        let preliminary: EvidenceReview | null = null;
        let firstEvent!: () => void;
        const first = new Promise<void>((resolve) => (firstEvent = resolve));
        const work = llm.reviewEvidence(req.params.tenantId, caller(s), input, signal, (review) => {
          preliminary = review;
          firstEvent();
        });
        await Promise.race([first, work.then(firstEvent, firstEvent)]);
        if (!preliminary) {
          try {
            await work;
          } catch (e) {
            if (e instanceof LlmAbortedError || signal.aborted) throw cancelled();
            throw e;
          }
        }
        const events = createEventStream(req, reply, signal);
        if (preliminary) events.write('preliminary', { review: preliminary });
        work
          .then(
            (review) => {
              logFallback(req, review.fallbackError);
              events.write('done', { review });
            },
            (e: unknown) => events.fail(e),
          )
          .finally(() => events.end());
        return events.send();
      },
    );
  });
}
