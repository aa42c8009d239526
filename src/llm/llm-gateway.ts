// The language-model gateway: any OpenAI-compatible chat-completions endpoint (OpenAI, Azure,
// Ollama, vLLM, LM Studio, a hosted gateway) through the AI SDK, configured by LLM_BASE_URL,
// LLM_API_KEY and LLM_MODEL. Unconfigured, `configured` is false and callers use the offline
// analyzers instead.
//
// Timeouts: `connectMs` until the upstream's response headers, `firstTokenMs` until the first
// streamed text, `totalMs` for a whole answer. An upstream 429 with a short Retry-After (or none:
// 1 s) is waited out and retried (at most `busyRetries` times, before anything was streamed); otherwise it
// becomes llm_busy with retryAfterSeconds for the client. 402 is never retried. The caller's
// AbortSignal (the browser hung up, the stop button) aborts the upstream request.
//
// Structured output (`structuredOutputs`, LLM_STRUCTURED_OUTPUT): a `complete()` call that passes
// an `output` schema then asks for response_format json_schema (strict) through the provider's
// supportsStructuredOutputs; off (the default), or without a schema, the prompt alone asks for
// JSON, which every OpenAI-compatible server supports. Either way the caller validates the text.
//
// Nothing here logs: not the key, not the prompt, not the answer.
//
// The AI SDK is imported on the first model call, not at server start (it costs ~150 ms to load).
import type { LanguageModel } from 'ai';
import type { z } from 'zod';
import { AppError } from '../lib/errors.ts';
import { mapUpstreamError, retryAfterSeconds, type TimeoutKind } from './llm-errors.ts';

export interface LlmGatewayOptions {
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  model?: string | undefined;
  connectMs?: number;
  firstTokenMs?: number;
  totalMs?: number;
  /** Retries of a 429 whose Retry-After is at most maxRetryWaitSeconds. */
  busyRetries?: number;
  maxRetryWaitSeconds?: number;
  /** Send response_format json_schema for complete() calls that give a schema (LLM_STRUCTURED_OUTPUT). */
  structuredOutputs?: boolean;
  fetch?: typeof fetch;
}

/** The JSON schema a structured answer must follow (sent only when the gateway was created with structuredOutputs). */
export interface LlmOutputSchema {
  /** response_format json_schema name: letters, digits, _ and - only. */
  name: string;
  description?: string;
  /** All fields required and no defaults: strict JSON schema as OpenAI defines it. */
  schema: z.ZodType;
}

export interface LlmPrompt {
  /** Our instructions (system message). */
  instructions: string;
  /** The user message: the task plus delimited, untrusted data. */
  prompt: string;
  signal?: AbortSignal | undefined;
  maxOutputTokens?: number;
  /** complete() only: ask for this JSON schema when structured output is on; the prompt must ask for the same JSON anyway. */
  output?: LlmOutputSchema;
}

export interface LlmGateway {
  readonly configured: boolean;
  /** The model name (not a secret); null when unconfigured. */
  readonly model: string | null;
  /** Streams the answer's text pieces. Throws an llm_* AppError, or an AbortError when `signal` aborted. */
  stream(p: LlmPrompt): AsyncGenerator<string, void, undefined>;
  /** The whole answer's text (non-streaming). */
  complete(p: LlmPrompt): Promise<string>;
}

type Sdk = { ai: typeof import('ai'); provider: typeof import('@ai-sdk/openai-compatible') };
let sdk: Promise<Sdk> | null = null;
const loadSdk = (): Promise<Sdk> =>
  (sdk ??= Promise.all([import('ai'), import('@ai-sdk/openai-compatible')]).then(([ai, provider]) => ({
    ai,
    provider,
  })));

export const LLM_DEFAULTS = {
  connectMs: 15_000,
  firstTokenMs: 45_000,
  totalMs: 180_000,
  busyRetries: 1,
  maxRetryWaitSeconds: 5,
} as const;

export class LlmAbortedError extends Error {
  constructor() {
    super('The request was cancelled.');
    this.name = 'AbortError';
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new LlmAbortedError());
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new LlmAbortedError());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** One attempt's abort bookkeeping: the caller's signal, our timers, and which one fired. */
class Attempt {
  readonly controller = new AbortController();
  timedOut: TimeoutKind = null;
  private timers: NodeJS.Timeout[] = [];
  private readonly outer: AbortSignal | undefined;
  private readonly onOuter = () => this.controller.abort();
  constructor(outer: AbortSignal | undefined) {
    this.outer = outer;
    if (outer?.aborted) this.controller.abort();
    outer?.addEventListener('abort', this.onOuter, { once: true });
  }
  timer(kind: Exclude<TimeoutKind, null>, ms: number): NodeJS.Timeout {
    const t = setTimeout(() => {
      this.timedOut ??= kind;
      this.controller.abort();
    }, ms);
    this.timers.push(t);
    return t;
  }
  get cancelled(): boolean {
    return this.outer?.aborted === true;
  }
  end(): void {
    for (const t of this.timers) clearTimeout(t);
    this.outer?.removeEventListener('abort', this.onOuter);
    if (!this.controller.signal.aborted) this.controller.abort();
  }
}

export function createLlmGateway(opts: LlmGatewayOptions): LlmGateway {
  const o = {
    ...LLM_DEFAULTS,
    ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)),
  } as typeof LLM_DEFAULTS & LlmGatewayOptions;
  if (!opts.baseUrl || !opts.model) {
    // eslint-disable-next-line require-yield -- an unconfigured gateway has nothing to stream
    const off = async function* (): AsyncGenerator<string, void, undefined> {
      throw new Error('No language model is configured.');
    };
    return {
      configured: false,
      model: null,
      stream: off,
      complete: () => Promise.reject(new Error('No language model is configured.')),
    };
  }
  const baseFetch = opts.fetch ?? globalThis.fetch;
  const structured = opts.structuredOutputs === true;
  // The current attempt, so the fetch wrapper can time out the connection phase of that attempt.
  const connectFetch = (attempt: Attempt): typeof fetch =>
    (async (input: RequestInfo | URL, init?: RequestInit) => {
      const t = attempt.timer('connect', o.connectMs);
      try {
        return await baseFetch(input, { ...init, signal: attempt.controller.signal });
      } finally {
        clearTimeout(t);
      }
    }) as typeof fetch;

  const modelFor = (attempt: Attempt, { provider }: Sdk): LanguageModel =>
    provider
      .createOpenAICompatible({
        name: 'llm',
        baseURL: opts.baseUrl!.replace(/\/+$/, ''),
        ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
        fetch: connectFetch(attempt),
        supportsStructuredOutputs: structured,
      })
      .chatModel(opts.model!);

  /** Retries a 429 with a short Retry-After; anything else is final. */
  async function retryDelay(err: AppError, tries: number, signal: AbortSignal | undefined): Promise<boolean> {
    if (err.code !== 'llm_busy' || tries >= o.busyRetries) return false;
    // No Retry-After: one retry after a second (a short burst limit is the common case).
    const after = (err.details as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds ?? 1;
    if (after > o.maxRetryWaitSeconds) return false;
    await sleep(Math.max(after * 1000, 50), signal ?? new AbortController().signal);
    return true;
  }

  return {
    configured: true,
    model: opts.model,

    async *stream(p: LlmPrompt) {
      for (let tries = 0; ; tries++) {
        const attempt = new Attempt(p.signal);
        let emitted = false;
        const first = attempt.timer('first_token', o.firstTokenMs);
        attempt.timer('total', o.totalMs);
        try {
          const s = await loadSdk();
          const result = s.ai.streamText({
            model: modelFor(attempt, s),
            instructions: p.instructions,
            prompt: p.prompt,
            maxRetries: 0,
            abortSignal: attempt.controller.signal,
            // The SDK's default prints the error, request body (the prompt) included, to the console.
            onError: () => undefined,
            ...(p.maxOutputTokens ? { maxOutputTokens: p.maxOutputTokens } : {}),
          });
          for await (const part of result.fullStream) {
            if (part.type === 'text-delta') {
              if (!part.text) continue;
              if (!emitted) clearTimeout(first);
              emitted = true;
              yield part.text;
            } else if (part.type === 'error') {
              throw part.error;
            } else if (part.type === 'abort') {
              throw new LlmAbortedError();
            }
          }
          if (attempt.timedOut) throw new LlmAbortedError();
          return;
        } catch (e) {
          if (attempt.cancelled) throw new LlmAbortedError();
          const mapped = mapUpstreamError(e, attempt.timedOut);
          if (!emitted && (await retryDelay(mapped, tries, p.signal))) continue;
          throw mapped;
        } finally {
          attempt.end();
        }
      }
    },

    async complete(p: LlmPrompt) {
      for (let tries = 0; ; tries++) {
        const attempt = new Attempt(p.signal);
        attempt.timer('total', o.totalMs);
        try {
          const s = await loadSdk();
          const output =
            structured && p.output
              ? s.ai.Output.object({
                  schema: p.output.schema,
                  name: p.output.name,
                  ...(p.output.description ? { description: p.output.description } : {}),
                })
              : undefined;
          const r = await s.ai.generateText({
            model: modelFor(attempt, s),
            instructions: p.instructions,
            prompt: p.prompt,
            maxRetries: 0,
            abortSignal: attempt.controller.signal,
            ...(output ? { output } : {}),
            ...(p.maxOutputTokens ? { maxOutputTokens: p.maxOutputTokens } : {}),
          });
          return r.text;
        } catch (e) {
          if (attempt.cancelled) throw new LlmAbortedError();
          // A structured answer that does not match the schema is still an answer: the caller's
          // validation says what is wrong with it (and falls back), as for prompt-JSON.
          if (
            p.output &&
            e instanceof Error &&
            e.name === 'AI_NoObjectGeneratedError' &&
            typeof (e as { text?: unknown }).text === 'string'
          )
            return (e as unknown as { text: string }).text;
          const mapped = mapUpstreamError(e, attempt.timedOut);
          if (await retryDelay(mapped, tries, p.signal)) continue;
          throw mapped;
        } finally {
          attempt.end();
        }
      }
    },
  };
}

/** Exposed for tests of the Retry-After parsing. */
export { retryAfterSeconds };
