// The embedded database's own thread: one PGlite instance, driven by messages from
// pglite-thread.ts. Queries run here, so the WebAssembly engine never blocks the request thread.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import type { ThreadReply, ThreadRequest, ThreadInit } from './pglite-thread.ts';

const init = workerData as ThreadInit;
const port = parentPort!;

function errorFields(e: unknown): ThreadReply['error'] {
  const err = e as Record<string, unknown> & Error;
  const out: Record<string, unknown> = { message: err?.message ?? String(e), name: err?.name ?? 'Error' };
  for (const k of [
    'code',
    'detail',
    'hint',
    'constraint',
    'table',
    'column',
    'schema',
    'severity',
    'position',
    'where',
    'routine',
    'dataType',
  ])
    if (err && typeof err[k] !== 'undefined' && typeof err[k] !== 'function') out[k] = err[k];
  return out as ThreadReply['error'];
}

let pglite: PGlite;
try {
  pglite = await PGlite.create(init.dir, {
    parsers: { 20: (v: string) => Number.parseInt(v, 10) },
    pgliteWasmModule: init.pgliteWasmModule,
    initdbWasmModule: init.initdbWasmModule,
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${init.sharedBuffers}`],
    ...(init.template ? { loadDataDir: new Blob([init.template as Uint8Array<ArrayBuffer>]) } : {}),
  });
  port.postMessage({ id: 0, result: 'ready' } satisfies ThreadReply);
} catch (e) {
  port.postMessage({ id: 0, error: errorFields(e) } satisfies ThreadReply);
  process.exit(1);
}

port.on('message', (m: ThreadRequest) => {
  void (async () => {
    try {
      let result: unknown;
      if (m.op === 'query') {
        const r = await pglite.query(m.sql, m.params, { rowMode: 'object' });
        result = { rows: r.rows, affectedRows: r.affectedRows };
      } else if (m.op === 'copy') {
        await pglite.query(m.sql, [], { blob: new Blob([m.data as Uint8Array<ArrayBuffer>]) });
        result = null;
      } else if (m.op === 'exec') {
        await pglite.transaction(async (tx) => {
          for (const script of m.scripts) await tx.exec(script);
        });
        result = null;
      } else if (m.op === 'dump') {
        const blob = await pglite.dumpDataDir('gzip');
        result = new Uint8Array(await blob.arrayBuffer());
      } else {
        await pglite.close();
        result = null;
      }
      port.postMessage({ id: m.id, result } satisfies ThreadReply);
    } catch (e) {
      port.postMessage({ id: m.id, error: errorFields(e) } satisfies ThreadReply);
    }
  })();
});
