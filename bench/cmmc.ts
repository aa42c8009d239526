// `npm run bench:cmmc`: the CMMC staff dashboard (listCmmcProfilesStaff: one page of the list plus
// the six tiles) on PostgreSQL. A fresh database is created and migrated; BENCH_CMMC_PROFILES
// tenants with a profile each (default 5,000) and BENCH_CMMC_RUNS device-check runs (default
// 50,000, about 4 computers per profile, several runs per computer, spread over 60 days, some
// failing, one computer in about 25 retired) are bulk-inserted with generate_series, then VACUUM ANALYZE. Each query shape (all, a
// tile filter, a search, a deep page) is called BENCH_RUNS times after one warm-up; the medians of
// the server time (the service call, database round trips included) are printed as JSON.
// Target: ≤ 300 ms. Env: BENCH_PG_ADMIN_URL, BENCH_KEEP_DB.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createCmmcProgram, type CmmcProgram } from '../src/cmmc/index.ts';
import { openDatabase } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';
import { systemClock } from '../src/lib/clock.ts';
import { createBenchDatabase, median, round } from './lib.ts';

const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PROFILES = Number(process.env.BENCH_CMMC_PROFILES ?? 5_000);
const RUNS_TOTAL = Number(process.env.BENCH_CMMC_RUNS ?? 50_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const TARGET_MS = 300;

async function main() {
  const benchDb = await createBenchDatabase(PG_ADMIN_URL, `rampart_bench_cmmc_${process.pid}`);
  const databaseUrl = benchDb.url;
  const dataDir = mkdtempSync(join(tmpdir(), 'rampart-bench-cmmc-'));
  const database = await openDatabase({ databaseUrl, dataDir, poolMax: 4 });
  try {
    await migrate(database);
    const seedStart = performance.now();
    const db = database.db;
    await sql`insert into "organization" (id, name, slug, "createdAt")
      select md5('org' || g)::uuid, 'Bench Co ' || g, 'bench-co-' || g, now() from generate_series(1, ${sql.lit(PROFILES)}) g`.execute(
      db,
    );
    // CAGE codes: 5 characters from a hash; statuses spread over the four states; compliant ones
    // with status dates over the last year (some renewing within 30 days).
    await sql`insert into compliance_profiles (id, tenant_id, cage_code, company_name, mail_platform, affirming_official_name, affirming_official_title, affirming_official_email, bidding_users, status, status_date, device_token_hash)
      select md5('profile' || g)::uuid, md5('org' || g)::uuid, upper(substr(md5('cage' || g), 1, 5)), 'Bench Supplier ' || g || ' LLC',
             case when g % 2 = 0 then 'm365' else 'google' end, 'Officer ' || g, 'President', 'officer' || g || '@bench.test', '[{"name":"A","email":"a@bench.test"}]',
             (array['in_progress', 'compliant', 'compliant', 'renewal_due', 'expired'])[1 + g % 5],
             case when g % 5 = 0 then null else current_date - (g % 400) end,
             case when g % 7 = 0 then null else md5('token' || g) || md5('token2' || g) end
        from generate_series(1, ${sql.lit(PROFILES)}) g`.execute(db);
    await sql`insert into endpoint_audit_runs (tenant_id, profile_id, hostname, os, results, script_version, received_at)
      select md5('org' || p)::uuid, md5('profile' || p)::uuid, 'HOST-' || ((g / ${sql.lit(PROFILES)}) % 4), case when g % 3 = 0 then 'macos' else 'windows' end,
             case when g % 11 = 0 then '{"win.firewall_enabled":"fail","win.av_enabled":"pass"}'::jsonb
                  when g % 13 = 0 then '{"win.firewall_enabled":"unknown","win.av_enabled":"pass"}'::jsonb
                  else '{"win.firewall_enabled":"pass","win.av_enabled":"pass","win.patch_recent":"pass"}'::jsonb end,
             '1.0.0', now() - ((g * 7919) % (60 * 24)) * interval '1 hour' - case when p % 9 = 0 then interval '40 days' else interval '0' end
        from (select g, 1 + (g % ${sql.lit(PROFILES)}) as p from generate_series(1, ${sql.lit(RUNS_TOTAL)}) g) s`.execute(
      db,
    );
    // One computer in about 25 retired (migration 0022): its latest run carries the mark, so the
    // staff list reads the mark from the index and leaves it out of the counts.
    await sql`update endpoint_audit_runs r set retired_at = now() from (
        select distinct on (profile_id, lower(hostname)) id from endpoint_audit_runs order by profile_id, lower(hostname), received_at desc) l
       where r.id = l.id and (hashtext(r.profile_id::text || r.hostname) % 25) = 0`.execute(db);
    for (const t of ['organization', 'compliance_profiles', 'endpoint_audit_runs'])
      await sql`vacuum analyze ${sql.table(t)}`.execute(db);
    const seedSeconds = (performance.now() - seedStart) / 1000;

    const program: CmmcProgram = createCmmcProgram({
      db,
      clock: systemClock,
      // The staff list touches none of these.
      audit: null as never,
      storage: null as never,
      outbox: null as never,
      mailer: null as never,
      publicBaseUrl: 'http://bench.invalid',
      bidPeer: undefined,
      managementPeer: undefined,
      evidenceMaxBytes: 1,
      log: { warn: () => {} },
    });
    const shapes = {
      all: { filter: 'all', q: null, limit: 100, offset: 0 },
      compliant: { filter: 'compliant', q: null, limit: 100, offset: 0 },
      renewingSoon: { filter: 'renewing_soon', q: null, limit: 100, offset: 0 },
      devicesPending: { filter: 'devices_pending', q: null, limit: 100, offset: 0 },
      searchCompany: { filter: 'all', q: 'Supplier 42', limit: 100, offset: 0 },
      searchCage: { filter: 'all', q: 'A1', limit: 100, offset: 0 },
      deepPage: { filter: 'all', q: null, limit: 100, offset: 4_800 },
      all500: { filter: 'all', q: null, limit: 500, offset: 0 },
    } as const;
    const medians: Record<string, number> = {};
    let tiles: unknown = null;
    for (const [name, opts] of Object.entries(shapes)) {
      const r = await program.listStaff({ ...opts });
      tiles ??= r.tiles;
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t0 = performance.now();
        await program.listStaff({ ...opts });
        times.push(performance.now() - t0);
      }
      medians[name] = round(median(times), 1);
    }
    const worst = Math.max(...Object.values(medians));
    console.log(
      JSON.stringify(
        {
          bench: 'cmmc-staff-dashboard',
          profiles: PROFILES,
          deviceRuns: RUNS_TOTAL,
          seedSeconds: round(seedSeconds, 1),
          runsPerShape: RUNS,
          medianMs: medians,
          worstMedianMs: worst,
          targetMs: TARGET_MS,
          pass: worst <= TARGET_MS,
          tiles,
        },
        null,
        2,
      ),
    );
  } finally {
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
    await benchDb.drop();
  }
}

await main();
