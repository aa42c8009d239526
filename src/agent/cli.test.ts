// The CLI in-process: usage errors exit 2 with a message, unknown or unavailable scanner kinds are
// named with the available ones, and `scan port` prints the documented JSON and SARIF shapes for a
// real loopback server.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };
import { main } from './cli.ts';
import { debianImage, writeDockerArchive } from '../../test/fixtures/image-archives.ts';

function io() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d) => (out += d));
  stderr.on('data', (d) => (err += d));
  return {
    io: {
      stdout,
      stderr,
      stdin: new PassThrough(),
      env: { RAMPART_WORKER_CONFIG: '/nonexistent/rampart-worker.json' },
      signal: new AbortController().signal,
    },
    out: () => out,
    err: () => err,
  };
}

async function run(...argv: string[]) {
  const x = io();
  const code = await main(argv, x.io);
  return { code, out: x.out(), err: x.err() };
}

let server: http.Server;
let port = 0;
beforeAll(async () => {
  server = http.createServer((_req, res) => res.writeHead(200, { server: 'cli-test/1.0' }).end());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('rampart-worker CLI', () => {
  it('prints its version and help', async () => {
    expect(await run('--version')).toMatchObject({ code: 0, out: `${pkg.version}\n` });
    const help = await run('--help');
    expect(help.code).toBe(0);
    expect(help.out).toContain('Commands:');
    expect((await run('help', 'scan')).out).toContain('--ports');
  });

  it('exits 2 with a message on usage errors', async () => {
    const cases: [string[], RegExp][] = [
      [[], /Usage: rampart-worker <command>/],
      [['frobnicate'], /Unknown command "frobnicate"/],
      [['--bogus'], /Unknown option '--bogus'/],
      [['scan'], /scan needs a kind/],
      [['scan', 'port'], /needs --target/],
      [['scan', 'port', '--target', '127.0.0.1', '--ports', '99999'], /--ports: Port 99999 is outside/],
      [['scan', 'port', '--target', '127.0.0.1', '--format', 'xml'], /--format must be one of table, json, sarif/],
      [['scan', 'port', '--target', '127.0.0.1', '--timeout', 'soon'], /--timeout takes a whole number/],
      [['scan', 'port', '--target', '127.0.0.1', '--wat'], /Unknown option '--wat'/],
      [['run', '--concurrency', '0'], /--concurrency must be between 1 and 64/],
      [['run', '--port-engine', 'masscan'], /--port-engine must be one of native, nmap/],
      [['enroll', '--code', 'ABCD1234'], /enroll needs --server/],
      [['enroll', '--server', 'ftp://x', '--code', 'ABCD1234'], /must be http\(s\)/],
    ];
    for (const [argv, message] of cases) {
      const r = await run(...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.out + r.err, argv.join(' ')).toMatch(message);
    }
  });

  it('names the available kinds for a kind it cannot scan', async () => {
    for (const kind of ['nuclei', 'zap']) {
      const r = await run('scan', kind, '--target', '127.0.0.1');
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/Unknown scanner kind ".+"; available kinds: port, /);
    }
  });

  it('imports an OSV dump and scans an image archive against it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rampart-cli-osv-'));
    try {
      const db = join(dir, 'osv.sqlite');
      const imp = await run(
        'osv',
        'import',
        join(import.meta.dirname, 'scanners/container/sample-osv'),
        '--db',
        db,
        '--json',
      );
      expect(imp.code, imp.err).toBe(0);
      expect(JSON.parse(imp.out)).toMatchObject({ db, invalid: 0 });
      expect(JSON.parse(imp.out).imported).toBeGreaterThan(0);
      const image = join(dir, 'debian.tar');
      await writeDockerArchive(image, debianImage());
      const r = await run('scan', 'container', '--target', image, '--db', db, '--format', 'json');
      expect(r.code, r.err).toBe(0);
      const json = JSON.parse(r.out);
      expect(json.kind).toBe('container');
      expect(json.vulnerabilities.length).toBeGreaterThan(0);
      expect(json.findings.map((f: { ruleId: string }) => f.ruleId)).toContain('container/runs-as-root');
      expect((await run('osv', 'import')).code).toBe(2);
      expect((await run('osv', 'import', join(dir, 'missing'))).err).toContain('does not exist');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exits 3 when run has no config', async () => {
    const r = await run('run');
    expect(r.code).toBe(3);
    expect(r.err).toContain('rampart-worker enroll');
  });

  it('scans locally and prints the documented JSON', async () => {
    const r = await run('scan', 'port', '--target', '127.0.0.1', '--ports', String(port), '--format', 'json');
    expect(r.code, r.err).toBe(0);
    const json = JSON.parse(r.out);
    expect(Object.keys(json)).toEqual(['target', 'kind', 'openPorts', 'findings']);
    expect(json).toMatchObject({ target: '127.0.0.1', kind: 'port', openPorts: [{ port, service: 'http' }] });
    expect(json.openPorts[0].banner).toContain('cli-test/1.0');
    expect(json.findings.map((f: { ruleId: string }) => f.ruleId)).toEqual([`port.open.tcp.${port}`]);
    // Not a terminal: no progress line on stderr.
    expect(r.err).toBe('');
  });

  it('prints SARIF 2.1.0 and a table', async () => {
    const r = await run('scan', 'port', '--target', '127.0.0.1', '--ports', String(port), '--format', 'sarif');
    expect(r.code, r.err).toBe(0);
    const sarif = JSON.parse(r.out);
    expect(sarif.version).toBe('2.1.0');
    const run0 = sarif.runs[0];
    expect(run0.tool.driver.name).toBe('rampart-port');
    expect(run0.tool.driver.rules[0]).toMatchObject({
      id: `port/port.open.tcp.${port}`,
      defaultConfiguration: { level: 'note' },
    });
    expect(run0.results[0]).toMatchObject({ ruleId: `port/port.open.tcp.${port}`, ruleIndex: 0, level: 'note' });
    const table = await run('scan', 'port', '--target', '127.0.0.1', '--ports', String(port));
    expect(table.out).toMatch(new RegExp(`${port}/tcp +http`));
  });
});
