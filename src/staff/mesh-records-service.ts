// Staff reads of the service-mesh records, through the service role (the app role has no grant on
// these tables). Every list is newest first with keyset pagination: `limit + 1` rows are read, and
// the extra one only tells whether a next page exists.
import { sql, type Expression, type Kysely, type SelectQueryBuilder, type SqlBool, type StringReference } from 'kysely';
import type { z } from 'zod';
import type { DB } from '../db/schema.ts';
import { withService } from '../db/tenant.ts';
import type {
  InboundQuery,
  inboundPageSchema,
  OutboundQuery,
  outboundPageSchema,
  outboxEntrySchema,
  OutboxQuery,
  outboxPageSchema,
  outboxSummarySchema,
  ReceivedEventsQuery,
  receivedEventsPageSchema,
} from './mesh-records-schemas.ts';

export interface MeshRecordsService {
  receivedEvents(q: ReceivedEventsQuery): Promise<z.infer<typeof receivedEventsPageSchema>>;
  inbound(q: InboundQuery): Promise<z.infer<typeof inboundPageSchema>>;
  outbound(q: OutboundQuery): Promise<z.infer<typeof outboundPageSchema>>;
  outbox(q: OutboxQuery): Promise<z.infer<typeof outboxPageSchema>>;
  outboxSummary(): Promise<z.infer<typeof outboxSummarySchema>>;
}

const iso = (d: Date | string) => new Date(d).toISOString();
const isoOrNull = (d: Date | string | null) => (d === null ? null : iso(d));
const likePrefix = (s: string) => `${s.replace(/[%_\\]/g, '\\$&')}%`;

/**
 * The part every list shares: the time window on `at` (`from` inclusive, `to` exclusive; none
 * without `at`), the keyset cursor `before` (a condition, none on the first page), and `limit + 1`
 * rows.
 */
function listWindow<D, TB extends keyof D, O>(
  query: SelectQueryBuilder<D, TB, O>,
  q: { from?: string; to?: string; limit: number },
  opts: { at?: StringReference<D, TB>; before?: Expression<SqlBool> | undefined },
): SelectQueryBuilder<D, TB, O> {
  if (opts.at && q.from) query = query.where(sql<boolean>`${sql.ref(opts.at)} >= ${new Date(q.from)}`);
  if (opts.at && q.to) query = query.where(sql<boolean>`${sql.ref(opts.at)} < ${new Date(q.to)}`);
  if (opts.before) query = query.where(opts.before);
  return query.limit(q.limit + 1);
}

/** The cursor condition of the lists paged by id, newest (highest) first. */
const idBefore = (before: number | undefined) => (before ? sql<boolean>`id < ${before}` : undefined);

function page<R, E, C>(
  rows: R[],
  limit: number,
  toEntry: (r: R) => E,
  cursorOf: (r: R) => C,
): { entries: E[]; nextBefore: C | null } {
  const shown = rows.slice(0, limit);
  const last = shown.at(-1);
  return { entries: shown.map(toEntry), nextBefore: rows.length > limit && last !== undefined ? cursorOf(last) : null };
}

export function createMeshRecordsService(deps: { db: Kysely<DB> }): MeshRecordsService {
  const { db } = deps;

  return {
    async receivedEvents(q) {
      const rows = await withService(db, (tx) => {
        let query = tx
          .selectFrom('svc_received_events as e')
          .select([
            'e.id',
            'e.received_at',
            'e.caller',
            'e.request_id',
            'e.kind',
            'e.severity',
            'e.title',
            'e.detail',
            'e.occurred_at',
            'e.brand',
            'e.data',
            // The exact key of the cursor: received_at to the microsecond (a JS Date keeps milliseconds).
            sql<string>`to_char(e.received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('cursor_at'),
          ])
          .orderBy('e.received_at', 'desc')
          .orderBy('e.id', 'desc');
        if (q.caller) query = query.where('e.caller', '=', q.caller);
        if (q.kind) query = query.where('e.kind', 'like', likePrefix(q.kind));
        if (q.severity) query = query.where('e.severity', '=', q.severity);
        const before = q.before
          ? sql<boolean>`(e.received_at, e.id) < (${q.before.at}::timestamptz, ${q.before.id}::uuid)`
          : undefined;
        return listWindow(query, q, { at: 'e.received_at', before }).execute();
      });
      return page(
        rows,
        q.limit,
        (r) => ({
          id: r.id,
          receivedAt: iso(r.received_at),
          caller: r.caller,
          requestId: r.request_id,
          kind: r.kind,
          severity: r.severity,
          title: r.title,
          detail: r.detail,
          occurredAt: isoOrNull(r.occurred_at),
          brand: r.brand,
          data: r.data ?? {},
        }),
        (r) => `${r.cursor_at}_${r.id}`,
      );
    },

    async inbound(q) {
      const rows = await withService(db, (tx) => {
        let query = tx
          .selectFrom('svc_inbound_events')
          .select([
            'id',
            'received_at',
            'caller',
            'flow',
            'status',
            'error_code',
            'duration_ms',
            'request_id',
            'verified',
            'replayed',
          ])
          .orderBy('id', 'desc');
        if (q.caller) query = query.where('caller', '=', q.caller);
        if (q.flow) query = query.where('flow', '=', q.flow);
        if (q.status !== undefined) query = query.where('status', '=', q.status);
        if (q.errorCode) query = query.where('error_code', '=', q.errorCode);
        return listWindow(query, q, { at: 'received_at', before: idBefore(q.before) }).execute();
      });
      return page(
        rows,
        q.limit,
        (r) => ({
          id: r.id,
          receivedAt: iso(r.received_at),
          caller: r.caller,
          flow: r.flow,
          status: r.status,
          errorCode: r.error_code,
          durationMs: r.duration_ms,
          requestId: r.request_id,
          verified: r.verified,
          replayed: r.replayed,
        }),
        (r) => r.id,
      );
    },

    async outbound(q) {
      const rows = await withService(db, (tx) => {
        let query = tx
          .selectFrom('svc_outbound_events')
          .select([
            'id',
            'created_at',
            'peer',
            'flow',
            'event_type',
            'severity',
            'ok',
            'http_status',
            'request_id',
            'attempt',
            'error',
            'response',
            'duration_ms',
          ])
          .orderBy('id', 'desc');
        if (q.peer) query = query.where('peer', '=', q.peer);
        if (q.flow) query = query.where('flow', '=', q.flow);
        if (q.ok !== undefined) query = query.where('ok', '=', q.ok);
        if (q.requestId) query = query.where('request_id', '=', q.requestId);
        return listWindow(query, q, { at: 'created_at', before: idBefore(q.before) }).execute();
      });
      return page(
        rows,
        q.limit,
        (r) => ({
          id: r.id,
          createdAt: iso(r.created_at),
          peer: r.peer,
          flow: r.flow,
          eventType: r.event_type,
          severity: r.severity,
          ok: r.ok,
          httpStatus: r.http_status,
          requestId: r.request_id,
          attempt: r.attempt,
          error: r.error,
          response: r.response ?? null,
          durationMs: r.duration_ms,
        }),
        (r) => r.id,
      );
    },

    async outbox(q) {
      const rows = await withService(db, (tx) => {
        // Never the payload: staff see what an event is through event_type and who it is about.
        let query = tx
          .selectFrom('svc_outbox as x')
          .leftJoin('organization as o', 'o.id', 'x.subject_tenant_id')
          .select([
            'x.id',
            'x.created_at',
            'x.peer',
            'x.flow',
            'x.event_type',
            'x.severity',
            'x.request_id',
            'x.status',
            'x.attempts',
            'x.next_attempt_at',
            'x.last_error',
            'x.delivered_at',
            'x.cage_code',
            'x.subject_tenant_id',
            'x.failed_at',
            'x.resent_at',
            'x.resend_count',
            'x.previous_request_ids',
            sql<string | null>`coalesce(x.company_name, o.name)`.as('company'),
          ])
          .orderBy('x.id', 'desc');
        if (q.status) query = query.where('x.status', '=', q.status);
        if (q.peer) query = query.where('x.peer', '=', q.peer);
        return listWindow(query, q, { before: q.before ? sql<boolean>`x.id < ${q.before}` : undefined }).execute();
      });
      return page(rows, q.limit, outboxEntry, (r) => r.id);
    },

    async outboxSummary() {
      const rows = await withService(db, (tx) =>
        tx
          .selectFrom('svc_outbox')
          .select((eb) => [
            'peer',
            sql<number>`count(*) filter (where status = 'pending')::int`.as('pending'),
            sql<number>`count(*) filter (where status = 'failed')::int`.as('failed'),
            eb.fn.min(sql<Date>`case when status = 'pending' then created_at end`).as('oldest_pending'),
          ])
          .where('status', 'in', ['pending', 'failed'])
          .groupBy('peer')
          .orderBy('peer')
          .execute(),
      );
      return {
        peers: rows.map((r) => ({
          peer: r.peer,
          pending: r.pending,
          failed: r.failed,
          oldestPendingAt: r.oldest_pending ? iso(r.oldest_pending) : null,
        })),
      };
    },
  };
}

/** One outbox row as staff see it (without its payload). */
export function outboxEntry(r: {
  id: number;
  created_at: Date | string;
  peer: string;
  flow: string;
  event_type: string | null;
  severity: string | null;
  request_id: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: Date | string;
  last_error: string | null;
  delivered_at: Date | string | null;
  company: string | null;
  cage_code: string | null;
  subject_tenant_id: string | null;
  failed_at: Date | string | null;
  resent_at: Date | string | null;
  resend_count: number;
  previous_request_ids: string[];
}): z.infer<typeof outboxEntrySchema> {
  return {
    id: r.id,
    createdAt: iso(r.created_at),
    peer: r.peer,
    flow: r.flow,
    eventType: r.event_type,
    severity: r.severity,
    requestId: r.request_id,
    status: r.status,
    attempts: r.attempts,
    nextAttemptAt: iso(r.next_attempt_at),
    lastError: r.last_error,
    deliveredAt: isoOrNull(r.delivered_at),
    companyName: r.company,
    cageCode: r.cage_code,
    tenantId: r.subject_tenant_id,
    failedAt: isoOrNull(r.failed_at),
    resentAt: isoOrNull(r.resent_at),
    resendCount: r.resend_count,
    previousRequestIds: r.previous_request_ids ?? [],
  };
}
