// Staff → "ask operations" (askMeshOperations, listMeshAskAnswers): a question about the mesh over
// 24 h, 7 d or 30 d, answered from numbered evidence gathered deterministically from the mesh
// records, streamed as text/event-stream (docs/mesh.md "Staff tools"), stored in mesh_ask_answers.
import { z } from 'zod';
import type { LlmFailure } from '../llm/llm-schemas.ts';
import { healthWindowSchema } from './mesh-health-schemas.ts';

export const ASK_QUESTION_MAX = 4_000;

/** The answer's sections, in order; the model is asked for exactly these headings. */
export const ASK_SECTIONS = ['Answer', 'Relevant findings', 'Trends', 'Suggested next steps', 'Caveats'] as const;

/** The offline summary's labels: no model configured, the model failed before its first word, its answer was not used. */
export const OFFLINE_ASK_LABEL = 'offline summary (no language model)';
export const FAILED_ASK_LABEL = 'offline summary (the language model failed)';
/** The label when the model answered but its answer was not used (it cited evidence that does not exist, or was empty). */
export const REJECTED_ASK_LABEL = 'offline summary (the model’s answer was not used)';

export const askBodySchema = z.object({
  question: z.string().trim().min(1, 'Ask a question').max(ASK_QUESTION_MAX, `At most ${ASK_QUESTION_MAX} characters`),
  window: healthWindowSchema.default('7d').describe('Window ending now: 24h, 7d or 30d (default 7d).'),
});
export type AskBody = z.infer<typeof askBodySchema>;

export const evidenceKindSchema = z.enum([
  'overview',
  'peer_outbound',
  'peer_failures',
  'peer_trend',
  'inbound',
  'received',
  'outbox',
]);
export type EvidenceKind = z.infer<typeof evidenceKindSchema>;

export const evidenceItemSchema = z.object({
  n: z.number().int().min(1).describe('The evidence number the answer cites as [E<n>].'),
  kind: evidenceKindSchema,
  subject: z.string().nullable().describe('The peer or caller the item is about; null for overall items.'),
  text: z.string().describe('The fact in one sentence.'),
  facts: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
});
export type EvidenceItem = z.infer<typeof evidenceItemSchema>;

export const citationCheckSchema = z.object({
  cited: z
    .array(z.string())
    .describe(
      'Evidence ids the answer cites that exist ("E3"), in evidence order; a range such as [E2–E4] cites each id in it.',
    ),
  unknown: z
    .array(z.string())
    .describe(
      'What the answer cites that is not in the evidence ("E99", or a malformed range as written). Not empty: the model’s answer was replaced by the offline summary.',
    ),
  missingSections: z
    .array(z.string())
    .describe('Required section headings the answer lacks (noted at the end of the stored answer).'),
});
export type CitationCheck = z.infer<typeof citationCheckSchema>;

export const askAnswerSummarySchema = z.object({
  id: z.string(),
  question: z.string(),
  windowDays: z.number().int(),
  model: z.string().nullable().describe('The model that answered; null for the offline summary.'),
  durationMs: z.number().int(),
  createdAt: z.string(),
  createdByEmail: z.string().nullable(),
});
export type AskAnswerSummary = z.infer<typeof askAnswerSummarySchema>;

export const askAnswerListSchema = z.object({ answers: z.array(askAnswerSummarySchema) });

export const askAnswerDetailSchema = z.object({
  answer: askAnswerSummarySchema.extend({ evidence: z.array(evidenceItemSchema), markdown: z.string() }),
});
export type AskAnswerDetail = z.infer<typeof askAnswerDetailSchema>['answer'];

export const askAnswerParamsSchema = z.object({ answerId: z.uuid() });

/** The stream's events (server-sent events). */
export type AskStreamEvent =
  /** `fallbackReason` / `fallbackError` (code, friendly message, wait): the model failed before its first word and the offline summary answers. */
  | {
      event: 'meta';
      data: {
        source: 'model' | 'offline';
        label: string;
        model: string | null;
        window: string;
        windowDays: number;
        from: string;
        to: string;
        evidence: EvidenceItem[];
        fallbackReason?: string;
        fallbackError?: LlmFailure;
      };
    }
  | { event: 'delta'; data: { text: string } }
  /**
   * The model's answer was not used (it cited evidence that does not exist, or was empty): `text` is the offline
   * summary that replaces it, and is what was stored.
   */
  | { event: 'fallback'; data: { source: 'offline'; label: string; reason: string; text: string } }
  /**
   * `check` is the check of the answer as streamed (the model's, when a fallback replaced it); `markdown` is what was stored.
   * `fallbackReason`: why the offline summary answers instead of the model (it failed before its first word, or its answer
   * was not used); `fallbackError`: the model's failure (code, friendly message, wait), null unless it failed.
   */
  | {
      event: 'done';
      data: {
        answerId: string;
        source: 'model' | 'offline';
        markdown: string;
        check: CitationCheck;
        durationMs: number;
        fallbackReason: string | null;
        fallbackError: LlmFailure | null;
      };
    }
  | { event: 'error'; data: { error: string; message: string; retryAfterSeconds?: number } };
