// TCP connect scan. Every probe holds one file descriptor, so concurrency is bounded by an fd
// budget; a connect that times out is tried once more (a dropped SYN is common on busy links), a
// refused one is closed, and open ports are identified (probe.ts) while the scan goes on. The
// sweep runs on libuv's TCP handles, in threads for large scans (sweep.ts); net.Socket is the
// fallback and what identification speaks. An optional rate caps new connections per second.
// The AbortSignal stops scheduling and closes every socket in flight.
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { EgressRefusedError, egressRefusalMessage, type EgressPolicy } from '../../../lib/egress.ts';
import { identifyService, type ServiceInfo } from './probe.ts';
import { sweep, sweepThreads, tcpBinding, type TcpBinding } from './sweep.ts';

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
  /** Threads for the connect sweep, this one included (default: one per core, up to 4, for 4,096 ports or more). */
  threads?: number;
  /** Injected for tests; defaults to dns.lookup. */
  resolve?: (host: string) => Promise<string>;
  /** The hosted worker's policy: the one address scanned is resolved and checked through it. */
  egress?: EgressPolicy;
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

type ConnectOutcome =
  | { state: 'open'; socket: net.Socket }
  | { state: 'closed' | 'timeout' | 'unreachable' | 'resources' | 'aborted'; code?: string };

const RESOURCE_CODES = new Set(['EMFILE', 'ENFILE', 'ENOBUFS', 'EADDRNOTAVAIL', 'EAGAIN']);
const UNREACHABLE_CODES = new Set([
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'ETIMEDOUT',
  'EACCES',
  'EPERM',
]);

function connect(
  address: string,
  port: number,
  timeoutMs: number,
  sockets: Set<net.Socket>,
  signal?: AbortSignal,
): Promise<ConnectOutcome> {
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
      settle(
        code === 'ECONNREFUSED' || code === 'ECONNRESET'
          ? { state: 'closed', code }
          : RESOURCE_CODES.has(code)
            ? { state: 'resources', code }
            : UNREACHABLE_CODES.has(code)
              ? { state: 'unreachable', code }
              : { state: 'unreachable', code },
      );
    };
    // A loopback connect to the port it was given as its own source port "succeeds" (TCP
    // simultaneous open): no service is listening there.
    socket.once('connect', () =>
      settle(
        socket.localPort === socket.remotePort && socket.localAddress === socket.remoteAddress
          ? { state: 'closed' }
          : { state: 'open', socket },
      ),
    );
    socket.once('error', onError);
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function resolveTarget(
  host: string,
  resolver?: (h: string) => Promise<string>,
  egress?: EgressPolicy,
): Promise<string> {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  // Every connection of the scan goes to this one address, so checking it here binds the check.
  if (egress) {
    try {
      return (await egress.resolve(bare))[0]!;
    } catch (e) {
      if (e instanceof EgressRefusedError) throw new PortScanError(egressRefusalMessage(bare), false, { cause: e });
      if (!(e as NodeJS.ErrnoException).code) throw e;
      throw new PortScanError(`Cannot resolve ${bare} (${(e as NodeJS.ErrnoException).code})`, true, { cause: e });
    }
  }
  if (net.isIP(bare)) return bare;
  try {
    return resolver ? await resolver(bare) : (await lookup(bare)).address;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // NXDOMAIN will not fix itself on a retry; a resolver timeout might.
    throw new PortScanError(
      `Cannot resolve ${bare}${code ? ` (${code})` : ''}`,
      code !== 'ENOTFOUND' && code !== 'ENODATA',
      { cause: e },
    );
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
  const address = await resolveTarget(opts.host, opts.resolve, opts.egress);
  const hostName = opts.host.replace(/^\[(.*)\]$/, '$1');
  const tcp = tcpBinding();
  const result = tcp
    ? await sweepThenIdentify(tcp, { ...opts, address, hostName, ports, timeoutMs, retries, budget, identify })
    : await scanWithSockets({ ...opts, address, hostName, ports, timeoutMs, retries, budget, identify });
  if (signal?.aborted) throw abortReason(signal);
  opts.onProgress?.({ done: ports.length, total: ports.length, open: result.open.length });
  result.open.sort((a, b) => a.port - b.port);
  return { host: hostName, address, scanned: ports.length, ...result };
}

/** A scan with its target resolved and its defaults applied. */
export interface ScanPlan extends PortScanOptions {
  address: string;
  hostName: string;
  ports: number[];
  timeoutMs: number;
  retries: number;
  budget: number;
  identify: boolean;
}

type Found = Pick<PortScanResult, 'open' | 'closed' | 'filtered'>;

/** An open port, identified on a fresh connection of its own when asked to. */
async function describeOpen(p: ScanPlan, port: number, sockets: Set<net.Socket>): Promise<OpenPort> {
  if (!p.identify) return { port, identifiedBy: 'none' };
  for (let attempt = 0; attempt <= p.retries; attempt += 1) {
    const out = await connect(p.address, port, p.timeoutMs, sockets, p.signal);
    if (out.state === 'open') return { port, ...(await identifyService(out.socket, probeOptions(p, port))) };
    if (out.state !== 'timeout') break;
  }
  // It accepted the sweep's connection but not this one: open, not identified.
  return { port, identifiedBy: 'none' };
}

const probeOptions = (p: ScanPlan, port: number) => ({
  address: p.address,
  port,
  hostName: p.hostName,
  bannerWaitMs: p.bannerWaitMs ?? 2_000,
  probeTimeoutMs: p.probeTimeoutMs ?? Math.max(2_000, p.timeoutMs),
  ...(p.signal ? { signal: p.signal } : {}),
});

/**
 * The sweep (sweep.ts) finds the open ports; each is identified as soon as it is found, on a fresh
 * connection, a fifth of the fd budget at a time (identifying a silent port holds up to five
 * sockets: its own and one per probe).
 */
async function sweepThenIdentify(tcp: TcpBinding, p: ScanPlan): Promise<Found> {
  const sockets = new Set<net.Socket>();
  const onAbort = () => {
    for (const s of sockets) s.destroy();
  };
  p.signal?.addEventListener('abort', onAbort, { once: true });
  const open: OpenPort[] = [];
  const waiting: number[] = [];
  const lanes = Math.max(1, Math.floor(p.budget / 5));
  let active = 0;
  let failed: unknown = null;
  let idle: (() => void) | null = null;
  const startIdentifying = () => {
    while (active < lanes && waiting.length && !p.signal?.aborted) {
      const port = waiting.shift()!;
      active += 1;
      describeOpen(p, port, sockets)
        .then(
          (o) => open.push(o),
          (e: unknown) => (failed ??= e),
        )
        .finally(() => {
          active -= 1;
          startIdentifying();
          if (active === 0 && (waiting.length === 0 || p.signal?.aborted)) idle?.();
        });
    }
  };
  try {
    const counts = await sweep({
      tcp,
      address: p.address,
      ipv6: net.isIPv6(p.address),
      ports: p.ports,
      timeoutMs: p.timeoutMs,
      retries: p.retries,
      fdBudget: p.budget,
      rate: p.rate ?? 0,
      threads: sweepThreads(p.ports.length, p.rate ? 1 : p.threads),
      ...(p.signal ? { signal: p.signal } : {}),
      onOpen: (port) => {
        waiting.push(port);
        startIdentifying();
      },
      onProgress: (done) =>
        p.onProgress?.({
          done: Math.min(done, p.ports.length - 1),
          total: p.ports.length,
          open: open.length + active + waiting.length,
        }),
    });
    if (active > 0 || (waiting.length > 0 && !p.signal?.aborted)) await new Promise<void>((r) => (idle = r));
    if (failed) throw failed;
    return { open, closed: counts.closed, filtered: counts.filtered };
  } finally {
    p.signal?.removeEventListener('abort', onAbort);
    onAbort();
  }
}

/** Without Node's TCP binding: one net.Socket connect per port, identified on that connection. */
export async function scanWithSockets(p: ScanPlan): Promise<Found> {
  const { signal, ports, identify } = p;
  const sockets = new Set<net.Socket>();
  const onAbort = () => {
    for (const s of sockets) s.destroy();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  const interval = p.rate && p.rate > 0 ? 1_000 / p.rate : 0;
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
      const out = await connect(p.address, port, p.timeoutMs, sockets, signal);
      if (out.state === 'open') {
        const info = identify
          ? await identifyService(out.socket, probeOptions(p, port))
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
      if (out.state === 'timeout' && attempt < p.retries) continue;
      filtered += 1;
      return;
    }
  }

  async function lane(): Promise<void> {
    while (!signal?.aborted && next < ports.length) {
      await scanOne(ports[next++]!);
      if (signal?.aborted) return;
      done += 1;
      p.onProgress?.({ done, total: ports.length, open: open.length });
    }
  }

  try {
    await Promise.all(Array.from({ length: Math.min(p.budget, ports.length) }, lane));
  } finally {
    signal?.removeEventListener('abort', onAbort);
    onAbort();
  }
  return { open, closed, filtered };
}
