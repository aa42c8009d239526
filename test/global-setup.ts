// With DATABASE_URL, migrate the shared PostgreSQL test database once; every test seeds its own
// tenants so files can run in parallel. Without it, each file opens an in-memory PGlite.
import { openDatabase } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';

export default async function setup(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) return;
  const database = await openDatabase({ databaseUrl: url, dataDir: '.data-test' });
  try {
    await migrate(database);
  } finally {
    await database.close();
  }
}
