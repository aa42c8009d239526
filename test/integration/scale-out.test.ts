// Scale-out proof (issue: production deployment, item 3), on PostgreSQL: three real server
// processes on one database behind a round-robin proxy, S3-compatible storage, 20 workers and the
// mixed load of test/helpers/scale-load.ts for a bounded time; one replica is killed with SIGKILL
// part-way. Nothing may be lost or done twice: no double lease, no scan finalized or ingested
// twice, every mesh request id executed once, every accepted relay notice delivered through the
// outbox, no schedule dispatched twice in one tick round, every scan finished; tenant and staff
// reads run throughout.
import { describe, expect, it } from 'vitest';
import { runMixedLoad } from '../helpers/scale-load.ts';

const pgUrl = process.env.DATABASE_URL;

describe.skipIf(!pgUrl)('three replicas on one PostgreSQL, one killed mid-run', () => {
  it('loses nothing and does nothing twice', { timeout: 240_000 }, async () => {
    const admin = new URL(pgUrl!);
    admin.pathname = '/postgres';
    // Short leases so the killed replica's leases and claims are taken over within the test.
    const r = await runMixedLoad({
      replicas: 3,
      seconds: 15,
      killAtSeconds: 6,
      pgAdminUrl: admin.toString(),
      env: { WORKER_LEASE_SECONDS: '10', INGEST_LOCK_SECONDS: '10', SVC_OUTBOX_LEASE_MS: '3000' },
    });
    expect(r.violations).toEqual([]);
    expect(r.killed).not.toBeNull();
    // The load really ran on the survivors: scans, mesh calls and outbox deliveries after the kill.
    expect(r.scans.succeeded).toBeGreaterThan(20);
    expect(r.mesh.replayed).toBeGreaterThan(0);
    expect(r.relay.queuedForOutbox).toBeGreaterThan(0);
    expect(r.outbox.delivered).toBe(r.outbox.total);
    // Tenant members and staff read throughout; every schedule ran, never twice in one tick round.
    expect(r.reads.tenant).toBeGreaterThan(0);
    expect(r.reads.staff).toBeGreaterThan(0);
    expect(r.ticks).toBeGreaterThan(2);
    expect(r.scansPerSchedule.min).toBeGreaterThan(0);
    expect(r.scheduleRoundDuplicates).toBe(0);
  });
});
