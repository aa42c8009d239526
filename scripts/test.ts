// `npm test`: the whole suite through Vitest, then one plain closing line
// "tests: N passed, N failed, N skipped" that CI reads.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'rampart-vitest-'));
const report = join(dir, 'report.json');
const args = ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)];
const vitest = join(import.meta.dirname, '../node_modules/vitest/vitest.mjs');
const child = spawn(process.execPath, [vitest, ...args], { stdio: 'inherit' });
const code: number = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));

let summary = 'tests: 0 passed, 0 failed';
try {
  const r = JSON.parse(readFileSync(report, 'utf8')) as {
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    numTodoTests: number;
  };
  summary = `tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`;
} catch {
  /* vitest did not write a report: the exit code speaks */
}
rmSync(dir, { recursive: true, force: true });
console.log(`\n${process.env.DATABASE_URL ? '(PostgreSQL) ' : '(PGlite) '}database run`);
console.log(summary);
process.exit(code);
