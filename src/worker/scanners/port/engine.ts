// TCP connect scan (node:net). Every probe holds one file descriptor, so concurrency is bounded
// by an fd budget; a connect that times out is tried once more (a dropped SYN is common on busy
// links), a refused one is closed, and open ports are identified (probe.ts) while the scan goes
// on. An optional rate caps new connections per second. The AbortSignal stops scheduling and
// closes every socket in flight.
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { identifyService, type ServiceInfo } from './probe.ts';
import { sweepInThreads, sweepThreads } from './sweep.ts';

export interface PortScanOptions {
  /** A hostname or IP address. */
  host: string;
  ports: readonly number[];
  /** Per-connect timeout (default 1,000 ms). */
  timeoutMs?: number;
  /** Extra attempts after a connect timeout (default 1). */
  retries?: number;
  /** Sockets open at once (default 512). */
  fdBudget?: number;
  /** New connections per second; unlimited when absent. */
  rate?: number;
  /** Identify services on open ports (default true). */
  identify?: boolean;
  /** How long to wait for a service that speaks first (default 2,000 ms). */
  bannerWaitMs?: number;
  /** Timeout of each identification probe (default 2,000 ms). */
  probeTimeoutMs?: number;
  signal?: AbortSignal;
  /** Called as ports complete. */
  onProgress?: (p: { done: number; total: number; open: number }) => void;
  /** Threads for the connect sweep (default: one per core, up to 4, for 4,096 ports or more). */
  threads?: number;
  /** Injected for tests; defaults to dns.lookup. */
  resolve?: (host: string) => Promise<string>;
}

export interface OpenPort extends ServiceInfo {
  port: number;
}

export interface PortScanResult {
  host: string;
  address: string;
  scanned: number;
  open: OpenPort[];
  closed: number;
  /** No answer (timeouts) or unreachable. */
  filtered: number;
}

export const DEFAULT_FD_BUDGET = 512;
export const DEFAULT_CONNECT_TIMEOUT_MS = 1_000;

export class PortScanError extends Error {
  /** A later attempt may succeed (a DNS hiccup, no sockets left). */
  readonly retryable: boolean;
  constructor(message: string, retryable: boolean, opts: { cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.name = 'PortScanError';
    this.retryable = retryable;
  }
}

type ConnectOutcome = { state: 'open'; socket: net.Socket } | { state: 'closed' | 'timeout' | 'unreachable' | 'resources' | 'aborted'; code?: string };

const RESOURCE_CODES = new Set(['EMFILE', 'ENFILE', 'ENOBUFS', 'EADDRNOTAVAIL', 'EAGAIN']);
const UNREACHABLE_CODES = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'ETIMEDOUT', 'EACCES', 'EPERM']);

function connect(address: string, port: number, timeoutMs: number, sockets: Set<net.Socket>, signal?: AbortSignal): Promise<ConnectOutcome> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve({ state: 'aborted' });
    let socket: net.Socket;
    try {
      socket = net.connect({ host: address, port });
    } catch (e) {
      return resolve({ state: 'resources', code: (e as NodeJS.ErrnoException).code ?? 'ERR' });
    }
    sockets.add(socket);
    const timer = setTimeout(() => settle({ state: 'timeout' }), timeoutMs);
    const settle = (o: ConnectOutcome) => {
      clearTimeout(timer);
      socket.off('error', onError);
      if (o.state !== 'open') {
        socket.destroy();
        sockets.delete(socket);
      } else {
        socket.once('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      resolve(o);
    };
    const onError = (e: NodeJS.ErrnoException) => {
      const code = e.code ?? 'ERR';
      settle(code === 'ECONNREFUSED' || code === 'ECONNRESET' ? { state: 'closed', code } : RESOURCE_CODES.has(code) ? { state: 'resources', code } : UNREACHABLE_CODES.has(code) ? { state: 'unreachable', code } : { state: 'unreachable', code });
    };
    // A loopback connect to the port it was given as its own source port "succeeds" (TCP
    // simultaneous open): no service is listening there.
    socket.once('connect', () => settle(socket.localPort === socket.remotePort && socket.localAddress === socket.remoteAddress ? { state: 'closed' } : { state: 'open', socket }));
    socket.once('error', onError);
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function resolveTarget(host: string, resolver?: (h: string) => Promise<string>): Promise<string> {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (net.isIP(bare)) return bare;
  try {
    return resolver ? await resolver(bare) : (await lookup(bare)).address;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // NXDOMAIN will not fix itself on a retry; a resolver timeout might.
    throw new PortScanError(`Cannot resolve ${bare}${code ? ` (${code})` : ''}`, code !== 'ENOTFOUND' && code !== 'ENODATA', { cause: e });
  }
}

function abortReason(signal: AbortSignal): Error {
  if (signal.reason instanceof Error) return signal.reason;
  const e = new Error('The scan was aborted');
  e.name = 'AbortError';
  return e;
}

export async function scanPorts(opts: PortScanOptions): Promise<PortScanResult> {
  const { signal } = opts;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const retries = Math.max(0, opts.retries ?? 1);
  const budget = Math.max(1, Math.floor(opts.fdBudget ?? DEFAULT_FD_BUDGET));
  const identify = opts.identify ?? true;
  const ports = [...new Set(opts.ports)].filter((p) => Number.isInteger(p) && p >= 1 && p <= 65_535);
  if (signal?.aborted) throw abortReason(signal);
  const address = await resolveTarget(opts.host, opts.resolve);
  const hostName = opts.host.replace(/^\[(.*)\]$/, '$1');

  const sockets = new Set<net.Socket>();
  const onAbort = () => {
    for (const s of sockets) s.destroy();
  };
  signal?.addEventListener('abort', onAbort, { once: true });

  const interval = opts.rate && opts.rate > 0 ? 1_000 / opts.rate : 0;
  let nextSlot = 0;
  const gate = async () => {
    if (!interval) return;
    const now = Date.now();
    const at = Math.max(now, nextSlot);
    nextSlot = at + interval;
    if (at > now) await sleep(at - now);
  };

  const open: OpenPort[] = [];
  let closed = 0;
  let filtered = 0;
  let done = 0;
  let next = 0;
  let resourceWaits = 0;

  async function scanOne(port: number): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      await gate();
      const out = await connect(address, port, timeoutMs, sockets, signal);
      if (out.state === 'open') {
        const info = identify
          ? await identifyService(out.socket, { address, port, hostName, bannerWaitMs: opts.bannerWaitMs ?? 2_000, probeTimeoutMs: opts.probeTimeoutMs ?? Math.max(2_000, timeoutMs), ...(signal ? { signal } : {}) })
          : (out.socket.destroy(), { identifiedBy: 'none' as const });
        open.push({ port, ...info });
        return;
      }
      if (out.state === 'aborted') return;
      if (out.state === 'closed') {
        closed += 1;
        return;
      }
      if (out.state === 'resources') {
        // The process ran out of sockets (the budget is above the fd limit): wait and try again.
        if (++resourceWaits > 1_000) throw new PortScanError(`Out of sockets (${out.code}); lower the fd budget`, true);
        await sleep(50 + Math.random() * 200);
        attempt -= 1;
        continue;
      }
      if (out.state === 'timeout' && attempt < retries) continue;
      filtered += 1;
      return;
    }
  }

  async function lane(): Promise<void> {
    while (!signal?.aborted && next < ports.length) {
      const port = ports[next++]!;
      await scanOne(port);
      if (signal?.aborted) return;
      done += 1;
      opts.onProgress?.({ done, total: ports.length, open: open.length });
    }
  }

  // Large scans: threads find the open ports, then only those are connected to again here and
  // identified. Small scans (and one-core machines) connect and identify in one pass.
  const threads = sweepThreads(ports.length, opts.threads);
  let targets = ports;
  let swept = 0;

  async function confirmLane(): Promise<void> {
    while (!signal?.aborted && next < targets.length) {
      const port = targets[next++]!;
      await scanOne(port);
      if (signal?.aborted) return;
      done += 1;
      opts.onProgress?.({ done: swept + done, total: ports.length, open: open.length });
    }
  }

  try {
    if (threads > 1) {
      const sweep = await sweepInThreads({
        address,
        ports,
        timeoutMs,
        retries,
        fdBudget: budget,
        rate: opts.rate ?? 0,
        threads,
        ...(signal ? { signal } : {}),
        onProgress: (p) => opts.onProgress?.({ done: Math.min(p.done, ports.length - 1), total: ports.length, open: p.open }),
      });
      closed = sweep.closed;
      filtered = sweep.filtered;
      targets = sweep.open;
      swept = ports.length - targets.length;
      await Promise.all(Array.from({ length: Math.min(budget, targets.length) }, confirmLane));
    } else {
      await Promise.all(Array.from({ length: Math.min(budget, ports.length) }, lane));
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    onAbort();
  }
  if (signal?.aborted) throw abortReason(signal);
  if (threads > 1) opts.onProgress?.({ done: ports.length, total: ports.length, open: open.length });
  open.sort((a, b) => a.port - b.port);
  return { host: hostName, address, scanned: ports.length, open, closed, filtered };
}
