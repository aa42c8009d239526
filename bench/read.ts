// npm run bench:read — an authenticated tenant-scoped read (list members) under 32 concurrent
// clients, as p50/p99 and as a ratio to GET /healthz measured in the same run (alternating
// rounds), on the embedded PGlite default and on PostgreSQL. Prints JSON.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { ensurePgliteTemplate } from '../src/db/pglite-template.ts';
import { freePort, median, msUntilHealthy, round, spawnServer } from './lib.ts';

const CONNECTIONS = 32;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function seed(base: string): Promise<{ cookie: string; tenantId: string }> {
  const headers = { 'content-type': 'application/json', origin: base };
  const email = `bench-${Date.now()}@example.test`;
  const up = await fetch(`${base}/api/auth/sign-up/email`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ email, name: 'Bench', password: 'bench password 123' }),
  });
  if (!up.ok) throw new Error(`sign-up failed: ${up.status} ${await up.text()}`);
  const cookie = up.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const org = await fetch(`${base}/api/auth/organization/create`, {
    method: 'POST',
    headers: { ...headers, cookie },
    body: JSON.stringify({ name: 'Bench Co', slug: `bench-${Date.now()}` }),
  });
  if (!org.ok) throw new Error(`create tenant failed: ${org.status}`);
  const tenantId = ((await org.json()) as { id: string }).id;
  // A realistic team: the owner plus pending invitations to list.
  for (let i = 0; i < 5; i++) {
    await fetch(`${base}/api/auth/organization/invite-member`, {
      method: 'POST',
      headers: { ...headers, cookie },
      body: JSON.stringify({
        email: `teammate${i}-${Date.now()}@example.test`,
        role: 'member',
        organizationId: tenantId,
      }),
    });
  }
  return { cookie, tenantId };
}

interface Round {
  p50: number;
  p99: number;
  rps: number;
  non2xx: number;
}

async function load(url: string, headers: Record<string, string>): Promise<Round> {
  const r = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers });
  return { p50: r.latency.p50, p99: r.latency.p99, rps: r.requests.average, non2xx: r.non2xx + r.errors };
}

async function measure(kind: 'pglite' | 'postgres'): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rampart-bench-read-'));
  let dbName: string | null = null;
  const env: Record<string, string> = { DATA_DIR: dataDir };
  if (kind === 'postgres') {
    dbName = `rampart_bench_${process.pid}`;
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    await admin.query(`drop database if exists ${dbName}`);
    await admin.query(`create database ${dbName}`);
    await admin.end();
    env.DATABASE_URL = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${dbName}`);
    env.DATABASE_POOL_MAX = '16';
  }
  const port = await freePort();
  const server = spawnServer(env, port);
  try {
    await msUntilHealthy(port, performance.now());
    const base = `http://127.0.0.1:${port}`;
    const { cookie, tenantId } = await seed(base);
    const membersUrl = `${base}/api/v1/tenants/${tenantId}/members`;
    const check = await fetch(membersUrl, { headers: { cookie } });
    if (check.status !== 200) throw new Error(`members read failed: ${check.status}`);
    await load(membersUrl, { cookie }); // warm-up, discarded
    const health: Round[] = [];
    const members: Round[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      health.push(await load(`${base}/healthz`, {}));
      members.push(await load(membersUrl, { cookie }));
    }
    const summary = (rs: Round[]) => ({
      p50Ms: median(rs.map((r) => r.p50)),
      p99Ms: median(rs.map((r) => r.p99)),
      requestsPerSecond: round(median(rs.map((r) => r.rps)), 0),
      non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
    });
    const h = summary(health);
    const m = summary(members);
    return {
      database: kind,
      healthz: h,
      listMembers: m,
      ratio: {
        p50: round(m.p50Ms / Math.max(h.p50Ms, 1)),
        p99: round(m.p99Ms / Math.max(h.p99Ms, 1)),
        throughput: round(m.requestsPerSecond / h.requestsPerSecond, 3),
      },
    };
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    if (dbName) {
      const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
      await admin.connect();
      await admin.query(`drop database if exists ${dbName}`);
      await admin.end();
    }
  }
}

await ensurePgliteTemplate();
const targets = (process.env.BENCH_DATABASES ?? 'pglite,postgres').split(',') as ('pglite' | 'postgres')[];
const results = [];
for (const kind of targets) results.push(await measure(kind));
console.log(
  JSON.stringify(
    {
      bench: 'read',
      connections: CONNECTIONS,
      secondsPerRound: SECONDS,
      rounds: ROUNDS,
      node: process.version,
      results,
    },
    null,
    2,
  ),
);
