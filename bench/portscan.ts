// npm run bench:portscan — the worker's port scanner as users run it: whole commands (start-up
// included), each alternated with its reference in the same run.
//
//   start-up     `rampart-worker --help` to its first byte of output, and `rampart-worker scan port`
//                to its first connection (a listener in this process notes the accept), alternated
//                with a bare `node -e` printing one line (the floor any Node program pays);
//   full range   `rampart-worker scan port --target 127.0.0.1 --ports 1-65535 --no-identify
//                --format json` against `nmap -sT -p- -T4 -oX - 127.0.0.1`, alternating which goes
//                first; the open-port sets must be equal (the machine's own services count for both);
//   identify     the same with identification on, on a fixed set of listeners (BENCH_SILENT silent
//                ones that accept and say nothing, plus an SSH and an SMTP greeting, an HTTP server
//                and a Redis-like PING answer) against `nmap -sT -sV -p <those ports>`.
//
// The worker is `node bin/rampart-worker.mjs` (what `npx rampart-worker` runs, without npx's own
// start of about half a second), or with BENCH_SEA=1 also the single-file executable, built first.
// Listeners live in a separate process so the scanning processes are measured alone.
// BENCH_STARTUP_RUNS (11), BENCH_ROUNDS (5), BENCH_IDENTIFY_ROUNDS (1; nmap -sV takes minutes on
// silent ports), BENCH_SILENT (20), BENCH_LISTENERS (25), BENCH_SKIP_IDENTIFY=1. Prints JSON.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildWorker } from '../scripts/build-worker.ts';
import { median, ROOT, round } from './lib.ts';

const STARTUP_RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 11);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const IDENTIFY_ROUNDS = Number(process.env.BENCH_IDENTIFY_ROUNDS ?? 1);
const SILENT = Number(process.env.BENCH_SILENT ?? 20);
const LISTENERS = Number(process.env.BENCH_LISTENERS ?? 25);
const run = promisify(execFile);
const loadBefore = loadavg()[0]!;

// Listeners in their own process: plain ones (accept, close), silent ones, and four that talk.
const holderCode = `
const net = require('node:net');
const ports = { plain: [], silent: [], ssh: 0, smtp: 0, http: 0, redis: 0 };
const listen = (handler) => new Promise((r) => {
  const s = net.createServer((c) => { c.on('error', () => {}); handler(c); });
  s.listen(0, '127.0.0.1', () => r(s.address().port));
});
(async () => {
  for (let i = 0; i < ${LISTENERS}; i++) ports.plain.push(await listen((c) => c.destroy()));
  for (let i = 0; i < ${SILENT}; i++) ports.silent.push(await listen(() => {}));
  ports.ssh = await listen((c) => c.write('SSH-2.0-OpenSSH_9.6p1 Debian-4\\r\\n'));
  ports.smtp = await listen((c) => c.write('220 mail.bench.test ESMTP Postfix\\r\\n'));
  const httpAnswer = 'HTTP/1.1 200 OK\\r\\nServer: nginx/1.24.0\\r\\nContent-Length: 0\\r\\n\\r\\n';
  ports.http = await listen((c) => c.once('data', () => c.end(httpAnswer)));
  const redisAnswer = (d) => (String(d).includes('PING') ? '+PONG\\r\\n' : '-ERR unknown command\\r\\n');
  ports.redis = await listen((c) => c.on('data', (d) => c.write(redisAnswer(d))));
  console.log(JSON.stringify(ports));
})();`;
const holder = spawn(process.execPath, ['-e', holderCode], { stdio: ['ignore', 'pipe', 'inherit'] });
type Held = { plain: number[]; silent: number[]; ssh: number; smtp: number; http: number; redis: number };
const held: Held = await new Promise((resolve) =>
  holder.stdout.once('data', (d: Buffer) => resolve(JSON.parse(d.toString()) as Held)),
);

interface Worker {
  name: string;
  cmd: string;
  args: string[];
}
const workers: Worker[] = [
  {
    name: 'checkout (node bin/rampart-worker.mjs)',
    cmd: process.execPath,
    args: [join(ROOT, 'bin/rampart-worker.mjs')],
  },
];
let seaDir: string | null = null;
if (process.env.BENCH_SEA === '1') {
  seaDir = mkdtempSync(join(tmpdir(), 'rampart-bench-sea-'));
  const cacheDir = join(seaDir, 'cache');
  const { built } = await buildWorker({ targets: ['linux-x64'], outDir: seaDir, cacheDir, log: () => undefined });
  const exe = built['linux-x64'];
  if (exe) workers.push({ name: 'single-file executable (linux-x64)', cmd: exe, args: [] });
}
// The checkout builds its bundle on the first start after a change; that start is not measured.
for (const w of workers) await run(w.cmd, [...w.args, '--version']);

/** Milliseconds from spawn to the first byte on stdout. */
function firstOutput(cmd: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let ms = -1;
    child.stdout.once('data', () => (ms = performance.now() - t));
    child.stdout.resume();
    child.on('error', reject);
    child.on('close', () => (ms < 0 ? reject(new Error(`${cmd} printed nothing`)) : resolve(ms)));
  });
}

/** Milliseconds from spawn to the first connection a scan makes to `listener`. */
async function firstProbe(w: Worker, listener: net.Server): Promise<number> {
  const port = (listener.address() as net.AddressInfo).port;
  const t = performance.now();
  const accepted = new Promise<number>((resolve) =>
    listener.once('connection', (c) => (c.destroy(), resolve(performance.now() - t))),
  );
  const args = [...w.args, 'scan', 'port', '--target', '127.0.0.1', '--ports', String(port), '--no-identify'];
  const child = spawn(w.cmd, args, { stdio: 'ignore' });
  const ms = await accepted;
  await new Promise((r) => child.on('close', r));
  return ms;
}

async function timed(cmd: string, args: string[]): Promise<{ ms: number; stdout: string }> {
  const t = performance.now();
  const { stdout } = await run(cmd, args, { maxBuffer: 64 * 1024 * 1024 });
  return { ms: performance.now() - t, stdout };
}

const nmapOpen = (xml: string) =>
  [...xml.matchAll(/<port protocol="tcp" portid="(\d+)"><state state="open"/g)]
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
const workerOpen = (json: string) =>
  (JSON.parse(json) as { openPorts: { port: number; service?: string }[] }).openPorts;

const nmapVersion = (await run('nmap', ['--version'])).stdout.match(/Nmap version (\S+)/)?.[1] ?? 'unknown';
const report: Record<string, unknown> = { nmap: nmapVersion, node: process.versions.node };

// Start-up.
const listener = net.createServer();
await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()));
const startup: Record<string, unknown> = {};
const bare: number[] = [];
const help = new Map<string, number[]>(workers.map((w) => [w.name, []]));
const probe = new Map<string, number[]>(workers.map((w) => [w.name, []]));
for (let i = 0; i < STARTUP_RUNS; i += 1) {
  bare.push(await firstOutput(process.execPath, ['-e', 'console.log(1)']));
  for (const w of workers) {
    help.get(w.name)!.push(await firstOutput(w.cmd, [...w.args, '--help']));
    probe.get(w.name)!.push(await firstProbe(w, listener));
  }
}
listener.close();
startup.bareNodeMs = round(median(bare), 1);
for (const w of workers) {
  const [h, p] = [help.get(w.name)!, probe.get(w.name)!];
  startup[w.name] = {
    helpFirstOutputMs: round(median(h), 1),
    scanFirstProbeMs: round(median(p), 1),
    helpSamples: h.map((x) => Math.round(x)),
    probeSamples: p.map((x) => Math.round(x)),
  };
}
report.startup = startup;
console.error(`start-up: ${JSON.stringify(startup)}`);

// Full range, identification off.
const fullArgs = ['scan', 'port', '--target', '127.0.0.1', '--ports', '1-65535', '--no-identify', '--format', 'json'];
const full = { nmap: [] as number[], worker: new Map<string, number[]>(workers.map((w) => [w.name, []])) };
// Every scan's open set, in order: [nmap, worker…] per round.
const scans: { nmap: number[]; workers: number[][] }[] = [];
for (let i = 0; i < ROUNDS; i += 1) {
  const nmapFirst = i % 2 === 0;
  let nmapSet: number[] = [];
  const sets: number[][] = [];
  const runNmap = async () => {
    const r = await timed('nmap', ['-sT', '-p-', '-T4', '-oX', '-', '127.0.0.1']);
    full.nmap.push(r.ms);
    nmapSet = nmapOpen(r.stdout);
  };
  if (nmapFirst) await runNmap();
  for (const w of workers) {
    const r = await timed(w.cmd, [...w.args, ...fullArgs]);
    full.worker.get(w.name)!.push(r.ms);
    sets.push(workerOpen(r.stdout).map((p) => p.port));
  }
  if (!nmapFirst) await runNmap();
  scans.push({ nmap: nmapSet, workers: sets });
  const times = workers.map((w) => `${round(full.worker.get(w.name)!.at(-1)! / 1000)} s`).join(', ');
  const nmapS = round(full.nmap.at(-1)! / 1000);
  const counts = sets.map((s) => s.length).join(', ');
  console.error(`full range round ${i + 1}: nmap ${nmapS} s (${nmapSet.length} open); ${times} (${counts} open)`);
}
// Other programs on a shared machine open and close ports while the scans run. A connect that
// succeeds proves a listener (self-connects are excluded), so a port only a worker found open is
// one that was open for a moment, listed apart. A miss is a port nmap found open in that round and
// in every other round, which the worker did not; ports nmap itself saw change are listed apart.
const everOpen = new Set(scans.flatMap((r) => [...r.nmap, ...r.workers.flat()]));
const churn = [...everOpen].filter((p) => {
  const seen = scans.filter((r) => r.nmap.includes(p)).length;
  return seen < scans.length;
});
const mismatches: { round: number; port: number }[] = [];
scans.forEach((r, i) => {
  for (const set of r.workers) {
    for (const p of r.nmap) if (!churn.includes(p) && !set.includes(p)) mismatches.push({ round: i + 1, port: p });
  }
});
const heldPorts = [...held.plain, ...held.silent];
const allHeld = (set: number[]) => heldPorts.every((p) => set.includes(p));
const sameSets = mismatches.length === 0 && scans.every((r) => [r.nmap, ...r.workers].every(allHeld));
const nmapFull = median(full.nmap);
report.fullRange = {
  nmapSeconds: full.nmap.map((x) => round(x / 1000)),
  nmapMedianSeconds: round(nmapFull / 1000),
  workers: Object.fromEntries(
    workers.map((w) => {
      const xs = full.worker.get(w.name)!;
      return [
        w.name,
        {
          seconds: xs.map((x) => round(x / 1000)),
          medianSeconds: round(median(xs) / 1000),
          ratioToNmap: round(median(xs) / nmapFull),
          pairRatios: xs.map((x, i) => round(x / full.nmap[i]!)),
          medianPairRatio: round(median(xs.map((x, i) => x / full.nmap[i]!))),
        },
      ];
    }),
  ),
  sameOpenPortSets: sameSets,
  mismatches,
  notAlwaysOpenForNmap: churn.sort((a, b) => a - b),
};

// Identification on the held listeners.
if (process.env.BENCH_SKIP_IDENTIFY !== '1') {
  const targets = [...held.silent, held.ssh, held.smtp, held.http, held.redis].sort((a, b) => a - b);
  const spec = targets.join(',');
  const ident = { nmap: [] as number[], worker: new Map<string, number[]>(workers.map((w) => [w.name, []])) };
  let identifiedRight = true;
  let nmapServices: Record<string, string> = {};
  for (let i = 0; i < IDENTIFY_ROUNDS; i += 1) {
    for (const w of workers) {
      const args = ['scan', 'port', '--target', '127.0.0.1', '--ports', spec, '--format', 'json'];
      const r = await timed(w.cmd, [...w.args, ...args]);
      ident.worker.get(w.name)!.push(r.ms);
      const open = workerOpen(r.stdout);
      const svc = (port: number) => open.find((p) => p.port === port)?.service;
      const named = (['ssh', 'smtp', 'http', 'redis'] as const).every((k) => svc(held[k]) === k);
      if (open.length !== targets.length || !named) identifiedRight = false;
    }
    const r = await timed('nmap', ['-sT', '-sV', '-p', spec, '-oX', '-', '127.0.0.1']);
    ident.nmap.push(r.ms);
    const services = r.stdout.matchAll(/portid="(\d+)"><state state="open"[^>]*\/><service name="([^"]+)"/g);
    nmapServices = Object.fromEntries([...services].map((m) => [m[1]!, m[2]!]));
    const times = workers.map((w) => `${round(ident.worker.get(w.name)!.at(-1)! / 1000)} s`).join(', ');
    console.error(`identify round ${i + 1}: nmap -sV ${round(ident.nmap.at(-1)! / 1000)} s; ${times}`);
  }
  const nmapIdent = median(ident.nmap);
  report.identify = {
    ports: targets.length,
    silent: SILENT,
    nmapSeconds: ident.nmap.map((x) => round(x / 1000)),
    workers: Object.fromEntries(
      workers.map((w) => {
        const xs = ident.worker.get(w.name)!;
        const medianSeconds = round(median(xs) / 1000);
        const ratioToNmap = round(median(xs) / nmapIdent, 3);
        return [w.name, { seconds: xs.map((x) => round(x / 1000)), medianSeconds, ratioToNmap }];
      }),
    ),
    workerNamedTheTalkers: identifiedRight,
    nmapNamed: Object.fromEntries((['ssh', 'smtp', 'http', 'redis'] as const).map((k) => [k, nmapServices[held[k]]])),
  };
}
holder.kill();
if (seaDir) rmSync(seaDir, { recursive: true, force: true });
report.loadAverage = { before: round(loadBefore), after: round(loadavg()[0]!) };
console.log(JSON.stringify(report, null, 2));
process.exit(sameSets ? 0 : 1);
