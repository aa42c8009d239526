// Streamed answers, shared by the result-file explainer, the device-check explainer and (through
// src/llm/index.ts) the mesh "ask operations" page:
//
//   startAnswer(gateway, {...})  → AnswerStream: the offline text when no model is configured,
//                                  otherwise the model's stream, awaited up to its first piece: a
//                                  model that fails before it (busy, credits, timeouts, 5xx) gets
//                                  the offline text instead, labelled, with the reason in `meta`
//                                  (`fallbackReason`, `fallbackError`); after the end the model
//                                  text's citations are checked and an answer citing unknown
//                                  evidence is replaced by the offline text.
//   sendAnswerStream(req, reply, start) → answers the request as text/event-stream (docs/llm.md):
//                                  `meta`, `delta`s, optionally `fallback`, then `done` or `error`.
//                                  A client that hangs up (the stop button) aborts the model call.
import { PassThrough } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { appError, isAppError, type AppError } from '../lib/errors.ts';
import { checkCitations } from './llm-citations.ts';
import { llmError } from './llm-errors.ts';
import { LlmAbortedError, type LlmGateway } from './llm-gateway.ts';
import { OFFLINE_LABEL, type AnswerMeta, type LlmFailure, type LlmStreamEvent } from './llm-schemas.ts';

export const MODEL_LABEL = 'model answer';

export interface AnswerStream {
  meta: AnswerMeta;
  chunks: AsyncGenerator<string, void, undefined>;
  /**
   * Called with the whole streamed text once it ended. Returns what replaces it when the model's
   * text failed validation, and the id of a stored copy (histories only).
   */
  finish(text: string): Promise<{ fallback?: { reason: string; text: string }; storedId?: string | null }>;
}

export interface StartAnswerInput {
  instructions: string;
  prompt: string;
  /** The offline analysis: the answer without a model, and the fallback for an invalid model answer. */
  offlineText: string;
  /** Evidence ids the prompt gave; citations to anything else invalidate the model's answer. */
  evidenceIds: readonly string[];
  signal?: AbortSignal | undefined;
  maxOutputTokens?: number;
  /** Extra facts for the `meta` event (file name, counts, ...). */
  meta?: Omit<AnswerMeta, 'source' | 'label' | 'model' | 'fallbackReason' | 'fallbackError'>;
  /** Stores the final answer (the explainer's history); returns its id. */
  store?: (answer: { source: 'model' | 'offline'; text: string }) => Promise<string>;
}

async function* once(text: string): AsyncGenerator<string, void, undefined> {
  yield text;
}

export async function startAnswer(gateway: LlmGateway, input: StartAnswerInput): Promise<AnswerStream> {
  const store = input.store;
  const offline = (failure?: AppError): AnswerStream => {
    const after = (failure?.details as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds;
    return {
      meta: {
        ...input.meta,
        source: 'offline',
        label: OFFLINE_LABEL,
        ...(failure ? { fallbackReason: failure.message, fallbackError: { error: failure.code, message: failure.message, ...(after !== undefined ? { retryAfterSeconds: after } : {}) } } : {}),
      },
      chunks: once(input.offlineText),
      finish: async (text) => ({ storedId: store ? await store({ source: 'offline', text }) : null }),
    };
  };
  if (!gateway.configured) return offline();
  const upstream = gateway.stream({ instructions: input.instructions, prompt: input.prompt, signal: input.signal, ...(input.maxOutputTokens ? { maxOutputTokens: input.maxOutputTokens } : {}) });
  let first: IteratorResult<string, void>;
  try {
    first = await upstream.next();
  } catch (e) {
    if (e instanceof LlmAbortedError || input.signal?.aborted) throw e;
    // Nothing was streamed yet: the offline analysis answers instead (it needs no model), with
    // the reason, as the evidence review and the mesh ask do.
    if (isAppError(e)) return offline(e);
    throw e;
  }
  return {
    meta: { ...input.meta, source: 'model', label: MODEL_LABEL },
    chunks: (async function* () {
      if (first.done) return;
      yield first.value;
      yield* upstream;
    })(),
    async finish(text) {
      const check = text.trim() ? checkCitations(text, input.evidenceIds) : ({ ok: false, reason: 'it was empty' } as const);
      if (!check.ok) {
        const fallback = { reason: `The model's answer was not used: ${check.reason}.`, text: input.offlineText };
        return { fallback, storedId: store ? await store({ source: 'offline', text: input.offlineText }) : null };
      }
      return { storedId: store ? await store({ source: 'model', text }) : null };
    },
  };
}

export interface EventStream {
  /** Writes one event; dropped once the client has gone or the stream ended. */
  write(event: string, data: unknown): void;
  /** The `error` event for a failure after the stream began; nothing when the client stopped it. */
  fail(error: unknown): void;
  end(): void;
  /** Answers the request with the stream (text/event-stream). */
  send(): FastifyReply;
}

/**
 * A text/event-stream answer, shared by every streamed route (explainers, evidence review, mesh
 * ask). `signal` is the client-gone signal: a failure after the client left is not reported.
 */
export function createEventStream(req: FastifyRequest, reply: FastifyReply, signal: AbortSignal): EventStream {
  const out = new PassThrough();
  const write = (event: string, data: unknown) => {
    if (!out.destroyed && !out.writableEnded) out.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  return {
    write,
    fail(e) {
      if (e instanceof LlmAbortedError || signal.aborted) return;
      const err = isAppError(e) ? e : llmError('llm_unavailable', 'The answer could not be completed. Try again in a moment.');
      // Name, code and message only: a database error's `detail` can quote the row (the answer).
      if (!isAppError(e)) req.log.error({ errName: (e as Error)?.name, errCode: (e as { code?: unknown })?.code, errMessage: (e as Error)?.message }, 'streamed answer failed');
      const after = (err.details as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds;
      write('error', { error: err.code, message: err.message, ...(after !== undefined ? { retryAfterSeconds: after } : {}) });
    },
    end: () => out.end(),
    send: () => reply.header('content-type', 'text/event-stream; charset=utf-8').header('cache-control', 'no-store').header('x-accel-buffering', 'no').send(out),
  };
}

/** An AbortSignal that fires when the client goes away before the answer is complete. */
export function clientGone(req: FastifyRequest, reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) ac.abort();
  });
  req.raw.once('aborted', () => ac.abort());
  return ac.signal;
}

/** What a streamed answer needs: its meta (first event) and its text pieces (`delta` events). */
interface StreamedAnswer {
  meta: unknown;
  chunks: AsyncIterable<string>;
}

/**
 * Answers with a text/event-stream: `meta`, one `delta` per text piece, then the events `close`
 * returns for the whole text (none once the client is gone, if it says so). `start` gets the
 * client-gone signal; errors it throws (before any text) become ordinary JSON error responses,
 * later ones an `error` event. Every streamed route (explainers, evidence review, mesh ask) uses it.
 */
export async function streamAnswer<S extends StreamedAnswer>(
  req: FastifyRequest,
  reply: FastifyReply,
  start: (signal: AbortSignal) => Promise<S>,
  close: (stream: S, text: string, signal: AbortSignal) => Promise<{ event: string; data: unknown }[]>,
): Promise<FastifyReply> {
  const signal = clientGone(req, reply);
  let stream: S;
  try {
    stream = await start(signal);
  } catch (e) {
    if (e instanceof LlmAbortedError || signal.aborted) throw appError('llm_cancelled', 'The request was cancelled.');
    throw e;
  }
  const events = createEventStream(req, reply, signal);
  void (async () => {
    let text = '';
    try {
      events.write('meta', stream.meta);
      for await (const piece of stream.chunks) {
        text += piece;
        events.write('delta', { text: piece });
      }
      for (const e of await close(stream, text, signal)) events.write(e.event, e.data);
    } catch (e) {
      events.fail(e);
    } finally {
      events.end();
    }
  })();
  return events.send();
}

/**
 * Tells operators that the model failed and the offline analysis answered (credits exhausted,
 * busy, timeouts, a wrong key or URL): the code and friendly message only, never the prompt.
 */
export function logFallback(req: FastifyRequest, failure: LlmFailure | undefined): void {
  // The message is our own friendly text (it names the setting to check), never upstream text.
  if (failure) req.log.warn({ llmError: failure.error, llmMessage: failure.message, ...(failure.retryAfterSeconds !== undefined ? { retryAfterSeconds: failure.retryAfterSeconds } : {}) }, 'language model failed; the offline analysis answered');
}

/** streamAnswer for an AnswerStream: its check or fallback, then `done` with the stored copy's id. */
export function sendAnswerStream(req: FastifyRequest, reply: FastifyReply, start: (signal: AbortSignal) => Promise<AnswerStream>): Promise<FastifyReply> {
  const started = async (signal: AbortSignal) => {
    const stream = await start(signal);
    logFallback(req, stream.meta.fallbackError);
    return stream;
  };
  return streamAnswer(req, reply, started, async (stream, text) => {
    const end = await stream.finish(text);
    const out: LlmStreamEvent[] = [];
    if (end.fallback) out.push({ event: 'fallback', data: { source: 'offline', label: OFFLINE_LABEL, reason: end.fallback.reason, text: end.fallback.text } });
    out.push({ event: 'done', data: { explanationId: end.storedId ?? null, source: end.fallback ? 'offline' : stream.meta.source } });
    return out;
  });
}
