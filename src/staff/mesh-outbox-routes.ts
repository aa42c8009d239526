// Staff → Mesh outbox: failed deliveries, and sending them again (staff, audited).
//   GET  /api/v1/staff/mesh/outbox/summary          pending and failed entries per peer
//   POST /api/v1/staff/mesh/outbox/:id/resend       one failed entry again
//   POST /api/v1/staff/mesh/outbox/resend-failed    every failed entry of one peer again
// The list itself is GET /api/v1/staff/mesh/outbox (mesh-records-routes.ts).
//
// "Send again" puts a failed entry back to pending, due now, with the same request id, so a peer
// that did execute it answers from its idempotency record instead of running it twice. The one
// exception is an entry given up on 409 idempotency_key_reuse: the peer holds another payload
// under that id and docs/mesh.md says to use a new one, so it gets a new id (the old one is kept).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { sql, type Kysely } from 'kysely';
import type { AuditService } from '../audit/index.ts';
import type { DB } from '../db/schema.ts';
import { withService, type Tx } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { appError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import type { Outbox } from '../mesh/mesh-outbox.ts';
import type { SessionGuards } from '../server/plugins/session.ts';
import {
  outboxEntrySchema,
  outboxIdParamsSchema,
  outboxResendFailedBodySchema,
  outboxResendFailedResponseSchema,
  outboxSummarySchema,
} from './mesh-records-schemas.ts';
import { outboxEntry, type MeshRecordsService } from './mesh-records-service.ts';

const REUSE = 'idempotency_key_reuse';

/** Sets failed rows (all of `where`) back to pending, due now; returns the ids and how many got a new request id. */
async function resendRows(tx: Tx, now: Date, where: { id?: number; peer?: string }) {
  const { rows } = await sql<{ id: number; renewed: boolean }>`
    update svc_outbox set
      status = 'pending', next_attempt_at = ${now}, locked_until = null, failed_at = null,
      resent_at = ${now}, resend_count = resend_count + 1,
      previous_request_ids = case when last_error = ${REUSE} then previous_request_ids || request_id else previous_request_ids end,
      request_id = case when last_error = ${REUSE} then ${newId()} || '-' || id::text else request_id end
    where status = 'failed'
      ${where.id !== undefined ? sql`and id = ${where.id}` : sql``}
      ${where.peer !== undefined ? sql`and peer = ${where.peer}` : sql``}
    returning id, (cardinality(previous_request_ids) > 0 and last_error = ${REUSE}) as renewed`.execute(tx);
  return rows;
}

export function registerMeshOutboxRoutes(
  app: FastifyInstance,
  deps: {
    guards: SessionGuards;
    audit: AuditService;
    records: MeshRecordsService;
    db: Kysely<DB>;
    clock: Clock;
    outbox: Outbox;
  },
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, audit, db, clock } = deps;
  const tags = ['staff'];

  r.get(
    '/api/v1/staff/mesh/outbox/summary',
    {
      schema: {
        tags,
        summary: 'Pending and failed outbox entries per peer',
        response: { 200: outboxSummarySchema },
      },
    },
    async (req) => {
      await guards.requireStaff(req);
      return deps.records.outboxSummary();
    },
  );

  r.post(
    '/api/v1/staff/mesh/outbox/:id/resend',
    {
      schema: {
        tags,
        summary: 'Send one failed outbox entry again, with the same request id (staff, audited)',
        params: outboxIdParamsSchema,
        response: { 200: outboxEntrySchema },
      },
    },
    async (req) => {
      const me = await guards.requireStaff(req);
      const id = req.params.id;
      let before = '';
      const entry = await withService(db, async (tx) => {
        const found = await tx
          .selectFrom('svc_outbox')
          .select(['status', 'peer', 'request_id', 'event_type'])
          .where('id', '=', id)
          .forUpdate()
          .executeTakeFirst();
        if (!found) throw appError('outbox_entry_not_found', 'There is no outbox entry with this id.');
        if (found.status !== 'failed')
          throw appError(
            'outbox_entry_not_failed',
            found.status === 'pending'
              ? 'This entry is still being tried; only a failed delivery can be sent again.'
              : 'This entry was delivered; only a failed delivery can be sent again.',
          );
        before = found.request_id;
        await resendRows(tx, clock.now(), { id });
        const row = await tx
          .selectFrom('svc_outbox as x')
          .leftJoin('organization as o', 'o.id', 'x.subject_tenant_id')
          .selectAll('x')
          .select(sql<string | null>`coalesce(x.company_name, o.name)`.as('company'))
          .where('x.id', '=', id)
          .executeTakeFirstOrThrow();
        return outboxEntry(row);
      });
      await audit.record({
        actorUserId: me.user.id,
        actorEmail: me.user.email,
        action: 'mesh.outbox_resend',
        targetType: 'mesh_peer',
        targetId: entry.peer,
        details: {
          outboxId: entry.id,
          eventType: entry.eventType,
          requestId: entry.requestId,
          newRequestId: entry.requestId !== before,
        },
      });
      deps.outbox.nudge();
      return entry;
    },
  );

  r.post(
    '/api/v1/staff/mesh/outbox/resend-failed',
    {
      schema: {
        tags,
        summary: 'Send every failed outbox entry of one peer again (staff, audited)',
        body: outboxResendFailedBodySchema,
        response: { 200: outboxResendFailedResponseSchema },
      },
    },
    async (req) => {
      const me = await guards.requireStaff(req);
      const { peer } = req.body;
      const rows = await withService(db, (tx) => resendRows(tx, clock.now(), { peer }));
      const result = { peer, resent: rows.length, newRequestIds: rows.filter((x) => x.renewed).length };
      await audit.record({
        actorUserId: me.user.id,
        actorEmail: me.user.email,
        action: 'mesh.outbox_resend_failed',
        targetType: 'mesh_peer',
        targetId: peer,
        details: { resent: result.resent, newRequestIds: result.newRequestIds },
      });
      if (rows.length) deps.outbox.nudge();
      return result;
    },
  );
}
