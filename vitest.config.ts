import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**', 'src/web/**'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll waits for what the app does next (a navigation after a save, a list refreshed),
    // like Playwright's own waits: 15 s, not Vitest's 1 s default, which a loaded CI machine misses.
    expect: { poll: { timeout: 15_000 } },
    pool: 'forks',
    // The embedded database's V8 crash mitigation (src/db/wasm-code-gc.ts), in force from the
    // fork's start; the database code also sets it before compiling PGlite.
    execArgv: ['--no-wasm-code-gc'],
    // Each file opens its own embedded database (or shares the PostgreSQL one): keep it to the cores.
    maxWorkers: 2,
  },
});
