// The connect sweep: which ports accept a TCP connection. A full 65,535-port scan is system calls
// (socket, connect, close: a loopback or LAN RST is handled inside the call) plus whatever the
// runtime spends per connection, and net.Socket spends a lot (a stream, timers, events: about
// 35 µs a port, three times the kernel's share). So the sweep drives libuv's TCP handles directly
// (Node's `tcp_wrap` binding: a handle, a connect request and one callback per port, with one
// timer for every deadline), and large sweeps share the ports with worker threads through an
// atomic cursor, so a thread that starts late or runs on a busier core simply takes fewer.
// Without that binding (a Node that no longer exposes it) the engine falls back to net.Socket
// (engine.ts). Open ports are reported as they are found; identifying them is the caller's.
//
// Most ports of a sweep refuse, and a refused socket can connect again: on Linux the first
// connect() on it fails with ECONNABORTED and resets it, the second goes out. Two connect() calls
// are cheaper than socket(), close() and a new handle (a full loopback sweep: about 40 % less
// time), so refused handles are kept for the next ports. Where the reset does not work (other
// kernels refuse a second connect with EINVAL), the first failure turns the reuse off.
//
// sweepLoop() runs in the caller's thread and, as source text, in each worker thread (the worker
// ships as a single-file executable, where a thread cannot load a module file): it must not
// reference anything outside its own body.
import { availableParallelism } from 'node:os';
import { getSystemErrorName } from 'node:util';
import { Worker } from 'node:worker_threads';

/** The part of Node's tcp_wrap binding the sweep uses. */
export interface TcpBinding {
  TCP: new (type: number) => TcpHandle;
  TCPConnectWrap: new () => ConnectRequest;
  constants: { SOCKET: number };
}
interface TcpHandle {
  connect(req: ConnectRequest, address: string, port: number): number;
  connect6(req: ConnectRequest, address: string, port: number): number;
  getsockname(out: { address?: string; port?: number }): number;
  getpeername(out: { address?: string; port?: number }): number;
  close(): void;
}
interface ConnectRequest {
  oncomplete: (status: number, handle: TcpHandle, req: ConnectRequest) => void;
  port: number;
  tries: number;
  deadline: number;
  done: boolean;
  handle: TcpHandle;
}

/** Node's TCP binding, or null when this Node does not expose it. */
export function tcpBinding(): TcpBinding | null {
  const binding = (process as { binding?: (name: string) => unknown }).binding;
  if (typeof binding !== 'function') return null;
  try {
    const b = binding.call(process, 'tcp_wrap') as Partial<TcpBinding> | undefined;
    const proto = b?.TCP?.prototype as Partial<TcpHandle> | undefined;
    const methods = ['connect', 'connect6', 'getsockname', 'close'] as const;
    const ok =
      typeof b?.TCPConnectWrap === 'function' &&
      typeof b.constants?.SOCKET === 'number' &&
      methods.every((m) => typeof proto?.[m] === 'function');
    return ok ? (b as TcpBinding) : null;
  } catch {
    return null;
  }
}

export interface SweepInput {
  address: string;
  ipv6: boolean;
  /** The ports, shared between threads (a SharedArrayBuffer). */
  ports: Uint16Array;
  /** [next index into ports], taken with Atomics.add by every thread. */
  cursor: Int32Array;
  timeoutMs: number;
  retries: number;
  /** Connections in flight at once in this thread. */
  budget: number;
  /** Milliseconds between new connections in this thread (0 = no rate limit). */
  interval: number;
}

export interface SweepCounts {
  done: number;
  open: number;
  closed: number;
  filtered: number;
}

export interface SweepHooks {
  tcp: TcpBinding;
  errorName: (status: number) => string;
  onOpen: (port: number) => void;
}

export interface SweepRun {
  counts: SweepCounts;
  promise: Promise<SweepCounts>;
  stop(): void;
}

/** Runs inside each thread as source text too. Must not reference anything outside its own body. */
export function sweepLoop(input: SweepInput, hooks: SweepHooks): SweepRun {
  const { TCP, TCPConnectWrap, constants } = hooks.tcp;
  const counts: SweepCounts = { done: 0, open: 0, closed: 0, filtered: 0 };
  const RESOURCE = ['EMFILE', 'ENFILE', 'ENOBUFS', 'EADDRNOTAVAIL', 'EAGAIN'];
  const names = new Map<number, string>();
  const nameOf = (status: number) => {
    let n = names.get(status);
    if (n === undefined) names.set(status, (n = hooks.errorName(status)));
    return n;
  };
  // Probes in flight, oldest first: with one timeout for all, also the order of their deadlines.
  let queue: (ConnectRequest | undefined)[] = [];
  let head = 0;
  let inflight = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let wait: ReturnType<typeof setTimeout> | null = null;
  let nextSlot = 0;
  let resourceWaits = 0;
  let stopped = false;
  let failure: Error | null = null;
  /** Refused handles, ready to connect again; `reuse` goes off when a reset does not work. */
  const spare: TcpHandle[] = [];
  let reuse = true;
  const retry: [number, number][] = [];
  let finish!: (c: SweepCounts) => void;
  let fail!: (e: Error) => void;
  const promise = new Promise<SweepCounts>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });

  function take(): [number, number] | null {
    const again = retry.pop();
    if (again) return again;
    const i = Atomics.add(input.cursor, 0, 1);
    return i < input.ports.length ? [input.ports[i]!, 0] : null;
  }

  function outcome(port: number, tries: number, name: string): void {
    if (name === 'ECONNREFUSED' || name === 'ECONNRESET') counts.closed += 1;
    else if (name === 'TIMEOUT' && tries < input.retries) return void retry.push([port, tries + 1]);
    else if (RESOURCE.includes(name)) {
      // Out of sockets (the budget is above the fd limit): this one again, after a pause.
      retry.push([port, tries]);
      if (++resourceWaits > 1_000) failure = new Error(`Out of sockets (${name}); lower the fd budget`);
      else if (!wait) wait = setTimeout(() => ((wait = null), pump()), 50 + Math.random() * 200);
      return;
    } else counts.filtered += 1;
    counts.done += 1;
  }

  function oncomplete(status: number, handle: TcpHandle, req: ConnectRequest): void {
    if (req.done) return; // timed out or stopped: the handle is already closed
    req.done = true;
    inflight -= 1;
    if (status === 0) {
      // Connecting to the port a loopback connect was given as its own source port "succeeds"
      // (TCP simultaneous open): that is not a listening service.
      const local: { address?: string; port?: number } = {};
      const peer: { address?: string; port?: number } = {};
      handle.getsockname(local);
      handle.getpeername(peer);
      if (local.port === peer.port && local.address === peer.address) counts.closed += 1;
      else {
        counts.open += 1;
        hooks.onOpen(req.port);
      }
      counts.done += 1;
      handle.close();
    } else {
      const name = nameOf(status);
      if (reuse && name === 'ECONNREFUSED' && !stopped) spare.push(handle);
      else handle.close();
      outcome(req.port, req.tries, name);
    }
    while (head < queue.length && queue[head]!.done) queue[head++] = undefined;
    pump();
  }

  function onTimer(): void {
    timer = null;
    const now = Date.now();
    while (head < queue.length) {
      const req = queue[head]!;
      if (!req.done) {
        if (req.deadline > now) break;
        req.done = true;
        inflight -= 1;
        req.handle.close();
        outcome(req.port, req.tries, 'TIMEOUT');
      }
      queue[head++] = undefined;
    }
    pump();
  }

  function pump(): void {
    if (stopped) return;
    if (head > 4_096 && head * 2 > queue.length) {
      queue = queue.slice(head);
      head = 0;
    }
    while (!failure && !wait && inflight < input.budget) {
      if (input.interval) {
        const now = Date.now();
        if (nextSlot > now) {
          wait = setTimeout(() => ((wait = null), pump()), nextSlot - now);
          break;
        }
        nextSlot = Math.max(now, nextSlot) + input.interval;
      }
      const next = take();
      if (!next) break;
      const [port, tries] = next;
      let req!: ConnectRequest;
      // Each connect() on a request of its own: the binding releases a request whose call failed.
      const connect = (h: TcpHandle) => {
        req = new TCPConnectWrap();
        return input.ipv6 ? h.connect6(req, input.address, port) : h.connect(req, input.address, port);
      };
      let handle = spare.pop();
      let err = 0;
      if (handle) {
        // The first connect() on a refused socket fails and resets it; the second is the probe.
        err = connect(handle);
        if (err && nameOf(err) === 'ECONNABORTED') err = connect(handle);
        if (err) {
          reuse = false;
          handle.close();
          handle = undefined;
          for (const h of spare.splice(0)) h.close();
        }
      }
      if (!handle) {
        handle = new TCP(constants.SOCKET);
        err = connect(handle);
      }
      req.oncomplete = oncomplete;
      req.port = port;
      req.tries = tries;
      req.done = false;
      req.deadline = Date.now() + input.timeoutMs;
      req.handle = handle;
      if (err) {
        handle.close();
        outcome(port, tries, nameOf(err));
        continue;
      }
      inflight += 1;
      queue.push(req);
    }
    if (!timer && head < queue.length) timer = setTimeout(onTimer, Math.max(1, queue[head]!.deadline - Date.now()));
    if (failure && inflight === 0) {
      stop();
      fail(failure);
    } else if (inflight === 0 && !wait && retry.length === 0 && Atomics.load(input.cursor, 0) >= input.ports.length) {
      stop();
      finish(counts);
    }
  }

  function stop(): void {
    if (stopped) return;
    stopped = true;
    if (timer) clearTimeout(timer);
    if (wait) clearTimeout(wait);
    for (const h of spare.splice(0)) h.close();
    for (let i = head; i < queue.length; i++) {
      const req = queue[i];
      if (req && !req.done) {
        req.done = true;
        req.handle.close();
      }
    }
    queue = [];
    finish(counts);
  }

  queueMicrotask(pump);
  return { counts, promise, stop };
}

const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { getSystemErrorName } = require('node:util');
const sweepLoop = (${sweepLoop.toString()});
const run = sweepLoop(workerData, {
  tcp: process.binding('tcp_wrap'),
  errorName: getSystemErrorName,
  onOpen: (port) => parentPort.postMessage({ type: 'open', port }),
});
const ticker = setInterval(() => parentPort.postMessage({ type: 'progress', done: run.counts.done }), 250);
parentPort.on('message', (m) => { if (m === 'stop') run.stop(); });
run.promise.then(
  (c) => { clearInterval(ticker); parentPort.postMessage({ type: 'done', counts: c }); parentPort.close(); },
  (e) => { clearInterval(ticker); parentPort.postMessage({ type: 'error', message: e.message }); parentPort.close(); },
);
`;

type ThreadMessage =
  | { type: 'open'; port: number }
  | { type: 'progress'; done: number }
  | { type: 'done'; counts: SweepCounts }
  | { type: 'error'; message: string };

/** Threads worth sweeping with, this one included: one per core (up to 4) for 4,096 ports or more. */
export function sweepThreads(ports: number, requested?: number): number {
  if (requested !== undefined) return Math.max(1, Math.floor(requested));
  if (ports < 4_096) return 1;
  return Math.max(1, Math.min(4, availableParallelism()));
}

export interface SweepOptions {
  tcp: TcpBinding;
  address: string;
  ipv6: boolean;
  ports: readonly number[];
  timeoutMs: number;
  retries: number;
  /** Sockets in flight at once, over all threads. */
  fdBudget: number;
  /** New connections per second over all threads; 0 = unlimited. */
  rate: number;
  /** Threads in all, this one included. */
  threads: number;
  signal?: AbortSignal;
  onOpen: (port: number) => void;
  onProgress?: (done: number) => void;
}

/** Sweeps the ports in this thread and in `threads - 1` worker threads; resolves with the counts. */
export async function sweep(o: SweepOptions): Promise<SweepCounts> {
  const shared = new Uint16Array(new SharedArrayBuffer(o.ports.length * 2));
  shared.set(o.ports);
  const cursor = new Int32Array(new SharedArrayBuffer(4));
  const lanes = Math.max(1, Math.min(o.threads, Math.ceil(o.ports.length / 256)));
  const budget = Math.max(1, Math.floor(o.fdBudget / lanes));
  const input: SweepInput = {
    address: o.address,
    ipv6: o.ipv6,
    ports: shared,
    cursor,
    timeoutMs: o.timeoutMs,
    retries: o.retries,
    budget,
    interval: o.rate > 0 ? (1_000 * lanes) / o.rate : 0,
  };
  const local = sweepLoop(input, { tcp: o.tcp, errorName: getSystemErrorName, onOpen: o.onOpen });
  const threadDone = new Array<number>(lanes - 1).fill(0);
  const workers: Worker[] = [];
  const report = () => o.onProgress?.(local.counts.done + threadDone.reduce((s, d) => s + d, 0));
  const ticker = o.onProgress ? setInterval(report, 250) : null;
  const onAbort = () => {
    local.stop();
    for (const w of workers) w.postMessage('stop');
  };
  o.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const threads = threadDone.map(
      (_, i) =>
        new Promise<SweepCounts>((resolve, reject) => {
          const w = new Worker(THREAD_SOURCE, { eval: true, workerData: input });
          workers.push(w);
          w.on('message', (m: ThreadMessage) => {
            if (m.type === 'open') o.onOpen(m.port);
            else if (m.type === 'progress') threadDone[i] = m.done;
            else if (m.type === 'done') {
              threadDone[i] = m.counts.done;
              resolve(m.counts);
            } else reject(new Error(`A scan thread failed: ${m.message}`));
          });
          w.on('error', reject);
          w.on('exit', (code) => reject(new Error(`A scan thread exited with ${code}`)));
        }),
    );
    const all = await Promise.all([local.promise, ...threads]);
    const sum = (s: SweepCounts, c: SweepCounts) => ({
      done: s.done + c.done,
      open: s.open + c.open,
      closed: s.closed + c.closed,
      filtered: s.filtered + c.filtered,
    });
    return all.reduce(sum, { done: 0, open: 0, closed: 0, filtered: 0 });
  } finally {
    if (ticker) clearInterval(ticker);
    o.signal?.removeEventListener('abort', onAbort);
    local.stop();
    for (const w of workers) void w.terminate();
  }
}
