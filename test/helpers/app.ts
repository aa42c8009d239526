// An app on a real database: PostgreSQL when DATABASE_URL is set (shared, migrated once by the
// global setup), otherwise a fresh in-memory PGlite per call.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
import { loadConfig, type Config } from '../../src/lib/config.ts';
import { buildApp, type App, type AppDeps } from '../../src/server/app.ts';
import { createMemoryMailer, type MemoryMailer } from './mailer.ts';

export const TEST_BASE_URL = 'http://rampart.test';
export const STAFF_DOMAIN = 'staff.rampart.test';
/**
 * Tests run their S3, language-model, mesh and scan targets on loopback, which the egress policy
 * refuses by default; test apps allow loopback explicitly (test/integration/egress.test.ts runs
 * with the list empty).
 */
export const TEST_EGRESS_ALLOW = '127.0.0.0/8,::1';

export interface TestApp {
  app: App;
  database: Database;
  config: Config;
  mailer: MemoryMailer;
  close(): Promise<void>;
}

export async function openTestDatabase(): Promise<{ database: Database; dataDir: string; cleanup(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rampart-test-'));
  const database = process.env.DATABASE_URL
    ? await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir, poolMax: 5 })
    : await openDatabase({ dataDir, inMemory: true });
  await migrate(database);
  return {
    database,
    dataDir,
    async cleanup() {
      await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const TEST_AUTH_SECRET = 'test-secret-test-secret-test-secret-0123';

/** The dependencies every test app shares; spread and override what a test needs. */
export function testDeps(config: Config, database: Database, mailer: MemoryMailer): AppDeps {
  return { config, database, mailer, authSecret: TEST_AUTH_SECRET, encryptionKey: Buffer.alloc(32, 7), webDir: null };
}

export async function createTestApp(
  opts: { env?: Record<string, string>; deps?: Partial<AppDeps>; database?: Database } = {},
): Promise<TestApp> {
  const owned = opts.database ? null : await openTestDatabase();
  const database = opts.database ?? owned!.database;
  const config = loadConfig({
    DATA_DIR: owned?.dataDir ?? tmpdir(),
    PUBLIC_BASE_URL: TEST_BASE_URL,
    STAFF_EMAIL_DOMAINS: STAFF_DOMAIN,
    LOG_LEVEL: 'silent',
    // Tenants made by tests get no worker of their own unless a test asks for one.
    TENANT_HOSTED_WORKER: 'off',
    EGRESS_ALLOW: TEST_EGRESS_ALLOW,
    ...opts.env,
  });
  const mailer = createMemoryMailer();
  const app = await buildApp({ ...testDeps(config, database, mailer), ...opts.deps });
  await app.ready();
  return {
    app,
    database,
    config,
    mailer,
    async close() {
      await app.close();
      await owned?.cleanup();
    },
  };
}

let counter = 0;
/** A unique e-mail address per call, so tests sharing a PostgreSQL database never collide. */
export function uniqueEmail(prefix = 'user', domain = 'example.test'): string {
  counter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}@${domain}`;
}
