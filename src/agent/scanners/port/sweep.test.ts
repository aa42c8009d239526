// The connect sweep on libuv's TCP handles, against real loopback listeners and closed ports: a
// refused socket is connected again for the next port instead of a new socket per port, and a
// kernel that will not reconnect a refused socket turns that off without losing a port.
import net from 'node:net';
import { getSystemErrorName } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepLoop, tcpBinding, type SweepInput, type TcpBinding } from './sweep.ts';

const real = tcpBinding();
const listeners: net.Server[] = [];
const openPorts: number[] = [];
const closedPorts: number[] = [];

async function listen(): Promise<net.Server> {
  const s = net.createServer((c) => c.destroy());
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return s;
}

beforeAll(async () => {
  for (let i = 0; i < 3; i++) {
    const s = await listen();
    listeners.push(s);
    openPorts.push((s.address() as net.AddressInfo).port);
  }
  // Ports the kernel just handed out and that nobody listens on any more.
  for (let i = 0; i < 200; i++) {
    const s = await listen();
    closedPorts.push((s.address() as net.AddressInfo).port);
    await new Promise<void>((r) => s.close(() => r()));
  }
});
afterAll(() => {
  for (const s of listeners) s.close();
});

/** The real binding, counting the sockets made; `reconnect: false` plays a kernel that refuses. */
function counting(tcp: TcpBinding, reconnect: boolean): { binding: TcpBinding; made: () => number } {
  let made = 0;
  const Real = tcp.TCP as unknown as new (type: number) => { connect(...a: unknown[]): number };
  class Counted extends Real {
    used = false;
    constructor(type: number) {
      super(type);
      made += 1;
    }
    override connect(...a: unknown[]): number {
      if (this.used && !reconnect) return -22; // EINVAL, as a BSD kernel answers
      this.used = true;
      return super.connect(...a);
    }
  }
  return { binding: { ...tcp, TCP: Counted as unknown as TcpBinding['TCP'] }, made: () => made };
}

async function run(binding: TcpBinding, ports: number[]) {
  const shared = new Uint16Array(new SharedArrayBuffer(ports.length * 2));
  shared.set(ports);
  const input: SweepInput = {
    address: '127.0.0.1',
    ipv6: false,
    ports: shared,
    cursor: new Int32Array(new SharedArrayBuffer(4)),
    timeoutMs: 2_000,
    retries: 1,
    budget: 8,
    interval: 0,
  };
  const found: number[] = [];
  const counts = await sweepLoop(input, { tcp: binding, errorName: getSystemErrorName, onOpen: (p) => found.push(p) })
    .promise;
  return { counts, found: found.sort((a, b) => a - b) };
}

describe.skipIf(!real)('connect sweep on TCP handles', () => {
  const scanned = () => [...closedPorts.slice(0, 100), ...openPorts, ...closedPorts.slice(100)];

  it.skipIf(process.platform !== 'linux')('connects refused sockets again instead of one socket per port', async () => {
    const { binding, made } = counting(real!, true);
    const { counts, found } = await run(binding, scanned());
    expect(found).toEqual([...openPorts].sort((a, b) => a - b));
    expect(counts).toMatchObject({ done: 203, open: 3, closed: 200, filtered: 0 });
    // One socket per connection in flight and per open port, not one per port.
    expect(made()).toBeLessThan(50);
  });

  it('finds the same ports when the kernel will not connect a refused socket again', async () => {
    const { binding, made } = counting(real!, false);
    const { counts, found } = await run(binding, scanned());
    expect(found).toEqual([...openPorts].sort((a, b) => a - b));
    expect(counts).toMatchObject({ done: 203, open: 3, closed: 200, filtered: 0 });
    // The first refusal turns the reuse off: from then on, a socket per port.
    expect(made()).toBeGreaterThanOrEqual(203);
  });
});
