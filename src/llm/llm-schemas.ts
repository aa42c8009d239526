// Shapes of the language-model helpers' API, shared with the web app (type-only imports there).
// The streamed answer's events are described in docs/llm.md and typed here (LlmStreamEvent).
import { z } from 'zod';

export const VERDICTS = ['Covered', 'Partial', 'Missing'] as const;
export const verdictSchema = z.enum(VERDICTS);
export type Verdict = z.infer<typeof verdictSchema>;

/** A requirement the evidence review assesses documents against. */
export const reviewRequirementSchema = z
  .object({
    id: z.string().trim().min(1).max(64),
    title: z.string().trim().min(1).max(200),
    /** Key words and phrases the offline analyzer looks for (case-insensitive, whole words). */
    phrases: z.array(z.string().trim().min(2).max(100)).min(1).max(50),
    /** The documentation an assessor expects; listed as missing when the requirement is not covered. */
    documentation: z.array(z.string().trim().min(1).max(300)).max(20),
    /**
     * Assessment objectives: the offline analyzer says Covered only when a sentence addresses each
     * one, i.e. holds a term of every group of its `terms` (whole words, not negated).
     */
    objectives: z
      .array(
        z
          .object({
            id: z.string().trim().min(1).max(64),
            text: z.string().trim().min(1).max(300),
            terms: z
              .array(z.array(z.string().trim().min(2).max(100)).min(1).max(60))
              .min(1)
              .max(6),
          })
          .strict(),
      )
      .max(20)
      .optional(),
  })
  .strict();
export type ReviewRequirement = z.infer<typeof reviewRequirementSchema>;

export const ANSWER_SOURCES = ['model', 'offline'] as const;
export type AnswerSource = (typeof ANSWER_SOURCES)[number];
/** The label every offline result carries, in the API and on the page. */
export const OFFLINE_LABEL = 'offline analysis';

/** An upstream failure the offline analysis stood in for: its llm_* code, friendly message and wait. */
export const llmFailureSchema = z.object({
  error: z.string(),
  message: z.string(),
  retryAfterSeconds: z.number().optional(),
});
export type LlmFailure = z.infer<typeof llmFailureSchema>;

export const citationSchema = z.object({ fileName: z.string(), pages: z.array(z.number().int().min(1)) });
export type Citation = z.infer<typeof citationSchema>;

export const reviewFileSchema = z.object({
  fileName: z.string(),
  kind: z.enum(['pdf', 'text', 'markdown']),
  size: z.number(),
  pageCount: z.number(),
  pagesRead: z.number(),
  assessable: z.boolean(),
  note: z.string().optional(),
});

export const requirementResultSchema = z.object({
  id: z.string(),
  title: z.string(),
  verdict: verdictSchema,
  citations: z.array(citationSchema),
  rationale: z.string(),
  missingDocumentation: z.array(z.string()),
});
export type RequirementResult = z.infer<typeof requirementResultSchema>;

export const evidenceReviewSchema = z.object({
  source: z.enum(ANSWER_SOURCES),
  /** "offline analysis" or "model review …". The model's name is never given (only staff learn whether one is configured). */
  label: z.string(),
  /** Why a model answer was not used (invalid output, upstream error), when the offline result stands in. */
  fallbackReason: z.string().nullable(),
  /** The upstream error behind the fallback (llm_busy with retryAfterSeconds, llm_credits_exhausted, ...). */
  fallbackError: llmFailureSchema.optional(),
  files: z.array(reviewFileSchema),
  requirements: z.array(requirementResultSchema),
  summary: z.object({ covered: z.number(), partial: z.number(), missing: z.number() }),
  missingDocumentation: z.array(z.object({ requirementId: z.string(), items: z.array(z.string()) })),
  nextSteps: z.array(z.object({ priority: z.number(), requirementId: z.string().nullable(), text: z.string() })),
});
export type EvidenceReview = z.infer<typeof evidenceReviewSchema>;

export const severityCountsSchema = z.object({
  critical: z.number(),
  high: z.number(),
  medium: z.number(),
  low: z.number(),
  info: z.number(),
  total: z.number(),
});
export type SeverityCounts = z.infer<typeof severityCountsSchema>;

export const explanationSummarySchema = z.object({
  id: z.uuid(),
  fileName: z.string(),
  format: z.string(),
  /** Who wrote the answer: the configured model or the offline analysis (never the model's name). */
  source: z.enum(ANSWER_SOURCES),
  /** Bytes of the result file kept with the explanation (download: …/explanations/:id/file); null for entries made before files were kept. */
  fileSize: z.number().int().nullable(),
  counts: severityCountsSchema,
  createdAt: z.string(),
});
export type ExplanationSummary = z.infer<typeof explanationSummarySchema>;
export const explanationListSchema = z.object({ explanations: z.array(explanationSummarySchema) });
export const explanationDetailSchema = z.object({
  explanation: explanationSummarySchema.extend({ answer: z.string() }),
});
export type ExplanationDetail = z.infer<typeof explanationDetailSchema>['explanation'];

/** What staff see of the configuration: whether a model is configured, nothing else (no URL, model or key). */
export const llmStatusSchema = z.object({ configured: z.boolean() });
export type LlmStatus = z.infer<typeof llmStatusSchema>;

export const llmTenantParamsSchema = z.object({ tenantId: z.uuid() });
export const llmExplanationParamsSchema = z.object({ tenantId: z.uuid(), explanationId: z.uuid() });

/** The first event of a streamed answer: who answers, and facts about the input. */
export interface AnswerMeta {
  source: AnswerSource;
  /** "offline analysis" or "model answer". */
  label: string;
  /**
   * The helpers' answers never name the model (staff see only whether one is configured, docs/llm.md);
   * only the staff mesh ask stream, whose stored answers keep the model, fills it in.
   */
  model?: string | null;
  /** Set when the model failed before its first word and the offline analysis answers instead. */
  fallbackReason?: string;
  /** That failure (llm_busy with retryAfterSeconds, llm_credits_exhausted, llm_timeout, ...). */
  fallbackError?: LlmFailure;
  fileName?: string;
  format?: string;
  counts?: SeverityCounts;
  /** Device-check explainer: the computers whose latest runs were explained. */
  computers?: { hostname: string; os: string; receivedAt: string | null; fails: number; unknowns: number }[];
}

/**
 * Events of a streamed answer (text/event-stream; docs/llm.md):
 * `meta` first, then `delta`s, optionally one `fallback` (the model's text failed validation and
 * the offline analysis replaces it), then exactly one of `done` or `error`.
 */
export type LlmStreamEvent =
  | { event: 'meta'; data: AnswerMeta }
  | { event: 'delta'; data: { text: string } }
  | { event: 'fallback'; data: { source: 'offline'; label: string; reason: string; text: string } }
  | { event: 'done'; data: { explanationId?: string | null; source: AnswerSource } }
  | { event: 'error'; data: { error: string; message: string; retryAfterSeconds?: number } };
