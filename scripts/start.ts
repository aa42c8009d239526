// `npm start`: build what is missing or stale (cached), then serve: the web bundle, and the
// pre-migrated embedded-database template that makes a first start on an empty DATA_DIR fast.
const { ensureWebBuilt } = await import('./build-web.ts');
await ensureWebBuilt({});
if (!process.env.DATABASE_URL) {
  const { hasPgliteTemplate } = await import('../src/db/pglite-template.ts');
  if (!hasPgliteTemplate()) {
    const { spawnSync } = await import('node:child_process');
    const built = spawnSync(
      process.execPath,
      ['--no-wasm-code-gc', new URL('./build-pglite-template.ts', import.meta.url).pathname],
      { stdio: 'inherit' },
    );
    // Without a template the server creates its database the ordinary way (slower, same result).
    if (built.status !== 0)
      console.warn('the embedded database template could not be built; creating the database without it');
  }
}
const { main } = await import('../src/server/main.ts');
await main();
