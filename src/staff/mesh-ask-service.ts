// Staff → "ask operations" (askMeshOperations, listMeshAskAnswers). A question over 24 h, 7 d or
// 30 d: the evidence is gathered from the mesh records and numbered (mesh-ask-evidence.ts), then
// the configured language model streams an answer citing it, or, without a model (or when the
// model fails before its first word), the offline summary, labelled. The finished answer is
// checked (cited numbers exist, through the shared citation checker; sections present): a model
// answer citing evidence that does not exist is replaced by the offline summary, labelled, as
// the other streamed helpers do. What is shown last is stored in mesh_ask_answers through the
// service role, the only role with access to that table.
import type { Generated, Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { withService, type Tx } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { appError, isAppError } from '../lib/errors.ts';
import { LlmAbortedError, type LlmGateway } from '../llm/index.ts';
import { askPrompt, ASK_INSTRUCTIONS, buildEvidence, checkAnswer, offlineSummary, readAskRecords } from './mesh-ask-evidence.ts';
import { OFFLINE_ASK_LABEL, REJECTED_ASK_LABEL, type AskAnswerDetail, type AskAnswerSummary, type AskBody, type AskStreamEvent, type CitationCheck, type EvidenceItem } from './mesh-ask-schemas.ts';
import { WINDOW_DAYS } from './mesh-health-schemas.ts';
import type { MeshHealthService } from './mesh-health-service.ts';

export interface MeshAskAnswersTable {
  id: Generated<string>;
  question: string;
  window_days: number;
  evidence: EvidenceItem[];
  markdown: string;
  model: string | null;
  duration_ms: number;
  created_by: string | null;
  created_at: Generated<Date>;
}
type AskTables = { mesh_ask_answers: MeshAskAnswersTable };
/** The migration's table, known to this module only (src/db/schema.ts stays as it is). */
const withAskTables = (tx: Tx) => tx.$extendTables<AskTables>();

/** Past answers listed. */
const LIST_LIMIT = 100;
const MAX_ANSWER_CHARS = 100_000;

export type AskMeta = Extract<AskStreamEvent, { event: 'meta' }>['data'];

/** A started answer: its meta (evidence included), text pieces, and `finish` to check and store it. */
export interface AskStream {
  meta: AskMeta;
  chunks: AsyncGenerator<string, void, undefined>;
  /** Checks and stores the finished text; `fallback` when the offline summary replaced a model answer that could not be used. */
  finish(text: string): Promise<{ answerId: string; markdown: string; check: CitationCheck; durationMs: number; fallback: { label: string; reason: string; text: string } | null }>;
}

export interface MeshAskService {
  ask(body: AskBody, caller: { userId: string }, signal: AbortSignal): Promise<AskStream>;
  list(): Promise<{ answers: AskAnswerSummary[] }>;
  get(id: string): Promise<{ answer: AskAnswerDetail }>;
}

const iso = (d: Date | string) => new Date(d).toISOString();

export function createMeshAskService(deps: { db: Kysely<DB>; health: MeshHealthService; gateway: LlmGateway; clock: Clock }): MeshAskService {
  const { db, health, gateway, clock } = deps;

  async function store(row: { question: string; windowDays: number; evidence: EvidenceItem[]; markdown: string; model: string | null; durationMs: number; createdBy: string }): Promise<string> {
    return withService(db, async (tx) => {
      const r = await withAskTables(tx)
        .insertInto('mesh_ask_answers')
        .values({
          question: row.question,
          window_days: row.windowDays,
          evidence: JSON.stringify(row.evidence) as unknown as EvidenceItem[],
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
    return withAskTables(tx)
      .selectFrom('mesh_ask_answers as a')
      .leftJoin('user as u', 'u.id', 'a.created_by')
      .select(['a.id', 'a.question', 'a.window_days', 'a.model', 'a.duration_ms', 'a.created_at', 'u.email']);
  }
  type SummaryRow = { id: string; question: string; window_days: number; model: string | null; duration_ms: number; created_at: Date; email: string | null };
  const summaryOf = (r: SummaryRow): AskAnswerSummary => ({ id: r.id, question: r.question, windowDays: r.window_days, model: r.model, durationMs: r.duration_ms, createdAt: iso(r.created_at), createdByEmail: r.email });

  return {
    async ask(body, caller, signal) {
      const started = performance.now();
      const windowDays = WINDOW_DAYS[body.window];
      const rollup = await health.health(body.window);
      const records = await readAskRecords(db, new Date(rollup.from), new Date(rollup.to));
      const { items: evidence, leftOut } = buildEvidence(rollup, records, body.question);
      const base = { window: body.window, windowDays, from: rollup.from, to: rollup.to, evidence };

      const finisher = (model: string | null) => async (text: string) => {
        const checked = checkAnswer(text, evidence);
        let fallback: { label: string; reason: string; text: string } | null = null;
        if (!checked.usable) {
          // Only a model answer can fail the check (the offline summary cites what it was given).
          const why = `the language model's answer was not used because ${checked.reason}`;
          fallback = { label: REJECTED_ASK_LABEL, reason: `The model's answer was not used: ${checked.reason}.`, text: offlineSummary(body.question, windowDays, evidence, leftOut, why) };
        }
        const markdown = checked.usable ? checked.markdown : fallback!.text;
        const durationMs = Math.round(performance.now() - started);
        const answerId = await store({ question: body.question, windowDays, evidence, markdown, model: fallback ? null : model, durationMs, createdBy: caller.userId });
        return { answerId, markdown, check: checked.check, durationMs, fallback };
      };
      const offline = (reason: string | null): AskStream => {
        const text = offlineSummary(body.question, windowDays, evidence, leftOut, reason ? `the language model could not answer (${reason.trim().replace(/[.\s]+$/, '')})` : null);
        return {
          meta: { source: 'offline', label: reason ? `${OFFLINE_ASK_LABEL}: the language model failed` : OFFLINE_ASK_LABEL, model: null, ...base },
          chunks: (async function* () {
            // Section by section, so the page shows it arriving like a model's answer.
            for (const part of text.split(/(?=^## )/m)) yield part;
          })(),
          finish: finisher(null),
        };
      };

      if (!gateway.configured) return offline(null);
      const upstream = gateway.stream({ instructions: ASK_INSTRUCTIONS, prompt: askPrompt(body.question, windowDays, evidence, leftOut), signal, maxOutputTokens: 2_000 });
      let first: IteratorResult<string, void>;
      try {
        first = await upstream.next();
      } catch (e) {
        if (e instanceof LlmAbortedError || signal.aborted) throw e;
        // Nothing was streamed yet: the operator still gets the evidence summarised, labelled.
        if (isAppError(e)) return offline(e.message);
        throw e;
      }
      return {
        meta: { source: 'model', label: 'model answer', model: gateway.model, ...base },
        chunks: (async function* () {
          if (first.done) return;
          yield first.value;
          yield* upstream;
        })(),
        finish: finisher(gateway.model),
      };
    },

    async list() {
      const rows = await withService(db, (tx) => summaryQuery(tx).orderBy('a.created_at', 'desc').orderBy('a.id', 'desc').limit(LIST_LIMIT).execute());
      return { answers: rows.map((r) => summaryOf(r as SummaryRow)) };
    },

    async get(id) {
      const row = await withService(db, (tx) => summaryQuery(tx).select(['a.evidence', 'a.markdown']).where('a.id', '=', id).executeTakeFirst());
      if (!row) throw appError('mesh_ask_answer_not_found', 'No stored answer has this id.');
      return { answer: { ...summaryOf(row as SummaryRow), evidence: row.evidence, markdown: row.markdown } };
    },
  };
}
