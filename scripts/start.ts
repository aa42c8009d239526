// `npm start`: build what is missing or stale (cached), then serve: the web bundle, and the
// pre-migrated embedded-database template that makes a first start on an empty DATA_DIR fast.
const { ensureWebBuilt } = await import('./build-web.ts');
await ensureWebBuilt({});
if (!process.env.DATABASE_URL) {
  const { ensurePgliteTemplate } = await import('../src/db/pglite-template.ts');
  if (await ensurePgliteTemplate()) console.log('embedded database template built');
}
const { main } = await import('../src/server/main.ts');
await main();
