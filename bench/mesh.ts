// npm run bench:mesh — the signed mesh dispatch route under 32 concurrent connections:
//   ping:         signed `ping` on the embedded default (PGlite), the server started as `npm start`
//                 starts it, against a bare node:http server answering the same JSON from its own
//                 process, in alternating pairs of rounds; the median of the pairs' ratios is the
//                 figure (targets: ≥ 0.5, p99 ≤ 10 ms, zero non-2xx).
//   event_report: idempotency-gated `event_report` with a fresh x-svc-request-id per request on
//                 PostgreSQL (target ≥ 1,000 requests/s), then the database is checked directly for
//                 duplicate executions.
// Each ping round also reads the CPU time of every thread of the server and of this process (the
// load generator) from /proc, so the figure comes with the CPU each spends per call, which tells
// where a change went even when the shared machine's speed moves the throughput.
// BENCH_TARGETS (ping,event_report), BENCH_SECONDS (5), BENCH_PING_ROUNDS (9 alternating pairs),
// BENCH_ROUNDS (3, event_report), BENCH_PG_ADMIN_URL. Prints JSON.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import pg from 'pg';
import { ensurePgliteTemplate } from '../src/db/pglite-template.ts';
import { DISPATCH_PATH, formatTimestamp, signDispatch } from '../src/mesh/mesh-signing.ts';
import { openDatabase } from '../src/db/client.ts';
import {
  cpuPerCall,
  freePort,
  median,
  msUntilHealthy,
  round,
  spawnServer,
  threadCpuMicros,
  type Server,
} from './lib.ts';

const CONNECTIONS = 32;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PING_ROUNDS = Number(process.env.BENCH_PING_ROUNDS ?? 9);
const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const TARGETS = (process.env.BENCH_TARGETS ?? 'ping,event_report')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);

for (const t of TARGETS) {
  if (t !== 'ping' && t !== 'event_report')
    throw new Error(`BENCH_TARGETS: unknown target "${t}" (ping, event_report)`);
}
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error('BENCH_ROUNDS must be a positive integer');
if (!Number.isInteger(PING_ROUNDS) || PING_ROUNDS < 1) throw new Error('BENCH_PING_ROUNDS must be a positive integer');
// One signature serves a whole round; the server accepts timestamps within ±5 minutes.
if (!(SECONDS > 0 && SECONDS <= 240)) {
  throw new Error('BENCH_SECONDS must be in (0, 240]: a round reuses one signed timestamp');
}

const CALLER = 'bench';
const SECRET = randomBytes(32).toString('hex');
const PEER_ENV = {
  SVC_SECRET_FROM_BENCH: SECRET,
  SVC_PEER_FLOWS_BENCH: 'ping,health_check,event_report',
  LOG_LEVEL: 'warn',
};

// ---------------------------------------------------------------------------------------------
// Child processes: killed on every way out.

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
/** A database this run created and has not dropped yet: dropped on an interrupt too. */
let pendingDrop: (() => Promise<unknown>) | null = null;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    process.stderr.write(`bench: ${sig}, stopping\n`);
    void Promise.all([...children].map((c) => stopProcess(c, 5_000)))
      .then(() => pendingDrop?.())
      .catch(() => {})
      .finally(() => process.exit(130));
  });
}

function track(child: ChildProcess): void {
  children.add(child);
  child.once('exit', () => children.delete(child));
}

/** SIGTERM, await exit; SIGKILL if it takes longer than `graceMs`. Returns the exit code. */
async function stopProcess(child: ChildProcess, graceMs = 15_000): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), graceMs);
  });
  const first = await Promise.race([exited, timedOut]);
  clearTimeout(timer);
  if (first !== 'timeout') return first;
  process.stderr.write(`bench: pid ${child.pid} ignored SIGTERM for ${graceMs} ms, killing\n`);
  child.kill('SIGKILL');
  return exited;
}

async function startRampart(env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const server = spawnServer({ ...PEER_ENV, ...env }, port);
  track(server.child);
  const died = new Promise<never>((_, reject) =>
    server.child.once('exit', (code) => reject(new Error(`rampart exited during startup (code ${code})`))),
  );
  died.catch(() => {});
  // A shared, busy machine can take well over a minute to start the server; that is not the figure.
  await Promise.race([msUntilHealthy(port, performance.now(), 300_000), died]);
  return server;
}

// The bare baseline: node:http in its own process, parsing the body and answering the same JSON
// shape as our ping (a fresh request id, the nonce echoed).
const BARE_CODE = `
const http = require('node:http');
const { randomUUID } = require('node:crypto');
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.method !== 'POST') { res.writeHead(405); res.end(); return; }
    let nonce = null;
    try { const b = JSON.parse(Buffer.concat(chunks).toString('utf8')); nonce = (b && b.payload && b.payload.nonce) ?? null; } catch {}
    const body = JSON.stringify({ requestId: randomUUID(), pong: true, self: 'rampart', flow: 'ping', nonce });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
`;

async function startBare(): Promise<{ child: ChildProcess; port: number }> {
  const env = { PATH: process.env.PATH };
  const child = spawn(process.execPath, ['-e', BARE_CODE], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  track(child);
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => {
      out += d;
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve(Number(line));
    });
    child.once('exit', (code) => reject(new Error(`bare server exited during startup (code ${code})`)));
  });
  return { child, port };
}

// ---------------------------------------------------------------------------------------------
// Signing and load.

function signedHeaders(body: string): Record<string, string> {
  const timestamp = formatTimestamp(new Date());
  return {
    'content-type': 'application/json',
    'x-svc-caller': CALLER,
    'x-svc-timestamp': timestamp,
    'x-svc-signature': signDispatch(SECRET, { caller: CALLER, timestamp, method: 'POST', path: DISPATCH_PATH, body }),
  };
}

interface Round {
  rps: number;
  p50: number;
  p99: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  /** Microseconds of CPU per call, per thread name, of the server and of the load generator. */
  cpu?: { server: Record<string, number>; loadGenerator: Record<string, number> };
}

async function load(opts: autocannon.Options, serverPid?: number): Promise<Round> {
  const before = serverPid ? { server: threadCpuMicros(serverPid), self: threadCpuMicros(process.pid) } : null;
  const r = await autocannon({ connections: CONNECTIONS, duration: SECONDS, method: 'POST', ...opts });
  const calls = r['2xx'] + r.non2xx;
  const cpu =
    before && serverPid
      ? {
          server: cpuPerCall(before.server, threadCpuMicros(serverPid), calls),
          loadGenerator: cpuPerCall(before.self, threadCpuMicros(process.pid), calls),
        }
      : undefined;
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    ok2xx: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    ...(cpu ? { cpu } : {}),
  };
}

const summary = (rs: Round[]) => ({
  requestsPerSecond: round(median(rs.map((r) => r.rps)), 0),
  p50Ms: median(rs.map((r) => r.p50)),
  p99Ms: median(rs.map((r) => r.p99)),
  non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
  errors: rs.reduce((a, r) => a + r.errors, 0),
  samples: rs.map((r) => ({
    requestsPerSecond: round(r.rps, 0),
    p50Ms: r.p50,
    p99Ms: r.p99,
    ...(r.cpu ? { cpuMicrosPerCall: r.cpu } : {}),
  })),
});

// ---------------------------------------------------------------------------------------------
// ping: embedded Rampart vs bare node:http.

const PING_BODY = JSON.stringify({ flow: 'ping', payload: { nonce: 'bench' } });

async function benchPing(): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rampart-bench-mesh-'));
  let rampart: Server | null = null;
  let bare: { child: ChildProcess; port: number } | null = null;
  try {
    bare = await startBare();
    rampart = await startRampart({ DATA_DIR: dataDir });
    const bareUrl = `http://127.0.0.1:${bare.port}${DISPATCH_PATH}`;
    const rampartUrl = `http://127.0.0.1:${rampart.port}${DISPATCH_PATH}`;

    // Both must answer the same shape before we compare them.
    const check = await fetch(rampartUrl, { method: 'POST', headers: signedHeaders(PING_BODY), body: PING_BODY });
    const checkBody = await check.text();
    if (check.status !== 200 || !(JSON.parse(checkBody) as { pong?: boolean }).pong)
      throw new Error(`signed ping failed: ${check.status} ${checkBody}`);
    const bareCheck = (await (await fetch(bareUrl, { method: 'POST', body: PING_BODY })).json()) as Record<
      string,
      unknown
    >;
    const rampartKeys = Object.keys(JSON.parse(checkBody) as object).join(',');
    if (Object.keys(bareCheck).join(',') !== rampartKeys)
      throw new Error(`bare answer shape differs: ${Object.keys(bareCheck).join(',')} vs ${rampartKeys}`);

    // One signed request per round: fixed body, fresh timestamp.
    const rampartRound = () =>
      load({ url: rampartUrl, headers: signedHeaders(PING_BODY), body: PING_BODY }, rampart!.child.pid);
    const bareRound = () =>
      load({ url: bareUrl, headers: { 'content-type': 'application/json' }, body: PING_BODY }, bare!.child.pid);

    await bareRound(); // warm-ups, discarded
    const rampartWarm = await rampartRound();
    const bareRounds: Round[] = [];
    const rampartRounds: Round[] = [];
    for (let i = 0; i < PING_ROUNDS; i++) {
      // Alternate which goes first, so neither always follows the other's heat.
      const pair = i % 2 === 0 ? [bareRound, rampartRound] : [rampartRound, bareRound];
      const first = await pair[0]!();
      const second = await pair[1]!();
      bareRounds.push(i % 2 === 0 ? first : second);
      rampartRounds.push(i % 2 === 0 ? second : first);
      const [bareRps, rampartRps] = [bareRounds.at(-1)!.rps, rampartRounds.at(-1)!.rps].map((x) => round(x, 0));
      process.stderr.write(`ping pair ${i + 1}: bare ${bareRps}, rampart ${rampartRps} req/s\n`);
    }
    // Every answered call must have its inbound record: stop the server (it flushes on the way
    // out), then count the rows in its embedded database. A round's last calls may be answered
    // after autocannon stopped counting, so up to one per connection and round more rows is fine.
    const answered = [rampartWarm, ...rampartRounds].reduce((a, x) => a + x.ok2xx + x.non2xx, 0) + 1;
    await stopProcess(rampart.child);
    rampart = null;
    const inboundRecords = await countInbound(dataDir, answered, CONNECTIONS * (PING_ROUNDS + 1));
    const b = summary(bareRounds);
    const r = summary(rampartRounds);
    const ratio = round(r.requestsPerSecond / b.requestsPerSecond, 3);
    const pairRatios = rampartRounds.map((x, i) => round(x.rps / bareRounds[i]!.rps, 3));
    return {
      database: 'pglite',
      bare: b,
      rampart: r,
      ratio,
      pairRatios,
      medianPairRatio: median(pairRatios),
      inboundRecords,
      targets: { ratio: 0.5, p99Ms: 10 },
      meets: {
        ratio: median(pairRatios) >= 0.5,
        p99: r.p99Ms <= 10,
        zeroNon2xx: r.non2xx + r.errors === 0,
        everyCallRecorded: inboundRecords.kept,
      },
    };
  } finally {
    if (rampart) await stopProcess(rampart.child);
    if (bare) await stopProcess(bare.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The bench caller's inbound records in a stopped server's embedded database, against the calls answered. */
async function countInbound(dataDir: string, answered: number, slack: number) {
  const database = await openDatabase({ dataDir });
  try {
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from svc_inbound_events where caller = ${CALLER}`.execute(database.db);
    const n = rows[0]!.n;
    return { rows: n, answered, kept: n >= answered && n <= answered + slack };
  } finally {
    await database.close();
  }
}

// ---------------------------------------------------------------------------------------------
// event_report: gated, fresh request ids, PostgreSQL.

const EVENT_BODY = JSON.stringify({
  flow: 'event_report',
  payload: {
    kind: 'bench',
    severity: 'info',
    title: 'Mesh benchmark event',
    detail: 'bench/mesh.ts',
    data: { source: 'bench' },
  },
});

async function withAdmin<T>(work: (c: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

async function benchEventReport(): Promise<Record<string, unknown>> {
  const dbName = `rampart_bench_mesh_${process.pid}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'rampart-bench-mesh-pg-'));
  const databaseUrl = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${dbName}`);
  let rampart: Server | null = null;
  let created = false;
  try {
    await withAdmin(async (a) => {
      await a.query(`drop database if exists ${dbName}`);
      await a.query(`create database ${dbName}`);
    });
    created = true;
    pendingDrop = () => withAdmin((a) => a.query(`drop database if exists ${dbName} with (force)`));
    rampart = await startRampart({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, DATABASE_POOL_MAX: '20' });
    const url = `http://127.0.0.1:${rampart.port}${DISPATCH_PATH}`;

    // Every request id this run sends is unique: run tag, round, per-request counter.
    const tag = `bench-${process.pid}-${Date.now().toString(36)}`;
    let seq = 0;
    let acknowledgedOutsideLoad = 0;

    const check = await fetch(url, {
      method: 'POST',
      headers: { ...signedHeaders(EVENT_BODY), 'x-svc-request-id': `${tag}-check` },
      body: EVENT_BODY,
    });
    const checkBody = await check.text();
    if (check.status !== 200 || !(JSON.parse(checkBody) as { accepted?: boolean }).accepted)
      throw new Error(`signed event_report failed: ${check.status} ${checkBody}`);
    acknowledgedOutsideLoad++;

    const eventRound = (name: string) =>
      load({
        url,
        // Signed once per round: the request id is not part of the signature, the body and timestamp stay.
        headers: signedHeaders(EVENT_BODY),
        body: EVENT_BODY,
        requests: [
          {
            setupRequest(req) {
              req.headers = { ...req.headers, 'x-svc-request-id': `${tag}-${name}-${++seq}` };
              return req;
            },
          },
        ],
      });

    // pg_stat_activity sampled while the load runs (admin connection, other database).
    const sampler = new pg.Client({ connectionString: PG_ADMIN_URL });
    await sampler.connect();
    const connSamples: number[] = [];
    let sampling = false;
    const sampleTimer = setInterval(() => {
      if (sampling) return;
      sampling = true;
      sampler
        .query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = $1', [dbName])
        .then((res) => connSamples.push(res.rows[0]!.n))
        .catch(() => {})
        .finally(() => (sampling = false));
    }, 250);

    const rounds: Round[] = [];
    let warm: Round;
    try {
      warm = await eventRound('warm'); // discarded
      for (let i = 0; i < ROUNDS; i++) rounds.push(await eventRound(`r${i}`));
    } finally {
      clearInterval(sampleTimer);
      while (sampling) await new Promise((r) => setTimeout(r, 10));
      await sampler.end();
    }

    // Requests in flight when a round's clock ran out may still commit; give them a moment.
    await new Promise((r) => setTimeout(r, 500));
    const all = [warm, ...rounds];
    const acknowledged2xx = all.reduce((a, r) => a + r.ok2xx, 0) + acknowledgedOutsideLoad;
    const db = await (async () => {
      const c = new pg.Client({ connectionString: databaseUrl });
      await c.connect();
      try {
        const ev = await c.query<{ rows: number; distinct_ids: number }>(
          'select count(*)::int as rows, count(distinct request_id)::int as distinct_ids from svc_received_events where caller = $1',
          [CALLER],
        );
        const idem = await c.query<{ completed: number; in_flight: number }>(
          `select count(*) filter (where status = 'completed')::int as completed, count(*) filter (where status = 'in_flight')::int as in_flight from svc_idempotency where caller = $1`,
          [CALLER],
        );
        return { ...ev.rows[0]!, ...idem.rows[0]! };
      } finally {
        await c.end();
      }
    })();
    const s = summary(rounds);
    const duplicates = db.rows - db.distinct_ids;
    // Each connection has at most one request in flight when a round stops: executed, never acknowledged.
    const unacknowledged = db.rows - acknowledged2xx;
    const maxUnacknowledged = CONNECTIONS * all.length;
    return {
      database: 'postgres',
      poolMax: 20,
      requestsPerSecond: s.requestsPerSecond,
      p50Ms: s.p50Ms,
      p99Ms: s.p99Ms,
      non2xx: s.non2xx,
      errors: s.errors,
      samples: s.samples,
      rows: db.rows,
      distinctRequestIds: db.distinct_ids,
      duplicates,
      acknowledged2xx,
      unacknowledgedExecutions: unacknowledged,
      maxUnacknowledged,
      idempotencyCompleted: db.completed,
      idempotencyInFlight: db.in_flight,
      consistent:
        duplicates === 0 && db.completed === db.rows && unacknowledged >= 0 && unacknowledged <= maxUnacknowledged,
      pgConnections: {
        max: connSamples.length ? Math.max(...connSamples) : null,
        median: connSamples.length ? median(connSamples) : null,
        samples: connSamples.length,
      },
      target: 1000,
      meets: {
        throughput: s.requestsPerSecond >= 1000,
        zeroDuplicates: duplicates === 0,
        zeroNon2xx: s.non2xx + s.errors === 0,
      },
    };
  } finally {
    if (rampart) await stopProcess(rampart.child);
    rmSync(dataDir, { recursive: true, force: true });
    if (created) {
      pendingDrop = null;
      await withAdmin((a) => a.query(`drop database if exists ${dbName} with (force)`)).catch((err: unknown) => {
        process.stderr.write(`bench: could not drop ${dbName}: ${String(err)}\n`);
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------

try {
  await ensurePgliteTemplate();
  const out: Record<string, unknown> = {
    bench: 'mesh',
    node: process.version,
    connections: CONNECTIONS,
    secondsPerRound: SECONDS,
    rounds: ROUNDS,
    loadAverage: loadavg()[0],
  };
  if (TARGETS.includes('ping')) out.ping = await benchPing();
  if (TARGETS.includes('event_report')) out.eventReport = await benchEventReport();
  out.loadAverageAfter = loadavg()[0];
  console.log(JSON.stringify(out, null, 2));
} catch (err) {
  process.stderr.write(`bench:mesh failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  await Promise.all([...children].map((c) => stopProcess(c, 5_000)));
  process.exitCode = 1;
}
