#!/usr/bin/env node
// Launcher for `npx rampart-worker` in a checkout. The CLI runs from one bundled file with V8's
// compile cache (a start in tens of milliseconds, not the second it takes to resolve and
// type-strip the sources); the bundle is built here when missing or older than its sources
// (bin/worker-cli-bundle.mjs). Without the bundler (a production install) or if bundling
// fails, the TypeScript sources run directly, as before.
import { constants, createRequire, enableCompileCache } from 'node:module';
import { bundleIsCurrent, CLI_BUNDLE, COMPILE_CACHE_DIR } from './worker-cli-bundle.mjs';

let bundled = bundleIsCurrent();
if (!bundled) {
  try {
    const { buildWorkerCli } = await import('../scripts/build-worker.ts');
    await buildWorkerCli();
    bundled = true;
  } catch (e) {
    // No bundler or build script (`npm ci --omit=dev`, the image) is expected; anything else is worth a line.
    const missing = e?.code === 'ERR_MODULE_NOT_FOUND' && /rolldown|postject|build-worker/.test(String(e.message));
    if (!missing)
      process.stderr.write(`rampart-worker: could not bundle the CLI (${e?.message ?? e}); running the sources\n`);
  }
}
if (bundled) {
  // A read-only install cannot write the cache next to the bundle: Node's default place then.
  if (enableCompileCache(COMPILE_CACHE_DIR).status === constants.compileCacheStatus.FAILED) enableCompileCache();
  createRequire(import.meta.url)(CLI_BUNDLE);
} else {
  await import('../src/agent/main.ts');
}
