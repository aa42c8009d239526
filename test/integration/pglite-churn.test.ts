// The embedded database must not crash Node: V8 can abort while it frees WebAssembly code that
// threads create and free around it (wasm-code-gc.ts). These runs churn PGlite threads and plain
// JavaScript threads in a child process, as the server and the suite do, and read V8's trace of
// its WebAssembly code collector: with the mitigation in force it never runs, so the path that
// crashed is never taken; the control run shows the trace would see it if it did.
import { describe, expect, it } from 'vitest';
import { runChurn } from '../../scripts/pglite-stress.ts';

// PGlite only: the PostgreSQL run of the suite would repeat the same child processes.
describe.skipIf(Boolean(process.env.DATABASE_URL))('embedded database under thread churn', () => {
  it('opens and closes databases on several threads with JavaScript threads beside them, exits normally, and frees no WebAssembly code', async () => {
    const r = await runChurn({ seconds: 20, parallel: 3 });
    expect(r.fatal).toBeNull();
    expect(r.signal).toBeNull();
    expect(r.code).toBe(0);
    expect(r.databases).toBeGreaterThanOrEqual(3);
    expect(r.jsThreads).toBeGreaterThanOrEqual(2);
    expect(r.codeCollections).toBe(0);
  }, 300_000);

  it('control: with the code collector turned back on, the same churn frees WebAssembly code', async () => {
    const r = await runChurn({ seconds: 10, parallel: 2, control: true });
    expect(r.codeCollections).toBeGreaterThan(0);
  }, 300_000);
});
