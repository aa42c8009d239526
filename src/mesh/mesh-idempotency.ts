// Idempotency claims for mutating mesh flows, keyed by (caller, request id), fingerprinted by
// the SHA-256 of the raw body. The claim is its own short statement (autocommit), so a concurrent
// caller gets 409 at once instead of waiting on the unique index; the response is recorded in the
// handler's own transaction, fenced by the claim time so a taken-over claim cannot complete twice.
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { asService, withService, type Tx } from '../db/tenant.ts';

export const COMPLETED_RETENTION_MS = 24 * 60 * 60 * 1000;

export type ClaimOutcome =
  | { kind: 'claimed'; claimedAt: Date }
  | { kind: 'replay'; response: Record<string, unknown> }
  | { kind: 'in_progress' }
  | { kind: 'reuse' };

export interface IdempotencyKey {
  caller: string;
  requestId: string;
}

export interface IdempotencyStore {
  claim(key: IdempotencyKey, fingerprint: string, flow: string, now: Date): Promise<ClaimOutcome>;
  /** Inside the handler's transaction; false when the claim is no longer ours (taken over after going stale). */
  complete(
    tx: Tx,
    key: IdempotencyKey,
    claimedAt: Date,
    response: Record<string, unknown>,
    now: Date,
  ): Promise<boolean>;
  /** After a crash: the same id may be retried. */
  release(key: IdempotencyKey, claimedAt: Date): Promise<void>;
  /** Deletes completed records past retention and abandoned claims; returns how many. */
  purge(now: Date): Promise<number>;
}

export function createIdempotencyStore(deps: { db: Kysely<DB>; staleMs: number }): IdempotencyStore {
  const { db, staleMs } = deps;
  return {
    async claim(key, fingerprint, flow, now) {
      const staleBefore = new Date(now.getTime() - staleMs);
      // Autocommit statements: the claim must be visible to concurrent callers at once.
      return asService(db, async (tx) => {
        // Insert, or take over a row that no longer blocks: an abandoned claim for the same
        // payload, or a completed record past its 24 h retention (then it is a new request).
        const taken = await sql<{ claimed_at: Date }>`
          insert into svc_idempotency (caller, request_id, fingerprint, flow, status, claimed_at, expires_at)
          values (${key.caller}, ${key.requestId}, ${fingerprint}, ${flow}, 'in_flight', ${now}, ${new Date(now.getTime() + COMPLETED_RETENTION_MS)})
          on conflict (caller, request_id) do update
            set fingerprint = excluded.fingerprint, flow = excluded.flow, status = 'in_flight', claimed_at = excluded.claimed_at,
                completed_at = null, response = null, expires_at = excluded.expires_at
            where (svc_idempotency.status = 'in_flight' and svc_idempotency.claimed_at < ${staleBefore} and svc_idempotency.fingerprint = excluded.fingerprint)
               or (svc_idempotency.status = 'completed' and svc_idempotency.expires_at < ${now})
          returning claimed_at`.execute(tx);
        if (taken.rows[0]) return { kind: 'claimed', claimedAt: new Date(taken.rows[0].claimed_at) } as const;
        const existing = await tx
          .selectFrom('svc_idempotency')
          .selectAll()
          .where('caller', '=', key.caller)
          .where('request_id', '=', key.requestId)
          .executeTakeFirst();
        if (!existing) return { kind: 'in_progress' } as const; // deleted between the two statements: let the caller retry
        if (existing.fingerprint !== fingerprint) return { kind: 'reuse' } as const;
        if (existing.status === 'completed' && existing.response)
          return { kind: 'replay', response: existing.response } as const;
        return { kind: 'in_progress' } as const;
      });
    },

    async complete(tx, key, claimedAt, response, now) {
      const res = await tx
        .updateTable('svc_idempotency')
        // Retention counts from completion.
        .set({
          status: 'completed',
          completed_at: now,
          response: JSON.stringify(response),
          expires_at: new Date(now.getTime() + COMPLETED_RETENTION_MS),
        })
        .where('caller', '=', key.caller)
        .where('request_id', '=', key.requestId)
        .where('status', '=', 'in_flight')
        .where('claimed_at', '=', claimedAt)
        .executeTakeFirst();
      return res.numUpdatedRows === 1n;
    },

    async release(key, claimedAt) {
      await asService(db, (tx) =>
        tx
          .deleteFrom('svc_idempotency')
          .where('caller', '=', key.caller)
          .where('request_id', '=', key.requestId)
          .where('status', '=', 'in_flight')
          .where('claimed_at', '=', claimedAt)
          .execute(),
      );
    },

    async purge(now) {
      const res = await withService(db, (tx) =>
        tx
          .deleteFrom('svc_idempotency')
          .where((eb) =>
            eb.or([
              eb.and([eb('status', '=', 'completed'), eb('expires_at', '<', now)]),
              eb.and([
                eb('status', '=', 'in_flight'),
                eb('claimed_at', '<', new Date(now.getTime() - COMPLETED_RETENTION_MS)),
              ]),
            ]),
          )
          .executeTakeFirst(),
      );
      return Number(res.numDeletedRows);
    },
  };
}
