// npm run bench:portscan — a full TCP connect scan of 127.0.0.1 ports 1–65535: the native engine
// against `nmap -sT -p- -T4 127.0.0.1` on the same machine in the same run.
//
// Setup (not measured): BENCH_LISTENERS (25) listening sockets on random loopback ports, held by a
// separate process so the scanner's process is measured alone. Each round runs nmap, then the
// native engine (identification off, as nmap -sT without -sV), alternating which goes first. The
// open-port sets must be equal (ports open on the machine anyway, e.g. PostgreSQL, count for both).
// BENCH_ROUNDS (3), BENCH_FD_BUDGET (the engine's default). Prints JSON.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { DEFAULT_FD_BUDGET, scanPorts } from '../src/worker/scanners/port/index.ts';
import { median, round } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LISTENERS = Number(process.env.BENCH_LISTENERS ?? 25);
const FD_BUDGET = Number(process.env.BENCH_FD_BUDGET ?? DEFAULT_FD_BUDGET);
const run = promisify(execFile);

const holder = spawn(
  process.execPath,
  ['-e', `const net=require('node:net');let n=${LISTENERS},ports=[];for(let i=0;i<n;i++){const s=net.createServer(c=>c.destroy());s.listen(0,'127.0.0.1',()=>{ports.push(s.address().port);if(ports.length===n)console.log(JSON.stringify(ports))})}`],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const held: number[] = await new Promise((resolve) => holder.stdout.once('data', (d: Buffer) => resolve(JSON.parse(d.toString()) as number[])));

async function nmapScan(): Promise<{ ms: number; open: number[] }> {
  const t = performance.now();
  const { stdout } = await run('nmap', ['-sT', '-p-', '-T4', '-oX', '-', '127.0.0.1'], { maxBuffer: 64 * 1024 * 1024 });
  const ms = performance.now() - t;
  const open = [...stdout.matchAll(/<port protocol="tcp" portid="(\d+)"><state state="open"/g)].map((m) => Number(m[1]));
  return { ms, open: open.sort((a, b) => a - b) };
}

async function nativeScan(): Promise<{ ms: number; open: number[] }> {
  const t = performance.now();
  const r = await scanPorts({ host: '127.0.0.1', ports: Array.from({ length: 65_535 }, (_, i) => i + 1), identify: false, fdBudget: FD_BUDGET });
  return { ms: performance.now() - t, open: r.open.map((p) => p.port) };
}

const nmapVersion = (await run('nmap', ['--version'])).stdout.match(/Nmap version (\S+)/)?.[1] ?? 'unknown';
const times = { nmap: [] as number[], native: [] as number[] };
let sameSets = true;
for (let i = 0; i < ROUNDS; i += 1) {
  const order = i % 2 === 0 ? (['nmap', 'native'] as const) : (['native', 'nmap'] as const);
  const results: Record<string, { ms: number; open: number[] }> = {};
  for (const which of order) results[which] = which === 'nmap' ? await nmapScan() : await nativeScan();
  times.nmap.push(results.nmap!.ms);
  times.native.push(results.native!.ms);
  const a = results.nmap!.open.join(',');
  const b = results.native!.open.join(',');
  if (a !== b) sameSets = false;
  for (const p of held) if (!results.native!.open.includes(p)) sameSets = false;
  console.error(`round ${i + 1}: nmap ${round(results.nmap!.ms / 1000)} s (${results.nmap!.open.length} open), native ${round(results.native!.ms / 1000)} s (${results.native!.open.length} open)`);
}
holder.kill();
const nmapMedian = median(times.nmap);
const nativeMedian = median(times.native);
console.log(
  JSON.stringify(
    { nmap: nmapVersion, rounds: ROUNDS, listeners: LISTENERS, fdBudget: FD_BUDGET, nmapSeconds: times.nmap.map((x) => round(x / 1000)), nativeSeconds: times.native.map((x) => round(x / 1000)), nmapMedianSeconds: round(nmapMedian / 1000), nativeMedianSeconds: round(nativeMedian / 1000), ratio: round(nativeMedian / nmapMedian), sameOpenPortSets: sameSets },
    null,
    2,
  ),
);
process.exit(sameSets ? 0 : 1);
