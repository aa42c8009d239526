// POST /api/public/svc/dispatch answered directly on node:http, ahead of Fastify's router.
// Peers call this one URL at high rates (health checks, pings from every replica of every peer);
// Fastify's per-request machinery (request and reply objects, child logger, hooks, content-type
// parsing, serialization) cost more than the protocol itself. The protocol lives in one place,
// createDispatcher (mesh-dispatch.ts), which the Fastify route also calls, so injected tests and
// this path cannot drift apart; test/integration/mesh-dispatch.test.ts runs over both.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { headerReader, inboundRecord, newCallState, type Dispatcher } from './mesh-dispatch.ts';
import type { InboundRecorder } from './mesh-records.ts';
import { DISPATCH_PATH } from './mesh-signing.ts';

/** In-flight accounting shared with the Fastify side, so a graceful close waits for these too. */
export interface InFlight {
  /** false once the server is closing: the call is refused with 503 */
  enter(): boolean;
  leave(): void;
  /** true once close() began: answers then carry Connection: close, so keep-alive peers let go */
  readonly closing: boolean;
}

export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

export interface FastPathDeps {
  dispatcher: Dispatcher;
  inbound: InboundRecorder;
  maxBodyBytes: number;
  inFlight: InFlight;
  /** the x-request-id to answer with: the caller's when well formed, else a new one */
  requestId(incoming: string | string[] | undefined): string;
  /** an error the dispatcher did not map: logged and reported like any unhandled error */
  onUnexpected(error: unknown, requestId: string): void;
}

/** Returns true when it took the request; everything else goes on to Fastify. */
export function createDispatchFastPath(deps: FastPathDeps): FastPath {
  const answers = createAnswerBatch();
  const tooLarge = {
    error: 'payload_too_large',
    message: `The body is larger than the limit of ${deps.maxBodyBytes} bytes.`,
  };

  return (req, res) => {
    if (req.method !== 'POST' || req.url !== DISPATCH_PATH) return false;
    const started = performance.now();
    const header = headerReader(req);
    const requestId = deps.requestId(header('x-request-id') ?? undefined);
    const state = newCallState();
    let answered = false;

    const answer = (status: number, body: Record<string, unknown>, headers?: Record<string, string>, close = false) => {
      if (answered) return;
      answered = true;
      const json = JSON.stringify(body);
      answers.push(() => {
        try {
          res.writeHead(status, {
            ...headers,
            'content-type': 'application/json; charset=utf-8',
            'content-length': Buffer.byteLength(json),
            'x-request-id': requestId,
            ...(close || deps.inFlight.closing ? { connection: 'close' } : {}),
          });
          res.end(json);
          deps.inbound.record(inboundRecord(state, status, performance.now() - started));
        } catch (error) {
          deps.onUnexpected(error, requestId); // one broken answer must not hold back the others of its turn
        } finally {
          deps.inFlight.leave();
        }
      });
    };

    if (!deps.inFlight.enter()) {
      answered = true;
      const json = JSON.stringify({
        error: 'service_unavailable',
        message: 'The server is shutting down; retry shortly.',
      });
      res.writeHead(503, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(json),
        'x-request-id': requestId,
        connection: 'close',
      });
      res.end(json);
      req.resume();
      return true;
    }

    // Refused before reading or authenticating anything (the documented departure in docs/mesh.md).
    const declared = Number(header('content-length') ?? 0);
    if (declared > deps.maxBodyBytes) {
      answer(413, tooLarge, undefined, true);
      req.resume();
      return true;
    }

    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      if (answered) return;
      size += chunk.length;
      if (size > deps.maxBodyBytes) {
        chunks.length = 0;
        answer(413, tooLarge, undefined, true);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (answered) return;
      const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      deps.dispatcher({ header, raw }, state).then(
        (out) => answer(out.status, out.body, out.headers),
        (error: unknown) => {
          deps.onUnexpected(error, requestId);
          answer(500, {
            error: 'internal_error',
            message: `Something went wrong on our side. Quote request id ${requestId} when reporting it.`,
          });
        },
      );
    });
    // A caller that hangs up mid-body never reaches the dispatcher; one that hangs up later is
    // still answered (into the void), so its work finishes and is counted out.
    req.once('close', () => {
      if (!req.complete && !answered) {
        answered = true;
        deps.inFlight.leave();
      }
    });
    return true;
  };
}

/**
 * Answers are written together once per event-loop turn (setImmediate), after every request that
 * arrived in that turn was dispatched, instead of one `write` as each is ready. Each write to a peer
 * whose event loop sleeps wakes it, and on a busy host those wake-ups, not the protocol work, were
 * most of the cost: written in one burst, the peer collects them in one wake-up (Redis writes its
 * replies the same way, before it sleeps). Measured in BENCHMARKS.md (signed ping, decision 37).
 */
export function createAnswerBatch(): { push(send: () => void): void } {
  let pending: (() => void)[] = [];
  const flush = () => {
    const batch = pending;
    pending = [];
    for (const send of batch) send(); // each send catches its own errors
  };
  return {
    push(send) {
      if (pending.push(send) === 1) setImmediate(flush);
    },
  };
}
