// Periodic work every replica runs: domain-proof re-checks and due scan schedules. Both are safe
// with many replicas (re-checks are idempotent; the tick claims each due schedule exactly once).
import type { Logger } from 'pino';
import type { Config } from '../lib/config.ts';
import type { App } from './app.ts';

export function startBackgroundJobs(app: App, config: Pick<Config, 'SCHEDULE_TICK_SECONDS'>, log: Pick<Logger, 'error'>): () => void {
  // Domain proofs are re-checked daily; this looks for due ones every 15 minutes.
  const recheck = setInterval(() => void app.services.assets.recheckDue().catch((err: unknown) => log.error({ err }, 'asset re-check failed')), 15 * 60_000);
  recheck.unref();
  // Due scan schedules without an external cron (the hook stays for those who prefer one).
  const tick = config.SCHEDULE_TICK_SECONDS
    ? setInterval(() => void app.services.schedules.tick().catch((err: unknown) => log.error({ err }, 'scan schedule tick failed')), config.SCHEDULE_TICK_SECONDS * 1000)
    : null;
  tick?.unref();
  return () => {
    clearInterval(recheck);
    if (tick) clearInterval(tick);
  };
}
