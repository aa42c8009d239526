// The real server process under a maximum-size import, with the Node flags of `npm start` (512 MB
// heap): a member uploads a SARIF log at the report size limit through the import route. Before
// importers streamed their input, such a log was joined and JSON.parse'd whole: the server answered
// 202, died within seconds and, after each restart, claimed the job again and died again. Now the
// import runs to an end while the server keeps answering health checks and ordinary reads, and its
// resident memory stays within a fixed budget.
//
// The file is REPORT_MAX_BYTES minus room for the multipart framing, but holds 100,000 results, each
// padded with a property the importer ignores: the parser still reads every byte, while the findings
// written stay few enough for a loaded 2-core test machine (a million results takes minutes to store).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openAsBlob, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTenantOverHttp, signUpOverHttp } from '../../bench/lib.ts';
import { loadConfig } from '../../src/lib/config.ts';
import { writeSarifFile } from '../fixtures/large-reports.ts';

const ROOT = join(import.meta.dirname, '../..');
const RESULTS = 100_000;
/**
 * Budget for the process's peak resident memory (VmHWM: all threads). The embedded database runs
 * in the process and keeps its WebAssembly memory (about 800 MB measured); on PostgreSQL the
 * server's own share is the 512 MB heap's live part, the parse thread and buffers (about 290 MB).
 */
const RSS_BUDGET_MB = process.env.DATABASE_URL ? 600 : 1024;

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

async function answers(url: string, headers?: Record<string, string>): Promise<boolean> {
  try {
    return (await fetch(url, { headers, signal: AbortSignal.timeout(30_000) })).ok;
  } catch {
    return false;
  }
}

function peakRssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmHWM:\s+(\d+) kB$/m);
  if (!line) throw new Error('no VmHWM in /proc/<pid>/status');
  return Number(line[1]) / 1024;
}

/** On PostgreSQL, a statement on the suite's server (a database of this test's own). */
async function admin(statement: string): Promise<void> {
  const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await c.connect();
  try {
    await c.query(statement);
  } finally {
    await c.end();
  }
}

const dirs: string[] = [];
let child: ChildProcess | null = null;
let pgName: string | null = null;
afterAll(async () => {
  if (child) {
    const gone = new Promise((r) => child!.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  }
  if (pgName) await admin(`drop database if exists ${pgName} with (force)`);
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

describe('import under file load (server process, npm start flags)', () => {
  it('stays healthy through a maximum-size import and ends it in a final state', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rampart-import-load-'));
    const scratch = mkdtempSync(join(tmpdir(), 'rampart-import-file-'));
    dirs.push(dataDir, scratch);
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
    // An installation of its own (no administrator yet), so the first account can become one.
    if (process.env.DATABASE_URL) {
      pgName = `rampart_import_load_${process.pid}_${Date.now().toString(36)}`;
      await admin(`create database ${pgName}`);
      const url = new URL(process.env.DATABASE_URL);
      url.pathname = `/${pgName}`;
      env.DATABASE_URL = url.toString();
    }
    const { REPORT_MAX_BYTES } = loadConfig(env);
    const file = join(scratch, 'big.sarif');
    await writeSarifFile(file, { bytes: REPORT_MAX_BYTES - 1024 ** 2, results: RESULTS });
    expect(statSync(file).size).toBe(REPORT_MAX_BYTES - 1024 ** 2);

    const proc = spawn(process.execPath, [...startFlags(), join(ROOT, 'src/server/main.ts')], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child = proc;
    let stderr = '';
    proc.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
    let exitCode: number | null = null;
    proc.on('exit', (code, signal) => (exitCode = code ?? (signal ? -1 : null)));
    for (let i = 0; i < 600 && !(await answers(`${base}/healthz`)); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await answers(`${base}/healthz`), stderr).toBe(true);

    const session = await signUpOverHttp(base, {
      email: `importer-${Date.now()}@example.test`,
      name: 'Importer',
      password: 'importer password 123',
    });
    const { cookie, headers } = session;
    const tenantId = await createTenantOverHttp(base, session, 'Import Co');
    const tenant = `${base}/api/v1/tenants/${tenantId}`;
    const created = await fetch(`${tenant}/assets`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'webapp', target: 'https://app.import-load.example.test/' }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const assetId = ((await created.json()) as { asset: { id: string } }).asset.id;
    // The first account becomes the installation's administrator and bypasses the proof, as the
    // first run of a lab install does: imports need an asset whose ownership is settled.
    const setup = (await (await fetch(`${base}/api/v1/setup`)).json()) as { setupUrl: string | null };
    expect(setup.setupUrl).toMatch(/token=/);
    const token = new URL(setup.setupUrl!).searchParams.get('token');
    const json = { ...headers, 'content-type': 'application/json' };
    const became = await fetch(`${base}/api/v1/setup`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ token }),
    });
    expect(became.status, await became.text()).toBe(200);
    const bypassed = await fetch(`${base}/api/v1/staff/assets/${assetId}/bypass`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ reason: 'Load test of a maximum-size import' }),
    });
    expect(bypassed.status, await bypassed.text()).toBe(200);

    // Health and one ordinary read, polled from before the upload until the import has ended.
    let polling = true;
    const polls = { health: 0, healthFailed: 0, reads: 0, readsFailed: 0 };
    const poller = (async () => {
      while (polling) {
        polls.health += 1;
        if (!(await answers(`${base}/healthz`))) polls.healthFailed += 1;
        polls.reads += 1;
        if (!(await answers(`${tenant}/assets`, { cookie }))) polls.readsFailed += 1;
        await new Promise((r) => setTimeout(r, 500));
      }
    })();

    const form = new FormData();
    form.set('assetId', assetId);
    form.set('format', 'sarif');
    form.set('file', await openAsBlob(file), 'big.sarif');
    const res = await fetch(`${tenant}/imports`, { method: 'POST', headers, body: form });
    const accepted = (await res.json()) as { import: { id: string } };
    expect(res.status, JSON.stringify(accepted)).toBe(202);

    type Import = { status: string; error: string | null; findingsRead: number };
    let imp: Import | null = null;
    const deadline = Date.now() + 480_000;
    while (Date.now() < deadline && exitCode === null) {
      const r = await fetch(`${tenant}/imports/${accepted.import.id}`, {
        headers: { cookie },
        signal: AbortSignal.timeout(30_000),
      }).catch(() => null);
      if (r?.ok) imp = ((await r.json()) as { import: Import }).import;
      if (imp?.status === 'succeeded' || imp?.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    polling = false;
    await poller;

    // Alive (never restarted: this is the process started above), answering throughout, and the
    // import ended: stored in full, or failed for good with a reason, never left running.
    expect(exitCode, stderr).toBeNull();
    expect(polls.healthFailed, JSON.stringify(polls)).toBe(0);
    expect(polls.readsFailed, JSON.stringify(polls)).toBe(0);
    expect(polls.health).toBeGreaterThan(1);
    expect(imp, stderr).not.toBeNull();
    expect(['succeeded', 'failed'], JSON.stringify(imp)).toContain(imp!.status);
    if (imp!.status === 'failed') expect(imp!.error).toMatch(/\S/);
    else expect(imp!.findingsRead).toBe(RESULTS);
    expect(await answers(`${base}/healthz`)).toBe(true);

    const peak = peakRssMb(proc.pid!);
    console.log(`maximum-size import: ${JSON.stringify({ ...imp, peakRssMb: Math.round(peak), polls })}`);
    expect(peak).toBeLessThan(RSS_BUDGET_MB);

    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    child = null;
  }, 600_000);
});
