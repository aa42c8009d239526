// The port scanner against real loopback servers: HTTP, TLS (self-signed, made with openssl),
// services that speak first (SSH, SMTP, FTP, MySQL), services that answer probes (Redis,
// PostgreSQL's SSLRequest), a silent listener, and closed ports. Findings must pass the findings
// schema the server imports with.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizedFindingSchema } from '../../../findings/index.ts';
import { scanWithSockets } from './engine.ts';
import {
  createPortScanner,
  hostOfTarget,
  nmapArgs,
  nmapVersion,
  parsePortSpec,
  portFindings,
  portsForLease,
  scanPorts,
  toRanges,
  topPorts,
  PortSpecError,
} from './index.ts';

// CI installs nmap (.ci/run); elsewhere the nmap engine's live test is skipped, not faked.
const nmap = await nmapVersion();

const servers: { close(cb?: () => void): unknown }[] = [];
const ports: Record<string, number> = {};
let closedPort = 0;

async function listen(name: string, server: net.Server): Promise<void> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  ports[name] = (server.address() as net.AddressInfo).port;
  servers.push(server);
}

/** A TCP server that greets with `banner`, then answers each chunk with `reply(chunk)`. */
function talker(banner: Buffer | string | null, reply?: (chunk: Buffer) => Buffer | string | null): net.Server {
  return net.createServer((s) => {
    s.on('error', () => undefined);
    if (banner !== null) s.write(banner);
    s.on('data', (d) => {
      const r = reply?.(d);
      if (r !== null && r !== undefined) s.write(r);
    });
  });
}

function mysqlGreeting(version: string): Buffer {
  const payload = Buffer.concat([
    Buffer.from([0x0a]),
    Buffer.from(version, 'latin1'),
    Buffer.from([0]),
    Buffer.alloc(20, 1),
  ]);
  const header = Buffer.alloc(4);
  header.writeUIntLE(payload.length, 0, 3);
  header[3] = 0;
  return Buffer.concat([header, payload]);
}

let certDir = '';
beforeAll(async () => {
  certDir = mkdtempSync(join(tmpdir(), 'rampart-port-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      join(certDir, 'key.pem'),
      '-out',
      join(certDir, 'cert.pem'),
      '-days',
      '2',
      '-subj',
      '/CN=scan-target.test',
    ],
    { stdio: 'ignore' },
  );

  await listen(
    'http',
    http.createServer((_req, res) => res.writeHead(200, { server: 'TestHTTP/1.2' }).end('ok')),
  );
  await listen('https', https());
  await listen('ssh', talker('SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13\r\n'));
  await listen('smtp', talker('220 mail.example.test ESMTP Postfix\r\n'));
  await listen('ftp', talker('220 (vsFTPd 3.0.5)\r\n'));
  await listen('mysql', talker(mysqlGreeting('8.0.36-0ubuntu0.22.04.1')));
  await listen(
    'redis',
    talker(null, (d) => (d.toString().includes('PING') ? '+PONG\r\n' : '-ERR unknown command\r\n')),
  );
  await listen(
    'postgres',
    talker(null, (d) => (d.length === 8 && d.readUInt32BE(4) === 80877103 ? 'N' : null)),
  );
  await listen('silent', talker(null));

  // A port that was just free: listening then closed, so connects are refused.
  const tmp = net.createServer();
  await new Promise<void>((r) => tmp.listen(0, '127.0.0.1', () => r()));
  closedPort = (tmp.address() as net.AddressInfo).port;
  await new Promise<void>((r) => tmp.close(() => r()));
});

function https(): tls.Server {
  const server = tls.createServer(
    { key: readFileSync(join(certDir, 'key.pem')), cert: readFileSync(join(certDir, 'cert.pem')) },
    (s) => {
      s.on('error', () => undefined);
      s.once('data', () => s.end('HTTP/1.1 204 No Content\r\nServer: SecureTest/2.0\r\n\r\n'));
    },
  );
  server.on('tlsClientError', () => undefined);
  return server;
}

afterAll(async () => {
  for (const s of servers) await new Promise<void>((r) => s.close(() => r()));
  rmSync(certDir, { recursive: true, force: true });
});

const fast = { bannerWaitMs: 400, probeTimeoutMs: 1_000, timeoutMs: 1_000 };

describe('port specs', () => {
  it('parses lists and ranges, sorted and unique', () => {
    expect(parsePortSpec('8000-8003, 22,80,22')).toEqual([22, 80, 8000, 8001, 8002, 8003]);
    expect(parsePortSpec('top:5')).toEqual(topPorts(5));
    expect(topPorts(3)).toEqual([23, 80, 443]);
    expect(toRanges([22, 80, 81, 82, 443])).toEqual([
      [22, 22],
      [80, 82],
      [443, 443],
    ]);
  });

  it('refuses bad specs with a reason', () => {
    for (const bad of ['', '0', '65536', '80-70', 'http', '1-2-3', '22;23', 'top:0'])
      expect(() => parsePortSpec(bad), bad).toThrow(PortSpecError);
  });

  it('takes ports from a chunk spec before the options, then range, then topPorts', () => {
    expect(
      portsForLease(
        { range: { from: 1, to: 65535 }, timeoutMs: 700 },
        { spec: { kind: 'port', range: { from: 100, to: 103 } } },
      ),
    ).toEqual({ ports: [100, 101, 102, 103], timeoutMs: 700 });
    expect(portsForLease({ range: { from: 20, to: 22 }, rate: 50 }, null)).toEqual({ ports: [20, 21, 22], rate: 50 });
    expect(portsForLease({ topPorts: 10 }, null).ports).toEqual(topPorts(10));
    expect(portsForLease({}, null).ports).toHaveLength(1000);
    expect(() => portsForLease({}, { spec: { kind: 'port', range: { from: 9, to: 2 } } })).toThrow(PortSpecError);
  });

  it('takes the host of a URL or bracketed IPv6 target and refuses junk', () => {
    expect(hostOfTarget('https://shop.example.test:8443/x')).toBe('shop.example.test');
    expect(hostOfTarget('[::1]')).toBe('::1');
    expect(hostOfTarget(' 203.0.113.7 ')).toBe('203.0.113.7');
    expect(() => hostOfTarget('a b')).toThrow();
  });
});

describe('TCP connect scan', () => {
  it('finds open ports, identifies services and reports closed ones', async () => {
    const scanned = [...Object.values(ports), closedPort];
    const progress: number[] = [];
    const r = await scanPorts({ host: '127.0.0.1', ports: scanned, ...fast, onProgress: (p) => progress.push(p.done) });
    const byPort = new Map(r.open.map((p) => [p.port, p]));
    expect(r.open.map((p) => p.port)).toEqual(Object.values(ports).sort((a, b) => a - b));
    expect(r.closed).toBe(1);
    expect(progress.at(-1)).toBe(scanned.length);

    expect(byPort.get(ports.http!)).toMatchObject({ service: 'http', product: 'TestHTTP', version: '1.2' });
    expect(byPort.get(ports.https!)).toMatchObject({
      service: 'https',
      tls: true,
      product: 'SecureTest',
      data: expect.objectContaining({ certificateSubject: 'scan-target.test' }),
    });
    expect(byPort.get(ports.ssh!)).toMatchObject({
      service: 'ssh',
      product: 'OpenSSH',
      version: '9.6p1',
      identifiedBy: 'banner',
    });
    expect(byPort.get(ports.smtp!)).toMatchObject({
      service: 'smtp',
      product: 'Postfix',
      banner: '220 mail.example.test ESMTP Postfix',
    });
    expect(byPort.get(ports.ftp!)).toMatchObject({ service: 'ftp', product: 'vsFTPd', version: '3.0.5' });
    expect(byPort.get(ports.mysql!)).toMatchObject({
      service: 'mysql',
      product: 'MySQL',
      version: '8.0.36-0ubuntu0.22.04.1',
    });
    expect(byPort.get(ports.redis!)).toMatchObject({ service: 'redis', data: { authentication: 'none' } });
    expect(byPort.get(ports.postgres!)).toMatchObject({ service: 'postgresql', data: { sslOffered: false } });
    expect(byPort.get(ports.silent!)).toMatchObject({ identifiedBy: 'none' });
    expect(byPort.get(ports.silent!)?.service).toBeUndefined();

    const findings = portFindings(r);
    for (const f of findings) expect(normalizedFindingSchema.safeParse(f).success, JSON.stringify(f)).toBe(true);
    const rules = findings.map((f) => f.ruleId);
    for (const p of Object.values(ports)) expect(rules).toContain(`port.open.tcp.${p}`);
    const exposed = Object.fromEntries(
      findings.filter((f) => f.ruleId.startsWith('service.exposed.')).map((f) => [f.ruleId, f.severity]),
    );
    expect(exposed).toEqual({
      'service.exposed.redis': 'high',
      'service.exposed.mysql': 'medium',
      'service.exposed.postgresql': 'medium',
      'service.exposed.ftp': 'medium',
    });
    const sshOpen = findings.find((f) => f.ruleId === `port.open.tcp.${ports.ssh}`)!;
    expect(sshOpen).toMatchObject({
      severity: 'info',
      title: `Open port ${ports.ssh}/tcp (ssh)`,
      location: { host: '127.0.0.1', port: ports.ssh, protocol: 'tcp' },
    });
  });

  it('probes a port quiet for half a second, all probes at once, and still takes a late greeting', async () => {
    // Greets each connection 800 ms after it opens: after the probes went out, within the wait.
    let connections = 0;
    const slow = net.createServer((s) => {
      connections += 1;
      s.on('error', () => undefined);
      s.resume(); // read (and drop) the probes, so a closed connection is seen
      const t = setTimeout(() => s.write('SSH-2.0-OpenSSH_8.9p1 Ubuntu-3\r\n'), 800);
      s.on('close', () => clearTimeout(t));
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', () => r()));
    const port = (slow.address() as net.AddressInfo).port;
    try {
      const r = await scanPorts({ host: '127.0.0.1', ports: [port], bannerWaitMs: 1_500, probeTimeoutMs: 1_000 });
      expect(r.open).toEqual([
        expect.objectContaining({ port, service: 'ssh', product: 'OpenSSH', version: '8.9p1', identifiedBy: 'banner' }),
      ]);
      // The sweep's connection, the identifying one, and one per probe (TLS, HTTP, Redis, PostgreSQL).
      expect(connections).toBe(6);
    } finally {
      await new Promise((r) => slow.close(r));
    }
  });

  it('scans with net.Socket where Node exposes no TCP handles: the same open ports, identified', async () => {
    const scanned = [...Object.values(ports), closedPort];
    const r = await scanWithSockets({
      host: '127.0.0.1',
      address: '127.0.0.1',
      hostName: '127.0.0.1',
      ports: scanned,
      timeoutMs: 1_000,
      retries: 1,
      budget: 64,
      identify: true,
      bannerWaitMs: 400,
      probeTimeoutMs: 1_000,
    });
    expect(r.open.map((p) => p.port).sort((a, b) => a - b)).toEqual(Object.values(ports).sort((a, b) => a - b));
    expect(r.closed).toBe(1);
    expect(r.open.find((p) => p.port === ports.ssh)).toMatchObject({ service: 'ssh', identifiedBy: 'banner' });
    expect(r.open.find((p) => p.port === ports.http)).toMatchObject({ service: 'http', product: 'TestHTTP' });
  });

  it('keeps to an fd budget of one socket and still finds every open port', async () => {
    const r = await scanPorts({
      host: '127.0.0.1',
      ports: [ports.http!, closedPort, ports.ssh!],
      fdBudget: 1,
      identify: false,
      timeoutMs: 1_000,
    });
    expect(r.open.map((p) => p.port)).toEqual([ports.http!, ports.ssh!].sort((a, b) => a - b));
    expect(r.closed).toBe(1);
  });

  it('sweeps in worker threads, then identifies only the open ports on fresh connections', async () => {
    const scanned = [...Object.values(ports), closedPort];
    const progress: number[] = [];
    const r = await scanPorts({
      host: '127.0.0.1',
      ports: scanned,
      ...fast,
      threads: 2,
      onProgress: (p) => progress.push(p.done),
    });
    expect(r.open.map((p) => p.port)).toEqual(Object.values(ports).sort((a, b) => a - b));
    expect(r.closed).toBe(1);
    expect(r.open.find((p) => p.port === ports.ssh)).toMatchObject({
      service: 'ssh',
      product: 'OpenSSH',
      identifiedBy: 'banner',
    });
    expect(r.open.find((p) => p.port === ports.redis)).toMatchObject({ service: 'redis' });
    expect(progress.at(-1)).toBe(scanned.length);
  });

  it('stops a threaded sweep when aborted', async () => {
    const c = new AbortController();
    // Every port of the loopback host: a sweep of seconds, still running when the abort comes (tests
    // send no traffic off this machine).
    const running = scanPorts({
      host: '127.0.0.1',
      ports: Array.from({ length: 65_535 }, (_, i) => i + 1),
      timeoutMs: 5_000,
      threads: 2,
      identify: false,
      signal: c.signal,
    });
    setTimeout(() => c.abort(Object.assign(new Error('sweep halted'), { name: 'AbortError' })), 20);
    await expect(running).rejects.toThrow('sweep halted');
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    controller.abort(Object.assign(new Error('stop'), { name: 'AbortError' }));
    await expect(scanPorts({ host: '127.0.0.1', ports: [ports.http!], signal: controller.signal })).rejects.toThrow(
      'stop',
    );
    const c2 = new AbortController();
    const running = scanPorts({
      host: '127.0.0.1',
      ports: [ports.silent!],
      bannerWaitMs: 60_000,
      probeTimeoutMs: 60_000,
      signal: c2.signal,
      onProgress: () => undefined,
    });
    setTimeout(() => c2.abort(Object.assign(new Error('halted'), { name: 'AbortError' })), 50);
    await expect(running).rejects.toThrow('halted');
  });

  it('fails a name that does not resolve as not retryable', async () => {
    const scanner = createPortScanner({ ports: [80] });
    const err = await scanner
      .run({
        target: 'no-such-host.invalid',
        options: {},
        chunk: null,
        signal: new AbortController().signal,
        progress: () => undefined,
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'ScannerError', retryable: false });
  });

  it('runs a lease: ports from the chunk, progress, findings', async () => {
    const seen: number[] = [];
    const scanner = createPortScanner(fast);
    const out = await scanner.run({
      target: '127.0.0.1',
      assetKind: 'host',
      options: { range: { from: 1, to: 65535 } },
      chunk: { index: 0, count: 1, spec: { kind: 'port', range: { from: ports.redis!, to: ports.redis! } } },
      signal: new AbortController().signal,
      progress: (p) => seen.push(p),
    });
    expect(out.findings.map((f) => f.ruleId).sort()).toEqual([`port.open.tcp.${ports.redis}`, 'service.exposed.redis']);
    expect(seen[0]).toBe(0);
    expect(seen.at(-1)).toBe(100);
  });
});

describe('what a port scan covered', () => {
  const run = (target: string, scanner = createPortScanner({ ...fast, timeoutMs: 300 })) =>
    scanner.run({
      target,
      options: { range: { from: 1, to: 1 } },
      chunk: { index: 0, count: 1, spec: { kind: 'port', range: { from: 20, to: 23 } } },
      signal: new AbortController().signal,
      progress: () => undefined,
    });

  it('is inconclusive when no probe got any answer: the host is down', async () => {
    // 100::/64 is the IPv6 discard prefix (RFC 6666): nothing there answers, not even with a reset.
    const out = await run('[100::1]');
    expect(out.findings).toEqual([]);
    expect(out.inconclusive).toBe(
      'no port of 100::1 answered: all 4 probes timed out or found the host unreachable (the host is down, or a firewall drops everything)',
    );
    expect(out.coverage).toEqual({
      hosts: ['100::1'],
      ports: [[20, 23]],
      rules: ['port.open.tcp.*', 'service.exposed.*'],
    });
  });

  it('is conclusive when the host is up and every port answers closed (a reset is an answer)', async () => {
    const out = await createPortScanner({ ...fast, ports: [closedPort] }).run({
      target: 'localhost',
      options: {},
      chunk: null,
      signal: new AbortController().signal,
      progress: () => undefined,
    });
    expect(out.findings).toEqual([]);
    expect(out.inconclusive).toBeUndefined();
    expect((out.details as { closed: number }).closed).toBe(1);
    expect(out.coverage?.ports).toEqual([[closedPort, closedPort]]);
    expect(out.coverage?.hosts).toEqual(['localhost', expect.stringMatching(/^(127\.0\.0\.1|::1)$/)]);
  });

  it('covers exactly the ports it probed: top ports are not a full range', async () => {
    const out = await createPortScanner({ ...fast, timeoutMs: 300 }).run({
      target: '127.0.0.1',
      options: { topPorts: 20 },
      chunk: null,
      signal: new AbortController().signal,
      progress: () => undefined,
    });
    expect(out.coverage?.ports).toEqual(toRanges(topPorts(20)));
    expect(out.coverage?.ports?.length).toBeGreaterThan(10);
  });
});

describe('nmap engine', () => {
  it('builds a connect scan of exactly the given ports, with version detection only when identifying', () => {
    const args = nmapArgs('127.0.0.1', [22, 80, 81, 82, 443], { identify: true, timeoutMs: 700, rate: 1500 });
    expect(args).toEqual(expect.arrayContaining(['-sT', '-Pn', '-sV', '-oX', '-']));
    expect(args[args.indexOf('-p') + 1]).toBe('22,80-82,443');
    expect(args[args.indexOf('--max-rtt-timeout') + 1]).toBe('700ms');
    expect(args[args.indexOf('--max-rate') + 1]).toBe('1500');
    expect(args.at(-1)).toBe('127.0.0.1');
    expect(nmapArgs('127.0.0.1', [1], { identify: false })).not.toContain('-sV');
  });

  it('fails cleanly, not retryable, when nmap is not installed', async () => {
    const scanner = createPortScanner({ ports: [80], engine: 'nmap', nmapBin: '/nonexistent/nmap' });
    const err = await scanner
      .run({
        target: '127.0.0.1',
        options: {},
        chunk: null,
        signal: new AbortController().signal,
        progress: () => undefined,
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      name: 'ScannerError',
      retryable: false,
      message: expect.stringContaining('nmap could not be started'),
    });
  });

  it.skipIf(!nmap)(
    'finds the same open ports as the native engine, and nmap -sV names a service it recognises',
    async () => {
      const scanned = [...Object.values(ports), closedPort];
      const native = await scanPorts({ host: '127.0.0.1', ports: scanned, identify: false, timeoutMs: 1_000 });
      const scanner = createPortScanner({ ports: scanned, engine: 'nmap', identify: false });
      const seen: number[] = [];
      const out = await scanner.run({
        target: '127.0.0.1',
        options: {},
        chunk: null,
        signal: new AbortController().signal,
        progress: (p) => seen.push(p),
      });
      const details = out.details as { open: { port: number; service?: string }[]; closed: number };
      expect(details.open.map((p) => p.port)).toEqual(native.open.map((p) => p.port));
      expect(details.closed).toBe(1);
      expect(scanner.tool.name).toBe('rampart-port+nmap');
      for (const f of out.findings) expect(normalizedFindingSchema.safeParse(f).success).toBe(true);
      expect(out.findings.map((f) => f.ruleId)).toContain(`port.open.tcp.${ports.ssh}`);
      expect(seen.at(-1)).toBe(100);

      // Version detection on the SSH port only: nmap's probes match an OpenSSH greeting.
      const identified = await createPortScanner({ ports: [ports.ssh!], engine: 'nmap' }).run({
        target: '127.0.0.1',
        options: {},
        chunk: null,
        signal: new AbortController().signal,
        progress: () => undefined,
      });
      expect((identified.details as { open: unknown[] }).open).toEqual([
        expect.objectContaining({ port: ports.ssh, service: 'ssh', product: 'OpenSSH', identifiedBy: 'probe' }),
      ]);
    },
    120_000,
  );
});
