// deploy/proxy/nginx.conf run by a real nginx (Debian's, installed by .ci/run), with the two
// replica names pointed at loopback servers: round robin, a failed replica skipped, and the client
// address the replicas see under TRUST_PROXY=true (left-most X-Forwarded-For): always one address,
// the client's own header believed only from a trusted front proxy.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const NGINX = '/usr/sbin/nginx';
const hasNginx = spawnSync(NGINX, ['-v']).status === 0;

interface Upstream {
  name: string;
  port: number;
  server: http.Server;
}

/** X-Forwarded-For of every request either replica received, in arrival order. */
const forwardedFor: string[] = [];

async function startUpstream(name: string): Promise<Upstream> {
  const server = http.createServer((req, res) => {
    forwardedFor.push(String(req.headers['x-forwarded-for'] ?? ''));
    res.writeHead(200, { 'content-type': 'text/plain' }).end(name);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { name, port: (server.address() as AddressInfo).port, server };
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

/** GET through the proxy, optionally from another loopback address and with a client X-Forwarded-For. */
function get(
  port: number,
  opts: { from?: string; forwardedFor?: string } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/api/v1/me',
        agent: false,
        localAddress: opts.from,
        headers: opts.forwardedFor ? { 'x-forwarded-for': opts.forwardedFor } : {},
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe.skipIf(!hasNginx)('deploy/proxy/nginx.conf under nginx', () => {
  let dir: string;
  let a: Upstream;
  let b: Upstream;
  let port: number;
  let nginx: ChildProcess;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rampart-nginx-'));
    [a, b] = await Promise.all([startUpstream('rampart-1'), startUpstream('rampart-2')]);
    port = await freePort();
    // The shipped file, with only the addresses changed (compose service names → loopback ports).
    const conf = readFileSync(join(import.meta.dirname, '../../deploy/proxy/nginx.conf'), 'utf8')
      .replace('rampart-1:3000', `127.0.0.1:${a.port}`)
      .replace('rampart-2:3000', `127.0.0.1:${b.port}`)
      .replace(/listen 8080;/, `listen 127.0.0.1:${port};`)
      .replace(/^worker_processes auto;/m, `worker_processes 1;\npid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;`)
      .replace(
        /http \{/,
        `http {\n  access_log off;\n  client_body_temp_path ${dir}/body;\n  proxy_temp_path ${dir}/proxy;`,
      );
    expect(conf).toContain(`127.0.0.1:${b.port}`);
    const file = join(dir, 'nginx.conf');
    writeFileSync(file, conf);
    const check = spawnSync(NGINX, ['-t', '-p', dir, '-c', file], { encoding: 'utf8' });
    expect(check.status, check.stderr).toBe(0);
    nginx = spawn(NGINX, ['-p', dir, '-c', file, '-g', 'daemon off;'], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      const up = await get(port).then(
        () => true,
        () => false,
      );
      if (up) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  afterAll(async () => {
    nginx?.kill('SIGTERM');
    await new Promise((r) => (nginx && nginx.exitCode === null ? nginx.once('exit', r) : r(null)));
    for (const u of [a, b]) u?.server.closeAllConnections();
    await Promise.all([a, b].filter(Boolean).map((u) => new Promise((r) => u.server.close(r))));
    rmSync(dir, { recursive: true, force: true });
  });

  it('balances over both replicas', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) seen.add((await get(port)).body);
    expect([...seen].sort()).toEqual(['rampart-1', 'rampart-2']);
  });

  it('passes exactly one client address: the connecting client, or the client behind a trusted front proxy', async () => {
    const sent = () => forwardedFor;
    // A client from an address that is not a trusted proxy cannot choose its address.
    let before = sent().length;
    await get(port, { from: '127.0.0.2', forwardedFor: '6.6.6.6' });
    expect(sent().slice(before)).toEqual(['127.0.0.2']);
    // Without a header, the connecting address.
    before = sent().length;
    await get(port, { from: '127.0.0.3' });
    expect(sent().slice(before)).toEqual(['127.0.0.3']);
    // Behind a front proxy on a trusted address: the right-most untrusted entry, never a prefix
    // the client wrote itself.
    before = sent().length;
    await get(port, { forwardedFor: '6.6.6.6, 203.0.113.9' });
    expect(sent().slice(before)).toEqual(['203.0.113.9']);
  });

  it('skips a replica that is down', async () => {
    b.server.closeAllConnections();
    await new Promise((r) => b.server.close(r));
    const bodies: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await get(port);
      expect(r.status).toBe(200);
      bodies.push(r.body);
    }
    expect(new Set(bodies)).toEqual(new Set(['rampart-1']));
  });
});
