// Language-model helpers: explain a result file (streamed; history private per user) and review
// evidence documents against requirements (nothing stored). With no model configured, or when a
// model's structured answer fails validation, the offline analyzers answer, labelled
// "offline analysis". Membership of the tenant is checked for every call.
import type { Generated, Kysely, Selectable } from 'kysely';
import type { DB } from '../db/schema.ts';
import { withTenantMember, type Tx } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { appError, isAppError } from '../lib/errors.ts';
import { CMMC_L1_REQUIREMENTS } from './cmmc-l1-requirements.ts';
import { llmError } from './llm-errors.ts';
import { extractDocuments, type ExtractLimits, type UploadedFile } from './llm-extract.ts';
import { LlmAbortedError, type LlmGateway } from './llm-gateway.ts';
import { startAnswer, type AnswerStream } from './llm-answer.ts';
import { analyzeDeviceRuns, combineRuns, DEVICE_INSTRUCTIONS, devicePrompt, latestDeviceRuns, offlineDeviceExplanation, parsePastedOutput } from './llm-device-check.ts';
import { analyzeResultFile, offlineResultSummary, type ResultAnalysis } from './llm-offline-results.ts';
import { offlineEvidenceReview } from './llm-offline-evidence.ts';
import { EXPLAIN_INSTRUCTIONS, explainPrompt, modelReview, REVIEW_INSTRUCTIONS, reviewPrompt, validateModelReview } from './llm-prompts.ts';
import { type EvidenceReview, type ExplanationDetail, type ExplanationSummary, type LlmStatus, type ReviewRequirement, type SeverityCounts } from './llm-schemas.ts';

export interface LlmExplanationsTable {
  id: Generated<string>;
  tenant_id: string;
  user_id: string;
  file_name: string;
  format: string;
  source: 'model' | 'offline';
  /** The model that wrote it, for operators reading the database; never in an answer or page. */
  model: string | null;
  counts: SeverityCounts;
  answer: string;
  created_at: Generated<Date>;
}
type LlmTables = { llm_explanations: LlmExplanationsTable };
/** The migration's table, known to this module only (src/db/schema.ts stays as it is). */
const withLlmTables = (tx: Tx) => tx.$extendTables<LlmTables>();
type LlmTx = ReturnType<typeof withLlmTables>;

export interface DeviceCheckInput {
  pastedOutput?: string | undefined;
  notes?: string | undefined;
  hostnames?: string[] | undefined;
}

export interface Caller {
  userId: string;
  email: string;
}

/** Largest result file the explainer reads. */
export const EXPLAIN_MAX_BYTES = 32 * 1024 * 1024;
const HISTORY_LIMIT = 100;
const MAX_ANSWER_CHARS = 200_000;

const iso = (d: Date | string) => new Date(d).toISOString();

function summaryOf(r: Omit<Selectable<LlmExplanationsTable>, 'model' | 'answer'>): ExplanationSummary {
  return { id: r.id, fileName: r.file_name, format: r.format, source: r.source, counts: r.counts, createdAt: iso(r.created_at) };
}

export function createLlmService(deps: { db: Kysely<DB>; gateway: LlmGateway; clock: Clock; requirements?: readonly ReviewRequirement[]; extractLimits?: ExtractLimits }) {
  const { db, gateway, clock } = deps;
  const defaultRequirements = deps.requirements ?? CMMC_L1_REQUIREMENTS;

  function asMember<T>(tenantId: string, caller: Caller, fn: (tx: LlmTx) => Promise<T>): Promise<T> {
    return withTenantMember(db, { tenantId, userId: caller.userId }, async (tx, role) => {
      if (!role) throw appError('tenant_forbidden', 'You are not a member of this tenant.');
      return fn(withLlmTables(tx));
    });
  }

  async function saveExplanation(tenantId: string, caller: Caller, a: ResultAnalysis, source: 'model' | 'offline', answer: string): Promise<string> {
    return asMember(tenantId, caller, async (tx) => {
      const row = await tx
        .insertInto('llm_explanations')
        .values({ tenant_id: tenantId, user_id: caller.userId, file_name: a.fileName.slice(0, 255), format: a.format, source, model: source === 'model' ? gateway.model : null, counts: JSON.stringify(a.counts) as unknown as SeverityCounts, answer: answer.slice(0, MAX_ANSWER_CHARS), created_at: clock.now() })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    });
  }

  return {
    /** Staff see only whether a model is configured. */
    status(): LlmStatus {
      return { configured: gateway.configured };
    },

    /**
     * Reads the result file and starts the answer (docs/llm.md). A model that fails before its
     * first streamed text (busy, credits, timeouts) is replaced by the offline analysis, with the
     * reason in `meta`. The finished answer (or the offline text that replaced a failed or invalid
     * one) is stored in the caller's private history.
     */
    async explain(tenantId: string, caller: Caller, file: UploadedFile, signal: AbortSignal): Promise<AnswerStream> {
      await asMember(tenantId, caller, async () => undefined);
      if (file.data.length === 0) throw llmError('llm_result_file_unreadable', 'The file is empty.');
      const analysis = await analyzeResultFile(file.fileName, file.data);
      const { prompt, evidenceIds } = explainPrompt(analysis);
      return startAnswer(gateway, {
        instructions: EXPLAIN_INSTRUCTIONS,
        prompt,
        evidenceIds,
        offlineText: offlineResultSummary(analysis),
        signal,
        maxOutputTokens: 2_000,
        meta: { fileName: analysis.fileName, format: analysis.format, counts: analysis.counts },
        store: ({ source, text }) => saveExplanation(tenantId, caller, analysis, source, text),
      });
    },

    /**
     * explainDeviceCheck: the latest run per computer (optionally only `hostnames`), plus pasted
     * script output and notes, explained with prioritized fixes and re-check steps. Streamed like
     * the explainer; nothing is stored.
     */
    async explainDeviceCheck(tenantId: string, caller: Caller, input: DeviceCheckInput, signal: AbortSignal): Promise<AnswerStream> {
      const stored = await withTenantMember(db, { tenantId, userId: caller.userId }, async (tx, role) => {
        if (!role) throw appError('tenant_forbidden', 'You are not a member of this tenant.');
        return latestDeviceRuns(tx, tenantId);
      });
      const wanted = input.hostnames?.length ? new Set(input.hostnames.map((h) => h.toLowerCase())) : null;
      const pasted = input.pastedOutput?.trim() ? parsePastedOutput(input.pastedOutput) : null;
      const runs = combineRuns(wanted ? stored.filter((r) => wanted.has(r.hostname.toLowerCase())) : stored, pasted);
      if (runs.length === 0)
        throw llmError(
          'llm_device_check_no_results',
          wanted ? 'None of these computers has sent device-check results.' : 'There are no device-check results yet. Run the device-check script on a computer (CMMC → Device check), or paste its output.',
        );
      const analysis = analyzeDeviceRuns(runs, clock.now());
      const { prompt, evidenceIds } = devicePrompt(analysis, input.notes);
      return startAnswer(gateway, {
        instructions: DEVICE_INSTRUCTIONS,
        prompt,
        evidenceIds,
        offlineText: offlineDeviceExplanation(analysis),
        signal,
        maxOutputTokens: 2_500,
        meta: {
          computers: runs.map((r) => {
            const v = Object.values(r.results);
            return { hostname: r.hostname, os: r.os, receivedAt: r.receivedAt, fails: v.filter((x) => x === 'fail').length, unknowns: v.filter((x) => x === 'unknown').length };
          }),
        },
      });
    },

    async listExplanations(tenantId: string, caller: Caller): Promise<{ explanations: ExplanationSummary[] }> {
      return asMember(tenantId, caller, async (tx) => {
        const rows = await tx
          .selectFrom('llm_explanations')
          .select(['id', 'tenant_id', 'user_id', 'file_name', 'format', 'source', 'counts', 'created_at'])
          .where('tenant_id', '=', tenantId)
          .where('user_id', '=', caller.userId)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(HISTORY_LIMIT)
          .execute();
        return { explanations: rows.map(summaryOf) };
      });
    },

    async getExplanation(tenantId: string, caller: Caller, id: string): Promise<{ explanation: ExplanationDetail }> {
      return asMember(tenantId, caller, async (tx) => {
        const row = await tx.selectFrom('llm_explanations').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).where('user_id', '=', caller.userId).executeTakeFirst();
        if (!row) throw appError('llm_explanation_not_found', 'No such explanation in your history.');
        return { explanation: { ...summaryOf(row), answer: row.answer } };
      });
    },

    async deleteExplanation(tenantId: string, caller: Caller, id: string): Promise<void> {
      await asMember(tenantId, caller, async (tx) => {
        const r = await tx.deleteFrom('llm_explanations').where('id', '=', id).where('tenant_id', '=', tenantId).where('user_id', '=', caller.userId).executeTakeFirst();
        if (r.numDeletedRows === 0n) throw appError('llm_explanation_not_found', 'No such explanation in your history.');
      });
    },

    /**
     * Evidence review: extracts the documents, then either the model's validated verdicts or the
     * offline analysis (when no model is configured, the model fails, or its answer is invalid).
     * Nothing is stored.
     */
    async reviewEvidence(
      tenantId: string,
      caller: Caller,
      input: { files: UploadedFile[]; notes?: string; requirements?: readonly ReviewRequirement[] },
      signal?: AbortSignal,
      onPreliminary?: (review: EvidenceReview) => void,
    ): Promise<EvidenceReview> {
      await asMember(tenantId, caller, async () => undefined);
      return reviewDocuments(gateway, input, signal, defaultRequirements, deps.extractLimits, onPreliminary);
    },
  };
}

/** The evidence review without tenancy (the CMMC module may call it through index.ts). */
export async function reviewDocuments(
  gateway: LlmGateway,
  input: { files: UploadedFile[]; notes?: string; requirements?: readonly ReviewRequirement[] },
  signal?: AbortSignal,
  defaultRequirements: readonly ReviewRequirement[] = CMMC_L1_REQUIREMENTS,
  limits?: ExtractLimits,
  /** Gets the offline review while the model is still working (the streamed route shows it at once). */
  onPreliminary?: (review: EvidenceReview) => void,
): Promise<EvidenceReview> {
  const requirements = input.requirements ?? defaultRequirements;
  const docs = await extractDocuments(input.files, limits, signal);
  if (!gateway.configured || !docs.some((d) => d.assessable)) return offlineEvidenceReview(docs, requirements);
  onPreliminary?.(offlineEvidenceReview(docs, requirements));
  let text: string;
  try {
    text = await gateway.complete({ instructions: REVIEW_INSTRUCTIONS, prompt: reviewPrompt(docs, requirements, input.notes), signal, maxOutputTokens: 4_000 });
  } catch (e) {
    if (e instanceof LlmAbortedError) throw e;
    if (!isAppError(e)) throw e;
    const review = offlineEvidenceReview(docs, requirements, { fallbackReason: e.message });
    const after = (e.details as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds;
    return { ...review, fallbackError: { error: e.code, message: e.message, ...(after !== undefined ? { retryAfterSeconds: after } : {}) } };
  }
  const v = validateModelReview(text, docs, requirements);
  if (!v.ok) return offlineEvidenceReview(docs, requirements, { fallbackReason: `The model's answer was not used: ${v.reason}.` });
  return modelReview(docs, v.results);
}

export type LlmService = ReturnType<typeof createLlmService>;
