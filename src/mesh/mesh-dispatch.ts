// POST /api/public/svc/dispatch: the one signed entry point of the mesh. The HMAC is verified
// over the raw body bytes before anything parses them; checks run in the documented order (docs/errors.md).
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { withService } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { sha256Hex } from '../lib/crypto.ts';
import { AppError, type ErrorCode } from '../lib/errors.ts';
import { findInputProblem } from '../lib/input-hygiene.ts';
import { newId } from '../lib/ids.ts';
import { BID_ONLY_FLOWS, KNOWN_FLOWS, type FlowHandler, type FlowName } from './mesh-flows.ts';
import type { IdempotencyStore } from './mesh-idempotency.ts';
import type { createPeerRegistry, Peer } from './mesh-peers.ts';
import type { InboundRecord, InboundRecorder } from './mesh-records.ts';
import {
  bodyHashHex,
  canonicalString,
  checkTimestamp,
  DISPATCH_PATH,
  parseTimestamp,
  verifyDispatchSignature,
} from './mesh-signing.ts';

export interface DispatchDeps {
  db: Kysely<DB>;
  peers: ReturnType<typeof createPeerRegistry>;
  flows: Partial<Record<FlowName, FlowHandler>>;
  idempotency: IdempotencyStore;
  clock: Clock;
  bidPeer: string | undefined;
  maxDriftMs: number;
  /** Deadline for a mutating handler; well below the 60 s stale-claim window. */
  handlerDeadlineMs: number;
  onHandlerError(error: unknown, flow: string, caller: string): void;
}

/** What a call did, for its svc_inbound_events row. */
export interface CallState {
  caller: string | null;
  flow: string | null;
  requestId: string | null;
  verified: boolean;
  replayed: boolean;
  errorCode: string | null;
}

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,200}$/;
const kCall = Symbol('meshCall');
type WithCall = FastifyRequest & { [kCall]?: CallState };

export const newCallState = (): CallState => ({
  caller: null,
  flow: null,
  requestId: null,
  verified: false,
  replayed: false,
  errorCode: null,
});

/** One dispatch call, whatever carried it: a header's single value (null when repeated) and the raw body. */
export interface DispatchCall {
  header(name: string): string | undefined | null;
  raw: Buffer;
}

/** The answer to send. Unexpected errors are thrown instead, for the transport's own 500 handling. */
export interface DispatchOutcome {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

export type Dispatcher = (call: DispatchCall, state: CallState) => Promise<DispatchOutcome>;

/** The inbound record of a finished call. */
export function inboundRecord(state: CallState, status: number, durationMs: number): InboundRecord {
  return {
    receivedAt: new Date(Date.now() - durationMs),
    caller: state.caller,
    flow: state.flow,
    status,
    errorCode: state.errorCode ?? (status === 413 ? 'payload_too_large' : status >= 400 ? `http_${status}` : null),
    durationMs,
    requestId: state.requestId,
    verified: state.verified,
    replayed: state.replayed,
  };
}

class LostClaimError extends Error {}

/**
 * A header's only value; null when it was sent more than once (Node would join the copies).
 * Reads `rawHeaders` in one pass on first use, instead of Node's `headers`/`headersDistinct`
 * getters, which build an object (and an array per header) for every header of every call.
 */
export function headerReader(
  req: Pick<IncomingMessage, 'rawHeaders' | 'headers'>,
): (name: string) => string | undefined | null {
  let seen: Map<string, string | null> | undefined;
  return (name) => {
    if (!seen) {
      seen = new Map();
      const raw = req.rawHeaders;
      if (raw?.length) {
        for (let i = 0; i + 1 < raw.length; i += 2) {
          const key = raw[i]!.toLowerCase();
          seen.set(key, seen.has(key) ? null : raw[i + 1]!);
        }
      } else {
        // Injected requests (tests, light-my-request) may carry only the parsed headers.
        for (const [key, v] of Object.entries(req.headers))
          if (v !== undefined) seen.set(key, Array.isArray(v) ? (v.length === 1 ? v[0]! : null) : String(v));
      }
    }
    return seen.get(name);
  };
}

class DeadlineError extends Error {}

/**
 * Runs `work` under a deadline. When it passes, the caller is answered at once and `expired()`
 * turns true, so the work rolls back before recording its response instead of committing after
 * the caller was told it failed.
 */
function withDeadline<T>(work: (expired: () => boolean) => Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  return Promise.race([
    work(() => timedOut),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        timedOut = true;
        reject(new DeadlineError(`handler exceeded its ${ms} ms deadline`));
      }, ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * The dispatch protocol itself, independent of the HTTP layer: the Fastify route (and so every
 * injected test) and the server's direct path for this one URL (mesh-fast-path.ts) both call it.
 */
export function createDispatcher(deps: DispatchDeps): Dispatcher {
  const { peers, flows, idempotency, clock } = deps;

  function fail(state: CallState, code: ErrorCode, message: string, headers?: Record<string, string>): never {
    state.errorCode = code;
    throw new AppError(code, message, headers ? { headers } : {});
  }

  /** Authenticates the call; returns the calling peer. */
  function authenticate(call: DispatchCall, state: CallState): Peer {
    const caller = call.header('x-svc-caller');
    const timestamp = call.header('x-svc-timestamp');
    const signature = call.header('x-svc-signature');
    if (caller === undefined || timestamp === undefined || caller === '' || timestamp === '')
      fail(state, 'missing_svc_headers', 'Send x-svc-caller, x-svc-timestamp and x-svc-signature.');
    if (signature === undefined || signature === '') fail(state, 'missing_signature', 'Send x-svc-signature.');
    state.caller = caller ? caller.slice(0, 200) : null;
    const ts = timestamp === null ? null : parseTimestamp(timestamp);
    if (!ts) fail(state, 'bad_timestamp', 'x-svc-timestamp must be an ISO 8601 UTC time ending in Z.');
    if (checkTimestamp(ts, clock.now(), deps.maxDriftMs) !== 'ok')
      fail(
        state,
        'stale_timestamp',
        'x-svc-timestamp is more than 5 minutes from our clock; sign each request with a fresh timestamp.',
      );
    const peer = caller ? peers.byCaller(caller) : undefined;
    const canonical = canonicalString({
      caller: caller ?? '',
      timestamp: timestamp!,
      method: 'POST',
      path: DISPATCH_PATH,
      bodyHash: bodyHashHex(call.raw),
    });
    // Unknown caller, missing inbound secret, repeated or malformed signature: all the same answer.
    if (!peer?.secretFrom || signature === null || !verifyDispatchSignature(peer.secretFrom, canonical, signature))
      fail(
        state,
        'bad_signature',
        'The signature does not match; check the shared secret and sign the exact body bytes.',
      );
    state.verified = true;
    return peer;
  }

  function parseBody(call: DispatchCall, state: CallState): { flow: string; payload: Record<string, unknown> } {
    const contentType = call.header('content-type');
    const type = contentType === null ? '' : (contentType ?? 'application/json').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') fail(state, 'invalid_body', 'Send the body as application/json.');
    let body: unknown;
    try {
      body = JSON.parse(call.raw.toString('utf8'));
    } catch {
      fail(state, 'invalid_body', 'The body is not valid JSON.');
    }
    if (!body || typeof body !== 'object' || Array.isArray(body))
      fail(state, 'invalid_body', 'The body must be a JSON object {flow, payload}.');
    const { flow, payload } = body as { flow?: unknown; payload?: unknown };
    if (typeof flow !== 'string' || !flow) fail(state, 'invalid_body', 'The body needs a string "flow".');
    if (payload !== undefined && (payload === null || typeof payload !== 'object' || Array.isArray(payload)))
      fail(state, 'invalid_body', '"payload" must be a JSON object.');
    return { flow, payload: (payload as Record<string, unknown> | undefined) ?? {} };
  }

  async function runMutating(
    handler: Extract<FlowHandler, { mutating: true }>,
    peer: Peer,
    flow: string,
    requestId: string,
    gated: boolean,
    raw: Buffer,
    payload: Record<string, unknown>,
    state: CallState,
  ): Promise<DispatchOutcome> {
    const key = { caller: peer.name, requestId };
    let claimedAt: Date | null = null;
    if (gated) {
      const claim = await idempotency.claim(key, sha256Hex(raw), flow, clock.now());
      if (claim.kind === 'reuse')
        fail(
          state,
          'idempotency_key_reuse',
          'This x-svc-request-id was already used with a different payload; use a new id.',
        );
      if (claim.kind === 'in_progress')
        fail(
          state,
          'request_in_progress',
          'The first attempt with this x-svc-request-id is still running; retry with the same id.',
          { 'retry-after': '1' },
        );
      if (claim.kind === 'replay') {
        state.replayed = true;
        return { status: 200, body: { ...claim.response, replayed: true } };
      }
      claimedAt = claim.claimedAt;
    }
    try {
      const response = await withDeadline(
        (expired) =>
          withService(deps.db, async (tx) => {
            const result = await handler.run({ caller: peer, requestId, payload, now: clock.now() }, tx);
            if (expired()) throw new DeadlineError('deadline passed; rolled back');
            const body = { requestId, ...result };
            if (claimedAt && !(await idempotency.complete(tx, key, claimedAt, body, clock.now())))
              throw new LostClaimError();
            return body;
          }),
        deps.handlerDeadlineMs,
      );
      return { status: 200, body: response };
    } catch (error) {
      if (claimedAt) await idempotency.release(key, claimedAt).catch(() => {});
      if (error instanceof LostClaimError)
        fail(
          state,
          'request_in_progress',
          'Another attempt with this x-svc-request-id took over; retry with the same id.',
          { 'retry-after': '1' },
        );
      if (error instanceof AppError && error.status < 500) {
        state.errorCode = error.code;
        throw error;
      }
      deps.onHandlerError(error, flow, peer.name);
      fail(
        state,
        'handler_failed',
        'The flow handler failed; nothing was recorded, and the same x-svc-request-id may be retried.',
      );
    }
  }

  async function run(call: DispatchCall, state: CallState): Promise<DispatchOutcome> {
    const requestIdHeader = call.header('x-svc-request-id');
    if (typeof requestIdHeader === 'string') state.requestId = requestIdHeader.slice(0, 200); // recorded even if refused
    const peer = authenticate(call, state);

    if (requestIdHeader === null || (requestIdHeader !== undefined && !REQUEST_ID_RE.test(requestIdHeader)))
      fail(state, 'invalid_request_id', 'x-svc-request-id must be 1 to 200 characters of letters, digits and . _ : -');
    const requestId = requestIdHeader ?? newId();
    state.requestId = requestId;

    const { flow, payload } = parseBody(call, state);
    state.flow = flow.slice(0, 100);
    if (!(KNOWN_FLOWS as readonly string[]).includes(flow))
      fail(state, 'unknown_flow', `Unknown flow "${flow.slice(0, 100)}".`);
    const bidOnly = BID_ONLY_FLOWS.includes(flow);
    const isBidPeer = deps.bidPeer !== undefined && peers.byName(deps.bidPeer)?.suffix === peer.suffix;
    if (!peer.flows.includes(flow) || (bidOnly && !isBidPeer))
      fail(state, 'flow_not_allowed', `The flow "${flow}" is not allowed for ${peer.name}.`);
    const handler = flows[flow as FlowName];
    if (!handler) fail(state, 'flow_unavailable', `The flow "${flow}" is not available on this deployment yet.`);
    // The input rule of every route (src/lib/input-hygiene.ts) on any flow's payload, after the
    // signature and the flow checks, under this route's documented code: no NUL or unpaired
    // surrogate in a string or key (event_report `data` included), nesting at most 32 levels.
    const problem = findInputProblem(payload, 'payload');
    if (problem)
      fail(
        state,
        'invalid_payload',
        `The payload does not fit this flow: ${problem.code === 'json_too_deep' ? 'it is nested too deeply' : 'it holds a NUL character or an unpaired surrogate'} (${problem.path}).`,
      );

    if (!handler.mutating) {
      let result: Record<string, unknown>;
      try {
        result = await handler.run({ caller: peer, requestId, payload, now: clock.now() });
      } catch (error) {
        if (error instanceof AppError && error.status < 500) {
          state.errorCode = error.code;
          throw error;
        }
        deps.onHandlerError(error, flow, peer.name);
        fail(state, 'handler_failed', 'The flow handler failed; retry.');
      }
      return { status: 200, body: { requestId, ...result } };
    }
    return runMutating(handler, peer, flow, requestId, requestIdHeader !== undefined, call.raw, payload, state);
  }

  return async (call, state) => {
    try {
      return await run(call, state);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      state.errorCode = error.code;
      return {
        status: error.status,
        body: { error: error.code, message: error.message },
        ...(error.headers ? { headers: error.headers } : {}),
      };
    }
  };
}

export function registerDispatchRoute(
  app: FastifyInstance,
  deps: { dispatcher: Dispatcher; inbound: InboundRecorder; maxBodyBytes: number },
): void {
  void app.register(async (scope) => {
    // Raw bytes for every content type: the signature covers the exact body.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: deps.maxBodyBytes }, (_req, body, done) =>
      done(null, body),
    );

    scope.addHook('onRequest', (req, _reply, done) => {
      (req as WithCall)[kCall] = newCallState();
      done();
    });
    scope.addHook('onResponse', (req, reply, done) => {
      done();
      const s = (req as WithCall)[kCall];
      if (s) deps.inbound.record(inboundRecord(s, reply.statusCode, reply.elapsedTime));
    });

    scope.post(
      DISPATCH_PATH,
      {
        bodyLimit: deps.maxBodyBytes,
        // Peers are programs, not browsers: no browser security headers (about 1 KB a response),
        // and no per-request info logs, since svc_inbound_events records every call already.
        helmet: false,
        logLevel: 'warn',
        schema: {
          tags: ['mesh'],
          summary: 'Signed mesh dispatch',
          description:
            'HMAC-SHA256 signed call from a mesh peer. See docs/mesh.md for the signing rules, flows and error codes.',
        },
      },
      async (req, reply) => {
        const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const out = await deps.dispatcher({ header: headerReader(req.raw), raw }, (req as WithCall)[kCall]!);
        if (out.headers) void reply.headers(out.headers);
        return reply.code(out.status).send(out.body);
      },
    );
  });
}
