// The real process: start on an empty DATA_DIR, refuse a second process on the same embedded
// database, shut down cleanly on SIGTERM, and refuse invalid configuration by name.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const NODE = process.execPath;
const MAIN = join(import.meta.dirname, '../../src/server/main.ts');

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function start(env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(NODE, [MAIN], { env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

async function waitHealthy(port: number, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server did not become healthy');
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('server process', () => {
  it.skipIf(Boolean(process.env.DATABASE_URL))('locks DATA_DIR against a second process and exits cleanly on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rampart-proc-'));
    dirs.push(dataDir);
    const port = await freePort();
    const first = start({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' });
    await waitHealthy(port);
    expect(existsSync(join(dataDir, 'rampart.lock'))).toBe(true);

    const second = start({ DATA_DIR: dataDir, PORT: String(await freePort()), HOST: '127.0.0.1' });
    expect(await second.exited).not.toBe(0);
    expect(second.output()).toMatch(/is in use by process \d+/);

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(existsSync(join(dataDir, 'rampart.lock'))).toBe(false);
    expect(first.output()).toMatch(/shutting down/);

    // Warm restart on the same directory keeps the data and the generated secrets.
    const again = start({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' });
    await waitHealthy(port);
    expect(again.output()).not.toMatch(/generated one/);
    again.child.kill('SIGINT');
    expect(await again.exited).toBe(0);
  });

  it('stops with a message naming the bad variable', async () => {
    const p = start({ PORT: 'eighty', DATABASE_URL: 'mysql://nope' });
    expect(await p.exited).toBe(78);
    expect(p.output()).toMatch(/PORT/);
    expect(p.output()).toMatch(/DATABASE_URL/);
  });
});
