// Staff reads of the service-mesh records: events peers reported to us, inbound dispatch calls,
// outbound attempts and the outbox. Read-only; none of these tables holds a secret or a signature,
// and the outbox payload is never returned.
import { z } from 'zod';

const text = (max: number) => z.string().trim().min(1).max(max);
const limit = z.coerce.number().int().min(1).max(200).default(50).describe('Page size, 1 to 200 (default 50).');
const from = z.iso
  .datetime({ offset: true })
  .optional()
  .describe('Only records at or after this instant (ISO 8601 with offset).');
const to = z.iso
  .datetime({ offset: true })
  .optional()
  .describe('Only records strictly before this instant (ISO 8601 with offset).');
const idCursor = z.coerce
  .number()
  .int()
  .positive()
  .optional()
  .describe(
    'Cursor: the `nextBefore` of the previous page; the next page holds the records with a smaller id. Pages run newest (highest id) first.',
  );
const idNextBefore = z
  .number()
  .int()
  .nullable()
  .describe('Pass as `before` for the next (older) page; null on the last page.');

/** The query of a list with a time window: its own filters, then `from`, `to`, the cursor `before` and `limit`. */
const windowedListQuerySchema = <F extends z.ZodRawShape, B extends z.ZodType>(filters: F, before: B) =>
  z.object({ ...filters, from, to, before, limit });

/** A page of a list paged by id. */
const idPageSchema = <E extends z.ZodType>(entry: E) => z.object({ entries: z.array(entry), nextBefore: idNextBefore });

// ---- svc_received_events (uuid ids) ----

/**
 * Keyset cursor of received events: `<received_at to the microsecond, UTC>_<id>`, e.g.
 * `2025-01-31T12:00:00.123456Z_5b0c…`. Pages are ordered by (received_at, id) descending and the
 * next page holds the rows strictly below that pair, so rows sharing one instant are neither
 * skipped nor repeated. Microseconds matter: received_at has them, a millisecond ISO time would not
 * be an exact key.
 */
export const RECEIVED_CURSOR_RE =
  /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

const receivedCursor = z
  .string()
  .regex(RECEIVED_CURSOR_RE, 'Not a cursor returned as nextBefore')
  .transform((value) => {
    const [, at, id] = RECEIVED_CURSOR_RE.exec(value)!;
    return { at: at!, id: id! };
  })
  // A real calendar instant (Date would roll 2025-02-31 over to March; PostgreSQL would refuse it).
  .refine(({ at }) => {
    const d = new Date(at);
    return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 23) === at.slice(0, 23);
  }, 'Not a cursor returned as nextBefore')
  .optional()
  .describe(
    'Keyset cursor: the `nextBefore` of the previous page, `<received_at in UTC to the microsecond>_<id>`. Entries are ordered by (receivedAt, id) descending; the next page holds those strictly below that pair.',
  );

export const receivedEventsQuerySchema = windowedListQuerySchema(
  {
    caller: text(200).optional().describe('Exact peer name that reported the event.'),
    kind: text(100).optional().describe('Kind prefix, e.g. `finding.` or `finding.critical`.'),
    severity: text(50).optional().describe('Exact severity, e.g. `critical`.'),
  },
  receivedCursor,
);
export type ReceivedEventsQuery = z.infer<typeof receivedEventsQuerySchema>;

export const receivedEventSchema = z.object({
  id: z.string(),
  receivedAt: z.string(),
  caller: z.string(),
  requestId: z.string(),
  kind: z.string(),
  severity: z.string(),
  title: z.string(),
  detail: z.string().nullable(),
  occurredAt: z.string().nullable(),
  brand: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
});

export const receivedEventsPageSchema = z.object({
  entries: z.array(receivedEventSchema),
  nextBefore: z.string().nullable().describe('Pass as `before` for the next (older) page; null on the last page.'),
});

// ---- svc_inbound_events ----

export const inboundQuerySchema = windowedListQuerySchema(
  {
    caller: text(200).optional().describe('Exact caller (peer) name as it claimed itself.'),
    flow: text(100).optional().describe('Exact flow, e.g. `ping`.'),
    status: z.coerce.number().int().min(100).max(599).optional().describe('Exact HTTP status of our answer.'),
    errorCode: text(100).optional().describe('Exact error code of our answer, e.g. `bad_signature`.'),
  },
  idCursor,
);
export type InboundQuery = z.infer<typeof inboundQuerySchema>;

export const inboundEventSchema = z.object({
  id: z.number().int(),
  receivedAt: z.string(),
  caller: z.string().nullable(),
  flow: z.string().nullable(),
  status: z.number().int(),
  errorCode: z.string().nullable(),
  durationMs: z.number(),
  requestId: z.string().nullable(),
  verified: z.boolean(),
  replayed: z.boolean(),
});

export const inboundPageSchema = idPageSchema(inboundEventSchema);

// ---- svc_outbound_events ----

export const outboundQuerySchema = windowedListQuerySchema(
  {
    peer: text(200).optional().describe('Exact peer name.'),
    flow: text(100).optional().describe('Exact flow, e.g. `event_report`.'),
    ok: z
      .enum(['true', 'false'])
      .transform((v) => v === 'true')
      .optional()
      .describe('`true`: successful attempts only; `false`: failed ones only.'),
    requestId: text(200).optional().describe('Exact request id (every attempt of one logical call shares it).'),
  },
  idCursor,
);
export type OutboundQuery = z.infer<typeof outboundQuerySchema>;

export const outboundEventSchema = z.object({
  id: z.number().int(),
  createdAt: z.string(),
  peer: z.string(),
  flow: z.string(),
  eventType: z.string().nullable(),
  severity: z.string().nullable(),
  ok: z.boolean(),
  httpStatus: z.number().int().nullable(),
  requestId: z.string(),
  attempt: z.number().int(),
  error: z.string().nullable(),
  response: z.unknown().describe('The peer answer (JSON), an excerpt of a non-JSON answer, or null.'),
  durationMs: z.number(),
  // No peer URL: peer configuration is presence-only for staff (the console and exports agree).
});

export const outboundPageSchema = idPageSchema(outboundEventSchema);

// ---- svc_outbox ----

export const outboxStatusSchema = z.enum(['pending', 'delivered', 'failed']);

export const outboxQuerySchema = z.object({
  status: outboxStatusSchema.optional(),
  peer: text(200).optional().describe('Exact peer name.'),
  before: idCursor,
  limit,
});
export type OutboxQuery = z.infer<typeof outboxQuerySchema>;

export const outboxEntrySchema = z.object({
  id: z.number().int(),
  createdAt: z.string(),
  peer: z.string(),
  flow: z.string(),
  eventType: z.string().nullable(),
  severity: z.string().nullable(),
  requestId: z.string(),
  status: outboxStatusSchema,
  attempts: z.number().int().describe('Deliveries so far (each up to two HTTP tries), sends again included.'),
  nextAttemptAt: z.string(),
  lastError: z.string().nullable(),
  deliveredAt: z.string().nullable(),
  companyName: z
    .string()
    .nullable()
    .describe('The company the event is about (CMMC events), else the name of the tenant it is about.'),
  cageCode: z.string().nullable(),
  tenantId: z.string().nullable(),
  failedAt: z.string().nullable().describe('When it was given up (status failed).'),
  resentAt: z.string().nullable().describe('When staff last sent it again.'),
  resendCount: z.number().int(),
  previousRequestIds: z
    .array(z.string())
    .describe('Request ids it carried before a send again under a new id (after 409 idempotency_key_reuse).'),
});

export const outboxPageSchema = idPageSchema(outboxEntrySchema);

export const outboxSummarySchema = z.object({
  peers: z.array(
    z.object({
      peer: z.string(),
      pending: z.number().int(),
      failed: z.number().int(),
      oldestPendingAt: z.string().nullable(),
    }),
  ),
});

export const outboxIdParamsSchema = z.object({
  id: z.coerce
    .number()
    .int()
    .positive()
    .max(2 ** 53 - 1),
});

export const outboxResendFailedBodySchema = z.object({
  peer: text(200).describe('Send every failed entry of this peer again.'),
});

export const outboxResendFailedResponseSchema = z.object({
  peer: z.string(),
  resent: z.number().int().describe('Entries set back to pending.'),
  newRequestIds: z.number().int().describe('Of those, entries sent under a new request id (409 reuse).'),
});
