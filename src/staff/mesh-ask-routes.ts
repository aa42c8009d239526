// Staff → "ask operations" routes (staff):
//   POST /api/v1/staff/mesh/ask                         askMeshOperations, text/event-stream
//   GET  /api/v1/staff/mesh/ask/answers                 listMeshAskAnswers, newest first
//   GET  /api/v1/staff/mesh/ask/answers/:answerId       one stored answer with its evidence
// The stream's events: `meta` (source, label, model, the numbered evidence), `delta` text pieces,
// then `fallback` (the offline summary replacing a model answer that cites evidence that does not
// exist) when needed, and `done` (the stored answer's id, the stored markdown, the citation check) or `error`
// (docs/mesh.md "Staff tools"). Errors before the stream are ordinary JSON errors. A client that
// hangs up aborts the model call, and nothing is stored.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AuditService } from '../audit/index.ts';
import { streamAnswer } from '../llm/index.ts';
import type { SessionGuards } from '../server/plugins/session.ts';
import { askAnswerDetailSchema, askAnswerListSchema, askAnswerParamsSchema, askBodySchema, type AskStreamEvent } from './mesh-ask-schemas.ts';
import type { MeshAskService } from './mesh-ask-service.ts';


export function registerMeshAskRoutes(app: FastifyInstance, deps: { guards: SessionGuards; ask: MeshAskService; audit: AuditService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, ask, audit } = deps;
  const tags = ['staff'];

  r.get('/api/v1/staff/mesh/ask/answers', { schema: { tags, summary: 'Stored "ask operations" answers, newest first (staff)', response: { 200: askAnswerListSchema } } }, async (req) => {
    await guards.requireStaff(req);
    return ask.list();
  });

  r.get(
    '/api/v1/staff/mesh/ask/answers/:answerId',
    { schema: { tags, summary: 'One stored "ask operations" answer with its evidence (staff)', params: askAnswerParamsSchema, response: { 200: askAnswerDetailSchema } } },
    async (req) => {
      await guards.requireStaff(req);
      return ask.get(req.params.answerId);
    },
  );

  r.post(
    '/api/v1/staff/mesh/ask',
    { schema: { tags, summary: 'Ask a question about the mesh over 24h, 7d or 30d; the answer streams as text/event-stream (staff)', body: askBodySchema } },
    async (req, reply) => {
      const me = await guards.requireStaff(req);
      return streamAnswer(
        req,
        reply,
        async (signal) => {
          const stream = await ask.ask(req.body, { userId: me.user.id }, signal);
          // The question may carry customer data: its length is audited, not its text.
          await audit.record({ actorUserId: me.user.id, actorEmail: me.user.email, action: 'mesh.ask', targetType: 'mesh', targetId: null, details: { window: req.body.window, questionChars: req.body.question.length, source: stream.meta.source } });
          return stream;
        },
        async (stream, text, signal): Promise<AskStreamEvent[]> => {
          if (signal.aborted) return [];
          const { fallback, ...done } = await stream.finish(text);
          const out: AskStreamEvent[] = [];
          if (fallback) out.push({ event: 'fallback', data: { source: 'offline', ...fallback } });
          out.push({ event: 'done', data: { ...done, source: fallback ? 'offline' : stream.meta.source, fallbackReason: fallback?.reason ?? null } });
          return out;
        },
      );
    },
  );
}
