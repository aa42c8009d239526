// svc_inbound_events and svc_outbound_events. Inbound records are buffered and written in
// batches so that recording adds no database round trip to a dispatch call (DESIGN §5.2); a
// crash can lose at most one flush interval of records, never a call's effect.
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
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

const clip = (s: string | null, n: number) => (s === null ? null : s.slice(0, n));

export function createInboundRecorder(deps: { db: Kysely<DB>; log: Pick<Logger, 'error'>; flushMs?: number; maxBatch?: number }): InboundRecorder {
  // Small, frequent batches: on the embedded database each insert runs on this thread, so a
  // short pause every 25 ms hurts tail latency far less than a long one every 200 ms.
  const flushMs = deps.flushMs ?? 25;
  const maxBatch = deps.maxBatch ?? 250;
  let buffer: InboundRecord[] = [];
  let flushing: Promise<void> = Promise.resolve();
  const timer = setInterval(() => void flush(), flushMs);
  timer.unref();

  function flush(): Promise<void> {
    if (!buffer.length) return flushing;
    const batch = buffer;
    buffer = [];
    // One statement with one array per column (unnest) rather than a parameter per value: far less
    // to parse and bind, which matters on the embedded database, where it runs on this thread.
    const col = <T>(f: (r: InboundRecord) => T) => batch.map(f);
    flushing = flushing.then(() =>
      withService(deps.db, (tx) =>
        sql`insert into svc_inbound_events (received_at, caller, flow, status, error_code, duration_ms, request_id, verified, replayed)
            select * from unnest(
              ${col((r) => r.receivedAt.toISOString())}::timestamptz[], ${col((r) => clip(r.caller, 200))}::text[], ${col((r) => clip(r.flow, 100))}::text[],
              ${col((r) => r.status)}::int[], ${col((r) => r.errorCode)}::text[], ${col((r) => r.durationMs)}::real[],
              ${col((r) => clip(r.requestId, 200))}::text[], ${col((r) => r.verified)}::boolean[], ${col((r) => r.replayed)}::boolean[])`.execute(tx),
      ).then(
        () => undefined,
        (err: unknown) => deps.log.error({ err, lost: batch.length }, 'could not write inbound mesh records'),
      ),
    );
    return flushing;
  }

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
    const response = a.response === undefined || a.response === null ? null : JSON.stringify(a.response).slice(0, 16_384);
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
