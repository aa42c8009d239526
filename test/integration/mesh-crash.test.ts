// Crash safety of the outbox with real processes: the server is killed with SIGKILL in the
// middle of delivering, restarted, and every event still arrives, each executed once by an
// idempotent peer (re-deliveries reuse the event's request id).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/lib.ts';
import { openDatabase } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
import { withService } from '../../src/db/tenant.ts';
import { TEST_EGRESS_ALLOW } from '../helpers/app.ts';

const RUN = Math.random().toString(36).slice(2, 8);
const PEER = `crashpeer-${RUN}`;
const SUFFIX = PEER.toUpperCase().replace(/[^A-Z0-9]/g, '_');
const EVENTS = 20;
const MAIN = join(import.meta.dirname, '../../src/server/main.ts');
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/**
 * An idempotent receiver: the first delivery of a request id executes, later ones replay. After
 * `holdAfter` deliveries it holds further ones unanswered and unexecuted until open(), so the
 * crash always lands mid-run however fast or slow the machine is.
 */
function startPeer(
  delayMs: number,
  holdAfter: number,
): Promise<{
  server: Server;
  port: number;
  executions: Map<string, number>;
  deliveries: () => number;
  quietFor: () => number;
  open(): void;
}> {
  const executions = new Map<string, number>();
  let deliveries = 0;
  let last = Date.now();
  let held = true;
  const server = createServer((req, res) => {
    const id = String(req.headers['x-svc-request-id']);
    req.resume();
    req.on('end', () => {
      deliveries += 1;
      last = Date.now();
      if (held && deliveries > holdAfter) return; // the sender dies waiting
      setTimeout(() => {
        const replayed = executions.has(id);
        if (!replayed) executions.set(id, 1);
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ requestId: id, accepted: true, ...(replayed ? { replayed: true } : {}) }));
      }, delayMs);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        server,
        port: (server.address() as { port: number }).port,
        executions,
        deliveries: () => deliveries,
        quietFor: () => Date.now() - last,
        open: () => (held = false),
      }),
    ),
  );
}

function startServer(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH, LOG_LEVEL: 'error', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('outbox across a crash', () => {
  it('delivers every event after kill -9 and restart, each executed once', { timeout: 180_000 }, async () => {
    const peer = await startPeer(150, 5);
    cleanups.push(() => new Promise<void>((r) => peer.server.close(() => r())));
    const dataDir = mkdtempSync(join(tmpdir(), 'rampart-crash-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const databaseUrl = process.env.DATABASE_URL;

    // Seed the events before the server owns the database (PGlite admits one process).
    const seeded: string[] = [];
    const db = await openDatabase({ databaseUrl, dataDir });
    await migrate(db);
    await withService(db.db, async (tx) => {
      for (let i = 0; i < EVENTS; i++) {
        const requestId = `${RUN}-event-${i}`;
        seeded.push(requestId);
        await tx
          .insertInto('svc_outbox')
          .values({
            peer: PEER,
            flow: 'event_report',
            payload: JSON.stringify({ kind: 'test.crash', severity: 'info', title: `event ${i}` }),
            request_id: requestId,
            next_attempt_at: new Date(),
          })
          .execute();
      }
    });
    await db.close();

    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      [`SVC_PEER_URL_${SUFFIX}`]: `http://127.0.0.1:${peer.port}`,
      [`SVC_SECRET_TO_${SUFFIX}`]: 'crash-secret',
      SVC_OUTBOX_LEASE_MS: '1500',
      // The peer listens on loopback, which the egress policy refuses unless allowed.
      EGRESS_ALLOW: TEST_EGRESS_ALLOW,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    };
    const first = startServer(env);
    const firstExit = new Promise((r) => first.on('exit', r));
    await until(() => peer.deliveries() >= 5, 30_000, 'the first deliveries');
    first.kill('SIGKILL'); // mid-delivery: answers held back 150 ms, later deliveries held unanswered
    await firstExit;
    expect(peer.executions.size).toBeLessThan(EVENTS);
    peer.open();

    const second = startServer(env);
    cleanups.push(() => {
      second.kill('SIGTERM');
    });
    await until(() => seeded.every((id) => peer.executions.has(id)), 60_000, 'every event to arrive after the restart');

    // Each event executed exactly once; any re-delivery carried the same request id.
    expect([...peer.executions.keys()].filter((id) => id.startsWith(RUN)).sort()).toEqual([...seeded].sort());
    expect([...peer.executions.values()].every((n) => n === 1)).toBe(true);
    expect(peer.deliveries()).toBeGreaterThanOrEqual(EVENTS);

    // Rows the killed process had leased are re-sent (same ids) once the lease expires; let that
    // finish, then check the outbox agrees: all delivered (read after the server stops, for PGlite).
    await until(() => peer.quietFor() > 4_000, 30_000, 'deliveries to go quiet');
    const exited = new Promise((r) => second.on('exit', r));
    second.kill('SIGTERM');
    await exited;
    const check = await openDatabase({ databaseUrl, dataDir });
    try {
      const rows = await withService(check.db, (tx) =>
        tx.selectFrom('svc_outbox').select(['status']).where('peer', '=', PEER).execute(),
      );
      expect(rows).toHaveLength(EVENTS);
      expect(rows.every((r) => r.status === 'delivered')).toBe(true);
    } finally {
      await check.close();
    }
  });
});
