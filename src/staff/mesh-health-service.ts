// Staff → mesh health (super-admin). getMeshHealthHistory: a read-only rollup per peer over 24 h,
// 7 d or 30 d: outbound numbers from the daily duration histogram (svc_outbound_daily, whole UTC
// days) plus the window's partial edge days from svc_outbound_events, read peer by peer with p95
// taken in the database (readOutbound), inbound numbers from svc_inbound_events.
// runMeshHealthSweep: a signed ping to every configured peer at once, through the outbound mesh
// client (each attempt stored as an svc_outbound_events row, flow `ping`), results reported as
// they arrive.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../db/schema.ts';
import { asService, withService, type Tx } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import type { MeshCallResult, MeshClient, Peer } from '../mesh/index.ts';
import {
  HEALTH_THRESHOLDS,
  WINDOW_DAYS,
  type HealthResponse,
  type HealthWindow,
  type PeerHealth,
  type SweepLine,
  type SweepOutcome,
  type SweepResult,
} from './mesh-health-schemas.ts';

/**
 * THE definition of p95 in the staff mesh tools: the exact nearest-rank 95th percentile.
 * Sort the n samples ascending; p95 is the sample at 1-based rank ⌈0.95 · n⌉ (p95Rank).
 * - no samples → null;
 * - one sample → that sample;
 * - ties need no special rule: equal values are interchangeable in the sorted list;
 * - the result is always one of the samples (never interpolated).
 * The rollup reads a histogram (exact value → count) instead of the samples: its query
 * (readPeerOutbound) walks it in ascending order to the same rank, which is the same sample. Tests
 * check that walk against this definition and the rollup against a naive computation over
 * generated events.
 */
export function p95Rank(n: number): number {
  // 95·n is an exact integer, so the division and ceiling are exact too.
  return Math.max(1, Math.ceil((95 * n) / 100));
}

export function p95NearestRank(samples: readonly number[]): number | null {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[p95Rank(sorted.length) - 1]!;
}

/** Durations shown with 0.01 ms resolution. */
const roundMs = (x: number | string | null): number | null => (x === null ? null : Math.round(Number(x) * 100) / 100);
const iso = (d: Date | string) => new Date(d).toISOString();
const utcDay = (d: Date) => d.toISOString().slice(0, 10);

export function windowDays(from: Date, to: Date): string[] {
  const days: string[] = [];
  const cur = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()));
  const last = utcDay(to);
  for (;;) {
    const d = utcDay(cur);
    days.push(d);
    if (d >= last || days.length > 400) break;
    cur.setUTCDate(cur.getUTCDate() + 1);
  }
  return days;
}

export function statusOf(attempts: number, successes: number, lastOutboundAt: string | null): PeerHealth['status'] {
  if (attempts === 0) return lastOutboundAt ? 'idle' : 'no_data';
  const rate = successes / attempts;
  if (rate >= HEALTH_THRESHOLDS.healthy) return 'healthy';
  if (rate >= HEALTH_THRESHOLDS.degraded) return 'degraded';
  return 'failing';
}

/**
 * How the outbound numbers of [from, to) are read: the whole UTC days inside it from the daily
 * histogram (svc_outbound_daily, kept by triggers; `innerDays` filters its `day`), the partial
 * days at either edge from svc_outbound_events (`edges` filters its `created_at`).
 */
export function splitRange(from: Date, to: Date): { innerDays: RawBuilder<unknown>; edges: RawBuilder<unknown> } {
  const dayMs = 86_400_000;
  const inner = {
    from: new Date(Math.ceil(from.getTime() / dayMs) * dayMs),
    to: new Date(Math.floor(to.getTime() / dayMs) * dayMs),
  };
  if (inner.from >= inner.to)
    return { innerDays: sql`false`, edges: sql`(created_at >= ${from} and created_at < ${to})` };
  return {
    innerDays: sql`(day >= ${utcDay(inner.from)}::date and day < ${utcDay(inner.to)}::date)`,
    edges: sql`((created_at >= ${from} and created_at < ${inner.from}) or (created_at >= ${inner.to} and created_at < ${to}))`,
  };
}

export interface MeshHealthService {
  health(window: HealthWindow): Promise<HealthResponse>;
  /** Pings every configured peer; `emit` gets the start line, one result per peer as it arrives, then the done line. */
  sweep(opts: { timeoutMs: number }, emit: (line: SweepLine) => void): Promise<void>;
}

export interface MeshHealthDeps {
  db: Kysely<DB>;
  peers: { list(): Peer[]; byCaller(caller: string): Peer | undefined };
  client: MeshClient;
  clock: Clock;
  selfName: string;
}

const RECENT_FAILURES = 10;

/** What a sweep result says, from the client's answer. */
export function classifySweep(r: MeshCallResult, timeoutMs: number): { outcome: SweepOutcome; label: string } {
  const code = r.error ? ` ${r.error}` : '';
  if (r.ok) {
    const body = r.body as { pong?: unknown; self?: unknown } | null;
    if (body && typeof body === 'object' && body.pong === true)
      return { outcome: 'ok', label: `OK: pong${typeof body.self === 'string' ? ` from ${body.self}` : ''}` };
    return { outcome: 'unexpected_answer', label: `Unexpected answer: HTTP ${r.status} JSON without "pong": true` };
  }
  if (r.routeNotDeployed)
    return {
      outcome: 'route_not_deployed',
      label: `Route not deployed: HTTP ${r.status} with a non-JSON (HTML) body; not a live mesh leg`,
    };
  if (r.error === 'timeout')
    return { outcome: 'timeout', label: `Timed out: no complete answer within ${timeoutMs} ms` };
  if (r.error === 'network_error') {
    const cause = (r.body as { cause?: unknown } | null)?.cause;
    return {
      outcome: 'unreachable',
      label: `Unreachable: could not connect${typeof cause === 'string' ? ` (${cause})` : ''}`,
    };
  }
  if (r.status === 401)
    return {
      outcome: 'unauthorized',
      label: `Unauthorized: 401${code}; the peer refused our signature (check the secrets, our name and the clocks)`,
    };
  if (r.status === 403)
    return { outcome: 'forbidden', label: `Forbidden: 403${code}; the peer does not allow us to call ping` };
  if (r.error === 'invalid_response')
    return { outcome: 'unexpected_answer', label: `Unexpected answer: HTTP ${r.status} JSON that does not parse` };
  if (r.status !== null) return { outcome: 'http_error', label: `HTTP ${r.status}${code}` };
  return { outcome: 'http_error', label: `Failed${code}` };
}

/**
 * Connections reading peers at once (readOutbound). Two: on the 2-core benchmark machine more
 * lanes only compete for the cores, and two leave the service pool (at least 2 connections, half
 * of DATABASE_POOL_MAX) mostly to the rest of the server.
 */
const PEER_READS_AT_ONCE = 2;

/**
 * readPeerOutbound for each peer, over PEER_READS_AT_ONCE connections: each lane is one service
 * transaction that reads peer after peer, one round trip each. The peer reads are small, so the
 * lanes turn off parallel workers (starting them would cost more than the read, and the lanes are
 * the parallelism) and JIT (same reason). Results in the peers' order.
 */
async function readOutbound(
  db: Kysely<DB>,
  peers: readonly string[],
  innerDays: RawBuilder<unknown>,
  edges: RawBuilder<unknown>,
): Promise<PeerOutbound[]> {
  const out = new Array<PeerOutbound>(peers.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(PEER_READS_AT_ONCE, peers.length) }, () =>
      withService(db, async (tx) => {
        await sql`select set_config('max_parallel_workers_per_gather', '0', true), set_config('jit', 'off', true)`.execute(
          tx,
        );
        for (let i = next++; i < peers.length; i = next++)
          out[i] = await readPeerOutbound(tx, peers[i]!, innerDays, edges);
      }),
    ),
  );
  return out;
}

type PeerOutbound = {
  total: { peer: string; attempts: number; successes: number; avg_ms: number; p95_ms: number | null } | null;
  days: { peer: string; day: string; attempts: number; successes: number; sum_ms: number }[];
};

/**
 * One peer's outbound numbers over the window: the whole days from its rows of the daily
 * histogram (primary key order: peer first, so an index range), the partial edge days from its
 * records (index on peer, created_at). One pass groups them both by duration (the window's
 * histogram) and by day (the per-day buckets), and p95 is taken in the database by walking the
 * histogram in duration order, so a few dozen rows travel. The rank condition is p95Rank's: with n
 * attempts of which `cum` are at or below a duration, cum ≥ ⌈0.95·n⌉ ⟺ 100·cum ≥ 95·n (cum is an
 * integer), and the smallest such duration is the nearest-rank sample.
 */
async function readPeerOutbound(
  tx: Tx,
  peer: string,
  innerDays: RawBuilder<unknown>,
  edges: RawBuilder<unknown>,
): Promise<PeerOutbound> {
  const rows = (
    await sql<{
      day: string | null;
      attempts: number | null;
      successes: number | null;
      sum_ms: number | null;
      p95_ms: number | null;
    }>`
      with x as (
        select day, duration_ms, attempts, successes from svc_outbound_daily where peer = ${peer} and ${innerDays}
        union all
        select (created_at at time zone 'UTC')::date, duration_ms, count(*)::int, (count(*) filter (where ok))::int
        from svc_outbound_events where peer = ${peer} and ${edges} group by 1, 2
      ), g as (
        select day, duration_ms, grouping(day) as by_duration, sum(attempts)::int8 as n, sum(successes)::int8 as s, sum(duration_ms::float8 * attempts) as sum_ms
        from x group by grouping sets ((duration_ms), (day))
      ), h as (
        select duration_ms, n, s, sum_ms, sum(n) over (order by duration_ms) as cum, sum(n) over () as total from g where by_duration = 1
      )
      select null::text as day, sum(n)::float8 as attempts, sum(s)::float8 as successes, sum(sum_ms) as sum_ms,
             min(duration_ms) filter (where 100 * cum >= 95 * total) as p95_ms
      from h
      union all
      select to_char(day, 'YYYY-MM-DD'), n::float8, s::float8, sum_ms, null from g where by_duration = 0`.execute(tx)
  ).rows;
  let total: PeerOutbound['total'] = null;
  const days: PeerOutbound['days'] = [];
  for (const r of rows) {
    const attempts = Number(r.attempts ?? 0);
    if (!attempts) continue; // no attempt in the window: the summary row of an empty histogram
    if (r.day === null)
      total = {
        peer,
        attempts,
        successes: Number(r.successes),
        avg_ms: Number(r.sum_ms) / attempts,
        p95_ms: r.p95_ms === null ? null : Number(r.p95_ms),
      };
    else days.push({ peer, day: r.day, attempts, successes: Number(r.successes), sum_ms: Number(r.sum_ms) });
  }
  return { total, days };
}

export function createMeshHealthService(deps: MeshHealthDeps): MeshHealthService {
  const { db, peers, client, clock, selfName } = deps;

  return {
    async health(window) {
      const to = clock.now();
      const days = WINDOW_DAYS[window];
      const from = new Date(to.getTime() - days * 86_400_000);

      const { innerDays, edges } = splitRange(from, to);
      // Latest attempt per peer, ever: a loose index scan (one index probe per distinct peer). It
      // also names every peer with outbound records, so the window's reads below go peer by peer.
      const lastOutRows = await asService(
        db,
        async (q) =>
          (
            await sql<{ peer: string; created_at: Date; ok: boolean }>`
              with recursive p(peer) as (
                select min(peer) from svc_outbound_events
                union all
                select (select min(e.peer) from svc_outbound_events e where e.peer > p.peer) from p where p.peer is not null
              )
              select p.peer, l.created_at, l.ok from p
              cross join lateral (select created_at, ok from svc_outbound_events e where e.peer = p.peer order by created_at desc limit 1) l
              where p.peer is not null`.execute(q)
          ).rows,
      );
      // The inbound side, then the outbound numbers peer by peer, PEER_READS_AT_ONCE at a time. The
      // inbound read is asked for first so that, with a service pool of two connections, it goes
      // first and the lanes share the peers after it (PGlite runs them all one after the other).
      const [inbound, outbound] = await Promise.all([
        withService(db, async (tx) => {
          const lastIn = await sql<{ caller: string; received_at: Date }>`
            with recursive c(caller) as (
              select min(caller) from svc_inbound_events where verified
              union all
              select (select min(i.caller) from svc_inbound_events i where i.verified and i.caller > c.caller) from c where c.caller is not null
            )
            select c.caller, (select max(i.received_at) from svc_inbound_events i where i.verified and i.caller = c.caller) as received_at
            from c where c.caller is not null`.execute(tx);
          const inWindow = await sql<{ caller: string; calls: number }>`
            select caller, count(*)::int as calls from svc_inbound_events
            where verified and caller is not null and received_at >= ${from} and received_at < ${to}
            group by caller`.execute(tx);
          return { lastIn: lastIn.rows, inWindow: inWindow.rows };
        }),
        readOutbound(
          db,
          lastOutRows.map((r) => r.peer),
          innerDays,
          edges,
        ),
      ]);
      const lasts = { lastOut: lastOutRows, ...inbound };
      const perPeer = outbound.flatMap((o) => (o.total ? [o.total] : []));
      const perDay = outbound.flatMap((o) => o.days);
      const failing = perPeer.filter((r) => r.successes < r.attempts).map((r) => r.peer);
      const failureRows = failing.length
        ? await withService(
            db,
            async (tx) =>
              (
                await sql<{
                  peer: string;
                  created_at: Date;
                  flow: string;
                  event_type: string | null;
                  http_status: number | null;
                  error: string | null;
                  duration_ms: number;
                  request_id: string;
                  attempt: number;
                }>`
                select p.peer, f.created_at, f.flow, f.event_type, f.http_status, f.error, f.duration_ms, f.request_id, f.attempt
                from unnest(${failing}::text[]) as p(peer)
                cross join lateral (
                  select created_at, flow, event_type, http_status, error, duration_ms, request_id, attempt
                  from svc_outbound_events e
                  where e.peer = p.peer and not e.ok and e.created_at >= ${from} and e.created_at < ${to}
                  order by e.created_at desc, e.id desc limit ${RECENT_FAILURES}
                ) f`.execute(tx)
              ).rows,
          )
        : [];
      const rows = {
        perPeer,
        perDay: perDay.map((r) => ({ ...r, avg_ms: r.sum_ms / r.attempts })),
        ...lasts,
        failures: failureRows,
      };

      // Inbound callers are matched to peers the way dispatch does (through the env suffix).
      const inboundName = (caller: string) => peers.byCaller(caller)?.name ?? caller;
      const lastInbound = new Map<string, string>();
      for (const r of rows.lastIn) {
        const name = inboundName(r.caller);
        const at = iso(r.received_at);
        if (!lastInbound.has(name) || lastInbound.get(name)! < at) lastInbound.set(name, at);
      }
      const inboundCalls = new Map<string, number>();
      for (const r of rows.inWindow)
        inboundCalls.set(inboundName(r.caller), (inboundCalls.get(inboundName(r.caller)) ?? 0) + r.calls);

      const configured = new Set(peers.list().map((p) => p.name));
      const names = new Set<string>([
        ...configured,
        ...rows.perPeer.map((r) => r.peer),
        ...rows.lastOut.map((r) => r.peer),
        ...lastInbound.keys(),
      ]);
      const byPeer = new Map(rows.perPeer.map((r) => [r.peer, r]));
      const lastOut = new Map(rows.lastOut.map((r) => [r.peer, r]));
      const dayRows = new Map<string, Map<string, (typeof rows.perDay)[number]>>();
      for (const r of rows.perDay) {
        if (!dayRows.has(r.peer)) dayRows.set(r.peer, new Map());
        dayRows.get(r.peer)!.set(r.day, r);
      }
      const failuresOf = new Map<string, typeof rows.failures>();
      for (const f of rows.failures) failuresOf.set(f.peer, [...(failuresOf.get(f.peer) ?? []), f]);
      const dayList = windowDays(from, to);

      const result: PeerHealth[] = [...names]
        .sort((a, b) => a.localeCompare(b))
        .map((peer) => {
          const agg = byPeer.get(peer);
          const attempts = agg?.attempts ?? 0;
          const successes = agg?.successes ?? 0;
          const last = lastOut.get(peer);
          const lastOutboundAt = last ? iso(last.created_at) : null;
          const inbound = inboundCalls.get(peer) ?? 0;
          const perDay = dayRows.get(peer);
          return {
            peer,
            configured: configured.has(peer),
            status: statusOf(attempts, successes, lastOutboundAt),
            attempts,
            successes,
            failures: attempts - successes,
            successRate: attempts ? successes / attempts : null,
            avgDurationMs: roundMs(agg?.avg_ms ?? null),
            p95DurationMs: agg?.p95_ms === null || agg?.p95_ms === undefined ? null : Number(agg.p95_ms),
            fewSamples: attempts < HEALTH_THRESHOLDS.minSamples,
            lastOutboundAt,
            lastOutboundOk: last ? last.ok : null,
            lastInboundAt: lastInbound.get(peer) ?? null,
            inboundCalls: inbound,
            bidirectional: successes > 0 && inbound > 0,
            days: dayList.map((day) => {
              const d = perDay?.get(day);
              return {
                day,
                attempts: d?.attempts ?? 0,
                successes: d?.successes ?? 0,
                failures: (d?.attempts ?? 0) - (d?.successes ?? 0),
                avgDurationMs: roundMs(d?.avg_ms ?? null),
              };
            }),
            recentFailures: (failuresOf.get(peer) ?? [])
              .sort((a, b) => new Date(b.created_at).getTime() - new Date(a.created_at).getTime())
              .map((f) => ({
                at: iso(f.created_at),
                flow: f.flow,
                eventType: f.event_type,
                httpStatus: f.http_status,
                error: f.error,
                durationMs: Number(f.duration_ms),
                requestId: f.request_id,
                attempt: f.attempt,
              })),
          };
        });

      return {
        window,
        windowDays: days,
        from: iso(from),
        to: iso(to),
        selfName,
        thresholds: { ...HEALTH_THRESHOLDS },
        days: dayList,
        peers: result,
      };
    },

    async sweep({ timeoutMs }, emit) {
      const list = peers.list();
      const startedAt = clock.now();
      emit({
        type: 'start',
        sweepId: randomUUID(),
        startedAt: iso(startedAt),
        timeoutMs,
        peers: list.map((p) => p.name),
      });
      let ok = 0;
      await Promise.all(
        list.map(async (peer) => {
          // Every peer goes through the client, also one without a URL or an outbound secret: the
          // client sends nothing then but stores the attempt (error peer_not_configured), so each
          // sweep ping is an outbound record, as the rollup and the records page expect.
          let r: MeshCallResult;
          try {
            r = await client.call(peer.name, 'ping', { nonce: randomUUID() }, { maxAttempts: 1, timeoutMs });
          } catch {
            r = {
              ok: false,
              status: null,
              body: null,
              requestId: '',
              attempts: 1,
              durationMs: 0,
              error: 'network_error',
              routeNotDeployed: false,
              headers: {},
            };
          }
          let c: { outcome: SweepOutcome; label: string };
          if (r.error === 'peer_not_configured') {
            const missing = [
              !peer.transportUrl && 'URL (SVC_PEER_URL_*)',
              !peer.secretTo && 'outbound secret (SVC_SECRET_TO_*)',
            ]
              .filter(Boolean)
              .join(' and ');
            c = { outcome: 'not_callable', label: `Not callable: no ${missing}; nothing sent` };
          } else c = classifySweep(r, timeoutMs);
          const result: SweepResult = {
            peer: peer.name,
            ...c,
            ok: c.outcome === 'ok',
            httpStatus: r.status,
            error: r.error,
            durationMs: r.durationMs,
            requestId: r.requestId || null,
            at: iso(clock.now()),
          };
          if (result.ok) ok += 1;
          emit({ type: 'result', ...result });
        }),
      );
      emit({ type: 'done', finishedAt: iso(clock.now()), total: list.length, ok, failed: list.length - ok });
    },
  };
}
