// The single-file executable: builds the linux-x64 binary (this machine's Node with the worker
// injected, with V8's code cache) and runs it: --version, --help, and a port scan of a loopback
// server as JSON.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };
import { buildWorker } from '../../scripts/build-worker.ts';

const run = promisify(execFile);
const onLinuxX64 = process.platform === 'linux' && process.arch === 'x64';
const hasPostject = existsSync(join(import.meta.dirname, '../../node_modules/postject/package.json'));
const skipReason = !onLinuxX64
  ? 'the SEA test builds for linux-x64 and runs only there'
  : !hasPostject
    ? 'postject is not installed (npm ci installs it)'
    : null;
if (skipReason) console.warn(`worker-sea.test.ts skipped: ${skipReason}`);

describe.skipIf(skipReason !== null)('rampart-worker single-file executable', () => {
  const out = mkdtempSync(join(tmpdir(), 'rampart-worker-sea-'));
  let binary = '';
  let server: http.Server;
  let port = 0;

  beforeAll(async () => {
    const { built, failed } = await buildWorker({
      targets: ['linux-x64'],
      outDir: out,
      cacheDir: join(out, 'cache'),
      log: () => undefined,
    });
    expect(failed).toEqual({});
    binary = built['linux-x64']!;
    server = http.createServer((_req, res) => res.writeHead(200, { server: 'sea-test/1.0' }).end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  }, 180_000);

  afterAll(async () => {
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    rmSync(out, { recursive: true, force: true });
  });

  it('prints its version and help with no experimental warning', async () => {
    const { stdout, stderr } = await run(binary, ['--version'], { env: { PATH: process.env.PATH ?? '' } });
    expect(stdout).toBe(`${pkg.version}\n`);
    expect(stderr).toBe('');
    const help = await run(binary, ['--help'], { env: { PATH: process.env.PATH ?? '' } });
    expect(help.stdout.split('\n')[0]).toBe(`rampart-worker ${pkg.version}: the Rampart scan worker`);
    expect(help.stderr).toBe('');
    // Commands are evaluated lazily inside the executable too.
    expect((await run(binary, ['help', 'scan'])).stdout).toContain('--no-identify');
  });

  it('scans a loopback port range (large enough for the threaded sweep) and prints the JSON result', async () => {
    const range = `${port - 4_200}-${port}`;
    const { stdout } = await run(
      binary,
      ['scan', 'port', '--target', '127.0.0.1', '--ports', range, '--format', 'json'],
      { env: { PATH: process.env.PATH ?? '' } },
    );
    const json = JSON.parse(stdout);
    expect(json).toMatchObject({ target: '127.0.0.1', kind: 'port' });
    expect(json.openPorts).toContainEqual(expect.objectContaining({ port, service: 'http' }));
    expect(json.findings.find((f: { ruleId: string }) => f.ruleId === `port.open.tcp.${port}`)).toMatchObject({
      ruleId: `port.open.tcp.${port}`,
      severity: 'info',
      location: { host: '127.0.0.1', port, protocol: 'tcp' },
    });
  });

  it('exits 2 for a scanner kind it does not know', async () => {
    const err = await run(binary, ['scan', 'frobnicate', '--target', '127.0.0.1']).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(err).toMatchObject({ code: 2 });
    expect((err as { stderr: string }).stderr).toContain(
      'Unknown scanner kind "frobnicate"; available kinds: port, template, webapp, edge, container',
    );
  });
});
