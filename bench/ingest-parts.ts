// npm run bench:ingest-parts — what one batch of report ingestion costs the database, part by part.
// Per database, in its own child process on a scratch database (PGlite in a fresh DATA_DIR,
// PostgreSQL in a fresh database on BENCH_PG_ADMIN_URL; never DATABASE_URL, since this bench
// drops indexes and constraints): 10,000 findings of the bench's nuclei report are ingested
// through the real runner, 1,000 of the stored rows become the batch, and each round inserts
// that batch again under fresh fingerprints, three ways:
//   json  — the ingest's own statement (insert … select from json_to_recordset … on conflict do
//           nothing returning), the JSON document sent as one parameter;
//   table — the same insert from a temporary table that already holds the rows (no JSON to read);
//   read  — json_to_recordset alone, the document read and converted into rows, nothing written.
// Then, cumulatively, the findings table loses the five list indexes that carry search_text, the
// GIN and asset indexes, and its four foreign keys, and the rounds are repeated after each step.
// Prints medians of 15 rounds in ms per 1,000 findings: what each part of the table costs an
// insert. BENCH_DBS (pglite,postgres), BENCH_ROUNDS (15; 7 left the embedded figures noisy).
import { sql } from 'kysely';
import { CONTENT_RECORD } from '../src/findings/findings-ingest.ts';
import { childKind, openIngestBench, runBenchChild, type BenchDb } from './ingest-setup.ts';
import { median, round } from './lib.ts';
import { reportStream } from './nuclei-report.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const DBS = (process.env.BENCH_DBS ?? 'pglite,postgres')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);

// The ingest's own record of a batch row (and its column names), plus the due date it adds.
const RECORD = `${CONTENT_RECORD}, sla_due_at timestamptz`;
const COLUMNS = RECORD.split(',')
  .map((c) => c.trim().split(/\s+/)[0])
  .join(', ');

const STEPS: [string, string[]][] = [
  ['every index and foreign key (as migrated)', []],
  [
    'without the five list indexes that carry search_text',
    [
      'findings_sort_severity_idx',
      'findings_sort_first_seen_idx',
      'findings_sort_last_seen_idx',
      'findings_sort_sla_idx',
      'findings_counts_idx',
    ].map((i) => `drop index ${i}`),
  ],
  [
    'and without the CWE, CVE and asset indexes',
    ['findings_cwe_idx', 'findings_cve_idx', 'findings_asset_idx'].map((i) => `drop index ${i}`),
  ],
  [
    'and without the four foreign keys',
    [
      'alter table findings drop constraint findings_asset_fkey, drop constraint findings_scan_id_fkey, drop constraint findings_first_scan_id_fkey, drop constraint findings_status_changed_by_fkey',
    ],
  ],
];

async function child(kind: BenchDb): Promise<void> {
  const { withService } = await import('../src/db/tenant.ts');
  const bench = await openIngestBench(kind, { source: 'worker' });
  try {
    const { db } = bench;
    await bench.enqueue('reports/seed', reportStream(10_000), 'seed.jsonl', 1024 ** 3);
    await bench.drain();
    const scan = await withService(db, (tx) =>
      tx.selectFrom('scans').select(['id', 'tenant_id', 'asset_id']).executeTakeFirstOrThrow(),
    );
    const { rows } = await withService(db, (tx) =>
      sql<{
        j: Record<string, unknown>[];
      }>`select json_agg(x) as j from (select ${sql.raw(COLUMNS)} from findings limit 1000) x`.execute(tx),
    );
    const batch = rows[0]!.j;
    let n = 0;
    /** The batch under fingerprints no earlier round used. */
    const fresh = () => {
      n += 1;
      return JSON.stringify(batch.map((r, k) => ({ ...r, fingerprint: `round-${n}-${k}-${String(r.fingerprint)}` })));
    };
    const insertFrom = (source: ReturnType<typeof sql>) => sql`
      insert into findings (tenant_id, asset_id, scan_id, first_scan_id, scanner, scope_key, status, first_seen_at, last_seen_at, ${sql.raw(COLUMNS)})
      select ${scan.tenant_id}, ${scan.asset_id}, ${scan.id}, ${scan.id}, 'template', 'full', 'open', now(), now(), ${sql.raw(COLUMNS)}
      from ${source} on conflict (tenant_id, fingerprint) do nothing returning id, fingerprint, severity`;
    const recordset = (json: string) => sql`json_to_recordset(${json}::json) as r(${sql.raw(RECORD)})`;
    const timed = async (f: () => Promise<unknown>) => {
      const t0 = performance.now();
      await f();
      return performance.now() - t0;
    };
    const measure = async () => {
      const json: number[] = [];
      const table: number[] = [];
      const read: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const a = fresh();
        json.push(await timed(() => withService(db, (tx) => insertFrom(recordset(a)).execute(tx))));
        const b = fresh();
        await withService(db, async (tx) => {
          await sql`create temp table if not exists parts_batch as select * from ${recordset(b)} limit 0`.execute(tx);
          await sql`truncate parts_batch`.execute(tx);
          await sql`insert into parts_batch select * from ${recordset(b)}`.execute(tx);
        });
        table.push(await timed(() => withService(db, (tx) => insertFrom(sql`parts_batch`).execute(tx))));
        const c = fresh();
        read.push(
          await timed(() =>
            withService(db, (tx) => sql`select count(*) from (select * from ${recordset(c)} offset 0) x`.execute(tx)),
          ),
        );
      }
      return { json: round(median(json), 1), table: round(median(table), 1), read: round(median(read), 1) };
    };
    const steps: unknown[] = [];
    for (const [name, statements] of STEPS) {
      // As the table's owner: the service role may not change the schema (a scratch database only).
      for (const s of statements) await sql.raw(s).execute(db);
      steps.push({ step: name, msPer1000: await measure() });
    }
    process.stdout.write(`${JSON.stringify({ db: kind, rounds: ROUNDS, seeded: 10_000, steps })}\n`);
  } finally {
    await bench.close();
  }
}

async function main(): Promise<void> {
  const results: unknown[] = [];
  for (const kind of DBS) {
    if (kind !== 'pglite' && kind !== 'postgres') throw new Error(`unknown database ${kind} in BENCH_DBS`);
    results.push(await runBenchChild(import.meta.filename, kind, { pgName: `rampart_bench_parts_${Date.now()}` }));
  }
  console.log(JSON.stringify({ bench: 'ingest-parts', node: process.version, results }, null, 2));
}

const kind = childKind();
if (kind) await child(kind);
else await main();
