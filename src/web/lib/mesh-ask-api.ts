// Staff "ask operations" (/api/v1/staff/mesh/ask…): the streamed answer (text/event-stream:
// `meta` with the numbered evidence, and `fallbackReason` / `fallbackError` when the model failed
// before its first word and the offline summary answers; `delta` pieces, `fallback` when the
// model's answer cited evidence that does not exist and the offline summary replaced it, then
// `done` or `error`) and
// the stored answers. askMeshOperations returns what useStreamedAnswer expects, with the stored
// markdown as the final text; onEvidence gets the meta (evidence included) before any text.
import { queryOptions } from '@tanstack/react-query';
import type {
  AskAnswerDetail,
  AskAnswerSummary,
  AskStreamEvent,
  CitationCheck,
  EvidenceItem,
} from '../../staff/mesh-ask-schemas.ts';
import type { HealthWindow } from '../../staff/mesh-health-schemas.ts';
import { api } from './api.ts';
import {
  openAnswerStream,
  readAnswerEvents,
  type StreamFallback,
  type StreamHandlers,
  type StreamMeta,
  type StreamResult,
} from './llm-api.ts';

export type { AskAnswerDetail, AskAnswerSummary, CitationCheck, EvidenceItem };
export type AskMeta = Extract<AskStreamEvent, { event: 'meta' }>['data'];
export type AskDone = Extract<AskStreamEvent, { event: 'done' }>['data'];

export const meshAskKeys = {
  answers: ['staff', 'mesh-ask', 'answers'] as const,
  answer: (id: string) => ['staff', 'mesh-ask', 'answers', id] as const,
};

export const askAnswersQuery = queryOptions({
  queryKey: meshAskKeys.answers,
  queryFn: ({ signal }) =>
    api<{ answers: AskAnswerSummary[] }>('/api/v1/staff/mesh/ask/answers', { signal }).then((r) => r.answers),
});

export const askAnswerQuery = (id: string) =>
  queryOptions({
    queryKey: meshAskKeys.answer(id),
    queryFn: ({ signal }) =>
      api<{ answer: AskAnswerDetail }>(`/api/v1/staff/mesh/ask/answers/${encodeURIComponent(id)}`, { signal }).then(
        (r) => r.answer,
      ),
  });

export interface AskHandlers extends StreamHandlers {
  onEvidence?: (meta: AskMeta) => void;
  onDone?: (done: AskDone) => void;
}

/** Streams one answer (see the file header). Errors before the stream and `error` events throw an LlmError. */
export async function askMeshOperations(
  input: { question: string; window: HealthWindow },
  handlers: AskHandlers,
  signal?: AbortSignal,
): Promise<StreamResult> {
  const response = await openAnswerStream('/api/v1/staff/mesh/ask', JSON.stringify(input), signal);
  let meta: AskMeta | null = null;
  let shown: StreamMeta | null = null;
  let text = '';
  return readAnswerEvents(response, signal, (event, data): StreamResult | undefined => {
    if (event === 'meta') {
      meta = data as AskMeta;
      handlers.onEvidence?.(meta);
      // The failure, when there is one, so the page shows the friendly message (and "Try again") as for every helper.
      shown = {
        source: meta.source,
        label: meta.label,
        model: meta.model,
        ...(meta.fallbackReason ? { fallbackReason: meta.fallbackReason } : {}),
        ...(meta.fallbackError ? { fallbackError: meta.fallbackError } : {}),
      };
      handlers.onMeta?.(shown);
    } else if (event === 'fallback') {
      // The same event as the other helpers': the offline summary replaces the streamed text, labelled.
      const f = data as unknown as StreamFallback;
      text = f.text;
      shown = { source: 'offline', label: f.label, model: null };
      handlers.onFallback?.(f, shown);
    } else if (event === 'delta') {
      const piece = String(data.text ?? '');
      text += piece;
      handlers.onDelta?.(piece, text);
    } else if (event === 'done') {
      const done = data as AskDone;
      handlers.onDone?.(done);
      return {
        meta: shown,
        text: done.markdown,
        done: { explanationId: done.answerId, source: done.source },
        fallbackReason: done.fallbackReason,
      };
    }
    return undefined;
  });
}
