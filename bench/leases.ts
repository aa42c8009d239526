// npm run bench:leases — 100 concurrent polling workers against the real server on PostgreSQL.
//
// Setup (not measured): 10 tenants, each with a signing secret, 10 enrolled workers, 100 verified
// assets and 1,000 queued port scans (inserted directly, stamped on today's quota). The quota is
// then lowered to 800 a tenant, so 200 of each tenant's scans must stay queued at lease time.
// Measured: 100 workers (each a loop of signed `lease` calls over HTTP keep-alive, like the real
// CLI, on node:http) lease as fast as they can until nothing is left; the figure is leases per second. Then the
// database is read for double leases (a scan leased twice, or two leases recorded for one scan)
// and quota violations (a tenant with more than its quota leased, or not its earliest scans).
// BENCH_ROUNDS (3), BENCH_REPLICAS (1: one server; 2 splits the workers over two), BENCH_PG_ADMIN_URL,
// BENCH_POOL_MAX (20), BENCH_NODE_OPTIONS (for the servers, e.g. --cpu-prof). Prints JSON.
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, median, msUntilHealthy, round, spawnServer, type Server } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const REPLICAS = Number(process.env.BENCH_REPLICAS ?? 1);
const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const POOL_MAX = Number(process.env.BENCH_POOL_MAX ?? 20);
const TENANTS = 10;
const WORKERS_PER_TENANT = 10;
const ASSETS_PER_TENANT = 100;
const SCANS_PER_TENANT = 1000;
const QUOTA = 800;

interface Worker {
  tenantId: string;
  token: string;
  secret: string;
  base: string;
}

async function json(res: Response): Promise<Record<string, unknown>> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${res.status} ${text}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

async function setupTenants(base: string, admin: pg.Client, tag: string): Promise<Worker[]> {
  const email = `bench-leases-${tag}@example.test`;
  const up = await fetch(`${base}/api/auth/sign-up/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify({ email, name: 'Bench', password: 'bench password 123' }),
  });
  if (!up.ok) throw new Error(`sign-up failed: ${up.status} ${await up.text()}`);
  const cookie = up.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const csrf = ((await json(await fetch(`${base}/api/v1/me`, { headers: { cookie } }))) as { csrfToken: string })
    .csrfToken;
  const call = async (method: string, path: string, body?: unknown) =>
    json(
      await fetch(`${base}${path}`, {
        method,
        headers: { origin: base, cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
        body: JSON.stringify(body ?? {}),
      }),
    );
  const workers: Worker[] = [];
  for (let i = 0; i < TENANTS; i++) {
    const org = await fetch(`${base}/api/auth/organization/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base, cookie },
      body: JSON.stringify({ name: `Lease bench ${i}`, slug: `lease-bench-${tag}-${i}` }),
    });
    const tenantId = (await json(org)).id as string;
    await call('PUT', `/api/v1/tenants/${tenantId}/settings`, { dailyScanQuota: 100_000, perAssetConcurrentScans: 64 });
    const secret = (await call('POST', `/api/v1/tenants/${tenantId}/webhook-secret`, { graceHours: 0 }))
      .secret as string;
    for (let k = 0; k < WORKERS_PER_TENANT; k++) {
      const code = (await call('POST', `/api/v1/tenants/${tenantId}/worker-enrollments`)).code as string;
      const enrolled = await json(
        await fetch(`${base}/api/public/worker/v1/enroll`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ code, name: `bench-${i}-${k}`, platform: 'linux/x64', version: 'bench' }),
        }),
      );
      workers.push({ tenantId, token: enrolled.token as string, secret, base });
    }
    // Assets and scans straight into the database: their creation is not what is measured.
    await admin.query(
      `insert into assets (tenant_id, kind, name, target, verification_status, verified_via, verified_at, last_checked_at, verification_token)
       select $1, 'host', 'h' || g, 'h' || g || '.t${i}.${tag}.bench.example.test', 'verified', 'txt', now(), now(), md5(random()::text)
         from generate_series(1, ${ASSETS_PER_TENANT}) g`,
      [tenantId],
    );
    await admin.query(
      `insert into scans (tenant_id, asset_id, kind, options, quota_day, created_at)
       select $1, a.id, 'port', '{"range":{"from":1,"to":1024}}', (now() at time zone 'utc')::date, now() + make_interval(secs => g * 0.001)
         from generate_series(1, ${SCANS_PER_TENANT}) g
         join lateral (select id from assets where tenant_id = $1 order by id offset (g % ${ASSETS_PER_TENANT}) limit 1) a on true`,
      [tenantId],
    );
    await admin.query(`update tenant_settings set daily_scan_quota = ${QUOTA} where tenant_id = $1`, [tenantId]);
  }
  return workers;
}

// The load generator shares the machine's two cores with the server and PostgreSQL: plain
// node:http with keep-alive costs it far less CPU per call than fetch.
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function lease(w: Worker): Promise<{ scanId: string } | null> {
  const body = JSON.stringify({
    sentAt: new Date().toISOString(),
    nonce: randomBytes(16).toString('base64url'),
    kinds: ['port'],
    waitSeconds: 0,
  });
  const url = new URL('/api/public/worker/v1/lease', w.base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          authorization: `Bearer ${w.token}`,
          'x-rampart-signature': `sha256=${createHmac('sha256', w.secret).update(body).digest('hex')}`,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) return reject(new Error(`${res.statusCode} ${text}`));
          resolve((JSON.parse(text) as { lease: { scanId: string } | null }).lease);
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const transactions = async (db: pg.Client) =>
  Number(
    (
      await db.query<{ n: string }>(
        `select pg_stat_force_next_flush(), (select xact_commit + xact_rollback from pg_stat_database where datname = current_database())::text as n`,
      )
    ).rows[0]!.n,
  );

async function round1(bases: string[], admin: pg.Client, tag: string) {
  const workers = (await setupTenants(bases[0]!, admin, tag)).map((w, i) => ({ ...w, base: bases[i % bases.length]! }));
  await new Promise((r) => setTimeout(r, 1100));
  const xacts0 = await transactions(admin);
  const leased: string[] = [];
  let errors = 0;
  const t0 = performance.now();
  await Promise.all(
    workers.map(async (w) => {
      let empty = 0;
      while (empty < 2) {
        try {
          const l = await lease(w);
          if (l) {
            leased.push(l.scanId);
            empty = 0;
          } else empty += 1;
        } catch {
          errors += 1;
        }
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  // The servers flush their statistics within a second.
  await new Promise((r) => setTimeout(r, 1100));
  const xacts = (await transactions(admin)) - xacts0;
  const distinct = new Set(leased).size;
  const { rows } = await admin.query<{ tenant_id: string; leased: number; beyond: number; attempts_gt1: number }>(
    `with ranked as (
       select s.tenant_id, s.status, s.attempts, row_number() over (partition by s.tenant_id order by s.created_at, s.id) as rank
         from scans s join organization o on o.id = s.tenant_id where o.slug like $1)
     select tenant_id, count(*) filter (where status = 'leased')::int as leased,
            count(*) filter (where status = 'leased' and rank > ${QUOTA})::int as beyond,
            count(*) filter (where attempts > 1)::int as attempts_gt1
       from ranked group by tenant_id`,
    [`lease-bench-${tag}-%`],
  );
  const quotaViolations = rows.reduce((n, r) => n + Math.max(0, r.leased - QUOTA) + r.beyond, 0);
  return {
    leasesPerSecond: round(leased.length / seconds, 0),
    seconds: round(seconds, 3),
    leased: leased.length,
    expected: TENANTS * QUOTA,
    // Every statement of the hot path is its own transaction: this is round trips to the database.
    transactionsPerLeaseCall: round(xacts / (leased.length + workers.length * 2), 2),
    doubleLeases: leased.length - distinct + rows.reduce((n, r) => n + r.attempts_gt1, 0),
    quotaViolations,
    errors,
  };
}

async function main() {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  const dbName = `rampart_bench_leases_${process.pid}`;
  await admin.query(`drop database if exists ${dbName}`);
  await admin.query(`create database ${dbName}`);
  const databaseUrl = new URL(PG_ADMIN_URL);
  databaseUrl.pathname = `/${dbName}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'rampart-bench-leases-'));
  const servers: Server[] = [];
  const db = new pg.Client({ connectionString: databaseUrl.toString() });
  try {
    const bases: string[] = [];
    for (let i = 0; i < REPLICAS; i++) {
      const port = await freePort();
      // Replicas share the database and the encryption key; the first one migrates.
      servers.push(
        spawnServer(
          {
            DATA_DIR: join(dataDir, `r${i}`),
            DATABASE_URL: databaseUrl.toString(),
            DATABASE_POOL_MAX: String(POOL_MAX),
            APP_ENCRYPTION_KEY: 'CQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQk=',
            AUTH_SECRET: 'bench-auth-secret-bench-auth-secret-0123',
            ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
          },
          port,
        ),
      );
      await msUntilHealthy(port, performance.now());
      bases.push(`http://127.0.0.1:${port}`);
    }
    await db.connect();
    const rounds = [];
    for (let r = 0; r < ROUNDS; r++) rounds.push(await round1(bases, db, `${process.pid}${r}`));
    const violations = rounds.reduce((n, r) => n + r.doubleLeases + r.quotaViolations, 0);
    return {
      bench: 'leases',
      database: 'postgresql',
      replicas: REPLICAS,
      workers: TENANTS * WORKERS_PER_TENANT,
      scansQueued: TENANTS * SCANS_PER_TENANT,
      leasesPerSecond: round(median(rounds.map((r) => r.leasesPerSecond)), 0),
      rounds,
      meets: {
        atLeast500PerSecond: median(rounds.map((r) => r.leasesPerSecond)) >= 500,
        zeroDoubleLeases: rounds.every((r) => r.doubleLeases === 0),
        zeroQuotaViolations: rounds.every((r) => r.quotaViolations === 0),
        allLeased: rounds.every((r) => r.leased === r.expected),
      },
      violations,
    };
  } finally {
    await db.end().catch(() => {});
    for (const s of servers) await s.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await admin
      .query(`drop database if exists ${dbName} with (force)`)
      .catch((err: unknown) => process.stderr.write(`bench: could not drop ${dbName}: ${String(err)}\n`));
    await admin.end();
  }
}

try {
  console.log(JSON.stringify(await main(), null, 2));
} catch (err) {
  process.stderr.write(`bench:leases failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
}
