// Periodic work every replica runs: the report ingestion runner, domain-proof re-checks, due scan
// schedules, the daily CMMC renewal sweep, expired worker leases, orphaned uploads and remembered
// worker nonces; on the embedded database, its vacuum and analyze. All are safe with many replicas (re-checks are idempotent; the tick
// claims each due schedule exactly once, the sweep its day; the reapers take rows with SKIP LOCKED).
import type { Logger } from 'pino';
import type { Database } from '../db/client.ts';
import { createEmbeddedMaintenance } from '../db/embedded-maintenance.ts';
import type { Config } from '../lib/config.ts';
import type { App } from './app.ts';

/** How often each replica looks whether today's CMMC renewal sweep has run. */
const RENEWAL_LOOK_MS = 10 * 60_000;

export function startBackgroundJobs(
  app: App,
  database: Pick<Database, 'db' | 'kind'>,
  config: Pick<Config, 'SCHEDULE_TICK_SECONDS' | 'PGLITE_MAINTENANCE_SECONDS'>,
  log: Pick<Logger, 'error' | 'info'>,
  opts: { renewalLookMs?: number } = {},
): () => Promise<void> {
  // Queued reports (worker uploads and imports) are read by whichever replica claims them first.
  app.services.ingestion.start();
  // Domain proofs are re-checked daily; this looks for due ones every 15 minutes.
  const recheck = setInterval(
    () => void app.services.assets.recheckDue().catch((err: unknown) => log.error({ err }, 'asset re-check failed')),
    15 * 60_000,
  );
  recheck.unref();
  // Due scan schedules without an external cron (the hook stays for those who prefer one).
  const tick = config.SCHEDULE_TICK_SECONDS
    ? setInterval(
        () =>
          void app.services.schedules.tick().catch((err: unknown) => log.error({ err }, 'scan schedule tick failed')),
        config.SCHEDULE_TICK_SECONDS * 1000,
      )
    : null;
  tick?.unref();
  // The CMMC renewal sweep, daily without an external cron (the hook stays for those who prefer
  // one): every replica looks every 10 minutes, and the first look of a UTC day that claims the
  // day's row runs it (exactly once a day; the statuses shown are computed from dates anyway).
  const renewals = setInterval(
    () =>
      void app.services.cmmcProgram
        .dailyRenewalSweep()
        .catch((err: unknown) => log.error({ err }, 'cmmc renewal sweep failed')),
    opts.renewalLookMs ?? RENEWAL_LOOK_MS,
  );
  renewals.unref();
  // Expired worker leases are re-queued (also by waiting lease requests; this covers quiet times),
  // and uploads never finalized are deleted. Both take rows with SKIP LOCKED: safe on every replica.
  const leases = setInterval(
    () => void app.services.leases.reapExpired().catch((err: unknown) => log.error({ err }, 'lease reaper failed')),
    10_000,
  );
  leases.unref();
  const orphans = setInterval(() => {
    void app.services.uploads.reapOrphans().catch((err: unknown) => log.error({ err }, 'upload reaper failed'));
    void app.services.workerAuth.reapNonces().catch((err: unknown) => log.error({ err }, 'nonce reaper failed'));
  }, 10 * 60_000);
  orphans.unref();
  // The embedded database has no autovacuum: this replica (its only one) does that job.
  const maintenance =
    database.kind === 'pglite'
      ? createEmbeddedMaintenance({ db: database.db, intervalMs: config.PGLITE_MAINTENANCE_SECONDS * 1000, log })
      : null;
  maintenance?.start();
  return async () => {
    // main.ts awaits the runner's stop itself (a report being read is given back first).
    void app.services.ingestion.stop();
    clearInterval(leases);
    clearInterval(orphans);
    clearInterval(recheck);
    clearInterval(renewals);
    if (tick) clearInterval(tick);
    // A vacuum in progress finishes before the database closes.
    await maintenance?.stop();
  };
}
