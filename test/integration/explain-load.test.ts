// The real server process under file load, with the Node flags of `npm start` (512 MB heap): a
// brand-new user whose e-mail is not verified sends six maximum-size result files to the explainer
// at once. Before the explainer had a concurrency budget and parsed on a heap-capped thread, this
// killed the process with a JavaScript heap out-of-memory. Now one file is analysed (the default
// budget is one per user), five are refused at once with 429, and the server stays healthy.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTenantOverHttp, signUpOverHttp } from '../../bench/lib.ts';
import { EXPLAIN_MAX_BYTES } from '../../src/llm/llm-service.ts';
import { sarifOfSize } from '../fixtures/large-reports.ts';

const ROOT = join(import.meta.dirname, '../..');

/** The flags `npm start` gives Node, read from package.json so the test follows them. */
function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  return pkg.scripts.start.split(/\s+/).filter((w) => w.startsWith('--'));
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function healthy(base: string): Promise<boolean> {
  try {
    return (await fetch(`${base}/healthz`)).ok;
  } catch {
    return false;
  }
}

const dirs: string[] = [];
let child: ChildProcess | null = null;
afterAll(() => {
  child?.kill('SIGKILL');
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

describe('explainer under file load (server process, npm start flags)', () => {
  it('stays healthy through six concurrent maximum-size explains by a new, unverified user', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rampart-explain-load-'));
    dirs.push(dataDir);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: base,
      EMBEDDED_WORKER: 'false',
    };
    if (process.env.DATABASE_URL) env.DATABASE_URL = process.env.DATABASE_URL;
    const proc = spawn(process.execPath, [...startFlags(), join(ROOT, 'src/server/main.ts')], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child = proc;
    let stderr = '';
    proc.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
    let exitCode: number | null | undefined;
    proc.on('exit', (code) => (exitCode = code));
    for (let i = 0; i < 600 && !(await healthy(base)); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await healthy(base), stderr).toBe(true);

    const session = await signUpOverHttp(base, {
      email: `new-${Date.now()}@example.test`,
      name: 'New',
      password: 'new user password 123',
    });
    expect(session.me.user.emailVerified).toBe(false);
    const { headers } = session;
    const tenantId = await createTenantOverHttp(base, session, 'New Co');

    // Six files just under the limit, every result a rule of its own.
    const file = new Blob([sarifOfSize(EXPLAIN_MAX_BYTES - 1024)]);
    const send = async () => {
      const form = new FormData();
      form.set('file', file, 'codeql.sarif');
      const res = await fetch(`${base}/api/v1/tenants/${tenantId}/llm/explain`, {
        method: 'POST',
        headers,
        body: form,
      });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
    };
    const answers = await Promise.all(Array.from({ length: 6 }, send));

    const ok = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    expect(ok, JSON.stringify(answers.map((a) => [a.status, a.body.slice(0, 200)]))).toHaveLength(1);
    expect(refused).toHaveLength(5);
    for (const r of refused) {
      expect(JSON.parse(r.body)).toMatchObject({ error: 'too_many_concurrent', details: { limit: 1 } });
      expect(Number(r.retryAfter)).toBeGreaterThan(0);
    }
    // The one analysed file was read to its end: every result counted, rules beyond the cap counted too.
    const meta = ok[0]!.body.match(/event: meta\ndata: (.*)\n/);
    expect(meta, ok[0]!.body.slice(0, 500)).not.toBeNull();
    expect((JSON.parse(meta![1]!) as { counts: { total: number } }).counts.total).toBeGreaterThan(50_000);
    expect(ok[0]!.body).toMatch(/event: done\n/);

    // Alive and serving, and the user's slot is free again.
    expect(exitCode).toBeUndefined();
    expect(await healthy(base)).toBe(true);
    const after = await send();
    expect(after.status).toBe(200);
    expect(exitCode).toBeUndefined();
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    child = null;
  }, 300_000);
});
