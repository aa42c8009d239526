// Language-model helpers (/api/v1/tenants/:tenantId/llm/...): a generic reader for streamed
// answers (text/event-stream, docs/llm.md) that other pages reuse, the result-file explainer and
// its private history, and the evidence review.
//
// streamLlm(path, form, handlers, signal): POSTs multipart form data with the CSRF header and
// reads the server-sent events: `meta` once (with `fallbackReason` / `fallbackError` when the
// model failed before its first word and the offline analysis answers instead), `delta` pieces,
// optionally `fallback` (the model's text failed validation; the offline analysis replaces it),
// then `done` or `error`. Errors before
// the stream starts are JSON answers; both kinds become a thrown LlmError (an ApiError with
// `retryAfterSeconds` when the model was busy). Aborting `signal` (the stop button) closes the
// connection, which aborts the model call on the server; the promise then rejects with an
// AbortError.
import { queryOptions } from '@tanstack/react-query';
import type {
  AnswerMeta,
  EvidenceReview,
  ExplanationDetail,
  ExplanationSummary,
  LlmStreamEvent,
} from '../../llm/llm-schemas.ts';
import { api, ApiError, defaultMessageFor, fetchMe } from './api.ts';
import { ME_KEY, queryClient } from './query-client.ts';
import type { Me } from './types.ts';

export type { EvidenceReview, ExplanationDetail, ExplanationSummary };
export type StreamMeta = AnswerMeta;
export type StreamFallback = Extract<LlmStreamEvent, { event: 'fallback' }>['data'];
export type StreamDone = Extract<LlmStreamEvent, { event: 'done' }>['data'];

export class LlmError extends ApiError {
  readonly retryAfterSeconds: number | undefined;
  constructor(status: number, code: string, message: string, details?: unknown) {
    super(status, code, message, details);
    this.name = 'LlmError';
    const after = (details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
    this.retryAfterSeconds = typeof after === 'number' ? after : undefined;
  }
}

export interface StreamHandlers {
  /** The answer's source (model or offline analysis) and facts, before any text. */
  onMeta?: (meta: StreamMeta) => void;
  /** Each piece of text as it arrives, and the whole text so far. */
  onDelta?: (piece: string, text: string) => void;
  /** The model's answer was refused (it cited evidence that does not exist); `text` replaces it. */
  onFallback?: (fallback: StreamFallback, meta: StreamMeta) => void;
}

export interface StreamResult {
  meta: StreamMeta | null;
  text: string;
  done: StreamDone;
  /** Set when the offline analysis replaced the model's answer, or stood in for a failed model. */
  fallbackReason?: string | null;
}

const base = (tenantId: string) => `/api/v1/tenants/${encodeURIComponent(tenantId)}/llm`;

async function csrf(): Promise<string> {
  const me =
    queryClient.getQueryData<Me | null>(ME_KEY) ??
    (await queryClient.fetchQuery({ queryKey: ME_KEY, queryFn: fetchMe, staleTime: 0 }));
  return me?.csrfToken ?? '';
}

async function errorOf(response: Response): Promise<LlmError> {
  let body: { error?: unknown; message?: unknown; details?: unknown } = {};
  try {
    body = (await response.json()) as typeof body;
  } catch {
    // not JSON: a proxy's page
  }
  const code = typeof body.error === 'string' ? body.error : `http_${response.status}`;
  const message =
    typeof body.message === 'string'
      ? body.message
      : response.status === 413
        ? 'The file is larger than the server accepts.'
        : defaultMessageFor(response.status);
  return new LlmError(response.status, code, message, body.details);
}

/** Splits a server-sent-events buffer into complete events and the unfinished rest. */
export function parseSseChunk(buffer: string): { events: { event: string; data: string }[]; rest: string } {
  const events: { event: string; data: string }[] = [];
  let rest = buffer.replace(/\r\n/g, '\n');
  for (let end = rest.indexOf('\n\n'); end >= 0; end = rest.indexOf('\n\n')) {
    const block = rest.slice(0, end);
    rest = rest.slice(end + 2);
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length) events.push({ event, data: data.join('\n') });
  }
  return { events, rest };
}

/** POSTs `body` (multipart form data, or a JSON string) to a streaming route: the open response, or its error as an LlmError. */
export async function openAnswerStream(path: string, body: FormData | string, signal?: AbortSignal): Promise<Response> {
  let response: Response;
  const headers: Record<string, string> = { accept: 'text/event-stream', 'x-csrf-token': await csrf() };
  // A string body is JSON; FormData sets its own multipart content type.
  if (typeof body === 'string') headers['content-type'] = 'application/json';
  try {
    response = await fetch(path, { method: 'POST', body, credentials: 'same-origin', headers, signal });
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw new LlmError(0, 'network_error', 'Cannot reach the Rampart server. Check your connection and try again.');
  }
  if (!response.ok || !response.body) throw await errorOf(response);
  return response;
}

/**
 * Reads a streamed answer's events, handing each to `on` until it returns a result. An `error`
 * event throws its LlmError; Stop (the signal) throws an AbortError; an answer that ends or breaks
 * before its result throws a friendly LlmError.
 */
export async function readAnswerEvents<T>(
  response: Response,
  signal: AbortSignal | undefined,
  on: (event: string, data: Record<string, unknown>) => T | undefined,
): Promise<T> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const parsed = parseSseChunk(buffer + value);
      buffer = parsed.rest;
      for (const e of parsed.events) {
        const data = JSON.parse(e.data) as Record<string, unknown>;
        if (e.event === 'error') {
          const d = data as { error?: string; message?: string; retryAfterSeconds?: number };
          throw new LlmError(
            200,
            d.error ?? 'llm_unavailable',
            d.message ?? 'The answer could not be completed.',
            d.retryAfterSeconds !== undefined ? { retryAfterSeconds: d.retryAfterSeconds } : undefined,
          );
        }
        const result = on(e.event, data);
        if (result !== undefined) return result;
      }
    }
  } catch (e) {
    if (signal?.aborted) throw new DOMException('Stopped.', 'AbortError');
    if (e instanceof ApiError) throw e;
    throw new LlmError(0, 'llm_unavailable', 'The answer could not be read. Try again.');
  } finally {
    reader.releaseLock();
  }
  if (signal?.aborted) throw new DOMException('Stopped.', 'AbortError');
  throw new LlmError(0, 'llm_unavailable', 'The answer ended unexpectedly. Try again.');
}

/** POSTs `body` to a streaming route and reads its events (see the file header). */
export async function streamLlm(
  path: string,
  body: FormData | string,
  handlers: StreamHandlers = {},
  signal?: AbortSignal,
): Promise<StreamResult> {
  const response = await openAnswerStream(path, body, signal);
  let meta: StreamMeta | null = null;
  let text = '';
  let fallbackReason: string | null = null;
  return readAnswerEvents(response, signal, (event, data): StreamResult | undefined => {
    if (event === 'meta') {
      meta = data as unknown as StreamMeta;
      // The model failed before its first word: the offline analysis answers, with the reason.
      if (meta.fallbackReason) fallbackReason = meta.fallbackReason;
      handlers.onMeta?.(meta);
    } else if (event === 'fallback') {
      const f = data as unknown as StreamFallback;
      text = f.text;
      fallbackReason = f.reason;
      meta = { ...meta, source: 'offline', label: f.label };
      handlers.onFallback?.(f, meta);
    } else if (event === 'delta') {
      const piece = String(data.text ?? '');
      text += piece;
      handlers.onDelta?.(piece, text);
    } else if (event === 'done') {
      return { meta, text, done: data as unknown as StreamDone, fallbackReason };
    }
    return undefined;
  });
}

/** A friendly sentence for an LLM error, with the wait when the model was busy. */
export function llmErrorMessage(error: unknown): string {
  if (error instanceof LlmError && error.code === 'llm_busy')
    return error.retryAfterSeconds !== undefined
      ? `The language model is busy. Try again in ${error.retryAfterSeconds} second${error.retryAfterSeconds === 1 ? '' : 's'}.`
      : 'The language model is busy. Try again in a moment.';
  if (error instanceof ApiError) return error.message;
  return 'Something went wrong. Try again.';
}

// ---- result-file explainer ---------------------------------------------------------------------

export function explainResultFile(
  tenantId: string,
  file: File,
  handlers: StreamHandlers,
  signal?: AbortSignal,
): Promise<StreamResult> {
  const form = new FormData();
  form.append('file', file, file.name);
  return streamLlm(`${base(tenantId)}/explain`, form, handlers, signal);
}

export const llmKeys = {
  explanations: (tenantId: string) => ['tenant', tenantId, 'llm', 'explanations'] as const,
  explanation: (tenantId: string, id: string) => ['tenant', tenantId, 'llm', 'explanations', id] as const,
};

export const explanationsQuery = (tenantId: string) =>
  queryOptions({
    queryKey: llmKeys.explanations(tenantId),
    queryFn: ({ signal }) =>
      api<{ explanations: ExplanationSummary[] }>(`${base(tenantId)}/explanations`, { signal }).then(
        (r) => r.explanations,
      ),
  });

export const explanationQuery = (tenantId: string, id: string) =>
  queryOptions({
    queryKey: llmKeys.explanation(tenantId, id),
    queryFn: ({ signal }) =>
      api<{ explanation: ExplanationDetail }>(`${base(tenantId)}/explanations/${encodeURIComponent(id)}`, {
        signal,
      }).then((r) => r.explanation),
  });

export const deleteExplanation = (tenantId: string, id: string) =>
  api<void>(`${base(tenantId)}/explanations/${encodeURIComponent(id)}`, { method: 'DELETE' });

/** The download address of the result file kept with an explanation (an attachment; the session cookie authorizes it). */
export const explanationFileUrl = (tenantId: string, id: string) =>
  `${base(tenantId)}/explanations/${encodeURIComponent(id)}/file`;

/** The first `maxBytes` of the kept result file as text (for a preview; the download has it all). */
export async function previewExplanationFile(
  tenantId: string,
  id: string,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<{ text: string; truncated: boolean }> {
  const response = await fetch(explanationFileUrl(tenantId, id), { credentials: 'same-origin', signal });
  if (!response.ok || !response.body) throw await errorOf(response);
  const reader = response.body.getReader();
  const parts: Uint8Array[] = [];
  let n = 0;
  let truncated = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parts.push(value);
    n += value.length;
    if (n > maxBytes) {
      truncated = true;
      await reader.cancel();
      break;
    }
  }
  const all = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  // Cut at the limit; a multi-byte character split there becomes one replacement character.
  return { text: new TextDecoder().decode(all.subarray(0, Math.min(n, maxBytes))), truncated };
}

// ---- device-check explainer ------------------------------------------------------------------

/** Explains the latest device-check run per computer (optionally only `hostnames`), plus pasted output and notes; nothing is stored. */
export async function explainDeviceCheck(
  tenantId: string,
  input: { pastedOutput?: string; notes?: string; hostnames?: string[] },
  handlers: StreamHandlers,
  signal?: AbortSignal,
): Promise<StreamResult> {
  const body: Record<string, unknown> = {};
  if (input.pastedOutput?.trim()) body.pastedOutput = input.pastedOutput;
  if (input.notes?.trim()) body.notes = input.notes;
  if (input.hostnames?.length) body.hostnames = input.hostnames;
  return streamLlm(`${base(tenantId)}/device-check/explain`, JSON.stringify(body), handlers, signal);
}

// ---- evidence review ---------------------------------------------------------------------------

/** Reviews up to 8 documents (PDF, TXT, Markdown) against the default (CMMC Level 1) requirements; nothing is stored. */
/**
 * Streams an evidence review: `onPreliminary` gets the offline review as soon as the documents are
 * read (while a model reviews them); the promise resolves with the final review.
 */
export async function reviewEvidence(
  tenantId: string,
  input: { files: File[]; notes?: string },
  signal?: AbortSignal,
  onPreliminary?: (review: EvidenceReview) => void,
): Promise<EvidenceReview> {
  const form = new FormData();
  if (input.notes?.trim()) form.append('notes', input.notes);
  for (const f of input.files) form.append('files', f, f.name);
  const response = await openAnswerStream(`${base(tenantId)}/evidence-review`, form, signal);
  return readAnswerEvents(response, signal, (event, data) => {
    const review = data.review as EvidenceReview | undefined;
    if (event === 'preliminary' && review) onPreliminary?.(review);
    return event === 'done' ? review : undefined;
  });
}
