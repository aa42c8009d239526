// End to end: a real server on loopback, a worker enrolled by code, and the agent with the real
// port scanner. It leases a queued port scan of a host asset 127.0.0.1, scans a loopback range
// holding a Redis-like listener, uploads the native report (init → PUT → finalize), and after
// ingestion the scan has succeeded with the open-port and exposed-Redis findings. A second scan, cancelled while it runs, is dropped by the agent.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import { createHostedAgent, type Agent } from '../../src/agent/agent.ts';
import { enrollWorker } from '../../src/agent/client.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { listenTcp, type TcpServer } from '../helpers/tcp-server.ts';
import { scanRow, scanTenant, setVerification, type ScanTenant } from './scans-fixtures.ts';

let t: TestApp;
let st: ScanTenant;
let serverUrl: string;
let secret: string;
let token: string;
let assetId: string;
let redis: TcpServer;
let redisPort = 0;

beforeAll(async () => {
  t = await createTestApp();
  st = await scanTenant(t);
  serverUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const s = await st.owner.post(`${st.base}/webhook-secret`, {});
  expect(s.statusCode, s.body).toBe(201);
  secret = s.json().secret;
  const code = (await st.owner.post(`${st.base}/worker-enrollments`)).json().code;
  ({ token } = await enrollWorker({ serverUrl, code, name: 'e2e-agent', platform: 'linux/x64', version: '0.1.0' }));

  const a = await st.owner.post(`${st.base}/assets`, { kind: 'host', target: '127.0.0.1' });
  expect(a.statusCode, a.body).toBe(201);
  assetId = a.json().asset.id;
  await setVerification(t, assetId, 'bypassed');
  // The first scan may still be ingesting when the second is queued.
  await st.settings(100, 5);

  redis = await listenTcp((sock) =>
    sock.on('data', (d) => sock.write(d.toString().includes('PING') ? '+PONG\r\n' : '-ERR unknown command\r\n')),
  );
  redisPort = redis.port;
});

afterAll(async () => {
  await redis.close();
  await t.close();
});

async function waitFor<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, tries = 600): Promise<T> {
  let v = await read();
  for (let i = 0; i < tries && !done(v); i += 1) {
    await new Promise((r) => setTimeout(r, 100));
    v = await read();
  }
  if (!done(v)) throw new Error(`Timed out waiting for ${what}: ${JSON.stringify(v)}`);
  return v;
}

function agent(): Agent {
  return createHostedAgent({
    client: { serverUrl, token, signingSecret: async () => secret },
    scannerSettings: { port: { bannerWaitMs: 300, probeTimeoutMs: 1_000 } },
    graceMs: 5_000,
  });
}

describe('worker agent end to end', () => {
  it('leases a port scan, scans loopback, uploads the report, and the scan succeeds with its findings', async () => {
    const from = Math.max(1, redisPort - 2);
    const { scan } = await st.queue({
      assetId,
      kind: 'port',
      options: { range: { from, to: redisPort + 2 }, timeoutMs: 500 },
    });
    const a = agent();
    const running = a.start();
    try {
      const row = await waitFor(
        'the scan to reach ingestion',
        () => scanRow(t, scan.id),
        (r) => ['ingesting', 'succeeded', 'failed'].includes(r.status),
      );
      expect(row.status, JSON.stringify(row)).not.toBe('failed');
      // finalize answered (the server moved the scan on before its answer arrived).
      await waitFor(
        'the finalize answer',
        async () => a.stats.uploaded,
        (n) => n === 1,
      );
      expect(a.stats).toMatchObject({ leased: 1, uploaded: 1, failed: 0, dropped: 0 });

      const upload = await withService(t.database.db, (tx) =>
        sql<{
          status: string;
          format: string | null;
          size: string | number;
        }>`select status, format, size from report_uploads where scan_id = ${scan.id}`.execute(tx),
      );
      expect(upload.rows).toHaveLength(1);
      expect(upload.rows[0]).toMatchObject({ status: 'finalized', format: 'native' });

      // Ingestion runs as a background job on the server; drain it here instead of waiting a poll.
      await t.app.services.ingestion.drain();
      const final = await waitFor(
        'ingestion',
        () => scanRow(t, scan.id),
        (r) => r.status !== 'ingesting',
      );
      expect(final.status, JSON.stringify(final)).toBe('succeeded');
      const findings = await withService(t.database.db, (tx) =>
        sql<{
          rule_id: string;
          severity: string;
        }>`select rule_id, severity from findings where asset_id = ${assetId}`.execute(tx),
      );
      const rules = findings.rows.map((f) => f.rule_id);
      expect(rules).toContain(`port.open.tcp.${redisPort}`);
      expect(findings.rows.find((f) => f.rule_id === 'service.exposed.redis')?.severity).toBe('high');
    } finally {
      await a.stop();
      await running;
    }
  });

  it('drops a scan cancelled while it runs and leaves it cancelled', async () => {
    // A slow scan: every port of a wide range on a blackhole-free loopback is refused quickly, so
    // give it many ports and cancel right after the first progress.
    const { scan } = await st.queue({
      assetId,
      kind: 'port',
      options: { range: { from: 1, to: 65535 }, timeoutMs: 500, rate: 200 },
    });
    const a = agent();
    const running = a.start();
    try {
      await waitFor(
        'the scan to run',
        () => scanRow(t, scan.id),
        (r) => r.status === 'running',
      );
      const res = await st.owner.post(`${st.base}/scans/${scan.id}/cancel`, {});
      expect(res.statusCode, res.body).toBeLessThan(300);
      await waitFor(
        'the agent to drop it',
        async () => a.held().length,
        (n) => n === 0,
        900,
      );
      expect(a.stats.uploaded).toBe(0);
      expect((await scanRow(t, scan.id)).status).toBe('cancelled');
    } finally {
      await a.stop();
      await running;
    }
  });
});
