// npm run bench:explain-memory — peak memory of the server process during maximum-size explains:
// the real server (`npm start`'s Node flags: 512 MB heap), a new user, and result files of just
// under the explainer's 32 MB limit in which every result names a rule of its own (the worst case
// for grouping). Phase 1 sends BENCH_RUNS (default 3) explains one after another; phase 2 sends six
// at once, as the reported attack did (the file-analysis budget admits one per user). The peak is
// the kernel's high-water mark of the process's resident memory (VmHWM, all threads included),
// reset after sign-up and between the phases so start-up is not counted; RSS is also sampled
// every 50 ms. Embedded database by default (the server's
// whole footprint); BENCH_DB=postgres uses a fresh PostgreSQL database on BENCH_PG_ADMIN_URL.
// Prints JSON.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXPLAIN_MAX_BYTES } from '../src/llm/llm-service.ts';
import { sarifOfSize } from '../test/fixtures/large-reports.ts';
import {
  createBenchDatabase,
  createTenantOverHttp,
  freePort,
  median,
  msUntilHealthy,
  round,
  serverNodeFlags,
  signUpOverHttp,
  spawnServer,
} from './lib.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DB = process.env.BENCH_DB ?? 'pglite';
const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Resets the process's VmHWM to its current RSS (Linux ≥ 4.0), so a peak excludes start-up. */
function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** A field of /proc/<pid>/status in MB (Linux). */
function statusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return m ? round(Number(m[1]) / 1024, 1) : NaN;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rampart-bench-explain-'));
  const benchDb =
    DB === 'postgres' ? await createBenchDatabase(PG_ADMIN_URL, `rampart_bench_explain_${process.pid}`) : null;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawnServer(
    { DATA_DIR: dataDir, EMBEDDED_WORKER: 'false', ...(benchDb ? { DATABASE_URL: benchDb.url } : {}) },
    port,
  );
  const pid = server.child.pid!;
  try {
    await msUntilHealthy(port, performance.now(), 120_000);
    const session = await signUpOverHttp(base, {
      email: `bench-${Date.now()}@example.test`,
      name: 'Bench',
      password: 'bench password 123',
    });
    const { headers } = session;
    const tenantId = await createTenantOverHttp(base, session, 'Bench Co');
    const data = sarifOfSize(EXPLAIN_MAX_BYTES - 1024);
    const file = new Blob([data]);
    const explain = async () => {
      const form = new FormData();
      form.set('file', file, 'codeql.sarif');
      const res = await fetch(`${base}/api/v1/tenants/${tenantId}/llm/explain`, {
        method: 'POST',
        headers,
        body: form,
      });
      const text = await res.text();
      const total = text.match(/"total":(\d+)/)?.[1];
      return { status: res.status, findings: total ? Number(total) : null };
    };

    let sampledPeak = 0;
    const sampler = setInterval(() => (sampledPeak = Math.max(sampledPeak, statusMb(pid, 'VmRSS'))), 50);
    const baselineRssMB = statusMb(pid, 'VmRSS');
    resetPeak(pid);
    const walls: number[] = [];
    const single: { status: number; findings: number | null }[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      single.push(await explain());
      walls.push(performance.now() - t0);
    }
    const peakAfterSingleMB = statusMb(pid, 'VmHWM');
    resetPeak(pid);
    const six = await Promise.all(Array.from({ length: 6 }, explain));
    const peakAfterSixMB = statusMb(pid, 'VmHWM');
    clearInterval(sampler);
    const alive = server.child.exitCode === null && (await fetch(`${base}/healthz`)).ok;
    const result = {
      db: DB,
      fileMB: round(data.length / 1024 / 1024, 1),
      singleExplains: single,
      medianExplainSeconds: round(median(walls) / 1000, 1),
      sixAtOnce: six.map((s) => s.status),
      baselineRssMB,
      peakRssMBSingle: peakAfterSingleMB,
      peakRssMBSixAtOnce: peakAfterSixMB,
      sampledPeakRssMB: sampledPeak,
      serverHealthyAfter: alive,
    };
    console.log(
      JSON.stringify({ bench: 'explain-memory', nodeFlags: serverNodeFlags(), node: process.version, result }, null, 2),
    );
  } finally {
    await server.stop();
    await benchDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
