// npm run bench:import-memory — peak memory of a maximum-size import: a SARIF log of 1,000,000
// results (about 177 MB, generated on the fly, never held whole) is stored in built-in storage
// and run through the ingestion runner (parse thread, routing sink, batched findings ingest) in a
// child process with the Node flags of `npm start` (512 MB heap). RSS is sampled every 50 ms.
// Before the import could read it, such a log was joined and JSON.parse'd whole and killed the
// process. The database is PostgreSQL (a fresh database on BENCH_PG_ADMIN_URL, default
// postgres://postgres@127.0.0.1:5432/postgres) so the process measured is the server's share;
// BENCH_DB=pglite measures the embedded database in the same process. BENCH_RESULTS changes the
// size. Prints JSON: results, report MB, wall seconds, peak and baseline RSS, job status.
import { Readable } from 'node:stream';
import {
  childKind,
  mb,
  openIngestBench,
  runBenchChild,
  sampleMemory,
  settleMemory,
  type BenchDb,
} from './ingest-setup.ts';
import { serverNodeFlags } from './lib.ts';

const RESULTS = Number(process.env.BENCH_RESULTS ?? 1_000_000);
const DB = process.env.BENCH_DB ?? 'postgres';

/** The log as ~64 KiB chunks: one run of a SAST tool, many rules, one result per file and line. */
function sarifStream(n: number): Readable {
  let i = -1;
  return new Readable({
    read() {
      const parts: string[] = [];
      let len = 0;
      if (i === -1) {
        const rules = Array.from({ length: 200 }, (_, r) => ({
          id: `rule-${r}`,
          shortDescription: { text: `Rule ${r}` },
        }));
        parts.push(
          `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"bench-sast","rules":${JSON.stringify(rules)}}},"results":[`,
        );
        i = 0;
      }
      while (i < n && len < 65_536) {
        const r = {
          ruleId: `rule-${i % 200}`,
          level: 'warning',
          message: { text: `Untrusted data reaches a sink in handler ${i}` },
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri: `src/m${i % 997}/f${i}.js` },
                region: { startLine: (i % 900) + 1 },
              },
            },
          ],
        };
        const s = `${i ? ',' : ''}${JSON.stringify(r)}`;
        parts.push(s);
        len += s.length;
        i += 1;
      }
      if (i === n && len < 65_536) {
        parts.push(']}]}');
        i += 1;
      }
      this.push(parts.length ? Buffer.from(parts.join('')) : null);
    },
  });
}

async function child(kind: BenchDb): Promise<void> {
  const { withService } = await import('../src/db/tenant.ts');
  const bench = await openIngestBench(kind, { source: 'import' });
  try {
    const { ingestionId, size } = await bench.enqueue(
      `imports/${bench.scanId}`,
      sarifStream(RESULTS),
      'big.sarif',
      1024 ** 3,
    );
    await settleMemory();
    const memory = sampleMemory(50);
    const started = performance.now();
    await bench.drain();
    const wallMs = performance.now() - started;
    const { peakRss, peakHeap } = memory.stop();
    const job = await withService(bench.db, (tx) =>
      tx
        .selectFrom('report_ingestions')
        .select(['status', 'error', 'findings_read'])
        .where('id', '=', ingestionId)
        .executeTakeFirstOrThrow(),
    );
    process.stdout.write(
      `${JSON.stringify({ db: kind, results: RESULTS, reportMB: mb(size), wallSeconds: Math.round(wallMs / 100) / 10, peakRssMB: mb(peakRss), baselineRssMB: mb(memory.baseline), peakHeapUsedMB: mb(peakHeap), job })}\n`,
    );
  } finally {
    await bench.close();
  }
}

async function main(): Promise<void> {
  if (DB !== 'pglite' && DB !== 'postgres') throw new Error(`unknown BENCH_DB ${DB}`);
  const result = await runBenchChild(import.meta.filename, DB, { pgName: `rampart_bench_import_${Date.now()}` });
  console.log(
    JSON.stringify({ bench: 'import-memory', nodeFlags: serverNodeFlags(), node: process.version, result }, null, 2),
  );
}

const kind = childKind();
if (kind) await child(kind);
else await main();
