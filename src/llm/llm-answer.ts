// Streamed answers, shared by the result-file explainer, the device-check explainer and (through
// src/llm/index.ts) the staff mesh "ask operations":
//
//   startAnswer(gateway, {...})  → AnswerStream: the offline text when no model is configured,
//                                  otherwise the model's stream, awaited up to its first piece: a
//                                  model that fails before it (busy, credits, timeouts, 5xx) gets
//                                  the offline text instead, labelled, with the reason in `meta`
//                                  (`fallbackReason`, `fallbackError`); after the end the model
//                                  text is checked (by default: not empty, citations only to the
//                                  evidence ids) and an answer failing the check is replaced by
//                                  the offline text. Hooks let a helper write the offline text
//                                  and its label per reason, stream it in pieces, check the model
//                                  text its own way, name the model in `meta`, and store the result.
//   sendAnswerStream(req, reply, start) → answers the request as text/event-stream (docs/llm.md):
//                                  `meta`, `delta`s, optionally `fallback`, then `done` or `error`.
//                                  A client that hangs up (the stop button) aborts the model call.
import { PassThrough } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { appError, isAppError } from '../lib/errors.ts';
import { checkCitations } from './llm-citations.ts';
import { llmError, llmFailureOf } from './llm-errors.ts';
import { LlmAbortedError, type LlmGateway } from './llm-gateway.ts';
import {
  OFFLINE_LABEL,
  type AnswerMeta,
  type AnswerSource,
  type LlmFailure,
  type LlmStreamEvent,
} from './llm-schemas.ts';

export const MODEL_LABEL = 'model answer';

/**
 * Why the offline analysis answers: no model is configured, the model failed before its first
 * word (`failure`: code, friendly message, wait), or its finished answer failed the check.
 */
export type OfflineWhy =
  { kind: 'unconfigured' } | { kind: 'failed'; failure: LlmFailure } | { kind: 'rejected'; reason: string };

/** The check of a finished model answer: usable (`text`: what to keep instead, e.g. with a note added), or why not. */
export type AnswerCheckResult = { ok: true; text?: string } | { ok: false; reason: string };

/** How a streamed answer ended: the fallback that replaced the model's text, what was kept, and the stored copy's id. */
export interface AnswerEnd {
  fallback?: { label: string; reason: string; text: string };
  /** The answer as kept: the streamed text, the checked model text, or the fallback's text. */
  text: string;
  storedId: string | null;
}

export interface AnswerStream<M extends object = object> {
  meta: AnswerMeta & M;
  chunks: AsyncGenerator<string, void, undefined>;
  /** Called with the whole streamed text once it ended: checks a model's text (and replaces it when it fails), stores what is kept. */
  finish(text: string): Promise<AnswerEnd>;
}

export interface StartAnswerInput<M extends object = object> {
  instructions: string;
  prompt: string;
  /**
   * The offline analysis: the answer without a model, when the model fails before its first
   * word, and when its answer fails the check. A function gets why it answers.
   */
  offlineText: string | ((why: OfflineWhy) => string);
  /** The offline answer's label per reason (default "offline analysis" for all). */
  offlineLabel?: (why: OfflineWhy) => string;
  /** The pieces the offline text streams in (default: one). */
  offlinePieces?: (text: string) => Iterable<string>;
  /** Evidence ids the prompt gave; citations to anything else invalidate the model's answer. */
  evidenceIds: readonly string[];
  /** The letters those ids start with ("F" for F1, F2, …): bracketed ids with other letters ("[P95]") are not citations. Default: those of evidenceIds. */
  evidencePrefixes?: readonly string[];
  /** Replaces the default check of the model's finished text (not empty, citations only to evidenceIds). */
  check?: (text: string) => AnswerCheckResult;
  /** Puts `model` in `meta`: the model's name for a model answer, null for the offline one (staff mesh ask only). */
  nameModel?: boolean;
  signal?: AbortSignal | undefined;
  maxOutputTokens?: number;
  /** Extra facts for the `meta` event (file name, counts, the evidence, ...). */
  meta?: M;
  /** Stores the final answer (a history); returns its id. */
  store?: (answer: { source: AnswerSource; text: string }) => Promise<string>;
}

async function* pieces(parts: Iterable<string>): AsyncGenerator<string, void, undefined> {
  for (const p of parts) if (p) yield p;
}

function defaultCheck(
  text: string,
  evidenceIds: readonly string[],
  prefixes: readonly string[] | undefined,
): AnswerCheckResult {
  if (!text.trim()) return { ok: false, reason: 'it was empty' };
  const c = checkCitations(text, evidenceIds, prefixes ? { prefixes } : {});
  return c.ok ? { ok: true } : { ok: false, reason: c.reason };
}

export async function startAnswer<M extends object = object>(
  gateway: LlmGateway,
  input: StartAnswerInput<M>,
): Promise<AnswerStream<M>> {
  const keep = async (source: AnswerSource, text: string) => (input.store ? input.store({ source, text }) : null);
  const textFor = (why: OfflineWhy) =>
    typeof input.offlineText === 'string' ? input.offlineText : input.offlineText(why);
  const labelFor = (why: OfflineWhy) => input.offlineLabel?.(why) ?? OFFLINE_LABEL;
  const named = (model: string | null) => (input.nameModel ? { model } : {});
  const offline = (why: OfflineWhy): AnswerStream<M> => {
    const text = textFor(why);
    const failure = why.kind === 'failed' ? { fallbackReason: why.failure.message, fallbackError: why.failure } : {};
    return {
      meta: { ...(input.meta as M), source: 'offline', label: labelFor(why), ...named(null), ...failure },
      chunks: pieces(input.offlinePieces ? input.offlinePieces(text) : [text]),
      finish: async (streamed) => ({ text: streamed, storedId: await keep('offline', streamed) }),
    };
  };
  if (!gateway.configured) return offline({ kind: 'unconfigured' });
  const upstream = gateway.stream({
    instructions: input.instructions,
    prompt: input.prompt,
    signal: input.signal,
    ...(input.maxOutputTokens ? { maxOutputTokens: input.maxOutputTokens } : {}),
  });
  let first: IteratorResult<string, void>;
  try {
    first = await upstream.next();
  } catch (e) {
    if (e instanceof LlmAbortedError || input.signal?.aborted) throw e;
    // Nothing was streamed yet: the offline analysis answers instead (it needs no model), with
    // the reason, as the evidence review does.
    if (isAppError(e)) return offline({ kind: 'failed', failure: llmFailureOf(e) });
    throw e;
  }
  return {
    meta: { ...(input.meta as M), source: 'model', label: MODEL_LABEL, ...named(gateway.model) },
    chunks: (async function* () {
      if (first.done) return;
      yield first.value;
      yield* upstream;
    })(),
    async finish(text) {
      const check = input.check ? input.check(text) : defaultCheck(text, input.evidenceIds, input.evidencePrefixes);
      if (!check.ok) {
        const why: OfflineWhy = { kind: 'rejected', reason: check.reason };
        const replacement = textFor(why);
        return {
          fallback: {
            label: labelFor(why),
            reason: `The model's answer was not used: ${check.reason}.`,
            text: replacement,
          },
          text: replacement,
          storedId: await keep('offline', replacement),
        };
      }
      const kept = check.text ?? text;
      return { text: kept, storedId: await keep('model', kept) };
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
      const err = isAppError(e)
        ? e
        : llmError('llm_unavailable', 'The answer could not be completed. Try again in a moment.');
      // Name, code and message only: a database error's `detail` can quote the row (the answer).
      if (!isAppError(e))
        req.log.error(
          { errName: (e as Error)?.name, errCode: (e as { code?: unknown })?.code, errMessage: (e as Error)?.message },
          'streamed answer failed',
        );
      write('error', llmFailureOf(err));
    },
    end: () => out.end(),
    send: () =>
      reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('x-accel-buffering', 'no')
        .send(out),
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

/** How a streamed answer ended (streamAnswer's `ended`). */
export type StreamOutcome = 'done' | 'stopped' | 'failed';

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
 * `ended`, when given, runs once the stream is over, before the response ends, with how it ended:
 * `done` (all events written), `stopped` (the client went away) or `failed` (an `error` event);
 * a failure inside it is logged, never sent.
 */
export async function streamAnswer<S extends StreamedAnswer>(
  req: FastifyRequest,
  reply: FastifyReply,
  start: (signal: AbortSignal) => Promise<S>,
  close: (stream: S, text: string, signal: AbortSignal) => Promise<{ event: string; data: unknown }[]>,
  ended?: (stream: S, outcome: StreamOutcome) => Promise<void>,
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
    let outcome: StreamOutcome = 'failed';
    try {
      events.write('meta', stream.meta);
      for await (const piece of stream.chunks) {
        text += piece;
        events.write('delta', { text: piece });
      }
      for (const e of await close(stream, text, signal)) events.write(e.event, e.data);
      outcome = signal.aborted ? 'stopped' : 'done';
    } catch (e) {
      if (e instanceof LlmAbortedError || signal.aborted) outcome = 'stopped';
      events.fail(e);
    } finally {
      if (ended) {
        try {
          await ended(stream, outcome);
        } catch (e) {
          req.log.error(
            { errName: (e as Error)?.name, errMessage: (e as Error)?.message },
            'streamed answer: ending step failed',
          );
        }
      }
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
  if (failure)
    req.log.warn(
      {
        llmError: failure.error,
        llmMessage: failure.message,
        ...(failure.retryAfterSeconds !== undefined ? { retryAfterSeconds: failure.retryAfterSeconds } : {}),
      },
      'language model failed; the offline analysis answered',
    );
}

/** streamAnswer for an AnswerStream: its check or fallback, then `done` with the stored copy's id. */
export function sendAnswerStream(
  req: FastifyRequest,
  reply: FastifyReply,
  start: (signal: AbortSignal) => Promise<AnswerStream>,
): Promise<FastifyReply> {
  const started = async (signal: AbortSignal) => {
    const stream = await start(signal);
    logFallback(req, stream.meta.fallbackError);
    return stream;
  };
  return streamAnswer(req, reply, started, async (stream, text) => {
    const end = await stream.finish(text);
    const out: LlmStreamEvent[] = [];
    if (end.fallback)
      out.push({
        event: 'fallback',
        data: { source: 'offline', label: end.fallback.label, reason: end.fallback.reason, text: end.fallback.text },
      });
    out.push({
      event: 'done',
      data: { explanationId: end.storedId ?? null, source: end.fallback ? 'offline' : stream.meta.source },
    });
    return out;
  });
}
