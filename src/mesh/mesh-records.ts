// svc_inbound_events and svc_outbound_events. Inbound records are buffered and written in
// batches so that recording adds no database round trip to a dispatch call (docs/mesh.md); a
// crash can lose at most one flush interval of records, never a call's effect.
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/client.ts';
import { CopyStream, type CopyColumn } from '../db/copy-binary.ts';
import type { DB } from '../db/schema.ts';
import { withService } from '../db/tenant.ts';
import type { OutboundAttempt } from './mesh-client.ts';

export interface InboundRecord {
  receivedAt: Date;
  caller: string | null;
  flow: string | null;
  status: number;
  errorCode: string | null;
  durationMs: number;
  requestId: string | null;
  verified: boolean;
  replayed: boolean;
}

export interface InboundRecorder {
  record(r: InboundRecord): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

// A text value cannot hold NUL: one in a peer's flow name must not fail the batch it is in.
const clip = (s: string | null, n: number) => (s === null ? null : s.slice(0, n).replace(/\0/g, '\uFFFD'));

const INBOUND_COLUMNS: readonly CopyColumn[] = [
  { name: 'received_at', type: 'timestamptz' },
  { name: 'caller', type: 'text' },
  { name: 'flow', type: 'text' },
  { name: 'status', type: 'int4' },
  { name: 'error_code', type: 'text' },
  { name: 'duration_ms', type: 'float4' },
  { name: 'request_id', type: 'text' },
  { name: 'verified', type: 'bool' },
  { name: 'replayed', type: 'bool' },
];

export function createInboundRecorder(deps: {
  db: Kysely<DB>;
  log: Pick<Logger, 'error'>;
  /** The embedded database's COPY (Database.copyRows): one round trip per flush instead of four. */
  copyRows?: Database['copyRows'];
  flushMs?: number;
  maxBatch?: number;
}): InboundRecorder {
  // Small, frequent batches keep the tail latency low (signed ping p99 5 ms at 25 ms / 250 rows,
  // 9 ms at 200 ms / 5,000 when each flush built its rows on this thread).
  const flushMs = deps.flushMs ?? 25;
  const maxBatch = deps.maxBatch ?? 250;
  let flushing: Promise<void> = Promise.resolve();
  const chain = (write: () => Promise<unknown>, lost: number) => {
    flushing = flushing.then(() =>
      write().then(
        () => undefined,
        (err: unknown) => deps.log.error({ err, lost }, 'could not write inbound mesh records'),
      ),
    );
    return flushing;
  };

  // The embedded database: each record is encoded as a binary COPY row when it is recorded (no row
  // objects wait on the heap for the flush), and a flush is one COPY, a single round trip to the
  // database thread.
  const copyRows = deps.copyRows;
  if (copyRows) {
    let stream = new CopyStream(INBOUND_COLUMNS, maxBatch);
    const flush = (): Promise<void> => {
      if (!stream.rows) return flushing;
      const batch = stream;
      stream = new CopyStream(INBOUND_COLUMNS, maxBatch);
      return chain(() => copyRows('svc_inbound_events', INBOUND_COLUMNS, batch), batch.rows);
    };
    const timer = setInterval(() => void flush(), flushMs);
    timer.unref();
    return {
      record(r) {
        try {
          stream.add([
            r.receivedAt,
            clip(r.caller, 200),
            clip(r.flow, 100),
            r.status,
            r.errorCode,
            r.durationMs,
            clip(r.requestId, 200),
            r.verified,
            r.replayed,
          ]);
        } catch (err) {
          deps.log.error({ err, lost: 1 }, 'could not record an inbound mesh call');
          return;
        }
        if (stream.rows >= maxBatch) void flush();
      },
      flush,
      async close() {
        clearInterval(timer);
        await flush();
      },
    };
  }

  // PostgreSQL: one statement with one array per column (unnest) rather than a parameter per
  // value, as the service role.
  let buffer: InboundRecord[] = [];
  const write = (batch: InboundRecord[]) => {
    const col = <T>(f: (r: InboundRecord) => T) => batch.map(f);
    return withService(deps.db, (tx) =>
      sql`insert into svc_inbound_events (received_at, caller, flow, status, error_code, duration_ms, request_id, verified, replayed)
          select * from unnest(
            ${col((r) => r.receivedAt.toISOString())}::timestamptz[], ${col((r) => clip(r.caller, 200))}::text[], ${col((r) => clip(r.flow, 100))}::text[],
            ${col((r) => r.status)}::int[], ${col((r) => r.errorCode)}::text[], ${col((r) => r.durationMs)}::real[],
            ${col((r) => clip(r.requestId, 200))}::text[], ${col((r) => r.verified)}::boolean[], ${col((r) => r.replayed)}::boolean[])`.execute(
        tx,
      ),
    );
  };
  const flush = (): Promise<void> => {
    if (!buffer.length) return flushing;
    const batch = buffer;
    buffer = [];
    return chain(() => write(batch), batch.length);
  };
  const timer = setInterval(() => void flush(), flushMs);
  timer.unref();
  return {
    record(r) {
      buffer.push(r);
      if (buffer.length >= maxBatch) void flush();
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}

export type OutboundRecord = OutboundAttempt;

/** One svc_outbound_events row per outbound attempt. */
export function createOutboundRecorder(deps: { db: Kysely<DB> }) {
  return async (a: OutboundRecord): Promise<void> => {
    const response =
      a.response === undefined || a.response === null ? null : JSON.stringify(a.response).slice(0, 16_384);
    await withService(deps.db, (tx) =>
      tx
        .insertInto('svc_outbound_events')
        .values({
          peer: a.peer,
          flow: a.flow,
          event_type: a.eventType,
          severity: a.severity,
          ok: a.ok,
          http_status: a.status,
          request_id: a.requestId,
          attempt: a.attempt,
          error: a.error,
          // Truncated JSON would not parse: keep it as a JSON string then.
          response: response === null ? null : isJson(response) ? response : JSON.stringify(response),
          duration_ms: a.durationMs,
          url: a.url,
        })
        .execute(),
    );
  };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
