// The mixed load of the scale-out proof, shared by `npm run bench:scale` (throughput on 1 and 3
// replicas) and test/integration/scale-out.test.ts (3 replicas, one killed mid-run, in CI).
//
// N real server processes (src/server/main.ts) on one fresh PostgreSQL database and one
// S3-compatible bucket (platform storage), behind a round-robin proxy on loopback. Load:
// - 20 workers (the real hosted agent and port scanner, in this process) lease, scan and upload;
//   a feeder keeps 40 port scans queued;
// - 8 mesh callers send signed `event_report` calls through the proxy, every fifth one a retry of
//   the previous request id;
// - 4 relay callers post notices for the management peer (a real HTTP peer on loopback) that
//   refuses every third notice twice, so those go through the transactional outbox;
// - every 2 s ten schedules are made due and the cron tick is sent to every live replica at once;
//   each schedule must be dispatched exactly once per tick round;
// - 4 readers: two tenant members list scans, two staff members page the mesh records and the
//   audit log (staff routes: verified e-mail in STAFF_EMAIL_DOMAINS plus a platform role).
// Optionally one replica is killed (SIGKILL) part-way. After `seconds` the feeders stop, the
// queue and the outbox drain, and the invariants are checked from the database and the peer.
// Over 500 lines on purpose: the scale-out load shared by a test and a bench: processes, load mix and checks must stay
// one definition.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import pg from 'pg';
import { freePort, msUntilHealthy, round, spawnServer, type Server } from '../../bench/lib.ts';
import { DISPATCH_PATH, formatTimestamp, signDispatch } from '../../src/mesh/mesh-signing.ts';
import { createHostedAgent, type Agent } from '../../src/agent/agent.ts';
import { startS3Server } from './s3-server.ts';

export interface MixedLoadOptions {
  replicas: number;
  seconds: number;
  /** SIGKILL replica #2 this many seconds into the load window. */
  killAtSeconds?: number;
  pgAdminUrl?: string;
  workers?: number;
  /** Extra server environment (shorter leases for the kill test). */
  env?: Record<string, string>;
}

const CALLER = 'loadgen';
const MANAGEMENT = 'mgmt';
const RELAY_SECRET = 'scale-relay-secret-0123456789';
const SCHEDULES = 10;
const STAFF_DOMAIN = 'staff.scale.test';
const HARNESS_APP = 'rampart-scale-harness';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface LoadFigures {
  replicas: number;
  killed: unknown;
  leaseAnswersLostWithReplica: number;
  scans: Record<string, number>;
  scansFinalizedTwice: number;
  scansIngestedTwice: number;
  mesh: { storedRows: number; distinctIds: number; completedKeys: number };
  relay: { lost: number; queuedForOutbox: number };
  outbox: Record<string, number>;
  ticks: number;
  scansPerSchedule: { min: number };
  /** (schedule, tick round) pairs dispatched more than once, and scheduled scans made outside any round */
  scheduleRoundDuplicates: number;
  scheduledOutsideRounds: number;
  reads: { tenant: number; staff: number; errors: number };
}

interface Proxy {
  url: string;
  /** Lease requests forwarded to a replica that died before answering: each may have left a lease behind. */
  lostLeaseAnswers: number;
  close(): void;
}

/**
 * Round robin over the live replicas. Like nginx's default, a request is tried on the next
 * replica only when the connection is refused (nothing was sent); a replica that dies after
 * receiving a request makes it a 502, which the caller handles as it would in production.
 */
function startProxy(ports: () => number[]): Promise<Proxy> {
  let next = 0;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
  const state = { lostLeaseAnswers: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const live = ports();
      const attempt = (tries: number) => {
        const port = live[next++ % live.length]!;
        let answered = false;
        const fail = () => {
          if (answered) return;
          answered = true;
          if (req.url?.endsWith('/lease')) state.lostLeaseAnswers += 1;
          if (res.headersSent) res.destroy();
          else res.writeHead(502, { 'content-type': 'application/json' }).end('{"error":"bad_gateway"}');
        };
        const up = http.request(
          {
            host: '127.0.0.1',
            port,
            method: req.method,
            path: req.url,
            headers: { ...req.headers, 'x-forwarded-for': '127.0.0.1' },
            agent,
          },
          (ur) => {
            res.writeHead(ur.statusCode ?? 502, ur.headers);
            ur.on('aborted', fail);
            ur.on('error', fail);
            ur.on('end', () => (answered = true));
            ur.pipe(res);
          },
        );
        up.on('error', (err: NodeJS.ErrnoException) => {
          if (err.code === 'ECONNREFUSED' && tries + 1 < live.length) attempt(tries + 1);
          else fail();
        });
        up.end(body);
      };
      attempt(0);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
        get lostLeaseAnswers() {
          return state.lostLeaseAnswers;
        },
        close: () => (server.closeAllConnections(), server.close(), agent.destroy()),
      }),
    ),
  );
}

/** The management peer: answers `event_report` like an idempotent mesh peer, refusing every third new notice twice. */
async function startManagementPeer() {
  const attempts = new Map<string, number>();
  const executed = new Set<string>();
  let seen = 0;
  let resent = 0;
  const refuse = new Set<string>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['x-svc-request-id'] ?? '');
      const n = (attempts.get(id) ?? 0) + 1;
      attempts.set(id, n);
      if (n === 1 && ++seen % 3 === 0) refuse.add(id);
      if (refuse.has(id) && n <= 2)
        return void res
          .writeHead(503, { 'content-type': 'application/json' })
          .end('{"error":"busy","message":"try later"}');
      const replayed = executed.has(id);
      if (replayed) resent += 1;
      executed.add(id);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, replayed }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    origin: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    executed,
    get resent() {
      return resent;
    },
    get refusedFirst() {
      return refuse.size;
    },
    close: () => (server.closeAllConnections(), server.close()),
  };
}

export async function runMixedLoad(o: MixedLoadOptions) {
  const WORKERS = o.workers ?? 20;
  const pgAdminUrl = o.pgAdminUrl ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const meshSecret = randomBytes(32).toString('hex');
  const tag = `${o.replicas}r${randomBytes(3).toString('hex')}`;
  const dbName = `rampart_scale_${tag}`;
  const admin = new pg.Client({ connectionString: pgAdminUrl });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const dbUrl = new URL(pgAdminUrl);
  dbUrl.pathname = `/${dbName}`;
  // Named, so the connection figure counts the servers' connections only.
  const db = new pg.Pool({ connectionString: dbUrl.toString(), max: 4, application_name: HARNESS_APP });
  db.on('error', () => undefined); // idle clients dropped with the database at the end
  const s3 = await startS3Server();
  const peer = await startManagementPeer();
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
    AGENT_RELAY_SECRET: RELAY_SECRET,
    EMBEDDED_WORKER: 'false',
    SCHEDULE_TICK_SECONDS: '3600',
    STORAGE_S3_ENDPOINT: s3.endpoint,
    STORAGE_S3_BUCKET: s3.bucket,
    STORAGE_S3_ACCESS_KEY_ID: s3.accessKeyId,
    STORAGE_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    SVC_MANAGEMENT_PEER: MANAGEMENT,
    [`SVC_PEER_URL_${MANAGEMENT.toUpperCase()}`]: peer.origin,
    [`SVC_SECRET_TO_${MANAGEMENT.toUpperCase()}`]: randomBytes(32).toString('hex'),
    [`SVC_SECRET_FROM_${CALLER.toUpperCase()}`]: meshSecret,
    [`SVC_PEER_FLOWS_${CALLER.toUpperCase()}`]: 'ping,event_report',
    STAFF_EMAIL_DOMAINS: STAFF_DOMAIN,
    LOG_LEVEL: 'error',
    ...o.env,
  };
  const servers: Server[] = [];
  // A failed or timed-out run still ends its server processes (their leases would otherwise live
  // on in the shared database, and the processes past the test run).
  try {
    for (let i = 0; i < o.replicas; i++) servers.push(spawnServer(env, await freePort()));
    const live = new Set(servers);
    const t0 = performance.now();
    for (const s of servers) await msUntilHealthy(s.port, t0, 120_000);
    proxyHolder.ports = servers.map((s) => s.port);
    const base = proxy.url;

    // Set-up through the proxy, as a person would.
    const email = `scale-${tag}@example.test`;
    const up = await fetch(`${base}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ email, name: 'Scale', password: 'scale bench password 1' }),
    });
    if (!up.ok) throw new Error(`sign-up: ${up.status} ${await up.text()}`);
    const cookie = up.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    // A staff member: signed up like anyone, then verified and granted the role as an operator
    // would (admin CLI); the grant is read on every staff request, so no new session is needed.
    const staffEmail = `staff-${tag}@${STAFF_DOMAIN}`;
    const staffUp = await fetch(`${base}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ email: staffEmail, name: 'Staff', password: 'scale bench password 2' }),
    });
    if (!staffUp.ok) throw new Error(`staff sign-up: ${staffUp.status} ${await staffUp.text()}`);
    const staffCookie = staffUp.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    await db.query(`update "user" set "emailVerified" = true where email = $1`, [staffEmail]);
    await db.query(`insert into platform_roles (user_id, role) select id, 'staff' from "user" where email = $1`, [
      staffEmail,
    ]);
    const csrf = ((await (await fetch(`${base}/api/v1/me`, { headers: { cookie } })).json()) as { csrfToken: string })
      .csrfToken;
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { origin: base, cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
        ...(method === 'GET' ? {} : { body: JSON.stringify(body ?? {}) }),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return text ? (JSON.parse(text) as Record<string, unknown>) : {};
    };
    const org = await fetch(`${base}/api/auth/organization/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base, cookie },
      body: JSON.stringify({ name: 'Scale bench', slug: `scale-${tag}` }),
    });
    const tenantId = ((await org.json()) as { id: string }).id;
    const t = `/api/v1/tenants/${tenantId}`;
    await call('PUT', `${t}/settings`, { dailyScanQuota: 100_000, perAssetConcurrentScans: 8 });
    const secret = (await call('POST', `${t}/webhook-secret`, { graceHours: 0 })).secret as string;
    const assets: string[] = [];
    for (let i = 0; i < WORKERS; i++)
      assets.push(
        ((await call('POST', `${t}/assets`, { kind: 'host', target: `127.0.0.${i + 2}` })).asset as { id: string }).id,
      );
    await db.query(
      `update assets set verification_status = 'bypassed', verified_via = 'bypass', verified_at = now() where tenant_id = $1`,
      [tenantId],
    );
    const scanBody = (i: number) => ({
      assetId: assets[i % assets.length],
      kind: 'port',
      options: { range: { from: openPort, to: openPort + 4 }, timeoutMs: 500 },
    });
    for (let i = 0; i < SCHEDULES; i++)
      await call('POST', `${t}/scan-schedules`, {
        name: `s${i}`,
        ...scanBody(i),
        cron: '0 0 1 1 *',
        timeZone: 'UTC',
        enabled: true,
      });

    const agents: Agent[] = [];
    for (let i = 0; i < WORKERS; i++) {
      const code = (await call('POST', `${t}/worker-enrollments`)).code as string;
      const enrolled = (await (
        await fetch(`${base}/api/public/worker/v1/enroll`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ code, name: `w${i}`, platform: 'linux/x64', version: 'bench' }),
        })
      ).json()) as { token: string };
      agents.push(
        createHostedAgent({
          client: { serverUrl: base, token: enrolled.token, signingSecret: secret },
          scannerSettings: { port: { bannerWaitMs: 200, probeTimeoutMs: 500 } },
          graceMs: 5_000,
        }),
      );
    }
    const agentRuns = agents.map((a) => a.start());

    // Load. Every lane tolerates a failed request (a replica may die under it) and goes on.
    let stop = false;
    const counts = {
      meshOk: 0,
      meshReplayed: 0,
      meshOther: 0,
      relayed: 0,
      relayQueued: 0,
      relayErrors: 0,
      reads: 0,
      staffReads: 0,
      readErrors: 0,
      queued: 0,
      ticks: 0,
      pgPeak: 0,
    };
    /** Database-clock bounds of each tick round: from before the schedules were made due to after every replica answered. */
    const rounds: { from: Date; to: Date }[] = [];
    const dbNow = async () => (await db.query<{ t: Date }>('select clock_timestamp() as t')).rows[0]!.t;
    const relayIds: string[] = [];
    const feeder = (async () => {
      let i = 0;
      while (!stop) {
        const { rows } = await db.query<{ n: number }>(
          `select count(*)::int as n from scans where tenant_id = $1 and status = 'queued'`,
          [tenantId],
        );
        for (let k = rows[0]!.n; k < 40 && !stop; k++) {
          try {
            await call('POST', `${t}/scans`, scanBody(i++));
            counts.queued += 1;
          } catch {
            await sleep(50);
          }
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
        const body: string =
          last && retry
            ? last.body
            : JSON.stringify({
                flow: 'event_report',
                payload: { kind: 'scale', severity: 'info', title: `scale ${id}` },
              });
        const timestamp = formatTimestamp(new Date());
        try {
          const res = await fetch(`${base}${DISPATCH_PATH}`, {
            method: 'POST',
            body,
            headers: {
              'content-type': 'application/json',
              'x-svc-caller': CALLER,
              'x-svc-timestamp': timestamp,
              'x-svc-request-id': id,
              'x-svc-signature': signDispatch(meshSecret, {
                caller: CALLER,
                timestamp,
                method: 'POST',
                path: DISPATCH_PATH,
                body,
              }),
            },
          });
          const json = (await res.json().catch(() => ({}))) as { replayed?: boolean };
          if (res.status === 200 && json.replayed) counts.meshReplayed += 1;
          else if (res.status === 200) counts.meshOk += 1;
          else counts.meshOther += 1;
        } catch {
          counts.meshOther += 1;
        }
        if (!retry) previous = { id, body };
      }
    });
    const relays = Array.from({ length: 4 }, async (_, lane) => {
      let n = 0;
      while (!stop) {
        n += 1;
        try {
          const res = await fetch(`${base}/api/public/svc/relay`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${RELAY_SECRET}` },
            body: JSON.stringify({
              title: `relay ${lane}-${n}`,
              message: 'scale-out notice',
              severity: 'info',
              source: 'scale-load',
            }),
          });
          const json = (await res.json().catch(() => ({}))) as { ok?: boolean; requestId?: string; queued?: boolean };
          if (res.status === 200 && json.ok && json.requestId) {
            relayIds.push(json.requestId);
            counts.relayed += 1;
            if (json.queued) counts.relayQueued += 1;
          } else counts.relayErrors += 1;
        } catch {
          counts.relayErrors += 1;
        }
        await sleep(20);
      }
    });
    const cron = (async () => {
      while (!stop) {
        // Millisecond precision, as the server writes it: the tick claims a schedule by comparing
        // next_run_at with the JavaScript Date it read.
        const from = await dbNow();
        await db.query(
          `update scan_schedules set next_run_at = date_trunc('milliseconds', now()) - interval '1 second' where tenant_id = $1`,
          [tenantId],
        );
        await Promise.all(
          [...live].map((s) =>
            fetch(`http://127.0.0.1:${s.port}/api/public/hooks/scan-schedules-tick`, {
              method: 'POST',
              headers: { authorization: `Bearer ${env.CRON_SECRET}` },
            })
              .then((r) => r.arrayBuffer())
              .catch(() => undefined),
          ),
        );
        rounds.push({ from, to: await dbNow() });
        counts.ticks += 1;
        await sleep(2_000);
      }
    })();
    const staffPaths = [
      '/api/v1/staff/mesh/received-events?limit=50',
      '/api/v1/staff/mesh/outbox?limit=50',
      '/api/v1/staff/audit-log?limit=50',
    ];
    const readers = Array.from({ length: 4 }, async (_, lane) => {
      let n = 0;
      while (!stop) {
        try {
          if (lane < 2) {
            await call('GET', `${t}/scans?limit=50`);
            counts.reads += 1;
          } else {
            const res = await fetch(`${base}${staffPaths[n++ % staffPaths.length]}`, {
              headers: { cookie: staffCookie },
            });
            const text = await res.text();
            if (!res.ok) throw new Error(`staff read: ${res.status} ${text}`);
            counts.staffReads += 1;
          }
        } catch {
          counts.readErrors += 1;
          await sleep(50);
        }
      }
    });
    const sampler = (async () => {
      while (!stop) {
        const { rows } = await admin.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity where datname = $1 and application_name <> $2`,
          [dbName, HARNESS_APP],
        );
        counts.pgPeak = Math.max(counts.pgPeak, rows[0]!.n);
        await sleep(500);
      }
    })();

    const succeededAt = async () =>
      (
        await db.query<{ n: number }>(
          `select count(*)::int as n from scans where tenant_id = $1 and status = 'succeeded' and parent_id is null`,
          [tenantId],
        )
      ).rows[0]!.n;
    const startSucceeded = await succeededAt();
    const started = performance.now();
    let killed: { at: number; pid: number | undefined } | null = null;
    if (o.killAtSeconds !== undefined && servers.length > 1) {
      await sleep(o.killAtSeconds * 1000);
      const victim = servers[1]!;
      victim.child.kill('SIGKILL');
      live.delete(victim);
      // The proxy notices refused connections by itself; taking it out of rotation is what a
      // health-checking load balancer does a moment later.
      proxyHolder.ports = [...live].map((s) => s.port);
      killed = { at: round((performance.now() - started) / 1000, 1), pid: victim.child.pid };
      await sleep(Math.max(0, o.seconds * 1000 - (performance.now() - started)));
    } else await sleep(o.seconds * 1000);
    const window = (performance.now() - started) / 1000;
    const scansInWindow = (await succeededAt()) - startSucceeded;
    stop = true;
    await Promise.all([feeder, cron, sampler, ...mesh, ...relays, ...readers]);

    // Drain: every queued scan finishes and the outbox empties (an expired lease or claim of a
    // killed replica is taken over after WORKER_LEASE_SECONDS / SVC_OUTBOX_LEASE_MS).
    const drainStarted = performance.now();
    let pending = { scans: -1, outbox: -1 };
    for (let i = 0; i < 240; i++) {
      const s = (
        await db.query<{ n: number }>(
          `select count(*)::int as n from scans where tenant_id = $1 and status not in ('succeeded', 'failed', 'cancelled')`,
          [tenantId],
        )
      ).rows[0]!.n;
      const ob = (await db.query<{ n: number }>(`select count(*)::int as n from svc_outbox where status = 'pending'`))
        .rows[0]!.n;
      pending = { scans: s, outbox: ob };
      if (s === 0 && ob === 0) break;
      await sleep(500);
    }
    const drainSeconds = round((performance.now() - drainStarted) / 1000, 1);
    await Promise.all(agents.map((a) => a.stop()));
    await Promise.all(agentRuns);

    const one = async (q: string, params: unknown[] = [tenantId]) =>
      (await db.query(q, params)).rows[0] as Record<string, number>;
    const scans =
      await one(`select count(*)::int as total, count(*) filter (where status = 'succeeded')::int as succeeded, count(*) filter (where status = 'failed')::int as failed,
      count(*) filter (where status not in ('succeeded', 'failed', 'cancelled'))::int as unfinished, count(*) filter (where attempts > 1)::int as leased_more_than_once from scans where tenant_id = $1`);
    const uploads = await one(
      `select count(*)::int as twice from (select scan_id from report_uploads where tenant_id = $1 and status = 'finalized' group by scan_id having count(*) > 1) x`,
    );
    const ingests = await one(
      `select count(*)::int as twice from (select scan_id from report_ingestions where tenant_id = $1 group by scan_id having count(*) > 1) x`,
    );
    const perSchedule = (
      await db.query<{ n: number }>(
        `select count(s.id)::int as n from scan_schedules sc left join scans s on s.schedule_id = sc.id where sc.tenant_id = $1 group by sc.id`,
        [tenantId],
      )
    ).rows.map((r) => r.n);
    // Each scheduled scan belongs to the tick round whose window holds its creation time.
    const scheduled = (
      await db.query<{ schedule_id: string; created_at: Date }>(
        `select schedule_id, created_at from scans where tenant_id = $1 and schedule_id is not null`,
        [tenantId],
      )
    ).rows;
    const perRound = new Map<string, number>();
    let scheduledOutsideRounds = 0;
    for (const s of scheduled) {
      const r = rounds.findIndex((w) => s.created_at >= w.from && s.created_at <= w.to);
      if (r < 0) scheduledOutsideRounds += 1;
      else perRound.set(`${s.schedule_id}/${r}`, (perRound.get(`${s.schedule_id}/${r}`) ?? 0) + 1);
    }
    const scheduleRoundDuplicates = [...perRound.values()].filter((n) => n > 1).length;
    const received = await one(
      `select count(*)::int as rows, count(distinct request_id)::int as distinct_ids from svc_received_events where caller = $1`,
      [CALLER],
    );
    const outbox = await one(
      `select count(*)::int as total, count(*) filter (where status = 'delivered')::int as delivered, count(*) filter (where status = 'failed')::int as failed,
      count(*) filter (where status = 'pending')::int as pending from svc_outbox where peer = $1`,
      [MANAGEMENT],
    );
    // Every mesh request id the load sent at least once was executed exactly once.
    const meshExecutions = await one(
      `select count(*)::int as n from svc_idempotency where caller = $1 and status = 'completed'`,
      [CALLER],
    );

    await Promise.all([...live].map((s) => s.stop()));
    proxy.close();
    peer.close();
    listener.close();
    await s3.close();
    await db.end();
    await admin.query(`drop database ${dbName} with (force)`);
    await admin.end();

    const lostRelays = relayIds.filter((id) => !peer.executed.has(id));
    const rate = (n: number) => round(n / window, 1);
    const result = {
      replicas: o.replicas,
      seconds: round(window, 1),
      killed,
      drainSeconds,
      pendingAfterDrain: pending,
      scansSucceededPerSecond: rate(scansInWindow),
      meshCallsPerSecond: rate(counts.meshOk + counts.meshReplayed),
      relaysPerSecond: rate(counts.relayed),
      readsPerSecond: rate(counts.reads + counts.staffReads),
      operationsPerSecond: rate(
        scansInWindow + counts.meshOk + counts.meshReplayed + counts.relayed + counts.reads + counts.staffReads,
      ),
      pgConnectionsPeak: counts.pgPeak,
      scans,
      scansFinalizedTwice: uploads.twice ?? 0,
      scansIngestedTwice: ingests.twice ?? 0,
      leaseAnswersLostWithReplica: proxy.lostLeaseAnswers,
      mesh: {
        executed: counts.meshOk,
        replayed: counts.meshReplayed,
        other: counts.meshOther,
        storedRows: received.rows ?? 0,
        distinctIds: received.distinct_ids ?? 0,
        completedKeys: meshExecutions.n ?? 0,
      },
      relay: {
        accepted: counts.relayed,
        queuedForOutbox: counts.relayQueued,
        errors: counts.relayErrors,
        peerRefusedFirst: peer.refusedFirst,
        executedAtPeer: peer.executed.size,
        resentToPeer: peer.resent,
        lost: lostRelays.length,
      },
      outbox,
      ticks: counts.ticks,
      scansPerSchedule: { min: Math.min(...perSchedule), max: Math.max(...perSchedule) },
      scheduleRoundDuplicates,
      scheduledOutsideRounds,
      reads: { tenant: counts.reads, staff: counts.staffReads, errors: counts.readErrors },
    };
    return { ...result, violations: violationsOf(result) };
  } finally {
    for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
  }
}

/** The scale-out invariants; an empty list means the run lost and duplicated nothing. */
function violationsOf(r: LoadFigures): string[] {
  const v: string[] = [];
  const at = `${r.replicas} replicas${r.killed ? ' (one killed)' : ''}`;
  // A lease granted by a replica that died before answering is re-leased after it expires; any
  // other second lease is a double lease.
  if (r.scans.leased_more_than_once! > (r.killed ? r.leaseAnswersLostWithReplica : 0))
    v.push(
      `${at}: ${r.scans.leased_more_than_once} scans leased more than once (${r.leaseAnswersLostWithReplica} lease answers lost with a replica)`,
    );
  if (r.scansFinalizedTwice || r.scansIngestedTwice) v.push(`${at}: a scan finalized or ingested twice`);
  if (r.scans.unfinished || r.scans.failed)
    v.push(`${at}: ${r.scans.unfinished} scans never finished, ${r.scans.failed} failed`);
  if (r.mesh.storedRows !== r.mesh.distinctIds)
    v.push(`${at}: mesh request ids stored ${r.mesh.storedRows} times for ${r.mesh.distinctIds} ids`);
  if (r.mesh.completedKeys !== r.mesh.distinctIds)
    v.push(`${at}: ${r.mesh.completedKeys} completed idempotency keys for ${r.mesh.distinctIds} executed ids`);
  if (r.relay.lost) v.push(`${at}: ${r.relay.lost} accepted relay notices never reached the management peer`);
  if (r.outbox.pending || r.outbox.failed)
    v.push(`${at}: outbox rows pending ${r.outbox.pending}, failed ${r.outbox.failed}`);
  if (r.relay.queuedForOutbox === 0)
    v.push(`${at}: no relay notice went through the outbox (the load did not exercise it)`);
  // Each tick round makes every schedule due once: a second scan of a schedule in one round is a
  // duplicate dispatch; a schedule never dispatched means the ticks did nothing.
  if (r.scheduleRoundDuplicates)
    v.push(`${at}: ${r.scheduleRoundDuplicates} (schedule, tick round) pairs dispatched more than once`);
  if (r.scheduledOutsideRounds)
    v.push(`${at}: ${r.scheduledOutsideRounds} scheduled scans created outside any tick round`);
  if (r.ticks > 0 && r.scansPerSchedule.min < 1)
    v.push(`${at}: a schedule was never dispatched in ${r.ticks} tick rounds`);
  if (r.reads.tenant === 0 || r.reads.staff === 0)
    v.push(`${at}: the readers did not read (tenant ${r.reads.tenant}, staff ${r.reads.staff})`);
  return v;
}
