// Database handle for both targets: embedded PGlite in DATA_DIR (default) or a PostgreSQL server.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  CompiledQuery,
  Kysely,
  PGliteDialect,
  PostgresDialect,
  sql,
  type DatabaseConnection,
  type Driver,
} from 'kysely';
import pg from 'pg';
import type { PGlite as PGliteInstance } from '@electric-sql/pglite';
import { PGLITE_SHARED_BUFFERS_DEFAULT } from '../lib/config.ts';
import { copyBinary, CopyStream, type CopyColumn, type CopyValue } from './copy-binary.ts';
import { copyFromStdin, enableCopyFromStdin } from './pg-copy.ts';
import { ThreadedPGlite } from './pglite-thread.ts';
import type { DB } from './schema.ts';
import { registerServiceDb } from './tenant.ts';

export type DbKind = 'pglite' | 'postgres';

export interface Database {
  readonly db: Kysely<DB>;
  readonly kind: DbKind;
  /** The embedded instance, on its own thread (migrations need its multi-statement exec). */
  readonly pglite?: ThreadedPGlite;
  /**
   * The embedded database only: appends rows with one COPY (a single round trip to the database
   * thread, the cheapest insert PostgreSQL has), as the cluster's owner, outside any transaction,
   * while holding the connection so that no request's transaction is open around it. For
   * append-only records written by the server itself; table and columns are code, never input.
   * `rows` may be a CopyStream encoded ahead with the same columns.
   */
  readonly copyRows?: (
    table: string,
    columns: readonly CopyColumn[],
    rows: readonly (readonly CopyValue[])[] | CopyStream,
  ) => Promise<void>;
  /**
   * The embedded database only: runs one statement with `data` as PGlite's /dev/blob device, on
   * the connection as it is, so inside the caller's transaction when called from one (the
   * connection is held by that transaction, so no other caller's statement interleaves).
   */
  readonly blobStatement?: (statement: string, data: Uint8Array) => Promise<void>;
  /**
   * PostgreSQL only: runs `statement` (COPY … FROM STDIN) with `data` in COPY's format on the
   * connection of `q` (a transaction of this database or of its service role; pg-copy.ts).
   * Returns the rows copied.
   */
  readonly copyIn?: (q: Kysely<DB>, statement: string, data: Uint8Array) => Promise<number>;
  close(): Promise<void>;
}

export class DataDirLockedError extends Error {
  constructor(dir: string, pid: number) {
    super(`DATA_DIR ${dir} is in use by process ${pid}; stop it first, or point DATA_DIR elsewhere`);
    this.name = 'DataDirLockedError';
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Exclusive lock on a PGlite directory: PGlite is one process, one connection. Stale locks of dead processes are taken over. */
export function lockDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'rampart.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        try {
          unlinkSync(file);
        } catch {
          /* already gone */
        }
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
      if (Number.isInteger(pid) && pid !== process.pid && pidAlive(pid)) throw new DataDirLockedError(dir, pid);
      if (pid === process.pid) throw new DataDirLockedError(dir, pid);
      unlinkSync(file); // stale: its process is gone
    }
  }
  throw new Error(`could not lock ${dir}`);
}

/**
 * Kysely's PGlite driver hands every caller the same connection. Without a mutex, a query from one
 * request would run inside another request's open transaction (and its tenant settings). This
 * serialises connection use: acquire waits until the previous holder releases.
 */
class SerialisedDriver implements Driver {
  #inner: Driver;
  #tail: Promise<void> = Promise.resolve();
  #release: (() => void) | undefined;
  constructor(inner: Driver) {
    this.#inner = inner;
  }
  init() {
    return this.#inner.init();
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.#tail;
    let release!: () => void;
    this.#tail = new Promise<void>((r) => (release = r));
    await previous;
    this.#release = release;
    return this.#inner.acquireConnection();
  }
  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await this.#inner.releaseConnection(connection);
    const release = this.#release;
    this.#release = undefined;
    release?.();
  }
  beginTransaction: Driver['beginTransaction'] = (c, s) => this.#inner.beginTransaction(c, s);
  commitTransaction: Driver['commitTransaction'] = (c) => this.#inner.commitTransaction(c);
  rollbackTransaction: Driver['rollbackTransaction'] = (c) => this.#inner.rollbackTransaction(c);
  savepoint: NonNullable<Driver['savepoint']> = (c, n, q) => this.#inner.savepoint!(c, n, q);
  rollbackToSavepoint: NonNullable<Driver['rollbackToSavepoint']> = (c, n, q) =>
    this.#inner.rollbackToSavepoint!(c, n, q);
  releaseSavepoint: NonNullable<Driver['releaseSavepoint']> = (c, n, q) => this.#inner.releaseSavepoint!(c, n, q);
  destroy() {
    return this.#inner.destroy();
  }
}

class SerialisedPGliteDialect extends PGliteDialect {
  override createDriver(): Driver {
    return new SerialisedDriver(super.createDriver());
  }
}

export interface OpenDatabaseOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  poolMax?: number;
  /** Tests: an in-memory PGlite (still locks dataDir). */
  inMemory?: boolean;
  /** A pre-migrated cluster tarball used when the directory holds no database yet (pglite-template.ts). */
  pgliteTemplate?: () => Blob | null;
  /** PostgreSQL's shared_buffers for the embedded database (PGLITE_SHARED_BUFFERS). */
  pgliteSharedBuffers?: string;
}

// int8 and numeric come back as strings by default; counts and ids here fit in a JS number.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));

export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) {
    const max = opts.poolMax ?? 10;
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max });
    // Service work (mesh, records, staff reads) gets its own smaller pool whose connections are
    // rampart_service for their whole life: see registerServiceDb in tenant.ts.
    const servicePool = new pg.Pool({ connectionString: opts.databaseUrl, max: Math.max(2, Math.ceil(max / 2)) });
    for (const p of [pool, servicePool]) {
      p.on('error', () => {
        /* idle client errors surface on the next query; never crash the process */
      });
      p.on('connect', (client) => enableCopyFromStdin(client));
    }
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    const serviceDb = new Kysely<DB>({
      dialect: new PostgresDialect({
        pool: servicePool,
        onCreateConnection: async (connection) => {
          await connection.executeQuery(
            CompiledQuery.raw("set role rampart_service; set app.tenant_id = ''; set app.user_id = ''"),
          );
        },
      }),
    });
    registerServiceDb(db, serviceDb);
    return {
      db,
      kind: 'postgres',
      copyIn: copyFromStdin,
      close: async () => {
        await Promise.all([db.destroy(), serviceDb.destroy()]);
      },
    };
  }
  const dir = resolve(opts.dataDir);
  const unlock = lockDataDir(dir);
  try {
    const pgDir = join(dir, 'pg');
    const fresh = !opts.inMemory && !existsSync(join(pgDir, 'PG_VERSION'));
    const template = fresh ? (opts.pgliteTemplate?.() ?? null) : null;
    const pglite = await ThreadedPGlite.create({
      dir: opts.inMemory ? undefined : pgDir,
      template,
      sharedBuffers: opts.pgliteSharedBuffers ?? PGLITE_SHARED_BUFFERS_DEFAULT,
      initFirst: fresh && !template,
    });
    // Kysely's driver uses query, transaction, close, ready and closed, which the proxy provides.
    const db = new Kysely<DB>({
      dialect: new SerialisedPGliteDialect({ pglite: pglite as unknown as PGliteInstance }),
    });
    return {
      db,
      kind: 'pglite',
      pglite,
      copyRows: (table, columns, rows) => {
        const statement =
          sql`copy ${sql.table(table)} (${sql.join(columns.map((c) => sql.id(c.name)))}) from '/dev/blob' with (format binary)`.compile(
            db,
          ).sql;
        const data = rows instanceof CopyStream ? rows.finish() : copyBinary(columns, rows);
        return db.connection().execute(() => pglite.copyFrom(statement, data));
      },
      blobStatement: (statement, data) => pglite.copyFrom(statement, data),
      close: async () => {
        try {
          await db.destroy();
        } finally {
          unlock();
        }
      },
    };
  } catch (e) {
    unlock();
    throw e;
  }
}
