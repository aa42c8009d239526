// The embedded PGlite in a worker thread. PGlite runs PostgreSQL compiled to WebAssembly on the
// thread that calls it: every query (and every batched insert of the mesh records) would block the
// event loop for its whole duration. Here the instance lives in pglite-thread-worker.ts and this
// proxy speaks the part of PGlite's interface Kysely's PGlite driver uses (query, transaction,
// close) plus what migrations and the template need (a multi-statement script, a dump).
// Calls are already serialised by client.ts (one connection), so plain BEGIN / COMMIT suffice.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { applyEmbeddedDatabaseV8Flags, WASM_CODE_GC_FLAG } from './wasm-code-gc.ts';

export interface ThreadInit {
  dir: string | undefined;
  template: Uint8Array | null;
  /** Compiled once per process and shared with every thread (compiling takes seconds). */
  pgliteWasmModule: WebAssembly.Module;
  initdbWasmModule: WebAssembly.Module;
  /** PostgreSQL's shared_buffers, e.g. "16MB" (PGLITE_SHARED_BUFFERS). */
  sharedBuffers: string;
}

export interface ThreadedPGliteOptions {
  dir: string | undefined;
  template: Blob | null;
  sharedBuffers: string;
  /** The directory holds no cluster yet and no template is given: create it in a child process first (pglite-initdb.ts). */
  initFirst: boolean;
}

let compiled: Promise<{ pglite: WebAssembly.Module; initdb: WebAssembly.Module }> | null = null;
function compiledModules() {
  compiled ??= (async () => {
    applyEmbeddedDatabaseV8Flags();
    const dist = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
    const [pglite, initdb] = await Promise.all(
      ['pglite.wasm', 'initdb.wasm'].map(async (f) => WebAssembly.compile(await readFile(join(dist, f)))),
    );
    return { pglite: pglite!, initdb: initdb! };
  })();
  return compiled;
}
export type ThreadRequest =
  | { id: number; op: 'query'; sql: string; params: unknown[] }
  | { id: number; op: 'exec'; scripts: string[] }
  | { id: number; op: 'copy'; sql: string; data: Uint8Array }
  | { id: number; op: 'dump' }
  | { id: number; op: 'close' };
export interface ThreadReply {
  id: number;
  result?: unknown;
  error?: { message: string; name: string; code?: string; [k: string]: unknown };
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

interface QueryResult {
  rows: Record<string, unknown>[];
  affectedRows?: number;
}
interface Queryable {
  query(sql: string, params?: unknown[], opts?: unknown): Promise<QueryResult>;
}

/** An error from the thread, with PostgreSQL's fields (code, constraint, …) as PGlite gives them. */
function rebuild(e: NonNullable<ThreadReply['error']>): Error {
  const err = new Error(e.message) as Error & Record<string, unknown>;
  for (const [k, v] of Object.entries(e)) if (k !== 'message') err[k] = v;
  return err;
}

/** Runs pglite-initdb.ts in a child process of the same Node, so initdb's memory leaves with it. */
async function initClusterInChild(dir: string, sharedBuffers: string): Promise<void> {
  const script = fileURLToPath(new URL('./pglite-initdb.ts', import.meta.url));
  const child = spawn(process.execPath, [WASM_CODE_GC_FLAG, script, dir, sharedBuffers], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (c) => resolve(c));
  });
  if (code !== 0)
    throw new Error(`creating the embedded database in ${dir} failed (exit ${code}): ${stderr.trim() || 'no message'}`);
}

/** Starts a database thread and waits for its instance to be ready (or to fail). */
async function startThread(init: ThreadInit): Promise<Worker> {
  // A small young generation: the thread's garbage is query parameters and results passing
  // through, and a large nursery only lets it pile up (resident memory, not speed).
  const worker = new Worker(new URL('./pglite-thread-worker.ts', import.meta.url), {
    // Named: the thread shows as `pglite` in profiles and in the kernel's per-thread accounting.
    name: 'pglite',
    workerData: init,
    resourceLimits: { maxYoungGenerationSizeMb: 12 },
  });
  try {
    await new Promise<void>((resolve, reject) => {
      const onMessage = (m: ThreadReply) => {
        if (m.id !== 0) return;
        worker.off('message', onMessage);
        worker.off('error', reject);
        if (m.error) reject(rebuild(m.error));
        else resolve();
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
  } catch (e) {
    await worker.terminate();
    throw e;
  }
  return worker;
}

export class ThreadedPGlite implements Queryable {
  #worker: Worker;
  #next = 1;
  #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  #closed = false;
  #failure: Error | null = null;
  readonly ready = true;
  readonly waitReady = Promise.resolve();

  private constructor(worker: Worker) {
    this.#worker = worker;
    worker.on('message', (m: ThreadReply) => {
      const p = this.#pending.get(m.id);
      if (!p) return;
      this.#pending.delete(m.id);
      if (this.#pending.size === 0) worker.unref();
      if (m.error) p.reject(rebuild(m.error));
      else p.resolve(m.result);
    });
    const fail = (e: Error) => {
      this.#failure = e;
      for (const p of this.#pending.values()) p.reject(e);
      this.#pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (!this.#closed) fail(new Error(`the embedded database thread stopped (exit ${code})`));
    });
  }

  static async create(opts: ThreadedPGliteOptions): Promise<ThreadedPGlite> {
    const modules = await compiledModules();
    const base = {
      dir: opts.dir,
      sharedBuffers: opts.sharedBuffers,
      pgliteWasmModule: modules.pglite,
      initdbWasmModule: modules.initdb,
    };
    if (opts.initFirst && opts.dir) await initClusterInChild(opts.dir, opts.sharedBuffers);
    const worker = await startThread({
      ...base,
      template: opts.template ? new Uint8Array(await opts.template.arrayBuffer()) : null,
    });
    // The thread keeps the process alive only while a call is waiting for it, like a socket would.
    worker.unref();
    return new ThreadedPGlite(worker);
  }

  get closed(): boolean {
    return this.#closed;
  }

  #call<T>(req: DistributiveOmit<ThreadRequest, 'id'>): Promise<T> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#closed) return Promise.reject(new Error('PGlite is closed'));
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      if (this.#pending.size === 0) this.#worker.ref();
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.#worker.postMessage({ ...req, id });
    });
  }

  query(sql: string, params: unknown[] = []): Promise<QueryResult> {
    return this.#call<QueryResult>({ op: 'query', sql, params: params as unknown[] });
  }

  /** Kysely's driver runs a transaction through this: BEGIN, the callback's queries, COMMIT or ROLLBACK. */
  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    try {
      await this.query('begin');
    } catch (e) {
      // Kysely's driver learns that the transaction began only inside `fn`, and handles this
      // promise's rejection only at its commit or rollback: a failed BEGIN (the database closed by
      // a shutdown, say) must still run `fn`, every query failing with the same error, or the
      // caller waits forever and the process dies of an unhandled rejection.
      return fn({ query: () => Promise.reject(e) });
    }
    let out: T;
    try {
      out = await fn({ query: (sql, params) => this.query(sql, params) });
    } catch (e) {
      await this.query('rollback').catch(() => undefined);
      throw e;
    }
    await this.query('commit');
    return out;
  }

  /** `COPY … FROM '/dev/blob'` with `data` as the file (copy-binary.ts): one round trip. */
  copyFrom(sql: string, data: Uint8Array): Promise<void> {
    return this.#call<void>({ op: 'copy', sql, data });
  }

  /** Multi-statement scripts in one transaction (migrations). */
  execInTransaction(scripts: string[]): Promise<void> {
    return this.#call<void>({ op: 'exec', scripts });
  }

  async dumpDataDir(): Promise<Blob> {
    const bytes = await this.#call<Uint8Array<ArrayBuffer>>({ op: 'dump' });
    return new Blob([bytes]);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.#call<void>({ op: 'close' });
    } finally {
      this.#closed = true;
      await this.#worker.terminate();
    }
  }
}
