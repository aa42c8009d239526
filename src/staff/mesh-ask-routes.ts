// Staff → "ask operations" routes (staff):
//   POST /api/v1/staff/mesh/ask                         askMeshOperations, text/event-stream
//   GET  /api/v1/staff/mesh/ask/answers                 listMeshAskAnswers, newest first
//   GET  /api/v1/staff/mesh/ask/answers/:answerId       one stored answer with its evidence
// The stream's events: `meta` (source, label, model, the numbered evidence, and `fallbackReason` /
// `fallbackError` when the model failed before its first word), `delta` text pieces, then
// `fallback` (the offline summary replacing a model answer that cites evidence that does not
// exist) when needed, and `done` (the stored answer's id, the stored markdown, the citation check,
// the fallback's reason and the model's failure) or `error` (docs/mesh.md "Staff tools"). Errors
// before the stream are ordinary JSON errors. A client that hangs up aborts the model call, and
// nothing is stored. A model failure is logged at warn (code and friendly message only), and the
// ask is audited once it ended, with the source of what was shown last.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AuditService } from '../audit/index.ts';
import { logFallback, streamAnswer } from '../llm/index.ts';
import type { SessionGuards } from '../server/plugins/session.ts';
import {
  askAnswerDetailSchema,
  askAnswerListSchema,
  askAnswerParamsSchema,
  askBodySchema,
  type AskStreamEvent,
} from './mesh-ask-schemas.ts';
import type { MeshAskService } from './mesh-ask-service.ts';

export function registerMeshAskRoutes(
  app: FastifyInstance,
  deps: { guards: SessionGuards; ask: MeshAskService; audit: AuditService },
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, ask, audit } = deps;
  const tags = ['staff'];

  r.get(
    '/api/v1/staff/mesh/ask/answers',
    {
      schema: {
        tags,
        summary: 'Stored "ask operations" answers, newest first (staff)',
        response: { 200: askAnswerListSchema },
      },
    },
    async (req) => {
      await guards.requireStaff(req);
      return ask.list();
    },
  );

  r.get(
    '/api/v1/staff/mesh/ask/answers/:answerId',
    {
      schema: {
        tags,
        summary: 'One stored "ask operations" answer with its evidence (staff)',
        params: askAnswerParamsSchema,
        response: { 200: askAnswerDetailSchema },
      },
    },
    async (req) => {
      await guards.requireStaff(req);
      return ask.get(req.params.answerId);
    },
  );

  r.post(
    '/api/v1/staff/mesh/ask',
    {
      schema: {
        tags,
        summary: 'Ask a question about the mesh over 24h, 7d or 30d; the answer streams as text/event-stream (staff)',
        body: askBodySchema,
      },
    },
    async (req, reply) => {
      const me = await guards.requireStaff(req);
      let shown: { source: 'model' | 'offline'; answerId: string; replaced: boolean } | null = null;
      return streamAnswer(
        req,
        reply,
        async (signal) => {
          const stream = await ask.ask(req.body, { userId: me.user.id }, signal);
          logFallback(req, stream.meta.fallbackError);
          return stream;
        },
        async (stream, text, signal): Promise<AskStreamEvent[]> => {
          if (signal.aborted) return [];
          const { fallback, ...done } = await stream.finish(text);
          const source = fallback ? 'offline' : stream.meta.source;
          shown = { source, answerId: done.answerId, replaced: fallback !== null };
          const out: AskStreamEvent[] = [];
          if (fallback) out.push({ event: 'fallback', data: { source: 'offline', ...fallback } });
          out.push({
            event: 'done',
            data: {
              ...done,
              source,
              fallbackReason: fallback?.reason ?? stream.meta.fallbackReason ?? null,
              fallbackError: stream.meta.fallbackError ?? null,
            },
          });
          return out;
        },
        async (stream, outcome) => {
          // The question may carry customer data: its length is audited, not its text. `source` is
          // who wrote what was shown last (the offline summary when it replaced the model's answer).
          await audit.record({
            actorUserId: me.user.id,
            actorEmail: me.user.email,
            action: 'mesh.ask',
            targetType: 'mesh',
            targetId: null,
            details: {
              window: req.body.window,
              questionChars: req.body.question.length,
              outcome,
              source: shown?.source ?? stream.meta.source,
              answerId: shown?.answerId ?? null,
              ...(stream.meta.fallbackError ? { llmError: stream.meta.fallbackError.error } : {}),
              ...(shown?.replaced ? { modelAnswerReplaced: true } : {}),
            },
          });
        },
      );
    },
  );
}
