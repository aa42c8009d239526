// npm run bench:scale — a mixed load on 1 and on 3 server replicas sharing one PostgreSQL and one
// S3-compatible bucket (platform storage, STORAGE_S3_*), behind a round-robin proxy on loopback.
//
// Per replica count, on a fresh database: 20 workers (the real agent and port scanner, in this
// process) lease, scan and upload; a feeder keeps 40 port scans queued; 8 mesh callers send signed
// `event_report` calls through the proxy, every fifth one a retry of the previous request id;
// every 2 s ten schedules are made due and the cron tick is sent to every replica at once (a
// schedule whose asset is at its limit records why and is not queued); 4 staff
// readers list scans. After BENCH_SECONDS (20) the feeders stop and the queue drains.
// Figures: scans succeeded, mesh calls and reads per second, their sum, and the PostgreSQL
// connections in use (peak). Invariants: no scan leased twice or ingested twice, every mesh
// request id executed once (retries replayed), no schedule dispatched twice for one tick round.
// BENCH_PG_ADMIN_URL, BENCH_SECONDS, BENCH_REPLICAS (1,3). Prints JSON.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import pg from 'pg';
import { DISPATCH_PATH, formatTimestamp, signDispatch } from '../src/mesh/mesh-signing.ts';
import { createHostedAgent, type Agent } from '../src/worker/agent.ts';
import { startS3Server } from '../test/helpers/s3-server.ts';
import { freePort, msUntilHealthy, round, spawnServer, type Server } from './lib.ts';

const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const REPLICAS = (process.env.BENCH_REPLICAS ?? '1,3').split(',').map(Number);
const WORKERS = 20;
const SCHEDULES = 10;
const CALLER = 'loadgen';
const MESH_SECRET = randomBytes(32).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Round robin over the replicas; a replica that refuses the connection is skipped for that request. */
function startProxy(ports: () => number[]): Promise<{ url: string; close(): void }> {
  let next = 0;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const live = ports();
      const attempt = (tries: number) => {
        const port = live[next++ % live.length]!;
        const up = http.request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: { ...req.headers, 'x-forwarded-for': '127.0.0.1' }, agent }, (ur) => {
          res.writeHead(ur.statusCode ?? 502, ur.headers);
          ur.pipe(res);
        });
        up.on('error', () => (tries + 1 < live.length ? attempt(tries + 1) : res.writeHead(502).end()));
        up.end(body);
      };
      attempt(0);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, close: () => (server.closeAllConnections(), server.close(), agent.destroy()) })));
}

async function runOnce(replicas: number) {
  const tag = `${replicas}r${randomBytes(3).toString('hex')}`;
  const dbName = `rampart_scale_${tag}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const dbUrl = new URL(PG_ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const db = new pg.Pool({ connectionString: dbUrl.toString(), max: 4 });
  db.on('error', () => undefined); // idle clients dropped with the database at the end
  const s3 = await startS3Server();
  const listener = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => listener.listen(0, '0.0.0.0', () => r()));
  const openPort = (listener.address() as net.AddressInfo).port;

  const proxyHolder: { ports: number[] } = { ports: [] };
  const proxy = await startProxy(() => proxyHolder.ports);
  const env = {
    DATABASE_URL: dbUrl.toString(),
    DATABASE_POOL_MAX: '10',
    PUBLIC_BASE_URL: proxy.url,
    TRUST_PROXY: 'true',
    AUTH_SECRET: 'scale-bench-auth-secret-scale-bench-0123',
    APP_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
    CRON_SECRET: 'scale-bench-cron-secret',
    EMBEDDED_WORKER: 'false',
    SCHEDULE_TICK_SECONDS: '3600',
    STORAGE_S3_ENDPOINT: s3.endpoint,
    STORAGE_S3_BUCKET: s3.bucket,
    STORAGE_S3_ACCESS_KEY_ID: s3.accessKeyId,
    STORAGE_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    [`SVC_SECRET_FROM_${CALLER.toUpperCase()}`]: MESH_SECRET,
    [`SVC_PEER_FLOWS_${CALLER.toUpperCase()}`]: 'ping,event_report',
    LOG_LEVEL: 'error',
  };
  const servers: Server[] = [];
  for (let i = 0; i < replicas; i++) servers.push(spawnServer(env, await freePort()));
  const t0 = performance.now();
  for (const s of servers) await msUntilHealthy(s.port, t0, 120_000);
  proxyHolder.ports = servers.map((s) => s.port);
  const base = proxy.url;

  // Set-up through the proxy, as a person would.
  const email = `scale-${tag}@example.test`;
  const up = await fetch(`${base}/api/auth/sign-up/email`, { method: 'POST', headers: { 'content-type': 'application/json', origin: base }, body: JSON.stringify({ email, name: 'Scale', password: 'scale bench password 1' }) });
  if (!up.ok) throw new Error(`sign-up: ${up.status} ${await up.text()}`);
  const cookie = up.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const csrf = ((await (await fetch(`${base}/api/v1/me`, { headers: { cookie } })).json()) as { csrfToken: string }).csrfToken;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, { method, headers: { origin: base, cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' }, ...(method === 'GET' ? {} : { body: JSON.stringify(body ?? {}) }) });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };
  const org = await fetch(`${base}/api/auth/organization/create`, { method: 'POST', headers: { 'content-type': 'application/json', origin: base, cookie }, body: JSON.stringify({ name: 'Scale bench', slug: `scale-${tag}` }) });
  const tenantId = ((await org.json()) as { id: string }).id;
  const t = `/api/v1/tenants/${tenantId}`;
  await call('PUT', `${t}/settings`, { dailyScanQuota: 100_000, perAssetConcurrentScans: 8 });
  const secret = (await call('POST', `${t}/webhook-secret`, { graceHours: 0 })).secret as string;
  const assets: string[] = [];
  for (let i = 0; i < WORKERS; i++) assets.push(((await call('POST', `${t}/assets`, { kind: 'host', target: `127.0.0.${i + 2}` })).asset as { id: string }).id);
  await db.query(`update assets set verification_status = 'bypassed', verified_via = 'bypass', verified_at = now() where tenant_id = $1`, [tenantId]);
  const scanBody = (i: number) => ({ assetId: assets[i % assets.length], kind: 'port', options: { range: { from: openPort, to: openPort + 4 }, timeoutMs: 500 } });
  for (let i = 0; i < SCHEDULES; i++) await call('POST', `${t}/scan-schedules`, { name: `s${i}`, ...scanBody(i), cron: '0 0 1 1 *', timeZone: 'UTC', enabled: true });

  const agents: Agent[] = [];
  for (let i = 0; i < WORKERS; i++) {
    const code = (await call('POST', `${t}/worker-enrollments`)).code as string;
    const enrolled = (await (await fetch(`${base}/api/public/worker/v1/enroll`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code, name: `w${i}`, platform: 'linux/x64', version: 'bench' }) })).json()) as { token: string };
    agents.push(createHostedAgent({ client: { serverUrl: base, token: enrolled.token, signingSecret: secret }, scannerSettings: { port: { bannerWaitMs: 200, probeTimeoutMs: 500 } }, graceMs: 5_000 }));
  }
  const agentRuns = agents.map((a) => a.start());

  // Load.
  let stop = false;
  const counts = { meshOk: 0, meshReplayed: 0, meshOther: 0, reads: 0, readErrors: 0, queued: 0, ticks: 0, pgPeak: 0 };
  const meshIds: string[] = [];
  const feeder = (async () => {
    let i = 0;
    while (!stop) {
      const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from scans where tenant_id = $1 and status = 'queued'`, [tenantId]);
      for (let k = rows[0]!.n; k < 40 && !stop; k++) {
        await call('POST', `${t}/scans`, scanBody(i++));
        counts.queued += 1;
      }
      await sleep(200);
    }
  })();
  const mesh = Array.from({ length: 8 }, async (_, lane) => {
    let n = 0;
    let previous: { id: string; body: string } | null = null;
    while (!stop) {
      n += 1;
      const last: { id: string; body: string } | null = previous;
      const retry: boolean = last !== null && n % 5 === 0;
      const id: string = last && retry ? last.id : `${tag}-${lane}-${n}-${randomBytes(4).toString('hex')}`;
      const body: string = last && retry ? last.body : JSON.stringify({ flow: 'event_report', payload: { kind: 'scale', severity: 'info', title: `scale ${id}` } });
      const timestamp = formatTimestamp(new Date());
      const res = await fetch(`${base}${DISPATCH_PATH}`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'x-svc-caller': CALLER, 'x-svc-timestamp': timestamp, 'x-svc-request-id': id, 'x-svc-signature': signDispatch(MESH_SECRET, { caller: CALLER, timestamp, method: 'POST', path: DISPATCH_PATH, body }) },
      });
      const json = (await res.json().catch(() => ({}))) as { replayed?: boolean };
      if (res.status === 200 && json.replayed) counts.meshReplayed += 1;
      else if (res.status === 200) {
        counts.meshOk += 1;
        if (!retry) meshIds.push(id);
      } else counts.meshOther += 1;
      if (!retry) previous = { id, body };
    }
  });
  const cron = (async () => {
    while (!stop) {
      // Millisecond precision, as the server writes it: the tick claims a schedule by comparing
      // next_run_at with the JavaScript Date it read.
      await db.query(`update scan_schedules set next_run_at = date_trunc('milliseconds', now()) - interval '1 second' where tenant_id = $1`, [tenantId]);
      await Promise.all(servers.map((s) => fetch(`http://127.0.0.1:${s.port}/api/public/hooks/scan-schedules-tick`, { method: 'POST', headers: { authorization: `Bearer ${env.CRON_SECRET}` } }).then((r) => r.arrayBuffer())));
      counts.ticks += 1;
      await sleep(2_000);
    }
  })();
  const readers = Array.from({ length: 4 }, async () => {
    while (!stop) {
      try {
        await call('GET', `${t}/scans?limit=50`);
        counts.reads += 1;
      } catch {
        counts.readErrors += 1;
      }
    }
  });
  const sampler = (async () => {
    while (!stop) {
      const { rows } = await admin.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = $1`, [dbName]);
      counts.pgPeak = Math.max(counts.pgPeak, rows[0]!.n);
      await sleep(500);
    }
  })();

  const succeededAt = async () => (await db.query<{ n: number }>(`select count(*)::int as n from scans where tenant_id = $1 and status = 'succeeded' and parent_id is null`, [tenantId])).rows[0]!.n;
  const startSucceeded = await succeededAt();
  const started = performance.now();
  await sleep(SECONDS * 1000);
  const window = (performance.now() - started) / 1000;
  const scansInWindow = (await succeededAt()) - startSucceeded;
  stop = true;
  await Promise.all([feeder, cron, sampler, ...mesh, ...readers]);

  // Drain: every queued scan finishes.
  for (let i = 0; i < 240; i++) {
    const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from scans where tenant_id = $1 and status not in ('succeeded', 'failed', 'cancelled')`, [tenantId]);
    if (rows[0]!.n === 0) break;
    await sleep(500);
  }
  await Promise.all(agents.map((a) => a.stop()));
  await Promise.all(agentRuns);

  const one = async (q: string) => (await db.query(q, [tenantId])).rows[0] as Record<string, number>;
  const scans = await one(`select count(*)::int as total, count(*) filter (where status = 'succeeded')::int as succeeded, count(*) filter (where status = 'failed')::int as failed,
      count(*) filter (where status not in ('succeeded', 'failed', 'cancelled'))::int as unfinished, count(*) filter (where attempts > 1)::int as leased_more_than_once from scans where tenant_id = $1`);
  const uploads = await one(`select count(*)::int as twice from (select scan_id from report_uploads where tenant_id = $1 and status = 'finalized' group by scan_id having count(*) > 1) x`);
  const ingests = await one(`select count(*)::int as twice from (select scan_id from report_ingestions where tenant_id = $1 group by scan_id having count(*) > 1) x`);
  const perSchedule = (await db.query<{ n: number }>(`select count(s.id)::int as n from scan_schedules sc left join scans s on s.schedule_id = sc.id where sc.tenant_id = $1 group by sc.id`, [tenantId])).rows.map((r) => r.n);
  const received = (await db.query<{ rows: number; distinct_ids: number }>(`select count(*)::int as rows, count(distinct request_id)::int as distinct_ids from svc_received_events where caller = $1`, [CALLER])).rows[0]!;

  await Promise.all(servers.map((s) => s.stop()));
  proxy.close();
  listener.close();
  await s3.close();
  await db.end();
  await admin.query(`drop database ${dbName} with (force)`);
  await admin.end();

  const rate = (n: number) => round(n / window, 1);
  return {
    replicas,
    seconds: round(window, 1),
    scansSucceededPerSecond: rate(scansInWindow),
    meshCallsPerSecond: rate(counts.meshOk + counts.meshReplayed),
    readsPerSecond: rate(counts.reads),
    operationsPerSecond: rate(scansInWindow + counts.meshOk + counts.meshReplayed + counts.reads),
    pgConnectionsPeak: counts.pgPeak,
    scans,
    scansFinalizedTwice: uploads.twice,
    scansIngestedTwice: ingests.twice,
    mesh: { executed: counts.meshOk, replayed: counts.meshReplayed, other: counts.meshOther, storedRows: received.rows, distinctIds: received.distinct_ids },
    ticks: counts.ticks,
    scansPerSchedule: { min: Math.min(...perSchedule), max: Math.max(...perSchedule) },
    readErrors: counts.readErrors,
  };
}

const results = [];
for (const r of REPLICAS) results.push(await runOnce(r));
const byReplicas = Object.fromEntries(results.map((r) => [r.replicas, r]));
const violations = results.flatMap((r) => [
  ...(r.scans.leased_more_than_once ? [`${r.replicas} replicas: ${r.scans.leased_more_than_once} scans leased more than once`] : []),
  ...(r.scansFinalizedTwice || r.scansIngestedTwice ? [`${r.replicas} replicas: a scan finalized or ingested twice`] : []),
  ...(r.scans.unfinished ? [`${r.replicas} replicas: ${r.scans.unfinished} scans never finished`] : []),
  ...(r.mesh.storedRows !== r.mesh.distinctIds || r.mesh.storedRows !== r.mesh.executed ? [`${r.replicas} replicas: mesh executions ${r.mesh.executed}, stored ${r.mesh.storedRows}, distinct ${r.mesh.distinctIds}`] : []),
  // Each tick round makes every schedule due once: more scans than rounds is a duplicate dispatch.
  ...(r.scansPerSchedule.max > r.ticks ? [`${r.replicas} replicas: a schedule dispatched ${r.scansPerSchedule.max} times in ${r.ticks} tick rounds`] : []),
]);
console.log(
  JSON.stringify(
    { bench: 'scale', seconds: SECONDS, workers: WORKERS, results, scalingRatio: byReplicas[3] && byReplicas[1] ? round(byReplicas[3].operationsPerSecond / byReplicas[1].operationsPerSecond, 2) : null, violations },
    null,
    2,
  ),
);
process.exit(violations.length ? 1 : 0);
