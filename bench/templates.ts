// Template scanner throughput: 25 built-in templates against 50 loopback web servers (half
// vulnerable, half clean catch-all), the servers in ONE child process so this process measures
// the scanner alone. Each target is one scan (one lease), run one after another, as the rate limit
// is per scan. Configurations: the default limit (150 req/s), the highest a scan may ask for
// (rateLimit 1000), and the engine with no limit at all. Prints the median of 3 runs of each and
// fails if any request errored or a result differs from the expected matches.
// Run: npx node bench/templates.ts [--runs 3] [--targets 50] [--templates 25]
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createScopedHttp, sameOrigin } from '../src/agent/scanners/http/scoped-http.ts';
import {
  builtinTemplates,
  createTemplateScanner,
  runTemplates,
  type Template,
} from '../src/agent/scanners/template/index.ts';
import { targetHandler, type TargetMode } from '../test/fixtures/template-target.ts';
import { median, round } from './lib.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string' },
    targets: { type: 'string' },
    templates: { type: 'string' },
    serve: { type: 'string' },
  },
});

if (values.serve) {
  // Child: the targets. Prints their ports as one JSON line, then serves until stdin closes.
  const n = Number(values.serve);
  const targets: { port: number; mode: TargetMode }[] = [];
  for (let i = 0; i < n; i++) {
    const mode: TargetMode = i % 2 ? 'clean' : 'vulnerable';
    const server = http.createServer(targetHandler(mode));
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    targets.push({ port: (server.address() as AddressInfo).port, mode });
  }
  process.stdout.write(`${JSON.stringify(targets)}\n`);
  // Each line on stdin asks for this process's CPU time so far (microseconds, user + system).
  createInterface({ input: process.stdin }).on('line', () => {
    const { user, system } = process.cpuUsage();
    process.stdout.write(`${user + system}\n`);
  });
  process.stdin.on('end', () => process.exit(0));
} else {
  await main();
}

async function main(): Promise<void> {
  const runs = Number(values.runs ?? 3);
  const targetCount = Number(values.targets ?? 50);
  const all = [...builtinTemplates()].sort((a, b) => (a.id < b.id ? -1 : 1));
  const templates = all.slice(0, Number(values.templates ?? 25));
  const ids = templates.map((t) => t.id);

  const child = spawn(process.execPath, [import.meta.filename, '--serve', String(targetCount)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  child.once('exit', (c) => {
    if (c) console.error(`target process exited with ${c}`);
  });
  const nextLine = async (): Promise<string> => {
    const r = await lines.next();
    if (r.done) throw new Error('the target process ended');
    return r.value as string;
  };
  const targets = JSON.parse(await nextLine()) as { port: number; mode: TargetMode }[];
  /** CPU microseconds used so far by this process (the scanner) and by the targets' process. */
  const cpuNow = async (): Promise<{ scanner: number; targets: number }> => {
    child.stdin!.write('\n');
    const targetsCpu = Number(await nextLine());
    const { user, system } = process.cpuUsage();
    return { scanner: user + system, targets: targetsCpu };
  };

  // What a correct scan finds: every selected template on a vulnerable target, nothing on a clean one.
  const expectedVulnerable = new Set(ids);

  interface Run {
    requests: number;
    seconds: number;
    errors: number;
    wrong: number;
  }

  async function viaScanner(rateLimit: number): Promise<Run> {
    const scanner = createTemplateScanner();
    let requests = 0;
    let errors = 0;
    let wrong = 0;
    const started = performance.now();
    for (const t of targets) {
      const r = await scanner.scan({
        target: `http://127.0.0.1:${t.port}/`,
        options: { templateIds: ids, rateLimit },
        chunk: null,
        signal: new AbortController().signal,
        progress: () => undefined,
      });
      requests += r.stats.requests;
      errors += r.stats.errors;
      wrong += check(
        t.mode,
        r.matches.map((m) => m.template.id),
      );
    }
    return { requests, errors, wrong, seconds: (performance.now() - started) / 1000 };
  }

  async function unthrottled(): Promise<Run> {
    let requests = 0;
    let errors = 0;
    let wrong = 0;
    const started = performance.now();
    for (const t of targets) {
      const base = new URL(`http://127.0.0.1:${t.port}/`);
      const signal = new AbortController().signal;
      const client = createScopedHttp({ inScope: sameOrigin(base), signal, ratePerSecond: 1_000_000 });
      try {
        const r = await runTemplates({ baseUrl: base, templates: templates as Template[], http: client, signal });
        requests += r.stats.requests;
        errors += r.stats.errors;
        wrong += check(
          t.mode,
          r.matches.map((m) => m.template.id),
        );
      } finally {
        client.close();
      }
    }
    return { requests, errors, wrong, seconds: (performance.now() - started) / 1000 };
  }

  function check(mode: TargetMode, matched: string[]): number {
    const got = new Set(matched);
    if (mode === 'clean') return got.size;
    return (
      [...expectedVulnerable].filter((id) => !got.has(id)).length +
      [...got].filter((id) => !expectedVulnerable.has(id)).length
    );
  }

  const configs: [string, () => Promise<Run>][] = [
    ['default limit (150 req/s)', () => viaScanner(150)],
    ['rateLimit 1000 (the highest allowed)', () => viaScanner(1000)],
    ['engine without a limit', unthrottled],
  ];
  console.log(
    `${templates.length} templates x ${targets.length} targets (${targets.filter((t) => t.mode === 'vulnerable').length} vulnerable), ${runs} runs each; one scan per target, sequential`,
  );
  let failed = false;
  for (const [name, fn] of configs) {
    const results: Run[] = [];
    const cpuBefore = await cpuNow();
    for (let i = 0; i < runs; i++) results.push(await fn());
    const cpuAfter = await cpuNow();
    const sent = results.reduce((s, r) => s + r.requests, 0);
    // CPU time per request on each side: what bounds the rate when each side has a core to itself,
    // and a figure that a busy machine disturbs far less than the wall-clock rate.
    const perRequest = (k: 'scanner' | 'targets') => round((cpuAfter[k] - cpuBefore[k]) / sent, 0);
    const rps = results.map((r) => r.requests / r.seconds);
    const errors = results.reduce((s, r) => s + r.errors, 0);
    const wrong = results.reduce((s, r) => s + r.wrong, 0);
    if (errors || wrong) failed = true;
    console.log(
      `${name.padEnd(38)} ${String(round(median(rps), 1)).padStart(7)} req/s  (${results[0]!.requests} requests, median ${round(median(results.map((r) => r.seconds)), 2)} s, runs ${rps.map((x) => round(x, 0)).join('/')}; errors ${errors}, wrong results ${wrong}; CPU per request: scanner ${perRequest('scanner')} µs, targets ${perRequest('targets')} µs)`,
    );
  }
  child.stdin!.end();
  if (failed) {
    console.error('FAILED: request errors or wrong results');
    process.exitCode = 1;
  }
}
