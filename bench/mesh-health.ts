// `npm run bench:mesh-health`: getMeshHealthHistory (the staff mesh health rollup) on PostgreSQL.
// A fresh database is created and migrated, BENCH_MESH_EVENTS outbound events (default 2,000,000)
// spread over the last 30 days across BENCH_MESH_PEERS peers (default 50) are bulk-inserted with
// generate_series, plus verified inbound calls, then VACUUM ANALYZE (what autovacuum does for a
// table that grew this much). The insert triggers fill the daily histogram (svc_outbound_daily)
// the rollup reads. The rollup is called BENCH_RUNS times per window after one warm-up; medians
// are printed as JSON. The write-side price of the histogram is measured too: one-row inserts (the
// outbound recorder writes one row per attempt) with the triggers enabled and disabled. Target: 30-day window ≤ 400 ms.
// Env: BENCH_PG_ADMIN_URL, BENCH_KEEP_DB.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';
import { systemClock } from '../src/lib/clock.ts';
import { loadConfig } from '../src/lib/config.ts';
import { createPeerRegistry } from '../src/mesh/index.ts';
import { createMeshHealthService } from '../src/staff/mesh-health-service.ts';
import { createBenchDatabase, median, round } from './lib.ts';

const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const EVENTS = Number(process.env.BENCH_MESH_EVENTS ?? 2_000_000);
const PEERS = Number(process.env.BENCH_MESH_PEERS ?? 50);
const INBOUND = Number(process.env.BENCH_MESH_INBOUND ?? 200_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const TARGET_MS = 400;

async function main() {
  const benchDb = await createBenchDatabase(PG_ADMIN_URL, `rampart_bench_mesh_health_${process.pid}`);
  const databaseUrl = benchDb.url;
  const dataDir = mkdtempSync(join(tmpdir(), 'rampart-bench-mesh-health-'));
  const env: Record<string, string> = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' };
  for (let i = 0; i < PEERS; i++) {
    const suffix = `BENCH_PEER_${String(i).padStart(2, '0')}`;
    env[`SVC_PEER_URL_${suffix}`] = `http://127.0.0.1:9/peer-${i}`;
    env[`SVC_SECRET_TO_${suffix}`] = `bench-secret-to-${i}`;
    env[`SVC_SECRET_FROM_${suffix}`] = `bench-secret-from-${i}`;
  }
  const config = loadConfig(env);
  const database = await openDatabase({ databaseUrl, dataDir, poolMax: 4 });
  try {
    await migrate(database);
    const seedStart = performance.now();
    // Peer names as the client records them (bench-peer-00 …); about 2 % failures, spread evenly
    // over the last 30 days. Durations are whole milliseconds, as the client records them, drawn
    // from a seeded (hash of g, so every run gets the same data) log-normal distribution: median
    // 20–200 ms depending on the peer, sigma 1, plus a 3 % tail of up to 10 s more. That gives each
    // peer a few hundred distinct durations a day (~690,000 histogram rows for 2 million events),
    // as real traffic does; a narrow synthetic spread would make the histogram unrealistically small.
    // u1 in (0, 1], u2 and u3 in [0, 1): three independent 52-bit fractions of seeded hashes of g.
    await sql`
      insert into svc_outbound_events (created_at, peer, flow, event_type, severity, ok, http_status, request_id, attempt, error, response, duration_ms, url)
      select at, peer, flow, event_type, severity, ok, http_status, request_id, 1, error, response,
             greatest(1, round(median_ms * exp(sqrt(-2 * ln(u1)) * cos(2 * pi() * u2)) + case when u3 < 0.03 then u3 / 0.03 * 10000 else 0 end))::real,
             url
      from (
      select now() - interval '30 days' + (g::float8 / ${sql.lit(EVENTS)}) * interval '30 days' as at,
             'bench-peer-' || lpad((g % ${sql.lit(PEERS)})::text, 2, '0'),
             case when g % 10 = 0 then 'ping' else 'event_report' end,
             case when g % 10 = 0 then null else 'finding.critical' end,
             case when g % 10 = 0 then null else 'critical' end,
             (g % 53) <> 0,
             case when (g % 53) <> 0 then 200 else 503 end,
             'bench-' || g,
             case when (g % 53) <> 0 then null else 'http_503' end,
             case when (g % 53) <> 0 then jsonb_build_object('requestId', 'bench-' || g, 'accepted', true) else jsonb_build_object('error', 'unavailable') end,
             'https://peer.example/api/public/svc/dispatch',
             20 + ((g % ${sql.lit(PEERS)}) * 37) % 180,
             ((hashint8extended(g, 1) & 4503599627370495) + 1)::float8 / 4503599627370496,
             (hashint8extended(g, 2) & 4503599627370495)::float8 / 4503599627370496,
             (hashint8extended(g, 3) & 4503599627370495)::float8 / 4503599627370496
      from generate_series(1, ${sql.lit(EVENTS)}) as g
      ) as e(at, peer, flow, event_type, severity, ok, http_status, request_id, error, response, url, median_ms, u1, u2, u3)`.execute(
      database.db,
    );
    await sql`
      insert into svc_inbound_events (received_at, caller, flow, status, error_code, duration_ms, request_id, verified, replayed)
      select now() - interval '30 days' + (g::float8 / ${sql.lit(INBOUND)}) * interval '30 days', 'bench-peer-' || lpad((g % ${sql.lit(PEERS)})::text, 2, '0'),
             'ping', 200, null, 2.5, 'in-' || g, true, false
      from generate_series(1, ${sql.lit(INBOUND)}) as g`.execute(database.db);
    await sql`vacuum analyze svc_outbound_events`.execute(database.db);
    await sql`vacuum analyze svc_inbound_events`.execute(database.db);
    await sql`vacuum analyze svc_outbound_daily`.execute(database.db);
    const seedSeconds = (performance.now() - seedStart) / 1000;
    const histogramRows = Number(
      (await sql<{ n: string }>`select count(*) as n from svc_outbound_daily`.execute(database.db)).rows[0]!.n,
    );

    // Write side: one-row inserts like the outbound recorder's, with and without the triggers.
    const insertOne = async (tag: string, i: number) => {
      const t0 = performance.now();
      await sql`
        insert into svc_outbound_events (peer, flow, ok, http_status, request_id, attempt, duration_ms)
        select 'bench-peer-' || lpad((g % ${sql.lit(PEERS)})::text, 2, '0'), 'event_report', true, 200, ${`w-${tag}-${i}-`} || g, 1, (10 + g % 90)::real
        from generate_series(1, 1) as g`.execute(database.db);
      return performance.now() - t0;
    };
    const insertMs: Record<string, number> = {};
    for (const mode of ['with', 'without'] as const) {
      if (mode === 'without') await sql`alter table svc_outbound_events disable trigger user`.execute(database.db);
      const times: number[] = [];
      for (let i = 0; i < 200; i++) times.push(await insertOne(mode, i));
      if (mode === 'without') await sql`alter table svc_outbound_events enable trigger user`.execute(database.db);
      insertMs[mode] = round(median(times), 3);
    }
    // The rows inserted without the triggers are not in the histogram: put them in, as the trigger would have.
    await sql`
      insert into svc_outbound_daily as d (peer, day, duration_ms, attempts, successes)
      select peer, (created_at at time zone 'UTC')::date, duration_ms, count(*)::int, (count(*) filter (where ok))::int
      from svc_outbound_events where request_id like 'w-without-%' group by 1, 2, 3
      on conflict (peer, day, duration_ms) do update set attempts = d.attempts + excluded.attempts, successes = d.successes + excluded.successes`.execute(
      database.db,
    );

    const health = createMeshHealthService({
      db: database.db,
      peers: createPeerRegistry(config),
      client: { call: () => Promise.reject(new Error('not used by the rollup')) },
      clock: systemClock,
      selfName: config.SVC_SELF_NAME,
    });
    const windows = ['30d', '7d', '24h'] as const;
    const results: Record<string, { medianMs: number; minMs: number; maxMs: number; runs: number }> = {};
    let check: { peers: number; attempts: number } | null = null;
    for (const w of windows) {
      await health.health(w); // warm-up: plans, caches
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t0 = performance.now();
        const res = await health.health(w);
        times.push(performance.now() - t0);
        if (w === '30d') check = { peers: res.peers.length, attempts: res.peers.reduce((s, p) => s + p.attempts, 0) };
      }
      results[w] = {
        medianMs: round(median(times), 1),
        minMs: round(Math.min(...times), 1),
        maxMs: round(Math.max(...times), 1),
        runs: RUNS,
      };
    }
    console.log(
      JSON.stringify(
        {
          bench: 'mesh-health',
          database: 'postgres',
          operation: 'getMeshHealthHistory',
          outboundEvents: EVENTS,
          inboundEvents: INBOUND,
          peers: PEERS,
          seedSeconds: round(seedSeconds, 1),
          histogramRows,
          insertOneRowMedianMs: { withHistogramTriggers: insertMs.with, withoutTriggers: insertMs.without },
          node: process.version,
          // The machine's 1-minute load average when the timings ended (other work on a shared machine inflates them).
          loadAverage1m: round(loadavg()[0]!, 2),
          windows: results,
          check,
          targetMs30d: TARGET_MS,
          meetsTarget: results['30d']!.medianMs <= TARGET_MS,
        },
        null,
        2,
      ),
    );
  } finally {
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
    await benchDb.drop();
  }
}

await main();
