// npm run bench:scale — the mixed load of test/helpers/scale-load.ts on 1 and on 3 server replicas
// sharing one PostgreSQL and one S3-compatible bucket, behind a round-robin proxy on loopback:
// 20 workers scanning and uploading, signed mesh calls with retries, relay notices through the
// outbox to a management peer, cron ticks to every replica at once, reads.
// Figures: scans succeeded, mesh calls, relays and reads per second, their sum, the scaling ratio
// and the PostgreSQL connections in use (peak); the invariants are checked on every run.
// BENCH_PG_ADMIN_URL, BENCH_SECONDS (20), BENCH_REPLICAS (1,3). Prints JSON.
import { round } from './lib.ts';
import { runMixedLoad } from '../test/helpers/scale-load.ts';

const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const REPLICAS = (process.env.BENCH_REPLICAS ?? '1,3').split(',').map(Number);

const results = [];
for (const replicas of REPLICAS) results.push(await runMixedLoad({ replicas, seconds: SECONDS, pgAdminUrl: PG_ADMIN_URL }));
const byReplicas = Object.fromEntries(results.map((r) => [r.replicas, r]));
const violations = results.flatMap((r) => r.violations);
console.log(
  JSON.stringify(
    { bench: 'scale', seconds: SECONDS, workers: 20, results, scalingRatio: byReplicas[3] && byReplicas[1] ? round(byReplicas[3].operationsPerSecond / byReplicas[1].operationsPerSecond, 2) : null, violations },
    null,
    2,
  ),
);
process.exit(violations.length ? 1 : 0);
