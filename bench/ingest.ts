// npm run bench:ingest — report ingestion end to end: a 100,000-finding nuclei JSONL report
// (realistic lines: template metadata, classification, request/response, distinct matched-at) is
// stored in built-in storage, queued as a worker upload would queue it, and run to completion by
// the ingestion runner (stream → parse → batches of findings → closing step → scan succeeded).
// Each database runs in its own child process, so its peak RSS is the ingest's alone: PGlite in
// a fresh DATA_DIR on disk (the embedded default), and PostgreSQL in a fresh database created on
// BENCH_PG_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres), or DATABASE_URL when
// set (its schema is migrated; the data is a new tenant). Targets: ≤ 20 s and peak RSS ≤ 400 MB.
// Prints JSON: per database wall time (ingest only), the report's size, findings, the rate, peak
// RSS (sampled every 20 ms while ingesting; baselineRssMB is the process before the ingest, which
// on PGlite is mostly the embedded database itself, ~280 MB; ingestRssMB the difference) and the
// time to parse the same file without a database (the parser's share). cpuSeconds: CPU time
// spent during the ingest by each part of the process (main thread, pglite: the embedded
// database's thread, parse: the report's parse thread, v8: garbage collection and compiler
// threads) and by the PostgreSQL backends serving it (Linux /proc); on a shared machine wall
// time mostly says how busy the machine was, CPU seconds what the ingest cost.
// BENCH_FINDINGS (100000), BENCH_DBS (pglite,postgres), BENCH_BATCH (the runner's default),
// BENCH_WRITERS (concurrent batch writers; as the server: 2 on PostgreSQL, 1 on PGlite).
import { Readable } from 'node:stream';
import {
  childKind,
  mb,
  openIngestBench,
  postgresBackendCpu,
  runBenchChild,
  sampleCpu,
  sampleMemory,
  type BenchDb,
} from './ingest-setup.ts';

const FINDINGS = Number(process.env.BENCH_FINDINGS ?? 100_000);
const DBS = (process.env.BENCH_DBS ?? 'pglite,postgres')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
if (!Number.isInteger(FINDINGS) || FINDINGS < 1) throw new Error('BENCH_FINDINGS must be a positive integer');

const SEVERITIES = ['info', 'info', 'info', 'low', 'low', 'medium', 'medium', 'high', 'critical'];
const TAGS = ['misconfig', 'exposure', 'cve', 'tech', 'headers', 'ssl', 'panel', 'xss', 'sqli', 'lfi'];

/** One nuclei -jsonl result; `i` makes matched-at (and so the fingerprint) distinct. */
function nucleiLine(i: number): string {
  const t = i % 250;
  const severity = SEVERITIES[i % SEVERITIES.length]!;
  const host = `app${i % 20}.bench.example.test`;
  const path = `/api/v${(i % 3) + 1}/items/${i}`;
  const url = `https://${host}${path}`;
  const cve = t % 5 === 0 ? [`CVE-20${10 + (t % 14)}-${1000 + t}`] : undefined;
  return JSON.stringify({
    template: `http/vulnerabilities/bench-template-${t}.yaml`,
    'template-url': `https://cloud.projectdiscovery.io/public/bench-template-${t}`,
    'template-id': `bench-template-${t}`,
    'template-path': `/root/nuclei-templates/http/vulnerabilities/bench-template-${t}.yaml`,
    info: {
      name: `Bench template ${t} - ${TAGS[t % TAGS.length]} check`,
      author: ['pdteam', 'bench'],
      tags: [TAGS[t % TAGS.length], TAGS[(t + 3) % TAGS.length]],
      description: `Detects condition ${t} on exposed endpoints. The impact depends on the data the endpoint serves.\n`,
      reference: [`https://example.test/advisories/${t}`, `https://nvd.nist.gov/vuln/detail/${cve?.[0] ?? 'none'}`],
      severity,
      metadata: { 'max-request': 1, vendor: 'bench', product: `product-${t % 17}` },
      classification: {
        'cve-id': cve ?? null,
        'cwe-id': [`cwe-${200 + (t % 50)}`],
        'cvss-metrics': 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N',
        'cvss-score': 5.3,
      },
      remediation: 'Restrict access to the endpoint and update the component.',
    },
    'matcher-name': t % 4 === 0 ? `matcher-${t % 7}` : undefined,
    type: 'http',
    host: `https://${host}`,
    port: '443',
    scheme: 'https',
    url: `https://${host}`,
    path,
    'matched-at': url,
    'extracted-results': t % 6 === 0 ? [`token-${i}`] : undefined,
    request: `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36\r\nAccept: */*\r\nAccept-Encoding: gzip\r\n\r\n`,
    response: `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nServer: nginx\r\nContent-Length: 64\r\n\r\n{"id":${i},"name":"item ${i}","owner":"bench","visibility":"public"}`,
    ip: `198.51.100.${i % 250}`,
    timestamp: new Date(1_763_000_000_000 + i * 1000).toISOString(),
    'curl-command': `curl -X 'GET' -H 'Host: ${host}' '${url}'`,
    'matcher-status': true,
  });
}

/** The report as a stream of ~64 KiB chunks: generated on the fly, never held whole. */
function reportStream(n: number): Readable {
  let i = 0;
  return new Readable({
    read() {
      const parts: string[] = [];
      let len = 0;
      while (i < n && len < 65_536) {
        const line = `${nucleiLine(i++)}\n`;
        parts.push(line);
        len += line.length;
      }
      this.push(parts.length ? Buffer.from(parts.join('')) : null);
    },
  });
}

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
    const memory = sampleMemory(20);
    const cpu = sampleCpu(20);
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
