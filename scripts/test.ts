// `npm test`: the whole suite through Vitest, then one plain closing line
// "tests: N passed, N failed, N skipped" that CI reads.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface Report {
  success: boolean;
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  testResults?: {
    name: string;
    status: string;
    message?: string;
    assertionResults?: { fullName: string; status: string; failureMessages?: string[] }[];
  }[];
}

/** The first line of a failure, short enough for one line of the closing summary. */
function firstLine(text: string | undefined): string {
  const line = (text ?? '').split('\n').find((l) => l.trim()) ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/** One line per failed test, and per file that failed outside its tests (a suite that did not
 *  start, a fork that died), so the end of a long CI log names what went wrong. */
function failureLines(report: Report): string[] {
  const lines: string[] = [];
  const root = process.cwd() + '/';
  for (const file of report.testResults ?? []) {
    const name = file.name.startsWith(root) ? file.name.slice(root.length) : file.name;
    const failed = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
    for (const t of failed) lines.push(`failed: ${name} > ${t.fullName}: ${firstLine(t.failureMessages?.[0])}`);
    if (file.status === 'failed' && !failed.length) lines.push(`failed: ${name}: ${firstLine(file.message)}`);
  }
  return lines;
}

/** Seconds Vitest may take to exit once its report is written before what is left is ended. */
const EXIT_GRACE_SECONDS = 30;

const dir = mkdtempSync(join(tmpdir(), 'rampart-vitest-'));
const reportFile = join(dir, 'report.json');
const args = [
  'run',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${reportFile}`,
  ...process.argv.slice(2),
];
const vitest = join(import.meta.dirname, '../node_modules/vitest/vitest.mjs');

function readReport(): Report | null {
  try {
    return existsSync(reportFile) ? (JSON.parse(readFileSync(reportFile, 'utf8')) as Report) : null;
  } catch {
    return null; // not written, or still being written
  }
}

// Vitest runs in a process group of its own so that whatever a test file spawned and failed to stop
// (a server process when a test timed out, say) can be ended with it. Such a process holds Vitest's
// worker pipe open, and Vitest then never exits ("Timeout terminating forks worker"), nor does
// `npm test | tee` in CI. So once the report is written, Vitest gets a grace period to exit; after
// it, the whole group is killed and the report decides the exit code.
const child = spawn(process.execPath, [vitest, ...args], { stdio: 'inherit', detached: true });
const group = -child.pid!;
const signalGroup = (signal: NodeJS.Signals) => {
  try {
    process.kill(group, signal);
    return true;
  } catch {
    return false; // the group is gone
  }
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => signalGroup(signal));

let reportSeenAt = 0;
let endedLeftovers = false;
const watch = setInterval(() => {
  if (!reportSeenAt) {
    if (readReport()) reportSeenAt = Date.now();
  } else if (Date.now() - reportSeenAt > EXIT_GRACE_SECONDS * 1000) {
    endedLeftovers = signalGroup('SIGKILL');
  }
}, 1000);
const exitCode: number | null = await new Promise((resolve) => child.on('exit', (c) => resolve(c)));
clearInterval(watch);
// Anything still in the group (spawned by a test, never stopped) is ended now.
if (signalGroup('SIGKILL')) endedLeftovers = true;
if (endedLeftovers)
  console.error('\nProcesses started by the tests were still running after the run; they were ended.');

const report = readReport();
const summary = report
  ? `tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numPendingTests + report.numTodoTests} skipped`
  : 'tests: 0 passed, 0 failed';
// Vitest's own exit code when it exited; the report's verdict when it had to be ended.
const code = exitCode ?? (report?.success ? 0 : 1);
rmSync(dir, { recursive: true, force: true });
console.log(`\n${process.env.DATABASE_URL ? '(PostgreSQL) ' : '(PGlite) '}database run`);
if (report) for (const line of failureLines(report)) console.log(line);
console.log(summary);
process.exit(code);
