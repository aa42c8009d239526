// Creates an embedded database cluster in the directory given as the first argument, then exits.
// Run as a child process by pglite-thread.ts on a first start: PGlite creates a cluster with a
// second, temporary instance plus initdb, and the memory that takes (about 1 GB at its peak, and
// hundreds of MB kept by the allocator afterwards) goes back to the system with the process.
import { PGlite } from '@electric-sql/pglite';
import { applyEmbeddedDatabaseV8Flags } from './wasm-code-gc.ts';

applyEmbeddedDatabaseV8Flags();

const [dir, sharedBuffers] = process.argv.slice(2);
if (!dir || !sharedBuffers) {
  process.stderr.write('usage: pglite-initdb.ts <dir> <shared_buffers>\n');
  process.exit(2);
}
try {
  const pglite = await PGlite.create(dir, {
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffers}`],
  });
  await pglite.close();
} catch (e) {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}
