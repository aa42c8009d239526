// Which ports a scan probes: a spec like "1-1024,3306,8000-8100", a lease's options (range or
// topPorts, src/scans/scans-schemas.ts) and its chunk spec ({kind: "port", range: {from, to}},
// src/scans/scans-chunks.ts), which narrows the scan to one slice.
import { TOP_TCP_PORTS } from './top-ports.ts';

export const PORT_MIN = 1;
export const PORT_MAX = 65_535;
/** The default when a lease names neither a range nor topPorts (the server's default too). */
export const DEFAULT_TOP_PORTS = 1_000;

export class PortSpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PortSpecError';
  }
}

/** Parses "22,80,8000-8100" into sorted unique ports. "top:100" takes the 100 most common. */
export function parsePortSpec(spec: string): number[] {
  const text = spec.trim();
  if (!text) throw new PortSpecError('The port list is empty; give ports such as 22,80,443 or 1-1024');
  if (text.length > 10_000) throw new PortSpecError('The port list is too long');
  const top = /^top:?(\d{1,4})$/i.exec(text);
  if (top) {
    const n = Number(top[1]);
    if (n < 1 || n > TOP_TCP_PORTS.length) throw new PortSpecError(`top takes 1 to ${TOP_TCP_PORTS.length} ports`);
    return topPorts(n);
  }
  const set = new Set<number>();
  for (const part of text.split(',')) {
    const p = part.trim();
    const m = /^(\d{1,5})(?:\s*-\s*(\d{1,5}))?$/.exec(p);
    if (!m) throw new PortSpecError(`${JSON.stringify(p)} is not a port or range; use forms like 443 or 8000-8100`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    for (const x of [from, to])
      if (x < PORT_MIN || x > PORT_MAX) throw new PortSpecError(`Port ${x} is outside ${PORT_MIN}-${PORT_MAX}`);
    if (to < from) throw new PortSpecError(`The range ${from}-${to} ends before it starts`);
    for (let x = from; x <= to; x += 1) set.add(x);
  }
  return [...set].sort((a, b) => a - b);
}

/** The n most common TCP ports, in ascending order. */
export function topPorts(n: number): number[] {
  return TOP_TCP_PORTS.slice(0, Math.max(0, Math.min(n, TOP_TCP_PORTS.length)))
    .slice()
    .sort((a, b) => a - b);
}

/** Compresses sorted ports into inclusive ranges: [22, 80, 81, 82] → [[22, 22], [80, 82]]. */
export function toRanges(ports: readonly number[]): [number, number][] {
  const out: [number, number][] = [];
  for (const p of ports) {
    const last = out[out.length - 1];
    if (last && p === last[1] + 1) last[1] = p;
    else out.push([p, p]);
  }
  return out;
}

const intIn = (v: unknown, min: number, max: number): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : undefined;

function rangeOf(v: unknown): { from: number; to: number } | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const r = v as Record<string, unknown>;
  const from = intIn(r.from, PORT_MIN, PORT_MAX);
  const to = intIn(r.to, PORT_MIN, PORT_MAX);
  return from !== undefined && to !== undefined && from <= to ? { from, to } : undefined;
}

export interface LeasePortPlan {
  ports: number[];
  /** Per-connect timeout from the scan's options, when set. */
  timeoutMs?: number;
  /** Connection attempts per second, when set. */
  rate?: number;
}

/**
 * The ports a leased scan covers. A chunk's range wins (the parent's options name the whole
 * range); then options.range, options.topPorts, and the default top 1,000. The server validated
 * the options, but the worker treats them as untrusted input all the same.
 */
export function portsForLease(
  options: Record<string, unknown>,
  chunk: { spec: Record<string, unknown> } | null,
): LeasePortPlan {
  const chunkRange = chunk ? rangeOf(chunk.spec.range) : undefined;
  if (chunk && !chunkRange) throw new PortSpecError('The chunk spec has no valid port range');
  const range = chunkRange ?? rangeOf(options.range);
  const top = intIn(options.topPorts, 1, TOP_TCP_PORTS.length);
  const ports = range
    ? Array.from({ length: range.to - range.from + 1 }, (_, i) => range.from + i)
    : topPorts(top ?? DEFAULT_TOP_PORTS);
  const timeoutMs = intIn(options.timeoutMs, 100, 10_000);
  const rate = intIn(options.rate, 1, 100_000);
  return { ports, ...(timeoutMs !== undefined ? { timeoutMs } : {}), ...(rate !== undefined ? { rate } : {}) };
}
