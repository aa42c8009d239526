// The language-model gateway against a real OpenAI-compatible server on loopback: streaming,
// error mapping (429 with Retry-After, 402, timeouts, malformed output, unreachable), aborting,
// and what is sent upstream (the key only in Authorization).
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLlmGateway, retryAfterSeconds, type LlmGateway } from '../../src/llm/index.ts';
import { isAppError, type AppError } from '../../src/lib/errors.ts';
import { startLlmServer, type LlmServer } from '../helpers/llm-server.ts';

const KEY = 'sk-test-secret-key-0123456789';

async function collect(g: LlmGateway, signal?: AbortSignal): Promise<string> {
  let out = '';
  for await (const t of g.stream({ instructions: 'be brief', prompt: 'say hello', signal })) out += t;
  return out;
}

async function failure(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (e) {
    if (isAppError(e)) return e;
    throw e;
  }
  throw new Error('expected a failure');
}

describe('LLM gateway', () => {
  let server: LlmServer;
  let gateway: LlmGateway;

  beforeAll(async () => {
    server = await startLlmServer();
    gateway = createLlmGateway({
      baseUrl: server.url,
      apiKey: KEY,
      model: 'test-model',
      connectMs: 500,
      firstTokenMs: 1_000,
      totalMs: 10_000,
      maxRetryWaitSeconds: 2,
    });
  });
  afterAll(() => server.close());

  it('is unconfigured without a base URL or model', () => {
    expect(createLlmGateway({}).configured).toBe(false);
    expect(createLlmGateway({ baseUrl: server.url }).configured).toBe(false);
    expect(gateway.configured).toBe(true);
    expect(gateway.model).toBe('test-model');
  });

  it('streams the answer and sends the key only as a bearer token', async () => {
    const n = server.requests.length;
    server.enqueue({ kind: 'stream', chunks: ['one ', 'two ', 'three'] });
    expect(await collect(gateway)).toBe('one two three');
    const req = server.requests[n]!;
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.body.model).toBe('test-model');
    expect(req.body.stream).toBe(true);
    expect(req.raw).not.toContain(KEY);
    expect(req.url).toBe('/v1/chat/completions');
  });

  it('waits out a short Retry-After on 429 and then succeeds', async () => {
    const n = server.requests.length;
    server.enqueue({ kind: 'status', status: 429, retryAfter: '1' }, { kind: 'stream', chunks: ['after ', 'retry'] });
    expect(await collect(gateway)).toBe('after retry');
    expect(server.requests.length - n).toBe(2);
  });

  it('retries a 429 without Retry-After once, after a second', async () => {
    const n = server.requests.length;
    server.enqueue({ kind: 'status', status: 429 }, { kind: 'stream', chunks: ['second ', 'try'] });
    expect(await collect(gateway)).toBe('second try');
    expect(server.requests.length - n).toBe(2);
  });

  it('turns a 429 with a long Retry-After into llm_busy with retryAfterSeconds, without waiting', async () => {
    const n = server.requests.length;
    server.enqueue({ kind: 'status', status: 429, retryAfter: '120' });
    const e = await failure(collect(gateway));
    expect(e.code).toBe('llm_busy');
    expect(e.status).toBe(503);
    expect(e.details).toEqual({ retryAfterSeconds: 120 });
    expect(e.headers).toEqual({ 'retry-after': '120' });
    expect(e.message).toMatch(/busy.*120 seconds/);
    expect(server.requests.length - n).toBe(1);
  });

  it('gives up on a second 429 after one retry', async () => {
    server.enqueue({ kind: 'status', status: 429, retryAfter: '1' }, { kind: 'status', status: 429, retryAfter: '1' });
    const e = await failure(gateway.complete({ instructions: 'x', prompt: 'y' }));
    expect(e.code).toBe('llm_busy');
    expect((e.details as { retryAfterSeconds: number }).retryAfterSeconds).toBe(1);
  });

  it('prints nothing of the prompt or key to the console when the upstream fails', async () => {
    const printed: string[] = [];
    const spies = (['error', 'warn', 'log', 'info'] as const).map((m) =>
      vi.spyOn(console, m).mockImplementation((...args: unknown[]) => void printed.push(inspect(args, { depth: 20 }))),
    );
    try {
      server.enqueue({ kind: 'status', status: 429, retryAfter: '100' }, { kind: 'status', status: 402 });
      await failure(collect(gateway));
      await failure(gateway.complete({ instructions: 'x', prompt: 'SECRET-PROMPT-TEXT' }));
      server.enqueue({ kind: 'status', status: 500 });
      for await (const _ of gateway.stream({ instructions: 'x', prompt: 'SECRET-PROMPT-TEXT' })) void _;
    } catch {
      // expected
    } finally {
      for (const s of spies) s.mockRestore();
    }
    expect(printed.join('\n')).not.toMatch(/SECRET-PROMPT-TEXT|say hello|sk-test/);
  });

  it('maps 402 to llm_credits_exhausted and never retries it', async () => {
    const n = server.requests.length;
    server.enqueue({ kind: 'status', status: 402 });
    const e = await failure(collect(gateway));
    expect(e.code).toBe('llm_credits_exhausted');
    expect(e.message).toMatch(/credits/);
    expect(server.requests.length - n).toBe(1);
  });

  it('maps a 500 to llm_unavailable without leaking the upstream body', async () => {
    server.enqueue({ kind: 'status', status: 500, message: 'internal stack trace here' });
    const e = await failure(collect(gateway));
    expect(e.code).toBe('llm_unavailable');
    expect(e.message).not.toContain('stack trace');
  });

  it('times out a slow first token', async () => {
    server.enqueue({ kind: 'stream', chunks: ['late'], firstDelayMs: 3_000 });
    const e = await failure(collect(gateway));
    expect(e.code).toBe('llm_timeout');
    expect(e.details).toEqual({ timeout: 'first_token' });
  });

  it('times out an endpoint that never answers', async () => {
    server.enqueue({ kind: 'hang' });
    const e = await failure(collect(gateway));
    expect(e.code).toBe('llm_timeout');
    expect(e.details).toEqual({ timeout: 'connect' });
  });

  it('reports malformed output as an error, not as an answer', async () => {
    server.enqueue({ kind: 'malformed' });
    const e = await failure(gateway.complete({ instructions: 'x', prompt: 'y' }));
    expect(['llm_bad_response', 'llm_unavailable']).toContain(e.code);
  });

  it('reports malformed streamed output as llm_bad_response, with nothing of it streamed', async () => {
    server.enqueue({ kind: 'malformed' });
    const pieces: string[] = [];
    const e = await failure(
      (async () => {
        for await (const t of gateway.stream({ instructions: 'x', prompt: 'y' })) pieces.push(t);
      })(),
    );
    expect(e.code).toBe('llm_bad_response');
    expect(pieces).toEqual([]);
    expect(e.message).not.toContain('not json');
  });

  it('times out an answer that streams but does not finish within the total time', async () => {
    // The first piece at once, then nothing until the connection closes: only the total limit can end it.
    const short = createLlmGateway({
      baseUrl: server.url,
      model: 'test-model',
      connectMs: 10_000,
      firstTokenMs: 10_000,
      totalMs: 1_500,
    });
    const n = server.requests.length;
    server.enqueue({ kind: 'stream', chunks: ['started ', 'never sent'], holdAfter: 1 });
    const pieces: string[] = [];
    const e = await failure(
      (async () => {
        for await (const t of short.stream({ instructions: 'x', prompt: 'y' })) pieces.push(t);
      })(),
    );
    expect(e.code).toBe('llm_timeout');
    expect(e.details).toEqual({ timeout: 'total' });
    expect(e.message).toMatch(/too long to finish/);
    // It had started answering (the first-token limit is far away), and the upstream call was closed.
    expect(pieces).toEqual(['started ']);
    await server.closed(n);
    expect(server.requests[n]!.closedEarly).toBe(true);

    server.enqueue({ kind: 'stream', chunks: ['never'], firstDelayMs: 3_000 });
    const whole = await failure(
      createLlmGateway({ baseUrl: server.url, model: 'test-model', connectMs: 2_000, totalMs: 300 }).complete({
        instructions: 'x',
        prompt: 'y',
      }),
    );
    expect(whole.code).toBe('llm_timeout');
    expect(whole.details).toEqual({ timeout: 'total' });
  });

  it('reads Retry-After as seconds or an HTTP date, and retry-after-ms', () => {
    const now = Date.parse('2026-11-26T10:00:00Z');
    expect(retryAfterSeconds({ 'Retry-After': '30' }, now)).toBe(30);
    expect(retryAfterSeconds({ 'retry-after': '1.2' }, now)).toBe(2);
    expect(retryAfterSeconds({ 'retry-after': 'Thu, 26 Nov 2026 10:01:30 GMT' }, now)).toBe(90);
    // A date in the past means "now".
    expect(retryAfterSeconds({ 'retry-after': 'Thu, 26 Nov 2026 09:59:00 GMT' }, now)).toBe(0);
    // retry-after-ms (OpenAI, Azure) wins, rounded up to whole seconds.
    expect(retryAfterSeconds({ 'retry-after-ms': '1500', 'retry-after': '30' }, now)).toBe(2);
    expect(retryAfterSeconds({ 'Retry-After-Ms': '200' }, now)).toBe(1);
    // Unreadable values are ignored, not guessed at.
    expect(retryAfterSeconds({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect(retryAfterSeconds({ 'retry-after-ms': 'abc', 'retry-after': '7' }, now)).toBe(7);
    expect(retryAfterSeconds({ 'retry-after': '-5' }, now)).toBeUndefined();
    expect(retryAfterSeconds({}, now)).toBeUndefined();
    expect(retryAfterSeconds(undefined, now)).toBeUndefined();
  });

  it('honours an upstream Retry-After given as an HTTP date, and retry-after-ms', async () => {
    // Two minutes ahead: longer than the gateway waits, so llm_busy with about that wait.
    server.enqueue({ kind: 'status', status: 429, retryAfter: new Date(Date.now() + 120_000).toUTCString() });
    const e = await failure(collect(gateway));
    expect(e.code).toBe('llm_busy');
    const after = (e.details as { retryAfterSeconds: number }).retryAfterSeconds;
    expect(after).toBeGreaterThan(60);
    expect(after).toBeLessThanOrEqual(120);
    expect(e.headers).toEqual({ 'retry-after': String(after) });

    // retry-after-ms of 300 ms: waited out (well under the 2 s the gateway waits at most) and retried.
    const n = server.requests.length;
    server.enqueue(
      { kind: 'status', status: 429, headers: { 'retry-after-ms': '300' } },
      { kind: 'stream', chunks: ['after ', 'ms'] },
    );
    expect(await collect(gateway)).toBe('after ms');
    expect(server.requests.length - n).toBe(2);

    server.enqueue({ kind: 'status', status: 429, headers: { 'retry-after-ms': '90000' } });
    const long = await failure(collect(gateway));
    expect(long.details).toEqual({ retryAfterSeconds: 90 });
  });

  it('reports an unreachable endpoint as llm_unavailable', async () => {
    const dead = createLlmGateway({ baseUrl: 'http://127.0.0.1:9/v1', model: 'm', connectMs: 2_000 });
    const e = await failure(collect(dead));
    expect(e.code).toBe('llm_unavailable');
  });

  it('aborts the upstream request when the caller aborts', async () => {
    const n = server.requests.length;
    // Three pieces, then the model "keeps answering" until the connection closes.
    server.enqueue({ kind: 'stream', chunks: Array.from({ length: 50 }, (_, i) => `w${i} `), holdAfter: 3 });
    const ac = new AbortController();
    let got = '';
    await expect(
      (async () => {
        for await (const t of gateway.stream({ instructions: 'x', prompt: 'y', signal: ac.signal })) {
          got += t;
          if (got.length > 6) ac.abort();
        }
      })(),
    ).rejects.toMatchObject({ name: 'AbortError' });
    await server.closed(n);
    expect(server.requests[n]!.closedEarly).toBe(true);
  });
});
