// Builds the pre-migrated embedded-database template unless a current one is cached. `npm start`
// runs this in a child process so that building it (initdb in WebAssembly, several hundred MB at
// its peak) leaves no memory behind in the server.
const { ensurePgliteTemplate } = await import('../src/db/pglite-template.ts');
if (await ensurePgliteTemplate()) console.log('embedded database template built');
