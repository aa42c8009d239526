// Worker enrollment (docs/worker-protocol.md): an admin (or staff, for a hosted worker) creates a one-time
// code; a worker redeems it on the public enroll route for its bearer token. Codes and tokens
// are stored as SHA-256 hashes only. Redemption is one conditional UPDATE, so two concurrent
// redemptions of a code cannot both win; failed attempts are counted per client address and
// minute in the database, so the throttle holds across replicas.
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { z } from 'zod';
import type { AuditService } from '../audit/index.ts';
import type { DB } from '../db/schema.ts';
import { asService, type Caller, isTenantAdmin, type Tx, withService, tenantAccess } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { sha256Hex } from '../lib/crypto.ts';
import { appError } from '../lib/errors.ts';
import { newId, randomToken } from '../lib/ids.ts';
import type { enrollBodySchema } from '../lib/worker-wire.ts';
import {
  CODE_ALPHABET,
  CODE_LENGTH,
  ENROLL_FAILURES_PER_MINUTE,
  ENROLLMENT_TTL_MS,
  type EnrollmentCreatedDto,
  type WorkerDto,
  type WorkerListDto,
} from './workers-schemas.ts';

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** 8 characters of Crockford base32; 256 is a multiple of 32, so masking a byte is unbiased. */
export function generateEnrollmentCode(): string {
  return [...randomBytes(CODE_LENGTH)].map((b) => CODE_ALPHABET[b & 31]).join('');
}

/** Crockford decoding rules: case-insensitive, hyphens and spaces ignored, I/L read as 1 and O as 0. */
export function normaliseCode(input: string): string {
  return input.toUpperCase().replace(/[\s-]/g, '').replace(/[IL]/g, '1').replace(/O/g, '0');
}

export const hashCode = (code: string): string => sha256Hex(`rampart-enrollment:${normaliseCode(code)}`);
export const hashWorkerToken = (token: string): string => sha256Hex(`rampart-worker:${token}`);

export function createEnrollmentService(deps: { db: Kysely<DB>; audit: AuditService; clock: Clock }) {
  const { db, audit, clock } = deps;

  const { asMember, asManager } = tenantAccess(db);

  async function insertEnrollment(
    tx: Tx,
    tenantId: string,
    caller: Caller,
    hosted: boolean,
  ): Promise<EnrollmentCreatedDto> {
    const code = generateEnrollmentCode();
    const id = newId();
    const expiresAt = new Date(clock.now().getTime() + ENROLLMENT_TTL_MS);
    await tx
      .insertInto('worker_enrollments')
      .values({
        id,
        tenant_id: tenantId,
        code_hash: hashCode(code),
        hosted,
        created_by: caller.userId,
        created_by_email: caller.email,
        created_at: clock.now(),
        expires_at: expiresAt,
      })
      .execute();
    await audit.record(
      {
        tenantId,
        actorUserId: caller.userId,
        actorEmail: caller.email,
        action: hosted ? 'workers.hosted_enrollment_created' : 'workers.enrollment_created',
        targetType: 'worker_enrollment',
        targetId: id,
        details: { expiresAt: expiresAt.toISOString() },
      },
      tx,
    );
    return { id, code, expiresAt: expiresAt.toISOString(), hosted };
  }

  /**
   * Reserves one failed attempt for the address in the current minute, outside the redeeming transaction (committed
   * at once), and answers false when the address has used them all. Counting before the code is
   * checked makes a burst of parallel guesses throttle exactly like sequential ones; a successful
   * redemption gives its reservation back in the redeeming transaction.
   */
  async function reserveAttempt(address: string, windowStart: Date): Promise<boolean> {
    return asService(db, async (q) => {
      const { rows } = await sql<{ failures: number }>`
        insert into enroll_attempts (address, window_start, failures) values (${address}, ${windowStart}, 1)
        on conflict (address, window_start) do update set failures = enroll_attempts.failures + 1
          where enroll_attempts.failures < ${ENROLL_FAILURES_PER_MINUTE}
        returning failures`.execute(q);
      if (rows.length === 0) return false;
      // Old windows mean nothing any more.
      if (rows[0]!.failures === 1)
        await q
          .deleteFrom('enroll_attempts')
          .where('window_start', '<', new Date(windowStart.getTime() - 10 * 60_000))
          .execute();
      return true;
    });
  }

  function toWorkerDto(r: {
    id: string;
    name: string;
    platform: string;
    version: string;
    hosted: boolean;
    enrolled_at: Date | string;
    last_seen_at: Date | string | null;
    revoked_at: Date | string | null;
    scan_id: string | null;
    scan_kind: string | null;
    scan_status: string | null;
    scan_percent: number | null;
  }): WorkerDto {
    return {
      id: r.id,
      name: r.name,
      platform: r.platform,
      version: r.version,
      hosted: r.hosted,
      status: r.revoked_at ? 'revoked' : 'active',
      enrolledAt: iso(r.enrolled_at)!,
      lastSeenAt: iso(r.last_seen_at),
      revokedAt: iso(r.revoked_at),
      currentScan: r.scan_id
        ? { id: r.scan_id, kind: r.scan_kind ?? '', status: r.scan_status ?? '', percent: Number(r.scan_percent ?? 0) }
        : null,
    };
  }

  async function listIn(tx: Tx, tenantId: string, workerId?: string): Promise<WorkerDto[]> {
    const { rows } = await sql<Parameters<typeof toWorkerDto>[0]>`
      select w.id, w.name, w.platform, w.version, w.hosted, w.enrolled_at, w.last_seen_at, w.revoked_at,
             s.id as scan_id, s.kind as scan_kind, s.status as scan_status, s.percent as scan_percent
      from workers w
      left join lateral (
        select id, kind, status, percent from scans
        where tenant_id = w.tenant_id and leased_by = w.id and status in ('leased', 'running')
        order by started_at desc nulls last limit 1
      ) s on true
      where w.tenant_id = ${tenantId} ${workerId ? sql`and w.id = ${workerId}` : sql``}
      order by (w.revoked_at is null) desc, w.enrolled_at desc`.execute(tx);
    return rows.map(toWorkerDto);
  }

  return {
    /** Tenant owner/admin: a code for a worker of their own. */
    createEnrollment(tenantId: string, caller: Caller): Promise<EnrollmentCreatedDto> {
      return asManager(tenantId, caller, (tx) => insertEnrollment(tx, tenantId, caller, false));
    },

    /** Super-admin: a code for a Rampart-hosted worker that serves this tenant (docs/decisions.md). */
    async createHostedEnrollment(tenantId: string, caller: Caller): Promise<EnrollmentCreatedDto> {
      return withService(db, async (tx) => {
        const org = await tx.selectFrom('organization').select('id').where('id', '=', tenantId).executeTakeFirst();
        if (!org) throw appError('tenant_not_found', 'No such tenant.');
        return insertEnrollment(tx, tenantId, caller, true);
      });
    },

    /** Public: redeems a code for a worker and its bearer token (shown once). */
    async enroll(
      address: string,
      body: z.infer<typeof enrollBodySchema>,
    ): Promise<{ workerId: string; tenantId: string; token: string }> {
      const now = clock.now();
      const windowStart = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
      const retryAfter = String(Math.max(1, Math.ceil((windowStart.getTime() + 60_000 - now.getTime()) / 1000)));
      if (!(await reserveAttempt(address, windowStart)))
        throw appError('rate_limited', 'Too many failed enrollment attempts from this address; wait a minute.', {
          headers: { 'retry-after': retryAfter },
        });
      const result = await withService(db, async (tx) => {
        const code = normaliseCode(body.code);
        if (code.length !== CODE_LENGTH || [...code].some((c) => !CODE_ALPHABET.includes(c))) return null;
        // One statement: the first redemption marks the code used, any concurrent one finds nothing.
        const enrollment = await tx
          .updateTable('worker_enrollments')
          .set({ used_at: now })
          .where('code_hash', '=', hashCode(code))
          .where('used_at', 'is', null)
          .where('expires_at', '>', now)
          .returning(['id', 'tenant_id', 'hosted'])
          .executeTakeFirst();
        if (!enrollment) return null;
        const workerId = newId();
        const token = `rwk_${randomToken(32)}`;
        await tx
          .insertInto('workers')
          .values({
            id: workerId,
            tenant_id: enrollment.tenant_id,
            name: body.name,
            platform: body.platform,
            version: body.version,
            hosted: enrollment.hosted,
            token_hash: hashWorkerToken(token),
            enrollment_id: enrollment.id,
            enrolled_at: now,
          })
          .execute();
        await tx
          .updateTable('worker_enrollments')
          .set({ worker_id: workerId })
          .where('id', '=', enrollment.id)
          .execute();
        await tx
          .updateTable('enroll_attempts')
          .set({ failures: sql<number>`failures - 1` })
          .where('address', '=', address)
          .where('window_start', '=', windowStart)
          .execute();
        await audit.record(
          {
            tenantId: enrollment.tenant_id,
            action: 'workers.enrolled',
            targetType: 'worker',
            targetId: workerId,
            details: {
              name: body.name,
              platform: body.platform,
              version: body.version,
              hosted: enrollment.hosted,
              address,
            },
          },
          tx,
        );
        return { workerId, tenantId: enrollment.tenant_id, token };
      });
      if (!result) {
        throw appError(
          'enrollment_code_invalid',
          'This enrollment code is not valid: it may be mistyped, expired or already used.',
        );
      }
      return result;
    },

    /** A worker reports the version it runs (heartbeat); the service role, as worker routes have no session. */
    async recordVersion(workerId: string, version: string): Promise<void> {
      await withService(db, (tx) =>
        tx.updateTable('workers').set({ version }).where('id', '=', workerId).where('version', '<>', version).execute(),
      );
    },

    list(tenantId: string, caller: Caller): Promise<WorkerListDto> {
      return asMember(tenantId, caller, async (tx, role) => ({
        workers: await listIn(tx, tenantId),
        canManage: isTenantAdmin(role),
      }));
    },

    revoke(tenantId: string, caller: Caller, workerId: string): Promise<WorkerDto> {
      return asManager(tenantId, caller, async (tx) => {
        const row = await tx
          .updateTable('workers')
          .set({
            revoked_at: sql<Date>`coalesce(revoked_at, ${clock.now()})`,
            revoked_by: sql<string>`coalesce(revoked_by, ${caller.userId}::uuid)`,
            revoked_by_email: sql<string>`coalesce(revoked_by_email, ${caller.email})`,
          })
          .where('tenant_id', '=', tenantId)
          .where('id', '=', workerId)
          .returning(['id', 'name'])
          .executeTakeFirst();
        if (!row) throw appError('worker_not_found', 'No such worker in this tenant.');
        // A revoked worker sends nothing more; its remembered nonces would only linger.
        await tx
          .deleteFrom('worker_nonces')
          .where('tenant_id', '=', tenantId)
          .where('worker_id', '=', workerId)
          .execute();
        await audit.record(
          {
            tenantId,
            actorUserId: caller.userId,
            actorEmail: caller.email,
            action: 'workers.revoked',
            targetType: 'worker',
            targetId: workerId,
            details: { name: row.name },
          },
          tx,
        );
        const [dto] = await listIn(tx, tenantId, workerId);
        return dto!;
      });
    },
  };
}

export type EnrollmentService = ReturnType<typeof createEnrollmentService>;
