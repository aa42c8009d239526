// The connect sweep of a large port scan spread over worker threads. Profiles of a full 65,535-port
// scan show the time in the connect() and close() system calls (a loopback or LAN RST is handled
// inside the call), not in JavaScript, so one thread per core is what brings the wall time down.
// Threads only find which ports accept a connection; the caller identifies those on fresh
// connections, so the threads stay small and self-contained.
//
// The thread's code is one self-contained function turned into source text (`eval` workers):
// the worker ships as a single-file executable, where a thread cannot load a module file.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

export interface SweepOptions {
  address: string;
  ports: readonly number[];
  timeoutMs: number;
  retries: number;
  /** Sockets open at once, over all threads. */
  fdBudget: number;
  /** New connections per second over all threads; 0 = unlimited. */
  rate: number;
  threads: number;
  signal?: AbortSignal;
  onProgress?: (p: { done: number; open: number }) => void;
}

export interface SweepResult {
  open: number[];
  closed: number;
  filtered: number;
}

interface ThreadInput {
  address: string;
  ports: number[];
  timeoutMs: number;
  retries: number;
  budget: number;
  interval: number;
}

type ThreadMessage = { type: 'progress'; done: number; open: number } | { type: 'done'; open: number[]; closed: number; filtered: number } | { type: 'error'; message: string };

/** Runs inside each thread. Must not reference anything outside its own body. */
function threadMain(): void {
  /* eslint-disable @typescript-eslint/no-require-imports -- eval workers are CommonJS scripts */
  const net = require('node:net') as typeof import('node:net');
  const { parentPort, workerData } = require('node:worker_threads') as typeof import('node:worker_threads');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const input = workerData as ThreadInput;
  const RESOURCE = new Set(['EMFILE', 'ENFILE', 'ENOBUFS', 'EADDRNOTAVAIL', 'EAGAIN']);
  const open: number[] = [];
  let closed = 0;
  let filtered = 0;
  let done = 0;
  let next = 0;
  let nextSlot = 0;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  function attempt(port: number): Promise<'open' | 'closed' | 'timeout' | 'resources' | 'unreachable'> {
    return new Promise((resolve) => {
      let socket: import('node:net').Socket;
      try {
        socket = net.connect({ host: input.address, port });
      } catch {
        return resolve('resources');
      }
      const timer = setTimeout(() => finish('timeout'), input.timeoutMs);
      function finish(state: 'open' | 'closed' | 'timeout' | 'resources' | 'unreachable') {
        clearTimeout(timer);
        socket.removeAllListeners();
        socket.on('error', () => undefined);
        socket.destroy();
        resolve(state);
      }
      socket.once('connect', () => {
        // Connecting to the port a loopback connect was given as its own source port "succeeds"
        // (TCP simultaneous open): that is not a listening service.
        finish(socket.localPort === socket.remotePort && socket.localAddress === socket.remoteAddress ? 'closed' : 'open');
      });
      socket.once('error', (e: NodeJS.ErrnoException) => {
        const code = e.code ?? '';
        finish(code === 'ECONNREFUSED' || code === 'ECONNRESET' ? 'closed' : RESOURCE.has(code) ? 'resources' : 'unreachable');
      });
    });
  }

  async function lane(): Promise<void> {
    while (next < input.ports.length) {
      const port = input.ports[next++]!;
      for (let tries = 0; ; ) {
        if (input.interval) {
          const now = Date.now();
          const at = Math.max(now, nextSlot);
          nextSlot = at + input.interval;
          if (at > now) await sleep(at - now);
        }
        const state = await attempt(port);
        if (state === 'resources') {
          await sleep(50 + Math.random() * 200);
          continue;
        }
        if (state === 'timeout' && tries < input.retries) {
          tries += 1;
          continue;
        }
        if (state === 'open') open.push(port);
        else if (state === 'closed') closed += 1;
        else filtered += 1;
        break;
      }
      done += 1;
    }
  }

  const ticker = setInterval(() => parentPort!.postMessage({ type: 'progress', done, open: open.length }), 250);
  Promise.all(Array.from({ length: Math.min(input.budget, input.ports.length) }, lane)).then(
    () => {
      clearInterval(ticker);
      parentPort!.postMessage({ type: 'done', open, closed, filtered });
    },
    (e: unknown) => {
      clearInterval(ticker);
      parentPort!.postMessage({ type: 'error', message: e instanceof Error ? e.message : String(e) });
    },
  );
}

const THREAD_SOURCE = `(${threadMain.toString()})()`;

/** Threads worth starting for this many ports: one per core, none for small scans. */
export function sweepThreads(ports: number, requested?: number): number {
  if (requested !== undefined) return Math.max(1, Math.floor(requested));
  if (ports < 4_096) return 1;
  return Math.max(1, Math.min(4, availableParallelism()));
}

export async function sweepInThreads(o: SweepOptions): Promise<SweepResult> {
  // Interleave ports over the threads so each gets a fair share of slow (filtered) ranges.
  const slices: number[][] = Array.from({ length: o.threads }, () => []);
  o.ports.forEach((p, i) => slices[i % o.threads]!.push(p));
  const budget = Math.max(1, Math.floor(o.fdBudget / o.threads));
  const interval = o.rate > 0 ? (1_000 * o.threads) / o.rate : 0;
  const progress = slices.map(() => ({ done: 0, open: 0 }));
  const workers: Worker[] = [];
  const onAbort = () => {
    for (const w of workers) void w.terminate();
  };
  o.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const results = await Promise.all(
      slices.map(
        (ports, i) =>
          new Promise<SweepResult>((resolve, reject) => {
            const input: ThreadInput = { address: o.address, ports, timeoutMs: o.timeoutMs, retries: o.retries, budget, interval };
            const w = new Worker(THREAD_SOURCE, { eval: true, workerData: input });
            workers.push(w);
            w.on('message', (m: ThreadMessage) => {
              if (m.type === 'progress') {
                progress[i] = { done: m.done, open: m.open };
                o.onProgress?.({ done: progress.reduce((s, x) => s + x.done, 0), open: progress.reduce((s, x) => s + x.open, 0) });
              } else if (m.type === 'done') resolve({ open: m.open, closed: m.closed, filtered: m.filtered });
              else reject(new Error(`A scan thread failed: ${m.message}`));
            });
            w.on('error', reject);
            w.on('exit', (code) => {
              if (o.signal?.aborted) reject(o.signal.reason);
              else if (code !== 0) reject(new Error(`A scan thread exited with ${code}`));
            });
          }),
      ),
    );
    return {
      open: results.flatMap((r) => r.open).sort((a, b) => a - b),
      closed: results.reduce((s, r) => s + r.closed, 0),
      filtered: results.reduce((s, r) => s + r.filtered, 0),
    };
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
    for (const w of workers) void w.terminate();
  }
}
