// `npm start`: build the web bundle if its sources changed (cached), then serve.
const { ensureWebBuilt } = await import('./build-web.ts');
await ensureWebBuilt({});
const { main } = await import('../src/server/main.ts');
await main();
