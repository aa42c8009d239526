// npm run bench:ingest — report ingestion end to end: a 100,000-finding nuclei JSONL report
// (realistic lines: template metadata, classification, request/response, distinct matched-at) is
// stored in built-in storage, queued as a worker upload would queue it, and run to completion by
// the ingestion runner (stream → parse → batches of findings → closing step → scan succeeded).
// Each database runs in its own child process, so its peak RSS is the ingest's alone: PGlite in
// a fresh DATA_DIR on disk (the embedded default), and PostgreSQL in a fresh database created on
// BENCH_PG_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres), or DATABASE_URL when
// set (its schema is migrated; the data is a new tenant). Targets: ≤ 20 s and peak RSS ≤ 400 MB.
// Prints JSON: per database wall time (ingest only), the report's size, findings, the rate, peak
// RSS (sampled every 20 ms while ingesting, from a process at rest: settleMemory waits for what
// setting up the database leaves to be returned; baselineRssMB is the process before the ingest, which
// on PGlite is mostly the embedded database itself, ~280 MB; ingestRssMB the difference) and the
// time to parse the same file without a database (the parser's share). cpuSeconds: CPU time
// spent during the ingest by each part of the process (main thread, pglite: the embedded
// database's thread, parse: the report's parse thread, v8: garbage collection and compiler
// threads) and by the PostgreSQL backends serving it (Linux /proc, read every 100 ms); on a shared machine wall
// time mostly says how busy the machine was, CPU seconds what the ingest cost.
// BENCH_FINDINGS (100000), BENCH_DBS (pglite,postgres), BENCH_BATCH (the runner's default),
// BENCH_WRITERS (concurrent batch writers; as the server: 2 on PostgreSQL, 1 on PGlite).
import {
  childKind,
  mb,
  openIngestBench,
  postgresBackendCpu,
  runBenchChild,
  sampleCpu,
  sampleMemory,
  settleMemory,
  type BenchDb,
} from './ingest-setup.ts';
import { reportStream } from './nuclei-report.ts';

const FINDINGS = Number(process.env.BENCH_FINDINGS ?? 100_000);
const DBS = (process.env.BENCH_DBS ?? 'pglite,postgres')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
if (!Number.isInteger(FINDINGS) || FINDINGS < 1) throw new Error('BENCH_FINDINGS must be a positive integer');

// ---- child: one database, one ingest -------------------------------------------------------------

async function child(kind: BenchDb): Promise<void> {
  const { withService } = await import('../src/db/tenant.ts');
  const { parseReport } = await import('../src/workers/importers/index.ts');
  const bench = await openIngestBench(kind, {
    source: 'worker',
    ...(process.env.BENCH_BATCH ? { batchSize: Number(process.env.BENCH_BATCH) } : {}),
    ...(process.env.BENCH_WRITERS ? { writers: Number(process.env.BENCH_WRITERS) } : {}),
  });
  try {
    const { db, store, scanId } = bench;
    const key = `reports/${scanId}/bench`;
    const { ingestionId, size } = await bench.enqueue(key, reportStream(FINDINGS), 'bench.jsonl', 4 * 1024 ** 3);

    const backendsBefore = kind === 'postgres' ? await postgresBackendCpu(db) : null;
    await settleMemory();
    const memory = sampleMemory(20);
    const cpu = sampleCpu(100);
    const started = performance.now();
    await bench.drain();
    const wallMs = performance.now() - started;
    const { peakRss: peak } = memory.stop();
    const backendsAfter = backendsBefore ? await postgresBackendCpu(db) : null;
    const cpuSeconds = cpu.stop(
      backendsBefore && backendsAfter ? { start: backendsBefore.start, pids: backendsAfter.pids } : undefined,
    );
    const baseline = memory.baseline;

    // Afterwards, the parser alone over the same file (no database), for the parser's share of the time.
    const parseStarted = performance.now();
    let parsed = 0;
    for await (const _f of parseReport('nuclei', (await store.get(key)).body)) parsed += 1;
    const parseMs = performance.now() - parseStarted;

    const job = await withService(db, (tx) =>
      tx.selectFrom('report_ingestions').selectAll().where('id', '=', ingestionId).executeTakeFirstOrThrow(),
    );
    const scan = await withService(db, (tx) =>
      tx.selectFrom('scans').select(['status', 'percent']).where('id', '=', scanId).executeTakeFirstOrThrow(),
    );
    const count = await withService(db, (tx) =>
      tx
        .selectFrom('findings')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('scan_id', '=', scanId)
        .executeTakeFirstOrThrow(),
    );
    if (job.status !== 'succeeded' || scan.status !== 'succeeded' || Number(count.n) !== FINDINGS)
      throw new Error(`ingest incomplete: job ${job.status} (${job.error}), scan ${scan.status}, ${count.n} findings`);
    process.stdout.write(
      `${JSON.stringify({
        db: kind,
        findings: Number(count.n),
        reportMB: mb(size),
        wallSeconds: Math.round(wallMs / 10) / 100,
        findingsPerSecond: Math.round(FINDINGS / (wallMs / 1000)),
        peakRssMB: mb(peak),
        baselineRssMB: mb(baseline),
        ingestRssMB: mb(peak - baseline),
        maxRssLifetimeMB: mb(process.resourceUsage().maxRSS * 1024),
        cpuSeconds,
        parseOnlySeconds: Math.round(parseMs / 10) / 100,
        parsed,
        summary: job.summary,
      })}\n`,
    );
  } finally {
    await bench.close();
  }
}

// ---- parent: one child per database --------------------------------------------------------------

async function main(): Promise<void> {
  // The server's own Node flags (heap sizes), plus BENCH_CHILD_NODE_OPTIONS to compare others.
  const extraFlags = (process.env.BENCH_CHILD_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);
  const results: unknown[] = [];
  for (const kind of DBS) {
    if (kind !== 'pglite' && kind !== 'postgres') throw new Error(`unknown database ${kind} in BENCH_DBS`);
    const databaseUrl = kind === 'postgres' ? process.env.DATABASE_URL : undefined;
    results.push(
      await runBenchChild(import.meta.filename, kind, {
        extraFlags,
        pgName: `rampart_bench_ingest_${Date.now()}`,
        ...(databaseUrl ? { databaseUrl } : {}),
      }),
    );
  }
  console.log(
    JSON.stringify(
      {
        bench: 'ingest',
        findings: FINDINGS,
        targets: { wallSeconds: 20, peakRssMB: 400 },
        node: process.version,
        results,
      },
      null,
      2,
    ),
  );
}

const kind = childKind();
if (kind) await child(kind);
else await main();
