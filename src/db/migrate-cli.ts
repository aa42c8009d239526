// `npm run migrate`: apply pending migrations to the configured database and exit.
import { ConfigError, loadConfig, type Config } from '../lib/config.ts';
import { openDatabase } from './client.ts';
import { migrate } from './migrate.ts';

let config: Config;
try {
  config = loadConfig();
} catch (e) {
  if (!(e instanceof ConfigError)) throw e;
  console.error(e.message);
  process.exit(78); // EX_CONFIG
}
// A release job (Kubernetes Job, compose `migrate`) whose Secret lacks DATABASE_URL would
// otherwise migrate a throwaway embedded database and report success.
if (config.NODE_ENV === 'production' && !config.DATABASE_URL) {
  console.error(
    'Invalid configuration:\n  - DATABASE_URL: required by `migrate` when NODE_ENV=production (the embedded database migrates itself at start)',
  );
  process.exit(78);
}
const database = await openDatabase({
  databaseUrl: config.DATABASE_URL,
  dataDir: config.DATA_DIR,
  pgliteSharedBuffers: config.PGLITE_SHARED_BUFFERS,
});
try {
  const { applied } = await migrate(database);
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
} finally {
  await database.close();
}
