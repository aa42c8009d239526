// Language-model helpers: explain a result file (streamed; history private per user, with the
// uploaded file), explain device checks and review evidence documents against requirements
// (nothing stored). With no model configured, when the model fails, or when its answer fails
// validation, the offline analyzers answer, labelled "offline analysis". Membership of the tenant
// is checked for every call.
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import type { Kysely, Selectable } from 'kysely';
import type { DB, LlmExplanationsTable } from '../db/schema.ts';
import { type Caller, tenantAccess } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { sha256Hex } from '../lib/crypto.ts';
import { appError, isAppError } from '../lib/errors.ts';
import { CMMC_L1_REQUIREMENTS } from './cmmc-l1-requirements.ts';
import { llmError, llmFailureOf } from './llm-errors.ts';
import { extractDocuments, type ExtractLimits, type UploadedFile } from './llm-extract.ts';
import { LlmAbortedError, type LlmGateway } from './llm-gateway.ts';
import { startAnswer, type AnswerStream } from './llm-answer.ts';
import {
  analyzeDeviceRuns,
  combineRuns,
  DEVICE_INSTRUCTIONS,
  devicePrompt,
  latestDeviceRuns,
  offlineDeviceExplanation,
  parsePastedOutput,
} from './llm-device-check.ts';
import { analyzeResultFile, offlineResultSummary, type ResultAnalysis } from './llm-offline-results.ts';
import { offlineEvidenceReview } from './llm-offline-evidence.ts';
import {
  EXPLAIN_INSTRUCTIONS,
  explainPrompt,
  modelReview,
  REVIEW_INSTRUCTIONS,
  REVIEW_OUTPUT,
  reviewPrompt,
  validateModelReview,
} from './llm-prompts.ts';
import {
  type EvidenceReview,
  type ExplanationDetail,
  type ExplanationSummary,
  type LlmStatus,
  type ReviewRequirement,
} from './llm-schemas.ts';

export interface DeviceCheckInput {
  pastedOutput?: string | undefined;
  notes?: string | undefined;
  hostnames?: string[] | undefined;
}

/** Largest result file the explainer reads. */
export const EXPLAIN_MAX_BYTES = 32 * 1024 * 1024;
/** A user's history keeps its newest explanations (with their files); saving one more drops the oldest. */
export const HISTORY_LIMIT = 100;
const MAX_ANSWER_CHARS = 200_000;

const iso = (d: Date | string) => new Date(d).toISOString();
const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

type SummaryRow = Omit<Selectable<LlmExplanationsTable>, 'model' | 'answer'> & { file_size: number | null };

function summaryOf(r: SummaryRow): ExplanationSummary {
  return {
    id: r.id,
    fileName: r.file_name,
    format: r.format,
    source: r.source,
    fileSize: r.file_size,
    counts: r.counts,
    createdAt: iso(r.created_at),
  };
}

const SUMMARY_COLUMNS = [
  'e.id',
  'e.tenant_id',
  'e.user_id',
  'e.file_name',
  'e.format',
  'e.source',
  'e.counts',
  'e.created_at',
  'f.size as file_size',
] as const;

export function createLlmService(deps: {
  db: Kysely<DB>;
  gateway: LlmGateway;
  clock: Clock;
  requirements?: readonly ReviewRequirement[];
  extractLimits?: ExtractLimits;
  /** Heap of the thread a result file is parsed on, MB (IMPORT_PARSE_HEAP_MB). */
  parseHeapMb?: number;
}) {
  const { db, gateway, clock } = deps;
  const defaultRequirements = deps.requirements ?? CMMC_L1_REQUIREMENTS;

  const { asMember } = tenantAccess(db);

  /** Stores the answer with the uploaded file, in one transaction, and drops entries past HISTORY_LIMIT. */
  async function saveExplanation(
    tenantId: string,
    caller: Caller,
    a: ResultAnalysis,
    file: UploadedFile,
    source: 'model' | 'offline',
    answer: string,
  ): Promise<string> {
    // Compressed before the transaction: on PGlite the transaction holds the only connection.
    const packed = await gzipAsync(file.data);
    return asMember(tenantId, caller, async (tx) => {
      const row = await tx
        .insertInto('llm_explanations')
        .values({
          tenant_id: tenantId,
          user_id: caller.userId,
          file_name: a.fileName.slice(0, 255),
          format: a.format,
          source,
          model: source === 'model' ? gateway.model : null,
          counts: JSON.stringify(a.counts),
          answer: answer.slice(0, MAX_ANSWER_CHARS),
          created_at: clock.now(),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await tx
        .insertInto('llm_explanation_files')
        .values({
          explanation_id: row.id,
          tenant_id: tenantId,
          user_id: caller.userId,
          size: file.data.length,
          sha256: sha256Hex(file.data),
          data: packed,
        })
        .execute();
      // Bounded history: the oldest entries beyond the limit go, with their files (cascade).
      const keep = tx
        .selectFrom('llm_explanations')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('user_id', '=', caller.userId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(HISTORY_LIMIT);
      await tx
        .deleteFrom('llm_explanations')
        .where('tenant_id', '=', tenantId)
        .where('user_id', '=', caller.userId)
        .where('id', 'not in', keep)
        .execute();
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
      const analysis = await analyzeResultFile(file.fileName, file.data, { heapMb: deps.parseHeapMb });
      const { prompt, evidenceIds, evidencePrefixes } = explainPrompt(analysis);
      return startAnswer(gateway, {
        instructions: EXPLAIN_INSTRUCTIONS,
        prompt,
        evidenceIds,
        evidencePrefixes,
        offlineText: offlineResultSummary(analysis),
        signal,
        maxOutputTokens: 2_000,
        meta: { fileName: analysis.fileName, format: analysis.format, counts: analysis.counts },
        store: ({ source, text }) => saveExplanation(tenantId, caller, analysis, file, source, text),
      });
    },

    /**
     * explainDeviceCheck: the latest run per computer (optionally only `hostnames`), plus pasted
     * script output and notes, explained with prioritized fixes and re-check steps. Streamed like
     * the explainer; nothing is stored.
     */
    async explainDeviceCheck(
      tenantId: string,
      caller: Caller,
      input: DeviceCheckInput,
      signal: AbortSignal,
    ): Promise<AnswerStream> {
      const stored = await asMember(tenantId, caller, (tx) => latestDeviceRuns(tx, tenantId));
      const wanted = input.hostnames?.length ? new Set(input.hostnames.map((h) => h.toLowerCase())) : null;
      const pasted = input.pastedOutput?.trim() ? parsePastedOutput(input.pastedOutput) : null;
      const runs = combineRuns(wanted ? stored.filter((r) => wanted.has(r.hostname.toLowerCase())) : stored, pasted);
      if (runs.length === 0)
        throw llmError(
          'llm_device_check_no_results',
          wanted
            ? 'None of these computers has sent device-check results.'
            : 'There are no device-check results yet. Run the device-check script on a computer (CMMC → Device check), or paste its output.',
        );
      const analysis = analyzeDeviceRuns(runs, clock.now());
      const { prompt, evidenceIds, evidencePrefixes } = devicePrompt(analysis, input.notes);
      return startAnswer(gateway, {
        instructions: DEVICE_INSTRUCTIONS,
        prompt,
        evidenceIds,
        evidencePrefixes,
        offlineText: offlineDeviceExplanation(analysis),
        signal,
        maxOutputTokens: 2_500,
        meta: {
          computers: runs.map((r) => {
            const v = Object.values(r.results);
            return {
              hostname: r.hostname,
              os: r.os,
              receivedAt: r.receivedAt,
              fails: v.filter((x) => x === 'fail').length,
              unknowns: v.filter((x) => x === 'unknown').length,
            };
          }),
        },
      });
    },

    async listExplanations(tenantId: string, caller: Caller): Promise<{ explanations: ExplanationSummary[] }> {
      return asMember(tenantId, caller, async (tx) => {
        const rows = await tx
          .selectFrom('llm_explanations as e')
          .leftJoin('llm_explanation_files as f', 'f.explanation_id', 'e.id')
          .select(SUMMARY_COLUMNS)
          .where('e.tenant_id', '=', tenantId)
          .where('e.user_id', '=', caller.userId)
          .orderBy('e.created_at', 'desc')
          .orderBy('e.id', 'desc')
          .limit(HISTORY_LIMIT)
          .execute();
        return { explanations: rows.map(summaryOf) };
      });
    },

    async getExplanation(tenantId: string, caller: Caller, id: string): Promise<{ explanation: ExplanationDetail }> {
      return asMember(tenantId, caller, async (tx) => {
        const row = await tx
          .selectFrom('llm_explanations as e')
          .leftJoin('llm_explanation_files as f', 'f.explanation_id', 'e.id')
          .select([...SUMMARY_COLUMNS, 'e.answer'])
          .where('e.id', '=', id)
          .where('e.tenant_id', '=', tenantId)
          .where('e.user_id', '=', caller.userId)
          .executeTakeFirst();
        if (!row) throw appError('llm_explanation_not_found', 'No such explanation in your history.');
        return { explanation: { ...summaryOf(row), answer: row.answer } };
      });
    },

    /** The result file kept with one of the caller's explanations, as uploaded. */
    async getExplanationFile(
      tenantId: string,
      caller: Caller,
      id: string,
    ): Promise<{ fileName: string; size: number; data: Buffer }> {
      const row = await asMember(tenantId, caller, (tx) =>
        tx
          .selectFrom('llm_explanations as e')
          .leftJoin('llm_explanation_files as f', 'f.explanation_id', 'e.id')
          .select(['e.file_name', 'f.size', 'f.sha256', 'f.data'])
          .where('e.id', '=', id)
          .where('e.tenant_id', '=', tenantId)
          .where('e.user_id', '=', caller.userId)
          .executeTakeFirst(),
      );
      if (!row) throw appError('llm_explanation_not_found', 'No such explanation in your history.');
      if (!row.data || row.size === null)
        throw appError(
          'llm_explanation_file_not_kept',
          'This explanation was made before result files were kept with the history; only its answer is stored.',
        );
      const data = await gunzipAsync(row.data, { maxOutputLength: EXPLAIN_MAX_BYTES });
      // The stored bytes must be the uploaded ones: a mismatch is corruption, never served as the file.
      if (data.length !== row.size || sha256Hex(data) !== row.sha256)
        throw new Error('stored result file does not match its checksum');
      return { fileName: row.file_name, size: row.size, data };
    },

    async deleteExplanation(tenantId: string, caller: Caller, id: string): Promise<void> {
      await asMember(tenantId, caller, async (tx) => {
        const r = await tx
          .deleteFrom('llm_explanations')
          .where('id', '=', id)
          .where('tenant_id', '=', tenantId)
          .where('user_id', '=', caller.userId)
          .executeTakeFirst();
        if (r.numDeletedRows === 0n)
          throw appError('llm_explanation_not_found', 'No such explanation in your history.');
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
    text = await gateway.complete({
      instructions: REVIEW_INSTRUCTIONS,
      prompt: reviewPrompt(docs, requirements, input.notes),
      signal,
      maxOutputTokens: 4_000,
      output: REVIEW_OUTPUT,
    });
  } catch (e) {
    if (e instanceof LlmAbortedError) throw e;
    if (!isAppError(e)) throw e;
    return {
      ...offlineEvidenceReview(docs, requirements, { fallbackReason: e.message }),
      fallbackError: llmFailureOf(e),
    };
  }
  const v = validateModelReview(text, docs, requirements);
  if (!v.ok)
    return offlineEvidenceReview(docs, requirements, {
      fallbackReason: `The model's answer was not used: ${v.reason}.`,
    });
  return modelReview(docs, v.results);
}

export type LlmService = ReturnType<typeof createLlmService>;
