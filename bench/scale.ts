// npm run bench:scale — the mixed load of test/helpers/scale-load.ts on 1 and on 3 server replicas
// sharing one PostgreSQL and one S3-compatible bucket, behind a round-robin proxy on loopback:
// 20 workers scanning and uploading, signed mesh calls with retries, relay notices through the
// outbox to a management peer, cron ticks to every replica at once, reads.
// Figures: scans succeeded, mesh calls, relays and reads per second, their sum, the scaling ratio
// and the PostgreSQL connections in use (peak); the invariants are checked on every run.
// BENCH_PG_ADMIN_URL, BENCH_SECONDS (20), BENCH_REPLICAS (1,3), BENCH_ROUNDS (3: the replica counts
// alternate, 1, 3, 1, 3, …, and the medians are reported). Prints JSON.
import { median, round } from './lib.ts';
import { runMixedLoad } from '../test/helpers/scale-load.ts';

const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const REPLICAS = (process.env.BENCH_REPLICAS ?? '1,3').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

type Run = Awaited<ReturnType<typeof runMixedLoad>>;
const results: Run[] = [];
for (let r = 0; r < ROUNDS; r++)
  for (const replicas of REPLICAS)
    results.push(await runMixedLoad({ replicas, seconds: SECONDS, pgAdminUrl: PG_ADMIN_URL }));
const medianOf = (replicas: number, pick: (r: Run) => number) =>
  median(results.filter((r) => r.replicas === replicas).map(pick));
const medians = Object.fromEntries(
  REPLICAS.map((n) => [
    n,
    {
      operationsPerSecond: medianOf(n, (r) => r.operationsPerSecond),
      scansSucceededPerSecond: medianOf(n, (r) => r.scansSucceededPerSecond),
      meshCallsPerSecond: medianOf(n, (r) => r.meshCallsPerSecond),
      relaysPerSecond: medianOf(n, (r) => r.relaysPerSecond),
      readsPerSecond: medianOf(n, (r) => r.readsPerSecond),
      pgConnectionsPeak: medianOf(n, (r) => r.pgConnectionsPeak),
    },
  ]),
);
// The ratio of each alternating pair, and the median of those: the pairs ran closest in time.
const ratios = [...Array(ROUNDS).keys()].flatMap((i) => {
  const one = results.find((r, k) => r.replicas === 1 && Math.floor(k / REPLICAS.length) === i);
  const three = results.find((r, k) => r.replicas === 3 && Math.floor(k / REPLICAS.length) === i);
  return one && three ? [round(three.operationsPerSecond / one.operationsPerSecond, 2)] : [];
});
const violations = results.flatMap((r) => r.violations);
console.log(
  JSON.stringify(
    {
      bench: 'scale',
      seconds: SECONDS,
      workers: 20,
      rounds: ROUNDS,
      medians,
      scalingRatios: ratios,
      scalingRatio: ratios.length ? median(ratios) : null,
      violations,
      results,
    },
    null,
    2,
  ),
);
process.exit(violations.length ? 1 : 0);
