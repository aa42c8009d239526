// `npm run migrate`: apply pending migrations to the configured database and exit.
import { loadConfig } from '../lib/config.ts';
import { openDatabase } from './client.ts';
import { migrate } from './migrate.ts';

const config = loadConfig();
const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, pgliteSharedBuffers: config.PGLITE_SHARED_BUFFERS });
try {
  const { applied } = await migrate(database);
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
} finally {
  await database.close();
}
