// Authentication of worker requests (docs/worker-protocol.md), in this order, before the body is validated:
//   1. Authorization: Bearer <worker token> → an enrolled, unrevoked worker → its tenant;
//   2. X-Rampart-Signature: sha256=<hex>, HMAC-SHA256 over the exact body bytes with the
//      tenant's current signing secret, or the previous one within its grace period;
//   3. body.sentAt within ±5 minutes of the server's clock;
//   4. body.nonce not seen from this worker in the last 10 minutes (a unique row, so a replay is
//      refused on every replica).
// One statement on the hot path (a short-lived per-replica cache of workers and their tenants'
// opened secrets, then the nonce): this runs before every worker call.
// Routes get the raw bytes from a scope-local parser; registerWorkerRoutes() gives later worker
// routes (lease, progress, report) the same treatment.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { asService } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { safeEqual, type SecretBox } from '../lib/crypto.ts';
import { assertCleanInput } from '../lib/input-hygiene.ts';
import { appError } from '../lib/errors.ts';
import { signBody } from '../lib/worker-wire.ts';
import { hashWorkerToken } from './enrollment-service.ts';
import { NONCE_TTL_MS, SENT_AT_WINDOW_MS } from './workers-schemas.ts';

export interface WorkerContext {
  workerId: string;
  tenantId: string;
  name: string;
  hosted: boolean;
  /** The parsed body (also set as req.body for the route's schema). */
  body: Record<string, unknown>;
}

/** The workers list shows last seen to this precision; fewer writes on the hot path. */
const LAST_SEEN_EVERY_MS = 5_000;
export const SIGNATURE_HEADER = 'x-rampart-signature';

/** How long a replica reuses a worker's row and its tenant's opened secrets (see authenticate). */
export const WORKER_CACHE_MS = 5_000;
const WORKER_CACHE_MAX = 10_000;

interface CachedWorker {
  at: number;
  id: string;
  tenantId: string;
  name: string;
  hosted: boolean;
  revoked: boolean;
  /** The current secret as stored (sealed, unique per rotation): the nonce statement checks it is still current. */
  stamp: string | null;
  /** Opened secrets: the current one, and the previous one with the end of its grace period. */
  current: string | null;
  previous: { secret: string; until: number } | null;
}

export function createWorkerAuth(deps: { db: Kysely<DB>; secretBox: SecretBox; clock: Clock }) {
  const { db, secretBox, clock } = deps;
  // Worker rows with their tenant's opened secrets, per token hash, for WORKER_CACHE_MS: on the hot
  // path a signed request then costs one statement (the nonce), not two. Revocations and rotations
  // still take effect at once: the nonce statement only passes while the worker is not revoked
  // and the tenant's current secret is the one cached (else the row is read again and the
  // signature checked against the fresh secrets), and a signature that fails against cached
  // secrets is checked again against fresh ones.
  const cache = new Map<string, CachedWorker>();

  async function load(tokenHash: string): Promise<CachedWorker | null> {
    const w = await asService(db, (q) =>
      q
        .selectFrom('workers as w')
        .leftJoin('tenant_webhook_secrets as s', 's.tenant_id', 'w.tenant_id')
        .select([
          'w.id',
          'w.tenant_id',
          'w.name',
          'w.hosted',
          'w.revoked_at',
          's.current_sealed',
          's.previous_sealed',
          's.previous_valid_until',
        ])
        .where('w.token_hash', '=', tokenHash)
        .executeTakeFirst(),
    );
    if (!w) {
      cache.delete(tokenHash);
      return null;
    }
    const entry: CachedWorker = {
      at: Date.now(),
      id: w.id,
      tenantId: w.tenant_id,
      name: w.name,
      hosted: w.hosted,
      revoked: w.revoked_at !== null,
      stamp: w.current_sealed ?? null,
      current: w.current_sealed ? secretBox.open(w.current_sealed) : null,
      previous:
        w.previous_sealed && w.previous_valid_until
          ? { secret: secretBox.open(w.previous_sealed), until: new Date(w.previous_valid_until).getTime() }
          : null,
    };
    if (cache.size >= WORKER_CACHE_MAX) cache.clear();
    cache.set(tokenHash, entry);
    return entry;
  }

  /** Compares against every valid secret (no early exit), so timing does not tell which matched. */
  function signatureMatches(w: CachedWorker, raw: Buffer, sig: string, now: Date): boolean {
    const secrets = [w.current!, ...(w.previous && w.previous.until > now.getTime() ? [w.previous.secret] : [])];
    return secrets.map((s) => safeEqual(signBody(s, raw), sig)).includes(true);
  }

  /**
   * One statement, its own transaction: the worker is still not revoked and the tenant's current
   * secret is still the cached one (`active`), the nonce is new (`fresh`: a unique row, refused on
   * every replica), and last_seen_at is written at most every LAST_SEEN_EVERY_MS. A nonce older
   * than the sentAt window is refused by that check already, so remembering each for
   * NONCE_TTL_MS is enough; the reaper (reapNonces) forgets older ones.
   */
  async function rememberNonce(
    w: CachedWorker,
    nonce: string,
    now: Date,
  ): Promise<{ active: boolean; fresh: boolean }> {
    const { rows } = await asService(db, (q) =>
      sql<{ active: boolean; fresh: boolean }>`
        with ok as (
          select 1 from workers x left join tenant_webhook_secrets s on s.tenant_id = x.tenant_id
           where x.id = ${w.id} and x.revoked_at is null and s.current_sealed is not distinct from ${w.stamp}::text
        ), ins as (
          insert into worker_nonces (worker_id, nonce, tenant_id, seen_at)
          select ${w.id}, ${nonce}, ${w.tenantId}, ${now} where exists (select 1 from ok)
          on conflict do nothing returning 1
        ), seen as (
          update workers set last_seen_at = ${now}
           where id = ${w.id} and exists (select 1 from ins)
             and (last_seen_at is null or last_seen_at < ${new Date(now.getTime() - LAST_SEEN_EVERY_MS)})
        )
        select exists (select 1 from ok) as active, exists (select 1 from ins) as fresh`.execute(q),
    );
    return { active: rows[0]?.active === true, fresh: rows[0]?.fresh === true };
  }

  /**
   * `fileFields`: top-level fields that carry a report file's text rather than text a person typed
   * (the legacy report); the input rule leaves them to the importers, which clean what they read.
   */
  async function authenticate(input: {
    authorization: string | undefined;
    signature: string | string[] | undefined;
    raw: Buffer;
    fileFields?: readonly string[];
  }): Promise<WorkerContext> {
    const auth = input.authorization;
    if (!auth?.startsWith('Bearer ') || auth.length < 12)
      throw appError('worker_unauthorized', 'Send Authorization: Bearer <worker token>.');
    const tokenHash = hashWorkerToken(auth.slice(7).trim());
    const hit = cache.get(tokenHash);
    const cached = hit && Date.now() - hit.at < WORKER_CACHE_MS ? hit : undefined;
    let w = cached ?? (await load(tokenHash));
    if (!w || w.revoked)
      throw appError('worker_unauthorized', 'This worker token is unknown or was revoked; enroll the worker again.');

    const now = clock.now();
    const sig = typeof input.signature === 'string' ? input.signature.trim().toLowerCase() : '';
    if (!/^sha256=[0-9a-f]{64}$/.test(sig))
      throw appError('worker_signature_invalid', 'Send X-Rampart-Signature: sha256=<hex HMAC-SHA256 of the body>.');
    let ok = w.current !== null && signatureMatches(w, input.raw, sig, now);
    if (!ok && cached) {
      // The tenant may have rotated its secret since we cached it: ask the database once.
      w = await load(tokenHash);
      if (!w || w.revoked)
        throw appError('worker_unauthorized', 'This worker token is unknown or was revoked; enroll the worker again.');
      ok = w.current !== null && signatureMatches(w, input.raw, sig, now);
    }
    if (w.current === null)
      throw appError(
        'worker_signature_invalid',
        'This tenant has no webhook signing secret yet; generate one in Settings.',
      );
    if (!ok)
      throw appError(
        'worker_signature_invalid',
        "The signature does not match the body under the tenant's signing secret.",
      );

    let body: unknown;
    try {
      body = JSON.parse(input.raw.toString('utf8'));
    } catch {
      throw appError('invalid_json', 'The body is not valid JSON.');
    }
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw appError('validation_failed', 'The body must be a JSON object.', {
        details: [{ path: 'body', message: 'Expected an object' }],
      });
    assertCleanInput(
      input.fileFields?.length
        ? Object.fromEntries(Object.entries(body).filter(([k]) => !input.fileFields!.includes(k)))
        : body,
    );
    const b = body as Record<string, unknown>;
    const sentAt = typeof b.sentAt === 'string' ? Date.parse(b.sentAt) : NaN;
    if (!Number.isFinite(sentAt) || Math.abs(now.getTime() - sentAt) > SENT_AT_WINDOW_MS)
      throw appError('worker_request_expired', "sentAt is missing or more than 5 minutes from the server's time.");
    const nonce = b.nonce;
    if (typeof nonce !== 'string' || !/^[A-Za-z0-9_-]{16,128}$/.test(nonce))
      throw appError('validation_failed', 'The body needs a nonce of 16 to 128 URL-safe characters.', {
        details: [{ path: 'body.nonce', message: 'Use 16 to 128 URL-safe characters.' }],
      });

    // The nonce, remembered only while the worker and the cached secret still hold.
    for (let attempt = 0; ; attempt++) {
      const r = await rememberNonce(w, nonce, now);
      if (r.fresh) break;
      if (r.active)
        throw appError('worker_replay', 'This nonce was already used; send every request with a new nonce.');
      // Revoked, or the tenant's secret changed since we cached it: read again and re-check.
      w = await load(tokenHash);
      if (!w || w.revoked)
        throw appError('worker_unauthorized', 'This worker token is unknown or was revoked; enroll the worker again.');
      if (w.current === null || !signatureMatches(w, input.raw, sig, now))
        throw appError(
          'worker_signature_invalid',
          "The signature does not match the body under the tenant's signing secret.",
        );
      if (attempt > 0)
        throw appError(
          'service_unavailable',
          "The worker's credentials changed while the request was checked; retry.",
          { headers: { 'retry-after': '1' } },
        );
    }
    return { workerId: w.id, tenantId: w.tenantId, name: w.name, hosted: w.hosted, body: b };
  }

  /** Forgets nonces older than NONCE_TTL_MS (any replica; a plain delete). */
  async function reapNonces(): Promise<number> {
    const cutoff = new Date(clock.now().getTime() - NONCE_TTL_MS);
    const r = await asService(db, (q) =>
      q.deleteFrom('worker_nonces').where('seen_at', '<', cutoff).executeTakeFirst(),
    );
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
export function registerWorkerRoutes(
  app: FastifyInstance,
  auth: WorkerAuth,
  routes: (scope: FastifyInstance) => void,
  opts: { bodyLimit?: number; fileFields?: readonly string[] } = {},
): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer', ...(opts.bodyLimit ? { bodyLimit: opts.bodyLimit } : {}) },
      (_req, body, done) => done(null, body),
    );
    scope.addHook('preValidation', async (req) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const ctx = await auth.authenticate({
        authorization: req.headers.authorization,
        signature: req.headers[SIGNATURE_HEADER],
        raw,
        ...(opts.fileFields ? { fileFields: opts.fileFields } : {}),
      });
      (req as WithWorker)[kWorker] = ctx;
      req.body = ctx.body;
    });
    routes(scope);
  });
}
