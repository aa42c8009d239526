// V8 in the Node 18–24 line can abort the whole process while it frees WebAssembly code:
//   # Check failed: jit_page_->allocations_.erase(addr) == 1.
//   ThreadIsolation::JitPageReference::UnregisterAllocation / UnregisterWasmAllocation
// Its JIT-page registry desynchronises when WebAssembly code is freed while other threads create
// and free code, as the PGlite threads (and the scanner and PDF threads) do. In Node 24 the check
// runs whether or not the CPU has memory protection keys, so `--no-memory-protection-keys` does not
// avoid it. Per-allocation frees of WebAssembly code come from one place: V8's WebAssembly code
// garbage collector, which drops the baseline code of functions after they are re-compiled by the
// optimising tier. Turning it off removes that path; the cost is that baseline code stays in memory
// until the process ends (a few MB: the module is compiled once per process and shared).
// The certain way is the command line (`node --no-wasm-code-gc …`): every start script, the image,
// the test runner's forks, the benchmarks and the stress test pass it. Setting the flag at run time
// (applyEmbeddedDatabaseV8Flags) is only a backstop for a process started without it: measured with
// the stress test, 3 of 20 such runs still collected code, none with the flag on the command line.
import { setFlagsFromString } from 'node:v8';

export const WASM_CODE_GC_FLAG = '--no-wasm-code-gc';

/** Applies the flags every process that runs PGlite needs, before any WebAssembly is compiled. */
export function applyEmbeddedDatabaseV8Flags(): void {
  setFlagsFromString(WASM_CODE_GC_FLAG);
  // One background task compiles (and later optimises) the WebAssembly instead of one per core:
  // each task's compiler memory stays with the allocator afterwards, about 20 MB of resident
  // memory per extra task for the life of the process. Measured in BENCHMARKS.md (ingestion).
  setFlagsFromString('--wasm-num-compilation-tasks=1');
}

/** True when this process was started with the collector off (command line or NODE_OPTIONS). */
export function wasmCodeGcOffAtStart(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): boolean {
  const args = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)];
  // The last spelling wins, as V8 reads its flags in order.
  let off = false;
  for (const a of args) {
    if (a === WASM_CODE_GC_FLAG || a === '--no-wasm_code_gc') off = true;
    else if (a === '--wasm-code-gc' || a === '--wasm_code_gc') off = false;
  }
  return off;
}
