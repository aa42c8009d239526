// Authentication of worker requests (DESIGN §5.3), in this order, before the body is validated:
//   1. Authorization: Bearer <worker token> → an enrolled, unrevoked worker → its tenant;
//   2. X-Rampart-Signature: sha256=<hex>, HMAC-SHA256 over the exact body bytes with the
//      tenant's current signing secret, or the previous one within its grace period;
//   3. body.sentAt within ±5 minutes of the server's clock;
//   4. body.nonce not seen from this worker in the last 10 minutes (a unique row, so a replay is
//      refused on every replica).
// Two statements, no transaction: this runs before every worker call.
// Routes get the raw bytes from a scope-local parser; registerWorkerRoutes() gives later worker
// routes (lease, progress, report) the same treatment.
import { createHmac } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { asService } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { safeEqual, type SecretBox } from '../lib/crypto.ts';
import { appError } from '../lib/errors.ts';
import { hashWorkerToken } from './enrollment-service.ts';
import { validSecrets } from './webhook-service.ts';
import { NONCE_TTL_MS, SENT_AT_WINDOW_MS } from './workers-schemas.ts';

export interface WorkerContext {
  workerId: string;
  tenantId: string;
  name: string;
  hosted: boolean;
  /** The parsed body (also set as req.body for the route's schema). */
  body: Record<string, unknown>;
}

export const WORKER_BASE = '/api/public/worker/v1';
/** The workers list shows last seen to this precision; fewer writes on the hot path. */
const LAST_SEEN_EVERY_MS = 5_000;
export const SIGNATURE_HEADER = 'x-rampart-signature';

/** What a worker sends: `sha256=` + lowercase hex HMAC-SHA256 of the body bytes. */
export const signBody = (secret: string, body: string | Uint8Array): string => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

export function createWorkerAuth(deps: { db: Kysely<DB>; secretBox: SecretBox; clock: Clock }) {
  const { db, secretBox, clock } = deps;

  async function authenticate(input: { authorization: string | undefined; signature: string | string[] | undefined; raw: Buffer }): Promise<WorkerContext> {
    const auth = input.authorization;
    if (!auth?.startsWith('Bearer ') || auth.length < 12) throw appError('worker_unauthorized', 'Send Authorization: Bearer <worker token>.');
    const tokenHash = hashWorkerToken(auth.slice(7).trim());
    // Two statements that commit on their own (no transaction round trips on this hot path): read
    // the worker and its tenant's secrets, check the signature and time in memory, then remember
    // the nonce. Old nonces are deleted by the reaper (reapNonces), not on every request.
    return asService(db, async (q) => {
      const w = await q
        .selectFrom('workers as w')
        .leftJoin('tenant_webhook_secrets as s', 's.tenant_id', 'w.tenant_id')
        .select(['w.id', 'w.tenant_id', 'w.name', 'w.hosted', 'w.revoked_at', 's.current_sealed', 's.previous_sealed', 's.previous_valid_until'])
        .where('w.token_hash', '=', tokenHash)
        .executeTakeFirst();
      if (!w || w.revoked_at) throw appError('worker_unauthorized', 'This worker token is unknown or was revoked; enroll the worker again.');

      const now = clock.now();
      const sig = typeof input.signature === 'string' ? input.signature.trim().toLowerCase() : '';
      if (!/^sha256=[0-9a-f]{64}$/.test(sig)) throw appError('worker_signature_invalid', 'Send X-Rampart-Signature: sha256=<hex HMAC-SHA256 of the body>.');
      if (!w.current_sealed) throw appError('worker_signature_invalid', 'This tenant has no webhook signing secret yet; generate one in Settings.');
      const secrets = validSecrets({ current_sealed: w.current_sealed, previous_sealed: w.previous_sealed, previous_valid_until: w.previous_valid_until }, secretBox, now);
      // Compare against every valid secret (no early exit), so timing does not tell which matched.
      const matches = secrets.map((s) => safeEqual(signBody(s, input.raw), sig));
      if (!matches.includes(true)) throw appError('worker_signature_invalid', 'The signature does not match the body under the tenant\'s signing secret.');

      let body: unknown;
      try {
        body = JSON.parse(input.raw.toString('utf8'));
      } catch {
        throw appError('invalid_json', 'The body is not valid JSON.');
      }
      if (!body || typeof body !== 'object' || Array.isArray(body)) throw appError('validation_failed', 'The body must be a JSON object.', { details: [{ path: 'body', message: 'Expected an object' }] });
      const b = body as Record<string, unknown>;
      const sentAt = typeof b.sentAt === 'string' ? Date.parse(b.sentAt) : NaN;
      if (!Number.isFinite(sentAt) || Math.abs(now.getTime() - sentAt) > SENT_AT_WINDOW_MS)
        throw appError('worker_request_expired', 'sentAt is missing or more than 5 minutes from the server\'s time.');
      const nonce = b.nonce;
      if (typeof nonce !== 'string' || !/^[A-Za-z0-9_-]{16,128}$/.test(nonce))
        throw appError('validation_failed', 'The body needs a nonce of 16 to 128 URL-safe characters.', { details: [{ path: 'body.nonce', message: 'Use 16 to 128 URL-safe characters.' }] });

      // A nonce older than the window is refused by the sentAt check already, so remembering each
      // one for NONCE_TTL_MS is enough. last_seen_at is written at most every LAST_SEEN_EVERY_MS.
      const { rows } = await sql<{ fresh: boolean }>`
        with ins as (
          insert into worker_nonces (worker_id, nonce, tenant_id, seen_at) values (${w.id}, ${nonce}, ${w.tenant_id}, ${now})
          on conflict do nothing returning 1
        ), seen as (
          update workers set last_seen_at = ${now}
           where id = ${w.id} and exists (select 1 from ins)
             and (last_seen_at is null or last_seen_at < ${new Date(now.getTime() - LAST_SEEN_EVERY_MS)})
        )
        select exists (select 1 from ins) as fresh`.execute(q);
      if (!rows[0]?.fresh) throw appError('worker_replay', 'This nonce was already used; send every request with a new nonce.');
      return { workerId: w.id, tenantId: w.tenant_id, name: w.name, hosted: w.hosted, body: b };
    });
  }

  /** Forgets nonces older than NONCE_TTL_MS (any replica; a plain delete). */
  async function reapNonces(): Promise<number> {
    const cutoff = new Date(clock.now().getTime() - NONCE_TTL_MS);
    const r = await asService(db, (q) => q.deleteFrom('worker_nonces').where('seen_at', '<', cutoff).executeTakeFirst());
    return Number(r.numDeletedRows);
  }

  return { authenticate, reapNonces };
}

export type WorkerAuth = ReturnType<typeof createWorkerAuth>;

const kWorker = Symbol('worker');
type WithWorker = FastifyRequest & { [kWorker]?: WorkerContext };

/** The authenticated worker of a request inside registerWorkerRoutes(). */
export function workerOf(req: FastifyRequest): WorkerContext {
  const w = (req as WithWorker)[kWorker];
  if (!w) throw appError('worker_unauthorized', 'This request was not authenticated as a worker.');
  return w;
}

/**
 * An encapsulated scope for signed worker routes: JSON bodies arrive as raw bytes, and a
 * preValidation hook authenticates the request and then swaps in the parsed body, so the route's
 * schema validates it and an unauthenticated caller learns nothing about the body rules.
 */
export function registerWorkerRoutes(app: FastifyInstance, auth: WorkerAuth, routes: (scope: FastifyInstance) => void, opts: { bodyLimit?: number } = {}): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'buffer', ...(opts.bodyLimit ? { bodyLimit: opts.bodyLimit } : {}) }, (_req, body, done) => done(null, body));
    scope.addHook('preValidation', async (req) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const ctx = await auth.authenticate({ authorization: req.headers.authorization, signature: req.headers[SIGNATURE_HEADER], raw });
      (req as WithWorker)[kWorker] = ctx;
      req.body = ctx.body;
    });
    routes(scope);
  });
}
