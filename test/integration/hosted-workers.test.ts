// The embedded hosted worker: a super-admin starts a hosted worker for a tenant; its token is kept
// sealed; the runner (as main.ts starts it, on this process's loopback address) leases a queued
// port scan of a loopback listener over HTTP, uploads the report, and the scan ends with its
// findings; a tenant admin's revocation stops the agent.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import { hashWorkerToken } from '../../src/workers/index.ts';
import { EMBEDDED_PLATFORM, selfUrl } from '../../src/workers/hosted-service.ts';
import type { HostedWorkerDto, HostedWorkerListDto } from '../../src/workers/hosted-schemas.ts';
import { createTestApp, STAFF_DOMAIN, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { bootstrapStaff } from '../helpers/staff.ts';
import { listenTcp, type TcpServer } from '../helpers/tcp-server.ts';
import { signingSecret } from '../helpers/workers.ts';
import { scanRow, scanTenant, setVerification, type ScanTenant } from './scans-fixtures.ts';

const URL_ = '/api/v1/staff/hosted-workers';

let t: TestApp;
let st: ScanTenant;
let admin: Client;
let staffOnly: Client;
let listener: TcpServer;
let listenerPort = 0;

beforeAll(async () => {
  t = await createTestApp();
  st = await scanTenant(t);
  admin = await bootstrapStaff(t, uniqueEmail('hosted-sa', STAFF_DOMAIN), 'super_admin');
  staffOnly = await bootstrapStaff(t, uniqueEmail('hosted-staff', STAFF_DOMAIN), 'staff');
  // A service on loopback for the port scan to find.
  listener = await listenTcp((sock) => sock.end('hello from the hosted worker test\r\n'));
  listenerPort = listener.port;
});

afterAll(async () => {
  // As main.ts does: agents stop (and release their leases) before the server closes.
  await t.app.services.hostedWorkers.stop(1_000);
  // The agents send Connection: close, so nothing of theirs holds close() (a hang here would
  // time the hook out).
  await listener.close();
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

const listed = async (): Promise<HostedWorkerListDto> => {
  const res = await admin.get(URL_);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const entry = async (id: string) => (await listed()).workers.find((w) => w.id === id);

describe('staff hosted-workers routes', () => {
  it('only super-admins may list or create hosted workers', async () => {
    for (const c of [staffOnly, st.owner]) {
      const post = await c.post(URL_, { tenantId: st.tenantId });
      expect(post.statusCode).toBe(403);
      expect(post.json().error).toBe(c === staffOnly ? 'super_admin_only' : 'staff_only');
      expect((await c.get(URL_)).statusCode).toBe(403);
    }
    expect((await new Client(t.app).get(URL_)).statusCode).toBe(401);
  });

  it('refuses an unknown tenant with tenant_not_found and a malformed id with validation_failed', async () => {
    const unknown = await admin.post(URL_, { tenantId: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toBe('tenant_not_found');
    const bad = await admin.post(URL_, { tenantId: 'not-a-uuid' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('validation_failed');
  });

  it('creates a hosted worker in the tenant, its token stored sealed, and audits it', async () => {
    const res = await admin.post(URL_, { tenantId: st.tenantId });
    expect(res.statusCode, res.body).toBe(201);
    const w = res.json() as HostedWorkerDto;
    expect(w).toMatchObject({
      tenantId: st.tenantId,
      platform: EMBEDDED_PLATFORM,
      status: 'active',
      embedded: true,
      running: false,
    });
    expect(w.name).toMatch(/^hosted-\d+$/);
    expect(JSON.stringify(res.json())).not.toMatch(/rwk_/);

    // The tenant sees it like any worker, marked hosted, and can revoke it.
    const mine = (await st.owner.get(`${st.base}/workers`)).json().workers as { id: string; hosted: boolean }[];
    expect(mine.find((x) => x.id === w.id)?.hosted).toBe(true);

    // Sealed: neither the token nor its hash is stored, and opening it gives the token whose hash the worker row holds.
    const row = await withService(t.database.db, (tx) =>
      tx
        .selectFrom('hosted_worker_credentials as c')
        .innerJoin('workers as w', 'w.id', 'c.worker_id')
        .select(['c.token_sealed', 'c.tenant_id', 'w.token_hash'])
        .where('c.worker_id', '=', w.id)
        .executeTakeFirstOrThrow(),
    );
    expect(row.tenant_id).toBe(st.tenantId);
    const token = t.app.services.secretBox.open(row.token_sealed);
    expect(token).toMatch(/^rwk_/);
    expect(hashWorkerToken(token)).toBe(row.token_hash);
    expect(row.token_sealed).not.toContain(token);
    expect(row.token_sealed).not.toContain(row.token_hash);

    // The tenant role cannot read credentials at all (no grant; RLS behind it).
    const asApp = await t.database.db
      .transaction()
      .execute(async (tx) => {
        await sql`select set_config('role', 'rampart_app', true), set_config('app.tenant_id', ${st.tenantId}, true)`.execute(
          tx,
        );
        return sql`select * from hosted_worker_credentials`.execute(tx);
      })
      .then(
        () => 'read',
        (e: unknown) => String((e as Error).message),
      );
    expect(asApp).toMatch(/permission denied/);

    const audit = await withService(t.database.db, (tx) =>
      tx
        .selectFrom('audit_log')
        .select(['action'])
        .where('tenant_id', '=', st.tenantId)
        .where('target_id', '=', w.id)
        .execute(),
    );
    expect(audit.map((a) => a.action)).toEqual(
      expect.arrayContaining(['workers.enrolled', 'workers.hosted_worker_created']),
    );

    const list = await listed();
    expect(list.runnerActive).toBe(false);
    expect(list.workers.find((x) => x.id === w.id)).toMatchObject({
      tenantName: expect.stringContaining('Scan Co'),
      status: 'active',
      running: false,
    });
  });
});

describe('the embedded runner', () => {
  it('runs the hosted worker in-process: it leases a port scan over HTTP, uploads, and the scan succeeds', async () => {
    await signingSecret(st.owner, st.tenantId);
    const a = await st.owner.post(`${st.base}/assets`, { kind: 'host', target: '127.0.0.1' });
    expect(a.statusCode, a.body).toBe(201);
    const assetId = a.json().asset.id as string;
    await setVerification(t, assetId, 'bypassed');
    await st.settings(100, 5);
    const { scan } = await st.queue({
      assetId,
      kind: 'port',
      options: { range: { from: Math.max(1, listenerPort - 2), to: listenerPort + 2 }, timeoutMs: 500 },
    });

    const hosted = (await listed()).workers.find((w) => w.tenantId === st.tenantId && w.status === 'active')!;
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = Number(new URL(url).port);
    expect(selfUrl('0.0.0.0', port)).toBe(`http://127.0.0.1:${port}`);
    await t.app.services.hostedWorkers.run({
      serverUrl: selfUrl('0.0.0.0', port),
      syncEveryMs: 200,
      graceMs: 2_000,
      port: { bannerWaitMs: 300, probeTimeoutMs: 1_000 },
    });
    expect((await listed()).runnerActive).toBe(true);
    expect((await entry(hosted.id))?.running).toBe(true);

    const row = await waitFor(
      'the scan to reach ingestion',
      () => scanRow(t, scan.id),
      (r) => ['ingesting', 'succeeded', 'failed'].includes(r.status),
    );
    expect(row.status, JSON.stringify(row)).not.toBe('failed');
    const upload = await withService(t.database.db, (tx) =>
      tx
        .selectFrom('report_uploads')
        .select(['status', 'format', 'worker_id'])
        .where('scan_id', '=', scan.id)
        .execute(),
    );
    expect(upload).toEqual([{ status: 'finalized', format: 'native', worker_id: hosted.id }]);

    await t.app.services.ingestion.drain();
    const final = await waitFor(
      'ingestion',
      () => scanRow(t, scan.id),
      (r) => r.status !== 'ingesting',
    );
    expect(final.status, JSON.stringify(final)).toBe('succeeded');
    const findings = await withService(t.database.db, (tx) =>
      tx.selectFrom('findings').select(['rule_id']).where('asset_id', '=', assetId).execute(),
    );
    expect(findings.map((f) => f.rule_id)).toContain(`port.open.tcp.${listenerPort}`);
    // The worker was seen by the server through the ordinary authenticated path.
    expect((await entry(hosted.id))?.lastSeenAt).not.toBeNull();
  });

  it('starts a worker created while running at once, and a tenant revocation stops only that agent', async () => {
    const first = (await listed()).workers.find((w) => w.tenantId === st.tenantId && w.status === 'active')!;
    const res = await admin.post(URL_, { tenantId: st.tenantId });
    expect(res.statusCode, res.body).toBe(201);
    const second = res.json() as HostedWorkerDto;
    expect(second.running).toBe(true);
    expect(second.name).not.toBe(first.name);

    const revoke = await st.owner.post(`${st.base}/workers/${first.id}/revoke`, {});
    expect(revoke.statusCode, revoke.body).toBe(200);
    const gone = await waitFor(
      'the revoked agent to stop',
      () => entry(first.id),
      (w) => w?.running === false,
    );
    expect(gone).toMatchObject({ status: 'revoked', running: false });
    // A later sync does not bring it back; the other worker keeps running.
    await t.app.services.hostedWorkers.sync();
    expect((await entry(first.id))?.running).toBe(false);
    expect((await entry(second.id))?.running).toBe(true);
  });

  it('stop() ends every agent; hosted workers stay listed but not running', async () => {
    await t.app.services.hostedWorkers.stop(1_000);
    const list = await listed();
    expect(list.runnerActive).toBe(false);
    expect(list.workers.filter((w) => w.tenantId === st.tenantId).every((w) => !w.running)).toBe(true);
  });
});

describe('selfUrl', () => {
  it('reaches this process on loopback unless it listens on one specific address', () => {
    expect(selfUrl('0.0.0.0', 3000)).toBe('http://127.0.0.1:3000');
    expect(selfUrl('::', 3000)).toBe('http://127.0.0.1:3000');
    expect(selfUrl('localhost', 3000)).toBe('http://127.0.0.1:3000');
    expect(selfUrl('::1', 3000)).toBe('http://[::1]:3000');
    expect(selfUrl('10.0.0.5', 8080)).toBe('http://10.0.0.5:8080');
    expect(selfUrl('fd00::5', 8080)).toBe('http://[fd00::5]:8080');
  });
});

describe("a tenant's own hosted worker (TENANT_HOSTED_WORKER)", () => {
  it('gives a new tenant a signing secret and a hosted worker at creation; off, neither', async () => {
    const on = await createTestApp({ env: { TENANT_HOSTED_WORKER: 'on' }, database: t.database });
    try {
      const fresh = await scanTenant(on);
      const secret = (await fresh.owner.get(`${fresh.base}/webhook-secret`)).json();
      expect(secret).toMatchObject({ configured: true });
      const workers = (await fresh.owner.get(`${fresh.base}/workers`)).json().workers as {
        hosted: boolean;
        status: string;
      }[];
      expect(workers).toEqual([expect.objectContaining({ hosted: true, status: 'active' })]);
      // Still rotatable by the tenant, and the secret is never shown afterwards.
      const rotated = await fresh.owner.post(`${fresh.base}/webhook-secret`, { graceHours: 0 });
      expect(rotated.statusCode, rotated.body).toBe(201);
      expect(JSON.stringify(secret)).not.toMatch(/whsec_/);
    } finally {
      await on.close();
    }
    const off = await scanTenant(t);
    expect((await off.owner.get(`${off.base}/webhook-secret`)).json()).toMatchObject({ configured: false });
    expect((await off.owner.get(`${off.base}/workers`)).json().workers).toEqual([]);
  });
});
