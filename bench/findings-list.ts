// npm run bench:findings — the findings list over 100,000 findings of one tenant on PostgreSQL,
// filtered and paginated, through HTTP. The real server is spawned on a fresh database; a user,
// a tenant and ten assets are created through the API; the findings are inserted with one
// generate_series statement (a realistic mix of severities, statuses, scanners, CWE/CVE ids and
// dates), then VACUUM ANALYZE. Each filter combination is read page after page along the keyset
// cursor (BENCH_PAGES pages of 50), by BENCH_CONCURRENCY clients at once, BENCH_ROUNDS times after
// one warm-up round; every response is checked. Target: p95 ≤ 100 ms. Prints JSON.
// BENCH_FINDINGS (100000), BENCH_CONCURRENCY (4), BENCH_ROUNDS (5), BENCH_PAGES (5), BENCH_PG_ADMIN_URL,
// BENCH_KEEP_DB=1 keeps the database for EXPLAIN afterwards.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createBenchDatabase, freePort, msUntilHealthy, round, spawnServer, type Server } from './lib.ts';

const FINDINGS = Number(process.env.BENCH_FINDINGS ?? 100_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const PAGES = Number(process.env.BENCH_PAGES ?? 5);
const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
for (const [k, v] of Object.entries({ FINDINGS, CONCURRENCY, ROUNDS, PAGES }))
  if (!Number.isInteger(v) || v < 1) throw new Error(`BENCH_${k} must be a positive integer`);

async function api(
  base: string,
  path: string,
  init: { method?: string; cookie?: string; body?: unknown; csrf?: string } = {},
) {
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      origin: base,
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(init.cookie ? { cookie: init.cookie } : {}),
      ...(init.csrf ? { 'x-csrf-token': init.csrf } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path} → ${res.status} ${await res.text()}`);
  return res;
}

async function setUp(base: string): Promise<{ cookie: string; tenantId: string; assetIds: string[] }> {
  const email = `bench-findings-${Date.now()}@example.test`;
  const up = await api(base, '/api/auth/sign-up/email', {
    method: 'POST',
    body: { email, name: 'Bench', password: 'bench password 123' },
  });
  const cookie = up.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const org = await api(base, '/api/auth/organization/create', {
    method: 'POST',
    cookie,
    body: { name: 'Bench Co', slug: `bench-${Date.now()}` },
  });
  const tenantId = ((await org.json()) as { id: string }).id;
  const me = (await (await api(base, '/api/v1/me', { cookie })).json()) as { csrfToken: string };
  const assetIds: string[] = [];
  for (let i = 0; i < 10; i++) {
    const res = await api(base, `/api/v1/tenants/${tenantId}/assets`, {
      method: 'POST',
      cookie,
      csrf: me.csrfToken,
      body: { kind: 'host', target: `h${i}.bench.example.test` },
    });
    assetIds.push(((await res.json()) as { asset: { id: string } }).asset.id);
  }
  return { cookie, tenantId, assetIds };
}

/** 100,000 findings in one statement: severities 5/15/30/25/25 %, statuses 60/30/5/5 %, five scanners. */
async function seed(databaseUrl: string, tenantId: string, assetIds: string[]): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const started = performance.now();
  try {
    await client.query(
      `
      with g0 as (
        select i,
          case when (i * 7) % 100 < 5 then 'critical' when (i * 7) % 100 < 20 then 'high' when (i * 7) % 100 < 50 then 'medium' when (i * 7) % 100 < 75 then 'low' else 'info' end as severity,
          case when (i * 13) % 100 < 60 then 'open' when (i * 13) % 100 < 90 then 'fixed' when (i * 13) % 100 < 95 then 'accepted_risk' else 'false_positive' end as status,
          (array['port', 'template', 'webapp', 'container', 'edge'])[1 + (i / 10) % 5] as scanner,
          (array['SQL injection', 'Cross-site scripting', 'Open port', 'Outdated package', 'Weak TLS cipher', 'Missing security header', 'Exposed admin panel', 'Directory listing', 'Default credentials', 'Cookie without Secure flag'])[1 + (i * 31) % 10]
            || ' at /p' || (i % 500) as title,
          'rule-' || ((i * 31) % 50) as rule_id,
          'https://h' || (i % 10) || '.bench.example.test/p' || (i % 500) as location_text,
          now() - make_interval(days => (i * 37) % 365, secs => (i * 11) % 86400) as first_seen
        from generate_series(1, $3::int) as i
      ), g as (
        select g0.*, case when scanner = 'container' then array['CVE-2023-' || (1000 + (i * 23) % 9000)] else '{}'::text[] end as cves from g0
      )
      insert into findings (tenant_id, asset_id, scanner, rule_id, title, severity, cvss_score, cwe_ids, cve_ids, location, location_text, search_text, port, path,
        evidence, remediation, fingerprint, scope_key, status, status_reason, status_expires_at, first_seen_at, last_seen_at, fixed_at, sla_due_at)
      select $1::uuid, ($2::uuid[])[1 + i % 10], scanner, rule_id, title, severity,
        round(((i * 29) % 100)::numeric / 10, 1),
        array[(array[79, 89, 200, 311, 326, 352, 611, 693, 1021, 16])[1 + (i * 19) % 10]],
        cves,
        jsonb_build_object('scheme', 'https', 'host', 'h' || (i % 10) || '.bench.example.test', 'port', 443, 'path', '/p' || (i % 500), 'url', location_text),
        location_text, lower(concat_ws(' ', title, rule_id, location_text, array_to_string(cves, ' '))), 443, '/p' || (i % 500),
        jsonb_build_object('summary', 'bench evidence ' || i), 'Fix it.',
        encode(sha256(convert_to($1::text || ':' || i, 'UTF8')), 'hex'), 'full', status,
        case when status in ('accepted_risk', 'false_positive') then 'bench reason' end,
        case when status = 'accepted_risk' then now() + interval '90 days' end,
        first_seen, least(now(), first_seen + make_interval(days => (i * 17) % 60)),
        case when status = 'fixed' then least(now(), first_seen + make_interval(days => (i * 17) % 60)) end,
        case severity when 'critical' then first_seen + interval '7 days' when 'high' then first_seen + interval '30 days'
          when 'medium' then first_seen + interval '90 days' when 'low' then first_seen + interval '120 days' end
      from g`,
      [tenantId, assetIds, FINDINGS],
    );
    await client.query('vacuum analyze findings');
    return performance.now() - started;
  } finally {
    await client.end();
  }
}

interface Combo {
  name: string;
  query: string;
}

function combos(assetIds: string[]): Combo[] {
  return [
    { name: 'open, worst first (default view)', query: 'status=open' },
    { name: 'open critical+high', query: 'status=open&severity=critical,high' },
    { name: 'one asset, open', query: `status=open&assetId=${assetIds[3]}` },
    { name: 'scanner, by last seen', query: 'status=open&scanner=webapp&sort=last_seen' },
    { name: 'overdue, by SLA due', query: 'overdue=true&sort=sla_due' },
    { name: 'CWE-79, any status', query: 'cwe=79' },
    { name: 'text search', query: 'status=open&q=injection' },
    { name: 'all, first seen ascending', query: 'sort=first_seen&dir=asc' },
  ];
}

/** Reads PAGES pages of one combination, following the cursor; returns each request's latency. */
async function walk(base: string, cookie: string, tenantId: string, combo: Combo): Promise<number[]> {
  const out: number[] = [];
  let cursor: string | null = null;
  for (let p = 0; p < PAGES; p++) {
    const url = `${base}/api/v1/tenants/${tenantId}/findings?${combo.query}&limit=50${cursor ? `&cursor=${cursor}` : ''}`;
    const t0 = performance.now();
    const res = await fetch(url, { headers: { cookie } });
    const body = (await res.json()) as { findings: unknown[]; nextCursor: string | null; total: number };
    out.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`${combo.name}: ${res.status} ${JSON.stringify(body)}`);
    if (body.findings.length === 0 && body.total > 0 && p === 0) throw new Error(`${combo.name}: empty first page`);
    cursor = body.nextCursor;
    if (!cursor) break;
  }
  return out;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const stats = (xs: number[]) => ({
  requests: xs.length,
  p50Ms: round(pct(xs, 50), 1),
  p95Ms: round(pct(xs, 95), 1),
  p99Ms: round(pct(xs, 99), 1),
  maxMs: round(Math.max(...xs), 1),
});

async function main() {
  const benchDb = await createBenchDatabase(PG_ADMIN_URL, `rampart_bench_findings_${process.pid}`);
  const databaseUrl = benchDb.url;
  const dataDir = mkdtempSync(join(tmpdir(), 'rampart-bench-findings-'));
  const port = await freePort();
  let server: Server | null = null;
  try {
    server = spawnServer(
      { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, DATABASE_POOL_MAX: '16', EMBEDDED_WORKER: 'false' },
      port,
    );
    await msUntilHealthy(port, performance.now());
    const base = `http://127.0.0.1:${port}`;
    const { cookie, tenantId, assetIds } = await setUp(base);
    const seedMs = await seed(databaseUrl, tenantId, assetIds);
    const list = combos(assetIds);

    const perCombo = new Map<string, number[]>(list.map((c) => [c.name, []]));
    for (let round_ = 0; round_ <= ROUNDS; round_++) {
      // Round 0 warms caches and plans; it is discarded.
      for (const combo of list) {
        const results = await Promise.all(
          Array.from({ length: CONCURRENCY }, () => walk(base, cookie, tenantId, combo)),
        );
        if (round_ > 0) perCombo.get(combo.name)!.push(...results.flat());
      }
    }
    const all = [...perCombo.values()].flat();
    const overall = stats(all);
    console.log(
      JSON.stringify(
        {
          bench: 'findings-list',
          database: 'postgres',
          findings: FINDINGS,
          seedSeconds: round(seedMs / 1000, 1),
          concurrency: CONCURRENCY,
          rounds: ROUNDS,
          pagesPerWalk: PAGES,
          pageSize: 50,
          node: process.version,
          overall,
          targetP95Ms: 100,
          meetsTarget: overall.p95Ms <= 100,
          combos: list.map((c) => ({
            name: c.name,
            query: c.query.replace(/assetId=[0-9a-f-]+/, 'assetId=…'),
            ...stats(perCombo.get(c.name)!),
          })),
        },
        null,
        2,
      ),
    );
  } finally {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await benchDb.drop();
  }
}

await main();
