// Worker enrollment (docs/worker-protocol.md): code format, shown once and stored hashed, 15-minute expiry,
// single use under concurrent redemption, the per-address throttle on failures, hashed bearer,
// listing (last seen, version, current scan), revocation, roles, hosted enrollments by staff, and
// tenant isolation.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import { CODE_ALPHABET } from '../../src/workers/workers-schemas.ts';
import { signBody } from '../../src/lib/worker-wire.ts';
import { generateEnrollmentCode, hashCode, hashWorkerToken, normaliseCode } from '../../src/workers/index.ts';
import { createTestApp, STAFF_DOMAIN, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { tenantCast } from '../helpers/tenants.ts';
import { bootstrapStaff } from '../helpers/staff.ts';
import { scanTenant } from './scans-fixtures.ts';

// A clock that stands still unless a test moves it; mid-minute, so throttle windows never split.
const base = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;
let offset = 0;
const clock = { now: () => new Date(base + offset) };

let t: TestApp;
let owner: Client;
let tenant: string;
let member: Client;
let other: Client;
let otherTenant: string;

const CODE_RE = /^[0-9A-HJKMNP-TV-Z]{8}$/;
const enrollUrl = '/api/public/worker/v1/enroll';

async function newCode(c = owner, id = tenant): Promise<string> {
  const res = await c.post(`/api/v1/tenants/${id}/worker-enrollments`);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().code as string;
}

const enroll = (code: string, ip?: string, name = 'runner-1') =>
  new Client(t.app, ip).post(enrollUrl, { code, name, platform: 'linux/amd64', version: '1.2.3' });

beforeAll(async () => {
  t = await createTestApp({ deps: { clock } });
  ({ owner, tenant, member, other, otherTenant } = await tenantCast(t, 'workers'));
});
afterAll(async () => {
  await t.close();
});

describe('enrollment codes', () => {
  it('are 8 characters of Crockford base32 without I, L, O, U', async () => {
    expect(CODE_ALPHABET).toHaveLength(32);
    for (const ch of 'ILOU') expect(CODE_ALPHABET).not.toContain(ch);
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const c = generateEnrollmentCode();
      expect(c).toMatch(CODE_RE);
      for (const ch of c) seen.add(ch);
    }
    expect(seen.size).toBe(32);
    expect(await newCode()).toMatch(CODE_RE);
    // Crockford reading rules: case, hyphens, I/L → 1, O → 0.
    expect(normaliseCode('abcd-efgh')).toBe('ABCDEFGH');
    expect(normaliseCode('il0o')).toBe('1100');
  });

  it('are shown once: only the hash is stored, with a 15-minute expiry', async () => {
    const res = await owner.post(`/api/v1/tenants/${tenant}/worker-enrollments`);
    expect(res.statusCode).toBe(201);
    const { id, code, expiresAt } = res.json();
    expect(new Date(expiresAt).getTime() - clock.now().getTime()).toBe(15 * 60_000);
    const row = await withService(t.database.db, (tx) =>
      tx.selectFrom('worker_enrollments').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
    );
    expect(row.code_hash).toBe(hashCode(code));
    expect(JSON.stringify(row)).not.toContain(code);
    expect(row.used_at).toBeNull();
    // Nothing lists codes afterwards.
    const list = await owner.get(`/api/v1/tenants/${tenant}/workers`);
    expect(list.body).not.toContain(code);
  });

  it('need the owner or admin role, and the tenant', async () => {
    expect((await member.post(`/api/v1/tenants/${tenant}/worker-enrollments`)).statusCode).toBe(403);
    expect((await other.post(`/api/v1/tenants/${tenant}/worker-enrollments`)).statusCode).toBe(403);
    // The CSRF token is required like every other session write.
    expect(
      (await owner.post(`/api/v1/tenants/${tenant}/worker-enrollments`, {}, { 'x-csrf-token': 'nope' })).statusCode,
    ).toBe(403);
  });
});

describe('enroll', () => {
  it('redeems a code for a worker and a bearer that is stored hashed', async () => {
    const code = await newCode();
    // Typed in lower case with a hyphen still works.
    const res = await enroll(`${code.slice(0, 4).toLowerCase()}-${code.slice(4)}`);
    expect(res.statusCode, res.body).toBe(201);
    const { workerId, tenantId, token } = res.json();
    expect(tenantId).toBe(tenant);
    expect(token).toMatch(/^rwk_[A-Za-z0-9_-]{43}$/);
    const row = await withService(t.database.db, (tx) =>
      tx.selectFrom('workers').selectAll().where('id', '=', workerId).executeTakeFirstOrThrow(),
    );
    expect(row.token_hash).toBe(hashWorkerToken(token));
    expect(JSON.stringify(row)).not.toContain(token.slice(4));
    expect(row).toMatchObject({
      tenant_id: tenant,
      name: 'runner-1',
      platform: 'linux/amd64',
      version: '1.2.3',
      hosted: false,
      revoked_at: null,
    });
    const used = await withService(t.database.db, (tx) =>
      tx.selectFrom('worker_enrollments').selectAll().where('code_hash', '=', hashCode(code)).executeTakeFirstOrThrow(),
    );
    expect(used.worker_id).toBe(workerId);
    expect(used.used_at).not.toBeNull();
  });

  it('is single use, also under concurrent redemption', async () => {
    const code = await newCode();
    const results = await Promise.all([
      enroll(code, undefined, 'a'),
      enroll(code, undefined, 'b'),
      enroll(code, undefined, 'c'),
    ]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 401, 401]);
    for (const r of results.filter((x) => x.statusCode === 401)) expect(r.json().error).toBe('enrollment_code_invalid');
    const again = await enroll(code);
    expect(again.statusCode).toBe(401);
    const n = await withService(t.database.db, (tx) =>
      tx
        .selectFrom('workers')
        .select(sql<number>`count(*)::int`.as('n'))
        .where(
          'enrollment_id',
          'in',
          tx.selectFrom('worker_enrollments').select('id').where('code_hash', '=', hashCode(code)),
        )
        .executeTakeFirstOrThrow(),
    );
    expect(n.n).toBe(1);
  });

  it('expires after 15 minutes', async () => {
    const early = await newCode();
    const late = await newCode();
    offset += 15 * 60_000 - 1000;
    expect((await enroll(early)).statusCode).toBe(201);
    offset += 1000;
    const res = await enroll(late);
    expect(res.statusCode).toBe(401);
    expect(res.json().error).toBe('enrollment_code_invalid');
  });

  it('validates the body', async () => {
    const res = await new Client(t.app).post(enrollUrl, { code: 'ABCDEFGH', name: '', platform: 'x' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('validation_failed');
  });

  it('throttles 10 failed attempts per address per minute, across the database', async () => {
    const ip = '10.77.0.1';
    for (let i = 0; i < 10; i++) {
      const res = await enroll(i % 2 ? 'ZZZZZZZZ' : 'not-a-code', ip);
      expect(res.statusCode, `attempt ${i + 1}`).toBe(401);
    }
    const good = await newCode();
    const limited = await enroll(good, ip);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another address is unaffected, and the code was not spent by the refused attempt.
    expect((await enroll(good, '10.77.0.2')).statusCode).toBe(201);
    // The next minute starts afresh.
    offset += 60_000;
    const next = await newCode();
    expect((await enroll(next, ip)).statusCode).toBe(201);
    const rows = await withService(t.database.db, (tx) =>
      tx.selectFrom('enroll_attempts').selectAll().where('address', '=', ip).orderBy('window_start').execute(),
    );
    // The refused attempt did not count; the successful one gave its reservation back.
    expect(rows.map((r) => r.failures)).toEqual([10, 0]);
  });

  it('throttles a parallel burst exactly like sequential attempts', async () => {
    const ip = '10.77.0.3';
    const results = await Promise.all(Array.from({ length: 15 }, () => enroll('ZZZZZZZZ', ip)));
    const counts = results.reduce<Record<number, number>>(
      (acc, r) => ({ ...acc, [r.statusCode]: (acc[r.statusCode] ?? 0) + 1 }),
      {},
    );
    expect(counts).toEqual({ 401: 10, 429: 5 });
  });
});

describe('workers list and revoke', () => {
  let workerId: string;
  let token: string;

  beforeAll(async () => {
    const res = await enroll(await newCode(), undefined, 'lister');
    ({ workerId, token } = res.json());
  });

  it('lists workers with platform, version, last seen and status; members may read', async () => {
    const res = await member.get(`/api/v1/tenants/${tenant}/workers`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.canManage).toBe(false);
    const w = body.workers.find((x: { id: string }) => x.id === workerId);
    expect(w).toMatchObject({
      name: 'lister',
      platform: 'linux/amd64',
      version: '1.2.3',
      status: 'active',
      lastSeenAt: null,
      currentScan: null,
      hosted: false,
    });
    expect((await owner.get(`/api/v1/tenants/${tenant}/workers`)).json().canManage).toBe(true);
  });

  it('shows the scan a worker holds', async () => {
    const s = await scanTenant(t, owner);
    const asset = await s.asset('host');
    const { scan } = await s.queue({ assetId: asset, kind: 'port' });
    const w = (await enroll(await newCode(owner, s.tenantId), undefined, 'busy')).json();
    await withService(t.database.db, (tx) =>
      sql`update scans set status = 'running', leased_by = ${w.workerId}, percent = 40, started_at = now() where id = ${scan.id}`.execute(
        tx,
      ),
    );
    const list = (await owner.get(`${s.base}/workers`)).json();
    expect(list.workers.find((x: { id: string }) => x.id === w.workerId).currentScan).toEqual({
      id: scan.id,
      kind: 'port',
      status: 'running',
      percent: 40,
    });
    await withService(t.database.db, (tx) =>
      sql`update scans set status = 'succeeded', percent = 100 where id = ${scan.id}`.execute(tx),
    );
    expect(
      (await owner.get(`${s.base}/workers`)).json().workers.find((x: { id: string }) => x.id === w.workerId)
        .currentScan,
    ).toBeNull();
  });

  it('keeps other tenants out', async () => {
    const list = await other.get(`/api/v1/tenants/${tenant}/workers`);
    expect(list.statusCode).toBe(403);
    expect(list.body).not.toContain(workerId);
    expect((await other.post(`/api/v1/tenants/${tenant}/workers/${workerId}/revoke`)).statusCode).toBe(403);
    // Through its own tenant, the worker does not exist.
    const viaOwn = await other.post(`/api/v1/tenants/${otherTenant}/workers/${workerId}/revoke`);
    expect(viaOwn.statusCode).toBe(404);
    expect(viaOwn.json().error).toBe('worker_not_found');
    expect((await other.get(`/api/v1/tenants/${otherTenant}/workers`)).json().workers).toEqual([]);
    expect((await member.post(`/api/v1/tenants/${tenant}/workers/${workerId}/revoke`)).statusCode).toBe(403);
  });

  it('revoking makes the bearer fail', async () => {
    // The tenant needs a signing secret for the bearer to get as far as a signed request.
    const secret = (await owner.post(`/api/v1/tenants/${tenant}/webhook-secret`, {})).json().secret as string;
    const beat = (nonce: string) => {
      const body = JSON.stringify({ sentAt: clock.now().toISOString(), nonce });
      return t.app.inject({
        method: 'POST',
        url: '/api/public/worker/v1/heartbeat',
        payload: body,
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${token}`,
          'x-rampart-signature': signBody(secret, body),
        },
      });
    };
    expect((await beat('nonce-before-revoke-1')).statusCode).toBe(200);
    const noncesOf = () =>
      withService(t.database.db, (tx) =>
        tx.selectFrom('worker_nonces').select('nonce').where('worker_id', '=', workerId).execute(),
      );
    expect(await noncesOf()).toEqual([{ nonce: 'nonce-before-revoke-1' }]);
    const res = await owner.post(`/api/v1/tenants/${tenant}/workers/${workerId}/revoke`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: workerId, status: 'revoked' });
    expect(res.json().lastSeenAt).not.toBeNull();
    // Its remembered nonces go with it.
    expect(await noncesOf()).toEqual([]);
    const after = await beat('nonce-after-revoke-01');
    expect(after.statusCode).toBe(401);
    expect(after.json().error).toBe('worker_unauthorized');
    // Idempotent, and the audit log has it.
    expect((await owner.post(`/api/v1/tenants/${tenant}/workers/${workerId}/revoke`)).statusCode).toBe(200);
    const audit = await withService(t.database.db, (tx) =>
      tx
        .selectFrom('audit_log')
        .select('action')
        .where('tenant_id', '=', tenant)
        .where('target_id', '=', workerId)
        .execute(),
    );
    expect(audit.map((a) => a.action)).toEqual(expect.arrayContaining(['workers.enrolled', 'workers.revoked']));
  });
});

describe('hosted workers', () => {
  it('a super-admin creates an enrollment for a tenant; the worker is marked hosted in the tenant', async () => {
    const admin = await bootstrapStaff(t, uniqueEmail('workers-sa', STAFF_DOMAIN), 'super_admin');
    const staffOnly = await bootstrapStaff(t, uniqueEmail('workers-staff', STAFF_DOMAIN), 'staff');
    expect((await staffOnly.post('/api/v1/staff/worker-enrollments', { tenantId: tenant })).statusCode).toBe(403);
    expect((await owner.post('/api/v1/staff/worker-enrollments', { tenantId: tenant })).statusCode).toBe(403);
    const unknown = await admin.post('/api/v1/staff/worker-enrollments', {
      tenantId: '00000000-0000-4000-8000-000000000000',
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toBe('tenant_not_found');
    const res = await admin.post('/api/v1/staff/worker-enrollments', { tenantId: tenant });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().hosted).toBe(true);
    const w = (await enroll(res.json().code, undefined, 'rampart-hosted-1')).json();
    const list = (await owner.get(`/api/v1/tenants/${tenant}/workers`)).json();
    expect(list.workers.find((x: { id: string }) => x.id === w.workerId)).toMatchObject({
      hosted: true,
      name: 'rampart-hosted-1',
    });
  });
});
