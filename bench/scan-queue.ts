// npm run bench:scan-queue — 1,000 scan-queue requests fired at once across 100 assets
// (10 tenants × 10 verified assets, 10 requests per asset, a quarter of them chunked into 4) at
// the real server on PostgreSQL, in two phases per round:
//   throughput: limits that do not bind (quota 100,000, 64 per asset): every request must be
//               admitted; the figure is the queue rate in scans per second.
//   contention: limits that bind (five tenants with a quota of 30 and 5 per asset, five with a
//               quota of 1,000 and 3 per asset): exactly 300 admitted; the database is then read
//               directly for quota or per-asset violations (target: zero).
// Fresh tenants every phase (tenants are created through /api/auth, limited to 300 calls a minute:
// with BENCH_TENANTS=100 run one round). BENCH_TENANTS (10; the 100 assets are shared out among them),
// BENCH_ROUNDS (3), BENCH_PG_ADMIN_URL, BENCH_POOL_MAX (20). Prints JSON.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, median, msUntilHealthy, round, spawnServer, type Server } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const POOL_MAX = Number(process.env.BENCH_POOL_MAX ?? 20);
const TENANTS = Number(process.env.BENCH_TENANTS ?? 10);
const ASSETS_PER_TENANT = 100 / TENANTS;
if (!Number.isInteger(ASSETS_PER_TENANT) || TENANTS < 2)
  throw new Error('BENCH_TENANTS must divide 100 (2, 4, 5, 10, 20, 25, 50, 100)');
const REQUESTS = 1000;
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error('BENCH_ROUNDS must be a positive integer');

interface Session {
  base: string;
  cookie: string;
  csrf: string;
}

async function call(
  s: Session,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${s.base}${path}`, {
    method,
    headers: {
      origin: s.base,
      cookie: s.cookie,
      'x-csrf-token': s.csrf,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function must(
  s: Session,
  method: string,
  path: string,
  body: unknown,
  expected: number,
): Promise<Record<string, unknown>> {
  const r = await call(s, method, path, body);
  if (r.status !== expected) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.json)}`);
  return r.json;
}

async function signUp(base: string): Promise<Session> {
  const email = `bench-scans-${process.pid}-${Date.now()}@example.test`;
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
  const me = (await (await fetch(`${base}/api/v1/me`, { headers: { cookie } })).json()) as { csrfToken: string };
  return { base, cookie, csrf: me.csrfToken };
}

interface Tenant {
  id: string;
  assets: string[];
  quota: number;
  perAsset: number;
}

async function makeTenants(
  s: Session,
  admin: pg.Client,
  tag: string,
  limits: (i: number) => { quota: number; perAsset: number },
  count = TENANTS,
): Promise<Tenant[]> {
  const tenants: Tenant[] = [];
  for (let i = 0; i < count; i++) {
    const org = await fetch(`${s.base}/api/auth/organization/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: s.base, cookie: s.cookie },
      body: JSON.stringify({ name: `Bench ${tag} ${i}`, slug: `bench-${tag}-${i}-${Date.now().toString(36)}` }),
    });
    if (!org.ok) throw new Error(`create tenant failed: ${org.status} ${await org.text()}`);
    const id = ((await org.json()) as { id: string }).id;
    const { quota, perAsset } = limits(i);
    await must(
      s,
      'PUT',
      `/api/v1/tenants/${id}/settings`,
      { dailyScanQuota: quota, perAssetConcurrentScans: perAsset },
      200,
    );
    const assets: string[] = [];
    for (let a = 0; a < ASSETS_PER_TENANT; a++) {
      const j = await must(
        s,
        'POST',
        `/api/v1/tenants/${id}/assets`,
        { kind: 'host', target: `h${a}.t${i}.${tag}.bench.example.test` },
        201,
      );
      assets.push((j.asset as { id: string }).id);
    }
    tenants.push({ id, assets, quota, perAsset });
  }
  // Ownership proof is not what is measured: mark the assets verified directly.
  await admin.query(
    `update assets set verification_status = 'verified', verified_via = 'txt', verified_at = now() where tenant_id = any($1::uuid[])`,
    [tenants.map((t) => t.id)],
  );
  return tenants;
}

const BODIES = [
  (assetId: string) => ({ assetId, kind: 'port', chunkCount: 4 }),
  (assetId: string) => ({ assetId, kind: 'template' }),
  (assetId: string) => ({ assetId, kind: 'edge' }),
  (assetId: string) => ({ assetId, kind: 'port', options: { topPorts: 100 } }),
];

interface Burst {
  seconds: number;
  admitted: number;
  refused: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
}

/** Fires all requests at once; request i goes to asset i mod 100. */
async function burst(s: Session, tenants: Tenant[]): Promise<Burst> {
  const targets = tenants.flatMap((t) => t.assets.map((a) => ({ tenantId: t.id, assetId: a })));
  const started = performance.now();
  const results = await Promise.all(
    Array.from({ length: REQUESTS }, async (_, i) => {
      const { tenantId, assetId } = targets[i % targets.length]!;
      const t0 = performance.now();
      const r = await call(s, 'POST', `/api/v1/tenants/${tenantId}/scans`, BODIES[i % BODIES.length]!(assetId));
      return { status: r.status, code: r.status === 201 ? null : String(r.json.error), ms: performance.now() - t0 };
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const refused: Record<string, number> = {};
  for (const r of results) if (r.code) refused[`${r.status} ${r.code}`] = (refused[`${r.status} ${r.code}`] ?? 0) + 1;
  const ms = results.map((r) => r.ms).sort((a, b) => a - b);
  return {
    seconds,
    admitted: results.filter((r) => r.status === 201).length,
    refused,
    p50Ms: round(ms[Math.floor(ms.length * 0.5)]!, 1),
    p99Ms: round(ms[Math.floor(ms.length * 0.99)]!, 1),
  };
}

/** Reads the database directly: scans per tenant against its quota, unfinished scans per asset against its limit. */
async function violations(db: pg.Client, tenants: Tenant[]) {
  const ids = tenants.map((t) => t.id);
  const quota = await db.query<{ tenant_id: string; n: number; quota: number }>(
    `select s.tenant_id, count(*)::int as n, ts.daily_scan_quota as quota from scans s join tenant_settings ts on ts.tenant_id = s.tenant_id
      where s.tenant_id = any($1::uuid[]) and s.parent_id is null and s.quota_day is not null group by s.tenant_id, ts.daily_scan_quota`,
    [ids],
  );
  const perAsset = await db.query<{ asset_id: string; n: number; lim: number }>(
    `select s.asset_id, count(*)::int as n, ts.per_asset_concurrent_scans as lim from scans s join tenant_settings ts on ts.tenant_id = s.tenant_id
      where s.tenant_id = any($1::uuid[]) and s.parent_id is null and s.status not in ('succeeded', 'failed', 'cancelled') group by s.asset_id, ts.per_asset_concurrent_scans`,
    [ids],
  );
  const chunks = await db.query<{ parents: number; chunks: number }>(
    `select count(distinct parent_id)::int as parents, count(*)::int as chunks from scans where tenant_id = any($1::uuid[]) and parent_id is not null`,
    [ids],
  );
  return {
    scansInDatabase: quota.rows.reduce((a, r) => a + r.n, 0),
    quotaViolations: quota.rows.filter((r) => r.n > r.quota).length,
    perAssetViolations: perAsset.rows.filter((r) => r.n > r.lim).length,
    chunkedParents: chunks.rows[0]!.parents,
    chunks: chunks.rows[0]!.chunks,
  };
}

async function main(): Promise<Record<string, unknown>> {
  const dbName = `rampart_bench_scans_${process.pid}`;
  const databaseUrl = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${dbName}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'rampart-bench-scans-'));
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`drop database if exists ${dbName}`);
  await admin.query(`create database ${dbName}`);
  let server: Server | null = null;
  const db = new pg.Client({ connectionString: databaseUrl });
  try {
    const port = await freePort();
    server = spawnServer({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, DATABASE_POOL_MAX: String(POOL_MAX) }, port);
    await msUntilHealthy(port, performance.now());
    await db.connect();
    const session = await signUp(`http://127.0.0.1:${port}`);

    // Warm-up (discarded): a burst over two tenants' assets.
    const warm = await makeTenants(session, db, 'warm', () => ({ quota: 100_000, perAsset: 64 }), 2);
    await burst(session, warm);

    const throughput: (Burst & Awaited<ReturnType<typeof violations>>)[] = [];
    const contention: (Burst & Awaited<ReturnType<typeof violations>> & { expected: number })[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const free = await makeTenants(session, db, `free${r}`, () => ({ quota: 100_000, perAsset: 64 }));
      const b1 = await burst(session, free);
      throughput.push({ ...b1, ...(await violations(db, free)) });

      const tight = await makeTenants(session, db, `tight${r}`, (i) =>
        i < TENANTS / 2 ? { quota: 30, perAsset: 5 } : { quota: 1000, perAsset: 3 },
      );
      const b2 = await burst(session, tight);
      // Quota tenants: 30 each (their 10 assets could take 50); limit tenants: 10 assets × 3.
      const expected = tight.reduce(
        (a, t) =>
          a + Math.min(t.quota, ASSETS_PER_TENANT * Math.min(t.perAsset, REQUESTS / (TENANTS * ASSETS_PER_TENANT))),
        0,
      );
      contention.push({ ...b2, ...(await violations(db, tight)), expected });
    }

    const rates = throughput.map((b) => b.admitted / b.seconds);
    const totalViolations = [...throughput, ...contention].reduce(
      (a, b) => a + b.quotaViolations + b.perAssetViolations,
      0,
    );
    return {
      bench: 'scan-queue',
      node: process.version,
      database: 'postgres',
      poolMax: POOL_MAX,
      requestsPerBurst: REQUESTS,
      tenants: TENANTS,
      assets: TENANTS * ASSETS_PER_TENANT,
      rounds: ROUNDS,
      queueRate: {
        scansPerSecond: round(median(rates), 0),
        p50Ms: median(throughput.map((b) => b.p50Ms)),
        p99Ms: median(throughput.map((b) => b.p99Ms)),
        samples: throughput.map((b) => ({
          scansPerSecond: round(b.admitted / b.seconds, 0),
          seconds: round(b.seconds, 3),
          admitted: b.admitted,
          refused: b.refused,
          scansInDatabase: b.scansInDatabase,
          chunks: b.chunks,
        })),
      },
      contention: contention.map((b) => ({
        admitted: b.admitted,
        expected: b.expected,
        scansInDatabase: b.scansInDatabase,
        refused: b.refused,
        decisionsPerSecond: round(REQUESTS / b.seconds, 0),
        quotaViolations: b.quotaViolations,
        perAssetViolations: b.perAssetViolations,
      })),
      violations: totalViolations,
      meets: {
        zeroViolations: totalViolations === 0,
        allAdmittedWhenLimitsDoNotBind: throughput.every(
          (b) => b.admitted === REQUESTS && b.scansInDatabase === REQUESTS,
        ),
        exactAdmissionsUnderContention: contention.every(
          (b) => b.admitted === b.expected && b.scansInDatabase === b.expected,
        ),
      },
    };
  } finally {
    await db.end().catch(() => {});
    if (server) await server.stop();
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
  process.stderr.write(`bench:scan-queue failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
}
