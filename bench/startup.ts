// npm run bench:startup — cold start on an empty DATA_DIR to /healthz 200, and warm restart on
// the same directory. Median of RUNS each. Prints JSON.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePgliteTemplate } from '../src/db/pglite-template.ts';
import { freePort, median, msUntilHealthy, round, spawnServer } from './lib.ts';

// npm start builds the embedded-database template once per install (cached, like the web
// bundle); measure that one-time cost apart, then make sure the real cache is warm.
const scratch = mkdtempSync(join(tmpdir(), 'rampart-bench-template-'));
const tt = performance.now();
await ensurePgliteTemplate(scratch);
const templateBuildMs = performance.now() - tt;
rmSync(scratch, { recursive: true, force: true });
await ensurePgliteTemplate();

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const cold: number[] = [];
const warm: number[] = [];

for (let i = 0; i < RUNS; i++) {
  const dataDir = mkdtempSync(join(tmpdir(), 'rampart-bench-start-'));
  try {
    const port = await freePort();
    let t0 = performance.now();
    let server = spawnServer({ DATA_DIR: dataDir }, port);
    cold.push(await msUntilHealthy(port, t0));
    if ((await server.stop()) !== 0) throw new Error('server did not exit cleanly');
    t0 = performance.now();
    server = spawnServer({ DATA_DIR: dataDir }, port);
    warm.push(await msUntilHealthy(port, t0));
    await server.stop();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log(
  JSON.stringify(
    {
      bench: 'startup',
      runs: RUNS,
      coldStartMs: { median: round(median(cold)), samples: cold.map((x) => round(x)) },
      warmRestartMs: { median: round(median(warm)), samples: warm.map((x) => round(x)) },
      oneTimeTemplateBuildMs: round(templateBuildMs),
      targets: { coldStartMs: 3000, warmRestartMs: 2000 },
      node: process.version,
    },
    null,
    2,
  ),
);
