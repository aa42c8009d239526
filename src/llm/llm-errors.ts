// Errors of the language-model helpers. Upstream failures (the OpenAI-compatible endpoint) become
// AppErrors with stable llm_* codes and friendly messages. The upstream error object itself is
// never attached (no `cause`): the AI SDK's APICallError carries the request body, i.e. the
// prompt, and logging it would leak document text.
//
// The AI SDK's error classes are recognised by name and shape, not imported: loading `ai` costs
// ~150 ms, and the gateway loads it only on the first model call (never at server start).
import { AppError, type ErrorCode } from '../lib/errors.ts';
import type { LlmFailure } from './llm-schemas.ts';

interface ApiCallErrorLike {
  name: 'AI_APICallError';
  statusCode?: number;
  responseHeaders?: Record<string, string>;
}
const isApiCallError = (e: unknown): e is ApiCallErrorLike => e instanceof Error && e.name === 'AI_APICallError';
const isRetryError = (e: unknown): e is Error & { lastError: unknown } =>
  e instanceof Error && e.name === 'AI_RetryError' && 'lastError' in e;

export type LlmErrorCode = Extract<ErrorCode, `llm_${string}`>;

/** Why the gateway gave up waiting, when it did. */
export type TimeoutKind = 'connect' | 'first_token' | 'total' | null;

export function llmError(
  code: LlmErrorCode,
  message: string,
  extra: { retryAfterSeconds?: number; details?: Record<string, unknown> } = {},
): AppError {
  const details: Record<string, unknown> = { ...extra.details };
  const headers: Record<string, string> = {};
  if (extra.retryAfterSeconds !== undefined) {
    details.retryAfterSeconds = extra.retryAfterSeconds;
    headers['retry-after'] = String(extra.retryAfterSeconds);
  }
  return new AppError(code, message, {
    ...(Object.keys(details).length ? { details } : {}),
    ...(Object.keys(headers).length ? { headers } : {}),
  });
}

/**
 * What the API says about a failure: its code, friendly message and the wait (`retryAfterSeconds`
 * when there is one). The `fallbackError` of an offline answer and the `error` event of a stream
 * that failed mid-answer both carry it.
 */
export function llmFailureOf(e: AppError): LlmFailure {
  const after = (e.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  return { error: e.code, message: e.message, ...(typeof after === 'number' ? { retryAfterSeconds: after } : {}) };
}

/** Seconds from a Retry-After (or retry-after-ms) header: a number of seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterSeconds(headers: Record<string, string> | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const ms = lower['retry-after-ms'];
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.max(0, Math.ceil(Number(ms) / 1000));
  const v = lower['retry-after']?.trim();
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.max(0, Math.ceil(Number(v)));
  // Otherwise only an HTTP date ("Thu, 26 Nov 2026 10:01:30 GMT"); Date.parse would also take "-5" as a year.
  if (!/^[A-Za-z]{3,9},? .*\d{2}:\d{2}:\d{2}/.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

const isAbortLike = (e: unknown) => e instanceof Error && (e.name === 'AbortError' || e.name === 'TimeoutError');

/** Maps anything the AI SDK throws to an llm_* AppError. */
export function mapUpstreamError(error: unknown, timedOut: TimeoutKind = null): AppError {
  if (error instanceof AppError) return error;
  if (timedOut === 'connect')
    return llmError(
      'llm_timeout',
      'The language model did not answer in time (no connection). Try again in a moment.',
      { details: { timeout: 'connect' } },
    );
  if (timedOut === 'first_token')
    return llmError('llm_timeout', 'The language model took too long to start answering. Try again in a moment.', {
      details: { timeout: 'first_token' },
    });
  if (timedOut === 'total')
    return llmError(
      'llm_timeout',
      'The language model took too long to finish. Try again, perhaps with a smaller file.',
      { details: { timeout: 'total' } },
    );
  const e = isRetryError(error) ? error.lastError : error;
  if (isApiCallError(e)) {
    const status = e.statusCode;
    if (status === 429) {
      const after = retryAfterSeconds(e.responseHeaders);
      return llmError(
        'llm_busy',
        after !== undefined
          ? `The language model is busy. Try again in ${after} second${after === 1 ? '' : 's'}.`
          : 'The language model is busy. Try again in a moment.',
        after !== undefined ? { retryAfterSeconds: after } : {},
      );
    }
    if (status === 402)
      return llmError(
        'llm_credits_exhausted',
        'The language model account has run out of credits. Ask an operator to top it up; the offline analysis still works meanwhile.',
      );
    if (status === 401 || status === 403)
      return llmError(
        'llm_unavailable',
        'The language model refused the platform’s credentials. An operator must check LLM_API_KEY.',
        { details: { upstreamStatus: status } },
      );
    if (status === 404)
      return llmError(
        'llm_unavailable',
        'The language model endpoint or model was not found. An operator must check LLM_BASE_URL and LLM_MODEL.',
        { details: { upstreamStatus: status } },
      );
    if (status === 408 || status === 504)
      return llmError('llm_timeout', 'The language model timed out. Try again in a moment.', {
        details: { upstreamStatus: status },
      });
    if (status !== undefined)
      return llmError(
        'llm_unavailable',
        `The language model answered with an error (HTTP ${status}). Try again in a moment.`,
        { details: { upstreamStatus: status } },
      );
    return llmError(
      'llm_unavailable',
      'The language model cannot be reached. Try again in a moment; an operator may need to check LLM_BASE_URL.',
    );
  }
  if (isAbortLike(e))
    return llmError('llm_timeout', 'The language model did not answer in time. Try again in a moment.');
  const name = e instanceof Error ? e.name : '';
  if (/JSONParse|TypeValidation|InvalidResponseData|EmptyResponseBody|NoContentGenerated|NoOutputGenerated/.test(name))
    return llmError('llm_bad_response', 'The language model sent an answer that could not be read. Try again.');
  return llmError(
    'llm_unavailable',
    'The language model cannot be reached. Try again in a moment; an operator may need to check LLM_BASE_URL.',
  );
}
