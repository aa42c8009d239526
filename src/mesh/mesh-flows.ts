// Flow handlers of the dispatch route. Read-only flows run without a transaction and are never
// idempotency-gated; mutating flows run inside the transaction that also records their response.
import { sql, type Kysely } from 'kysely';
import { z } from 'zod';
import type { DB } from '../db/schema.ts';
import type { Tx } from '../db/tenant.ts';
import { appError } from '../lib/errors.ts';
import { APP_VERSION, OPERATIONS_DOC_VERSION } from '../ops/version.ts';
import type { Peer } from './mesh-peers.ts';

export const KNOWN_FLOWS = ['ping', 'health_check', 'event_report', 'cmmc_handoff', 'cmmc_status'] as const;
export type FlowName = (typeof KNOWN_FLOWS)[number];
/** Flows only the bid peer may call, whatever its allowlist says of others. */
export const BID_ONLY_FLOWS: readonly string[] = ['cmmc_handoff', 'cmmc_status'];

export interface FlowContext {
  caller: Peer;
  requestId: string;
  payload: Record<string, unknown>;
  now: Date;
}

export type FlowHandler =
  | { mutating: false; run(ctx: FlowContext): Promise<Record<string, unknown>> }
  | { mutating: true; run(ctx: FlowContext, tx: Tx): Promise<Record<string, unknown>> };

/** Text the database can store: PostgreSQL text cannot hold U+0000. */
const dbText = (max: number) =>
  z
    .string()
    .max(max)
    .refine((v) => !v.includes('\u0000'), 'must not contain U+0000');

export const eventReportPayloadSchema = z.object({
  kind: dbText(100).pipe(z.string().trim().min(1)),
  severity: z.enum(['info', 'low', 'medium', 'high', 'critical', 'warning', 'error']),
  title: dbText(300).pipe(z.string().trim().min(1)),
  detail: dbText(10_000).optional(),
  occurredAt: z.iso
    .datetime({ offset: true })
    .refine(
      (v) => Date.parse(v) >= Date.parse('1970-01-01T00:00:00Z') && Date.parse(v) <= Date.now() + 366 * 86_400_000,
      'must be a plausible time',
    )
    .optional(),
  data: z.record(z.string(), z.unknown()).optional(),
  brand: dbText(100).optional(),
});

/** Longest nonce `ping` echoes, as compact JSON text (the body itself is bounded by SVC_MAX_BODY_BYTES). */
export const PING_NONCE_MAX_CHARS = 1024;

// Any JSON value (string, number, boolean, null, array, object): the body was parsed from JSON, so
// whatever is there serialises back; only its size is bounded.
const pingPayloadSchema = z
  .object({
    nonce: z
      .unknown()
      .refine(
        (v) => v === undefined || JSON.stringify(v).length <= PING_NONCE_MAX_CHARS,
        `must be at most ${PING_NONCE_MAX_CHARS} characters as JSON`,
      )
      .optional(),
  })
  .loose();

function parsePayload<T>(schema: z.ZodType<T>, payload: unknown): T {
  const parsed = schema.safeParse(payload);
  if (!parsed.success) {
    throw appError('invalid_payload', 'The payload does not fit this flow.', {
      details: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  return parsed.data;
}

export function coreFlows(deps: {
  db: Kysely<DB>;
  selfName: string;
  dbKind: string;
}): Partial<Record<FlowName, FlowHandler>> {
  return {
    ping: {
      mutating: false,
      async run({ payload }) {
        // Echo any JSON value, bounded in size: a caller cannot make us serialise much.
        const parsed = parsePayload(pingPayloadSchema, payload);
        const nonce = parsed.nonce === undefined ? null : parsed.nonce;
        return { pong: true, self: deps.selfName, flow: 'ping', nonce };
      },
    },
    health_check: {
      mutating: false,
      async run({ now }) {
        let database: 'ok' | 'error' = 'ok';
        try {
          await sql`select 1`.execute(deps.db);
        } catch {
          database = 'error';
        }
        return {
          ok: database === 'ok',
          self: deps.selfName,
          flow: 'health_check',
          version: APP_VERSION,
          opsDocVersion: OPERATIONS_DOC_VERSION,
          time: now.toISOString(),
          checks: { database, databaseKind: deps.dbKind },
        };
      },
    },
    event_report: {
      mutating: true,
      async run({ caller, requestId, payload }, tx) {
        const e = parsePayload(eventReportPayloadSchema, payload);
        const row = await tx
          .insertInto('svc_received_events')
          .values({
            caller: caller.name,
            request_id: requestId,
            kind: e.kind,
            severity: e.severity,
            title: e.title,
            detail: e.detail ?? null,
            occurred_at: e.occurredAt ? new Date(e.occurredAt) : null,
            brand: e.brand ?? null,
            data: JSON.stringify(e.data ?? {}),
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        return { accepted: true, eventId: row.id };
      },
    },
  };
}
