// Shared pieces of the benchmarks: spawning the real server, waiting for health, statistics.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';

export const ROOT = join(import.meta.dirname, '..');
export const MAIN = join(ROOT, 'src/server/main.ts');

/** The Node flags `npm start` runs the server with (package.json), so benches measure that process. */
export function serverNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const words = (pkg.scripts.start ?? '').split(/\s+/);
  return words.slice(1).filter((w) => w.startsWith('--'));
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface Server {
  child: ChildProcess;
  port: number;
  stop(): Promise<number | null>;
}

export function spawnServer(env: Record<string, string>, port: number): Server {
  const child = spawn(process.execPath, [...serverNodeFlags(), MAIN], {
    // BENCH_SERVER_NODE_OPTIONS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the server.
    env: {
      PATH: process.env.PATH,
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      // Benchmarks and tests run their peers, storage and language model on loopback, which the
      // egress policy refuses unless the operator names it.
      EGRESS_ALLOW: '127.0.0.0/8,::1',
      ...(process.env.BENCH_SERVER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_SERVER_NODE_OPTIONS } : {}),
      ...env,
    },
    // Errors are copied through rather than inherited, so a server that outlives its caller never
    // holds the caller's output open.
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.pipe(process.stderr, { end: false });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  return {
    child,
    port,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Milliseconds from `since` until GET /healthz answers 200, polling every 10 ms. */
export async function msUntilHealthy(port: number, since: number, timeoutMs = 60_000): Promise<number> {
  while (performance.now() - since < timeoutMs) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (res.status === 200) return performance.now() - since;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('server did not become healthy');
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

export const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * A fresh PostgreSQL database for one bench run (dropped first if a crashed run left it), and
 * drop(), which keeps it when BENCH_KEEP_DB is set (for profiling afterwards).
 */
export async function createBenchDatabase(
  adminUrl: string,
  name: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = async (query: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(query);
    } finally {
      await client.end();
    }
  };
  await admin(`drop database if exists ${name}`);
  await admin(`create database ${name}`);
  return {
    url: adminUrl.replace(/\/[^/]*$/, `/${name}`),
    async drop() {
      if (process.env.BENCH_KEEP_DB) console.error(`bench: kept database ${name}`);
      else await admin(`drop database if exists ${name} with (force)`);
    },
  };
}

/**
 * CPU time of each thread of a process so far, in microseconds, keyed by thread name and id
 * (Linux /proc; an empty map elsewhere). Taken before and after a round, divided by its calls, it
 * gives the CPU each thread spends per call, which a busy shared machine disturbs far less than
 * it disturbs throughput.
 */
export function threadCpuMicros(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  const hz = 100; // USER_HZ on Linux
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // Fields after the command name (which may contain spaces) start after the last ')'.
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(rest[11]) + Number(rest[12]); // utime, stime
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      out.set(`${name}#${tid}`, (ticks * 1e6) / hz);
    } catch {
      /* the thread ended */
    }
  }
  return out;
}

/** Per-call CPU of each busy thread between two threadCpuMicros() snapshots, grouped by thread name. */
export function cpuPerCall(
  before: Map<string, number>,
  after: Map<string, number>,
  calls: number,
): Record<string, number> {
  const byName: Record<string, number> = {};
  for (const [key, t] of after) {
    const used = t - (before.get(key) ?? 0);
    if (used <= 0 || calls <= 0) continue;
    const name = key.slice(0, key.lastIndexOf('#'));
    byName[name] = round((byName[name] ?? 0) + used / calls, 1);
  }
  return byName;
}

/** A browser-like session over HTTP: the cookie and the headers a state-changing call needs. */
export interface HttpSession {
  cookie: string;
  /** origin, cookie and x-csrf-token */
  headers: Record<string, string>;
  me: { csrfToken: string; user: { emailVerified: boolean } };
}

/** Signs a new user up through the auth API, as the web app does. */
export async function signUpOverHttp(
  base: string,
  user: { email: string; name: string; password: string },
): Promise<HttpSession> {
  const up = await fetch(`${base}/api/auth/sign-up/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify(user),
  });
  if (up.status !== 200) throw new Error(`sign-up: ${up.status} ${await up.text()}`);
  const cookie = up.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const me = (await (await fetch(`${base}/api/v1/me`, { headers: { cookie } })).json()) as HttpSession['me'];
  return { cookie, me, headers: { origin: base, cookie, 'x-csrf-token': me.csrfToken } };
}

/** Creates a tenant (organization) for the session's user; returns its id. */
export async function createTenantOverHttp(base: string, s: HttpSession, name: string): Promise<string> {
  const res = await fetch(`${base}/api/auth/organization/create`, {
    method: 'POST',
    headers: { ...s.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ name, slug: `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${Date.now()}` }),
  });
  if (!res.ok) throw new Error(`create tenant: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}
