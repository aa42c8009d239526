// The real process: start on an empty DATA_DIR, refuse a second process on the same embedded
// database, shut down cleanly on SIGTERM, read queued reports by itself (the ingestion runner runs
// in every server process), and refuse invalid configuration by name.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fixturePath } from '../../src/workers/importers/test-helpers.ts';

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

function start(env: Record<string, string>): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
} {
  const child = spawn(NODE, [MAIN], {
    env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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

// Each test starts real server processes (migrations, PGlite start-up): slow on a loaded machine.
describe('server process', { timeout: 90_000 }, () => {
  it.skipIf(Boolean(process.env.DATABASE_URL))(
    'locks DATA_DIR against a second process and exits cleanly on SIGTERM',
    async () => {
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
      expect(await first.exited, first.output().slice(-4_000)).toBe(0);
      expect(existsSync(join(dataDir, 'rampart.lock'))).toBe(false);
      expect(first.output()).toMatch(/shutting down/);

      // Warm restart on the same directory keeps the data and the generated secrets.
      const again = start({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' });
      await waitHealthy(port);
      expect(again.output()).not.toMatch(/generated one/);
      again.child.kill('SIGINT');
      // The output says why when it is not 0 (a shutdown over its 10 s budget exits 1).
      expect(await again.exited, again.output().slice(-4_000)).toBe(0);
    },
  );

  it.skipIf(Boolean(process.env.DATABASE_URL))(
    'reads an imported report by itself: the ingestion runner runs in the server process',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'rampart-proc-ingest-'));
      dirs.push(dataDir);
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const server = start({
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        PUBLIC_BASE_URL: base,
        EMBEDDED_WORKER: 'false',
      });
      try {
        await waitHealthy(port);
        const up = await fetch(`${base}/api/auth/sign-up/email`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: base },
          body: JSON.stringify({ email: 'ingest@example.test', name: 'Ingest', password: 'ingest password 123' }),
        });
        expect(up.status).toBe(200);
        const cookie = up.headers
          .getSetCookie()
          .map((c) => c.split(';')[0])
          .join('; ');
        const csrf = (
          (await (await fetch(`${base}/api/v1/me`, { headers: { cookie } })).json()) as { csrfToken: string }
        ).csrfToken;
        const headers = { origin: base, cookie, 'x-csrf-token': csrf };
        const org = await fetch(`${base}/api/auth/organization/create`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Ingest Co', slug: 'ingest-co' }),
        });
        const tenantId = ((await org.json()) as { id: string }).id;
        // An uploaded image archive is verified by construction: no DNS proof is needed to import for it.
        const img = mkdtempSync(join(tmpdir(), 'rampart-proc-img-'));
        dirs.push(img);
        writeFileSync(
          join(img, 'manifest.json'),
          JSON.stringify([{ Config: 'c.json', RepoTags: ['acme/app:1'], Layers: [] }]),
        );
        execFileSync('tar', ['-cf', join(img, 'image.tar'), '-C', img, 'manifest.json']);
        const asset = await fetch(`${base}/api/v1/tenants/${tenantId}/assets/archives?fileName=image.tar`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/octet-stream' },
          body: readFileSync(join(img, 'image.tar')),
        });
        expect(asset.status, await asset.clone().text()).toBe(201);
        const assetId = ((await asset.json()) as { asset: { id: string } }).asset.id;
        const form = new FormData();
        form.set('assetId', assetId);
        form.set('format', 'trivy');
        form.set('file', new Blob([readFileSync(fixturePath('trivy-image.json'))]), 'trivy.json');
        const imp = await fetch(`${base}/api/v1/tenants/${tenantId}/imports`, { method: 'POST', headers, body: form });
        expect(imp.status, await imp.clone().text()).toBe(202);
        const id = ((await imp.json()) as { import: { id: string } }).import.id;
        // Nobody drains the queue here: the server's own runner must pick the report up.
        let status = '';
        for (let i = 0; i < 100 && status !== 'succeeded' && status !== 'failed'; i++) {
          await new Promise((r) => setTimeout(r, 200));
          status = (
            (await (await fetch(`${base}/api/v1/tenants/${tenantId}/imports/${id}`, { headers })).json()) as {
              import: { status: string };
            }
          ).import.status;
        }
        expect(status).toBe('succeeded');
      } finally {
        server.child.kill('SIGTERM');
        expect(await server.exited).toBe(0);
      }
    },
    60_000,
  );

  it('stops with a message naming the bad variable', async () => {
    const p = start({ PORT: 'eighty', DATABASE_URL: 'mysql://nope' });
    expect(await p.exited).toBe(78);
    expect(p.output()).toMatch(/PORT/);
    expect(p.output()).toMatch(/DATABASE_URL/);
  });
});
