// Process entry: configuration, secrets, database, migrations, listen, clean shutdown.
import { resolve } from 'node:path';
import pino from 'pino';
import { createLogMailer, createSmtpMailer, type Mailer } from '../auth/mailer.ts';
import { openDatabase } from '../db/client.ts';
import { migrate } from '../db/migrate.ts';
import { readPgliteTemplate } from '../db/pglite-template.ts';
import { WASM_CODE_GC_FLAG, wasmCodeGcOffAtStart } from '../db/wasm-code-gc.ts';
import { ConfigError, loadConfig, type Config } from '../lib/config.ts';
import { resolveSecrets } from '../lib/secrets-file.ts';
import { reportSegmentationStandard } from '../reporter/reporter.ts';
import { buildApp, loggerOptions } from './app.ts';
import { startBackgroundJobs } from './background.ts';
import { selfUrl } from '../workers/index.ts';
import { startOobDnsServer } from '../templates/oob-dns.ts';

export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(78); // EX_CONFIG
    }
    throw e;
  }
  const log = pino(loggerOptions(config.LOG_LEVEL));
  const secrets = resolveSecrets(config, log);
  const database = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    poolMax: config.DATABASE_POOL_MAX,
    pgliteTemplate: readPgliteTemplate,
    pgliteSharedBuffers: config.PGLITE_SHARED_BUFFERS,
  });
  const { applied } = await migrate(database);
  if (applied.length) log.info({ applied }, 'migrations applied');

  let mailer: Mailer;
  if (config.SMTP_URL) mailer = createSmtpMailer(config.SMTP_URL, config.MAIL_FROM);
  else mailer = createLogMailer(log);

  const app = await buildApp({
    config,
    database,
    mailer,
    authSecret: secrets.authSecret,
    encryptionKey: Buffer.from(secrets.encryptionKey, 'base64'),
    previousEncryptionKeys: secrets.previousEncryptionKeys,
    loggerInstance: log,
    webDir: resolve('dist/web'),
  });

  let closing = false;
  const stopBackground = startBackgroundJobs(app, database, config, log);
  // Set once the out-of-band DNS listener runs.
  let stopOobDns = async (): Promise<void> => undefined;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    const backgroundStopped = stopBackground();
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      log.error('shutdown took longer than 10 s; exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    try {
      // Before the server closes: the embedded worker's agents release their leases over HTTP.
      // A report being read is given back at its next batch (another replica or the next start takes it).
      await app.services.ingestion
        .stop()
        .catch((err: unknown) => log.error({ err }, 'stopping the ingestion runner failed'));
      // Scans get 5 s to finish, within the 10 s shutdown budget.
      await app.services.hostedWorkers
        .stop(5_000)
        .catch((err: unknown) => log.error({ err }, 'stopping the embedded hosted workers failed'));
      await stopOobDns().catch((err: unknown) => log.error({ err }, 'stopping the out-of-band DNS listener failed'));
      await app.close();
      await backgroundStopped.catch((err: unknown) => log.error({ err }, 'stopping the background jobs failed'));
      await database.close();
    } finally {
      clearTimeout(force);
      process.exit(0);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));

  await app.listen({ port: config.PORT, host: config.HOST });
  // The embedded database needs V8's WebAssembly code collector off (src/db/wasm-code-gc.ts), in
  // force from the start: say whether it is, and warn when only the run-time backstop holds.
  const gcOffAtStart = wasmCodeGcOffAtStart();
  const v8 = database.kind === 'pglite' ? { wasmCodeGc: gcOffAtStart ? 'off' : 'off-at-runtime-only' } : {};
  log.info({ url: config.PUBLIC_BASE_URL, database: database.kind, ...v8 }, 'Rampart is serving');
  if (database.kind === 'pglite' && !gcOffAtStart) {
    log.warn(
      { flag: WASM_CODE_GC_FLAG },
      'Node was started without --no-wasm-code-gc: the embedded database can crash the process; add the flag',
    );
  }
  app.services.mesh.start();
  // Out-of-band callbacks by DNS, when a zone is delegated to this server.
  const oobDns =
    config.OOB_DNS_DOMAIN && app.services.oob.dnsDomain
      ? await startOobDnsServer({
          domain: config.OOB_DNS_DOMAIN,
          host: config.OOB_DNS_HOST,
          port: config.OOB_DNS_PORT,
          ...(config.OOB_DNS_ANSWER ? { answer: config.OOB_DNS_ANSWER } : {}),
          oob: app.services.oob,
          log,
        }).catch((err: unknown) => {
          log.error({ err }, 'the out-of-band DNS listener could not start; DNS callbacks are not received');
          return null;
        })
      : null;
  if (oobDns) {
    stopOobDns = () => oobDns.close();
    log.info({ port: oobDns.port, domain: config.OOB_DNS_DOMAIN }, 'out-of-band DNS callbacks');
  }
  // First run: no administrator yet, so a one-time link makes the first one (printed, not logged
  // as JSON only, so a newcomer at the terminal sees it).
  const setupUrl = await app.services.setup.prepare().catch((err: unknown) => {
    log.error({ err }, 'could not prepare the first-run setup link');
    return null;
  });
  if (setupUrl) {
    // The link is a credential: the log says where it is, the terminal shows it.
    log.warn('this installation has no administrator yet: the one-time setup link was printed on the terminal');
    console.log(
      `\nFirst run: create your account, then open this one-time link to become this installation's administrator:\n  ${setupUrl}\n`,
    );
  }
  if (config.EMBEDDED_WORKER) {
    // The hosted workers reach this process like remote workers do, over HTTP on its bound port.
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.PORT;
    void app.services.hostedWorkers
      .run({ serverUrl: selfUrl(config.HOST, port) })
      .then(() => log.info('embedded hosted worker runner started'))
      .catch((err: unknown) => log.error({ err }, 'could not start the embedded hosted workers'));
  }
  // Verify tenant segmentation standard v1 and tell the management peer (after listening: it
  // must not delay readiness).
  void reportSegmentationStandard(database.db, app.services.reporter)
    .then(({ violations }) =>
      violations.length
        ? log.error({ violations }, 'tenant segmentation standard v1 is broken')
        : log.info('tenant segmentation standard v1 verified'),
    )
    .catch((err: unknown) => log.error({ err }, 'segmentation standard check failed'));
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
