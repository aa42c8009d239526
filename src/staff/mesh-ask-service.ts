// Staff → "ask operations" (askMeshOperations, listMeshAskAnswers). A question over 24 h, 7 d or
// 30 d: the evidence is gathered from the mesh records and numbered (mesh-ask-evidence.ts), then
// the answer streams through the language-model helpers' startAnswer (src/llm/llm-answer.ts),
// like every other helper: the configured model's answer, or, without a model or when the model
// fails before its first word, the offline summary, labelled, with the failure in `meta`
// (`fallbackReason`, `fallbackError`). The finished model answer is checked (cited numbers
// exist, through the shared citation checker; not empty; missing sections noted): one that
// fails is replaced by the offline summary, labelled. What is shown last is stored in
// mesh_ask_answers through the service role, the only role with access to that table.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { withService, type Tx } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { appError } from '../lib/errors.ts';
import { startAnswer, type LlmGateway, type OfflineWhy } from '../llm/index.ts';
import {
  askPrompt,
  ASK_INSTRUCTIONS,
  buildEvidence,
  checkAnswer,
  evidenceIds,
  offlineSummary,
  readAskRecords,
  type AnswerCheck,
} from './mesh-ask-evidence.ts';
import {
  FAILED_ASK_LABEL,
  OFFLINE_ASK_LABEL,
  REJECTED_ASK_LABEL,
  type AskAnswerDetail,
  type AskAnswerSummary,
  type AskBody,
  type AskStreamEvent,
  type CitationCheck,
  type EvidenceItem,
} from './mesh-ask-schemas.ts';
import { WINDOW_DAYS } from './mesh-health-schemas.ts';
import type { MeshHealthService } from './mesh-health-service.ts';

/** Past answers listed. */
const LIST_LIMIT = 100;
const MAX_ANSWER_CHARS = 100_000;

export type AskMeta = Extract<AskStreamEvent, { event: 'meta' }>['data'];

/** A started answer: its meta (evidence included), text pieces, and `finish` to check and store it. */
export interface AskStream {
  meta: AskMeta;
  chunks: AsyncGenerator<string, void, undefined>;
  /** Checks and stores the finished text; `fallback` when the offline summary replaced a model answer that could not be used. */
  finish(text: string): Promise<{
    answerId: string;
    markdown: string;
    check: CitationCheck;
    durationMs: number;
    fallback: { label: string; reason: string; text: string } | null;
  }>;
}

export interface MeshAskService {
  ask(body: AskBody, caller: { userId: string }, signal: AbortSignal): Promise<AskStream>;
  list(): Promise<{ answers: AskAnswerSummary[] }>;
  get(id: string): Promise<{ answer: AskAnswerDetail }>;
}

const iso = (d: Date | string) => new Date(d).toISOString();

export function createMeshAskService(deps: {
  db: Kysely<DB>;
  health: MeshHealthService;
  gateway: LlmGateway;
  clock: Clock;
}): MeshAskService {
  const { db, health, gateway, clock } = deps;

  async function store(row: {
    question: string;
    windowDays: number;
    evidence: EvidenceItem[];
    markdown: string;
    model: string | null;
    durationMs: number;
    createdBy: string;
  }): Promise<string> {
    return withService(db, async (tx) => {
      const r = await tx
        .insertInto('mesh_ask_answers')
        .values({
          question: row.question,
          window_days: row.windowDays,
          evidence: JSON.stringify(row.evidence),
          markdown: row.markdown.slice(0, MAX_ANSWER_CHARS),
          model: row.model,
          duration_ms: Math.max(0, Math.round(row.durationMs)),
          created_by: row.createdBy,
          created_at: clock.now(),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return r.id;
    });
  }

  function summaryQuery(tx: Tx) {
    return tx
      .selectFrom('mesh_ask_answers as a')
      .leftJoin('user as u', 'u.id', 'a.created_by')
      .select(['a.id', 'a.question', 'a.window_days', 'a.model', 'a.duration_ms', 'a.created_at', 'u.email']);
  }
  type SummaryRow = {
    id: string;
    question: string;
    window_days: number;
    model: string | null;
    duration_ms: number;
    created_at: Date;
    email: string | null;
  };
  const summaryOf = (r: SummaryRow): AskAnswerSummary => ({
    id: r.id,
    question: r.question,
    windowDays: r.window_days,
    model: r.model,
    durationMs: r.duration_ms,
    createdAt: iso(r.created_at),
    createdByEmail: r.email,
  });

  return {
    async ask(body, caller, signal) {
      const started = performance.now();
      const windowDays = WINDOW_DAYS[body.window];
      const rollup = await health.health(body.window);
      const records = await readAskRecords(db, new Date(rollup.from), new Date(rollup.to));
      const { items: evidence, leftOut } = buildEvidence(rollup, records, body.question);
      const base = { window: body.window, windowDays, from: rollup.from, to: rollup.to, evidence };

      // The summary's first line says why it answers instead of a model.
      const why = (w: OfflineWhy): string | null =>
        w.kind === 'unconfigured'
          ? null
          : w.kind === 'failed'
            ? `the language model could not answer (${w.failure.message.trim().replace(/[.\s]+$/, '')})`
            : `the language model's answer was not used because ${w.reason}`;
      let modelCheck: AnswerCheck | null = null;
      let durationMs = 0;
      const answer = await startAnswer(gateway, {
        instructions: ASK_INSTRUCTIONS,
        prompt: askPrompt(body.question, windowDays, evidence, leftOut),
        evidenceIds: evidenceIds(evidence),
        signal,
        maxOutputTokens: 2_000,
        nameModel: true,
        meta: base,
        offlineText: (w) => offlineSummary(body.question, windowDays, evidence, leftOut, why(w)),
        offlineLabel: (w) =>
          w.kind === 'unconfigured' ? OFFLINE_ASK_LABEL : w.kind === 'failed' ? FAILED_ASK_LABEL : REJECTED_ASK_LABEL,
        // Section by section, so the page shows the summary arriving like a model's answer.
        offlinePieces: (text) => text.split(/(?=^## )/m),
        check: (text) => {
          modelCheck = checkAnswer(text, evidence);
          return modelCheck.usable ? { ok: true, text: modelCheck.markdown } : { ok: false, reason: modelCheck.reason };
        },
        store: ({ source, text }) => {
          durationMs = Math.round(performance.now() - started);
          return store({
            question: body.question,
            windowDays,
            evidence,
            markdown: text,
            model: source === 'model' ? gateway.model : null,
            durationMs,
            createdBy: caller.userId,
          });
        },
      });
      return {
        meta: { ...answer.meta, model: answer.meta.model ?? null },
        chunks: answer.chunks,
        async finish(text) {
          const end = await answer.finish(text);
          // The check of the text as streamed: the model's (also when a fallback replaced it), or the offline summary's.
          const check = (modelCheck ?? checkAnswer(text, evidence)).check;
          return { answerId: end.storedId!, markdown: end.text, check, durationMs, fallback: end.fallback ?? null };
        },
      };
    },

    async list() {
      const rows = await withService(db, (tx) =>
        summaryQuery(tx).orderBy('a.created_at', 'desc').orderBy('a.id', 'desc').limit(LIST_LIMIT).execute(),
      );
      return { answers: rows.map((r) => summaryOf(r as SummaryRow)) };
    },

    async get(id) {
      const row = await withService(db, (tx) =>
        summaryQuery(tx).select(['a.evidence', 'a.markdown']).where('a.id', '=', id).executeTakeFirst(),
      );
      if (!row) throw appError('mesh_ask_answer_not_found', 'No stored answer has this id.');
      return { answer: { ...summaryOf(row as SummaryRow), evidence: row.evidence, markdown: row.markdown } };
    },
  };
}
