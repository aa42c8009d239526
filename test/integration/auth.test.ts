import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_BASE_URL, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client, PASSWORD } from '../helpers/client.ts';
import { secretFromUri, totp } from '../helpers/totp.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const pathOf = (link: string) => link.replace(TEST_BASE_URL, '');
let ipCounter = 10;
/** A fresh client address per test, so login throttling counters never leak between tests. */
const freshIp = () => `10.1.${Math.floor(ipCounter / 250)}.${(ipCounter++ % 250) + 1}`;

async function auditActions(email: string): Promise<string[]> {
  const rows = await t.database.db
    .selectFrom('audit_log')
    .select('action')
    .where('actor_email', '=', email)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.action);
}

describe('sign-up, verification and sign-in', () => {
  it('signs up, mails a verification link that verifies the address, and audits it', async () => {
    const email = uniqueEmail('signup');
    const c = new Client(t.app, freshIp());
    const me = await c.signUp(email, 'Vera');
    expect(me.user).toMatchObject({ email, name: 'Vera', emailVerified: false });
    expect(me.tenants).toEqual([]);
    const link = t.mailer.lastLink(email, /verify/i);
    const res = await c.get(pathOf(link));
    expect(res.statusCode).toBe(302);
    expect((await c.me()).user.emailVerified).toBe(true);
    expect(await auditActions(email)).toEqual(expect.arrayContaining(['auth.sign_up', 'auth.email_verified']));
  });

  it('refuses a duplicate e-mail and a short password with stable codes', async () => {
    const email = uniqueEmail('dup');
    await new Client(t.app, freshIp()).signUp(email);
    const again = await new Client(t.app, freshIp()).post('/api/auth/sign-up/email', {
      email,
      name: 'X',
      password: PASSWORD,
    });
    expect(again.statusCode).toBe(422);
    expect(again.json()).toMatchObject({ error: 'auth_user_exists' });
    const short = await new Client(t.app, freshIp()).post('/api/auth/sign-up/email', {
      email: uniqueEmail(),
      name: 'X',
      password: 'short',
    });
    expect(short.json()).toMatchObject({ error: 'auth_weak_password' });
  });

  it('signs in and out; a wrong password is 401 and audited', async () => {
    const email = uniqueEmail('signin');
    const ip = freshIp();
    await new Client(t.app, ip).signUp(email);
    const c = new Client(t.app, ip);
    const bad = await c.signIn(email, 'not the password at all');
    expect(bad.statusCode).toBe(401);
    expect(bad.json()).toMatchObject({ error: 'auth_invalid_credentials' });
    expect((await c.get('/api/v1/me')).statusCode).toBe(401);
    const ok = await c.signIn(email);
    expect(ok.statusCode).toBe(200);
    expect((await c.me()).user.email).toBe(email);
    expect((await c.post('/api/auth/sign-out')).statusCode).toBe(200);
    const after = await c.get('/api/v1/me');
    expect(after.statusCode).toBe(401);
    expect(after.json()).toMatchObject({ error: 'unauthenticated' });
    const actions = await auditActions(email);
    expect(actions).toEqual(expect.arrayContaining(['auth.sign_in_failed', 'auth.sign_in']));
    const failed = await t.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('actor_email', '=', email)
      .where('action', '=', 'auth.sign_in_failed')
      .executeTakeFirstOrThrow();
    expect(failed.ip_address).toBe(ip);
  });

  it('throttles sign-in attempts per client address', async () => {
    const email = uniqueEmail('throttle');
    const ip = freshIp();
    await new Client(t.app, freshIp()).signUp(email);
    const c = new Client(t.app, ip);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await c.signIn(email, 'wrong password guess')).statusCode);
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(10)).toEqual([429, 429]);
    const limited = await c.signIn(email);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ error: 'rate_limited' });
    // Another address is unaffected.
    expect((await new Client(t.app, freshIp()).signIn(email)).statusCode).toBe(200);
  });

  it('throttles sign-ups per client address (10 a minute)', async () => {
    const c = new Client(t.app, freshIp());
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++)
      statuses.push(
        (await c.post('/api/auth/sign-up/email', { email: uniqueEmail('burst'), name: 'Burst', password: PASSWORD }))
          .statusCode,
      );
    expect(statuses.slice(0, 10).every((s) => s === 200)).toBe(true);
    expect(statuses[10]).toBe(429);
    expect(
      (
        await new Client(t.app, freshIp()).post('/api/auth/sign-up/email', {
          email: uniqueEmail('other'),
          name: 'Other',
          password: PASSWORD,
        })
      ).statusCode,
    ).toBe(200);
  });
});

describe('password reset', () => {
  it('mails a one-time link that sets a new password and ends old sessions', async () => {
    const email = uniqueEmail('reset');
    const ip = freshIp();
    const old = new Client(t.app, ip);
    await old.signUp(email);
    const c = new Client(t.app, ip);
    expect(
      (await c.post('/api/auth/request-password-reset', { email, redirectTo: `${TEST_BASE_URL}/reset-password` }))
        .statusCode,
    ).toBe(200);
    const link = t.mailer.lastLink(email, /password/i);
    const landing = await c.get(pathOf(link));
    expect(landing.statusCode).toBe(302);
    const location = new URL(String(landing.headers.location), TEST_BASE_URL);
    expect(location.pathname).toBe('/reset-password');
    const token = location.searchParams.get('token')!;
    const newPassword = 'a brand new passphrase';
    expect((await c.post('/api/auth/reset-password', { newPassword, token })).statusCode).toBe(200);
    // One-time: the same token cannot be used again.
    const reuse = await c.post('/api/auth/reset-password', { newPassword: 'yet another passphrase', token });
    expect(reuse.statusCode).toBe(400);
    expect(reuse.json()).toMatchObject({ error: 'auth_invalid_token' });
    expect((await c.signIn(email, PASSWORD)).statusCode).toBe(401);
    expect((await c.signIn(email, newPassword)).statusCode).toBe(200);
    expect((await old.get('/api/v1/me')).statusCode).toBe(401);
    expect(await auditActions(email)).toContain('auth.password_reset');
  });

  it('answers the same for an unknown address (no account enumeration)', async () => {
    const res = await new Client(t.app, freshIp()).post('/api/auth/request-password-reset', {
      email: uniqueEmail('ghost'),
      redirectTo: '/reset-password',
    });
    expect(res.statusCode).toBe(200);
  });
});

describe('two-factor authentication', () => {
  it('enables TOTP, then requires a code or a single-use recovery code at sign-in', async () => {
    const email = uniqueEmail('totp');
    const ip = freshIp();
    const c = new Client(t.app, ip);
    await c.signUp(email);
    const enable = await c.post('/api/auth/two-factor/enable', { password: PASSWORD });
    expect(enable.statusCode).toBe(200);
    const { totpURI, backupCodes } = enable.json() as { totpURI: string; backupCodes: string[] };
    expect(backupCodes).toHaveLength(10);
    const secret = secretFromUri(totpURI);
    expect((await c.post('/api/auth/two-factor/verify-totp', { code: totp(secret) })).statusCode).toBe(200);
    expect((await c.me()).user.twoFactorEnabled).toBe(true);
    await c.post('/api/auth/sign-out');

    const s = new Client(t.app, ip);
    const first = await s.signIn(email);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ twoFactorRedirect: true });
    expect((await s.get('/api/v1/me')).statusCode).toBe(401); // not signed in yet
    const wrong = await s.post('/api/auth/two-factor/verify-totp', {
      code: '000000' === totp(secret) ? '111111' : '000000',
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toMatchObject({ error: 'auth_invalid_two_factor_code' });
    expect((await s.post('/api/auth/two-factor/verify-totp', { code: totp(secret) })).statusCode).toBe(200);
    expect((await s.me()).user.email).toBe(email);

    // Recovery code: works once.
    const r = new Client(t.app, ip);
    await r.signIn(email);
    expect((await r.post('/api/auth/two-factor/verify-backup-code', { code: backupCodes[0] })).statusCode).toBe(200);
    expect((await r.me()).user.email).toBe(email);
    const r2 = new Client(t.app, ip);
    await r2.signIn(email);
    expect((await r2.post('/api/auth/two-factor/verify-backup-code', { code: backupCodes[0] })).statusCode).toBe(401);

    expect(await auditActions(email)).toEqual(
      expect.arrayContaining([
        'auth.two_factor_enable',
        'auth.two_factor_confirmed',
        'auth.sign_in_two_factor_challenge',
        'auth.sign_in',
      ]),
    );
    // A failed code before sign-in completes has no known actor, but keeps the address.
    const failed = await t.database.db
      .selectFrom('audit_log')
      .select('action')
      .where('ip_address', '=', ip)
      .where('action', '=', 'auth.two_factor_failed')
      .execute();
    expect(failed.length).toBeGreaterThanOrEqual(2);
  });
});

describe('CSRF protection of cookie-authenticated writes', () => {
  it('refuses a write without, or with a wrong, x-csrf-token', async () => {
    const c = new Client(t.app, freshIp());
    await c.signUp(uniqueEmail('csrf'));
    const tenant = await c.createTenant('Csrf Co');
    const body = { dailyScanQuota: 5, perAssetConcurrentScans: 1 };
    const none = await c.put(`/api/v1/tenants/${tenant}/settings`, body, { 'x-csrf-token': '' });
    expect(none.statusCode).toBe(403);
    expect(none.json()).toMatchObject({ error: 'csrf_invalid' });
    const other = new Client(t.app, freshIp());
    const otherMe = await other.signUp(uniqueEmail('csrf-other'));
    const forged = await c.put(`/api/v1/tenants/${tenant}/settings`, body, { 'x-csrf-token': otherMe.csrfToken });
    expect(forged.statusCode).toBe(403);
    expect((await c.put(`/api/v1/tenants/${tenant}/settings`, body)).statusCode).toBe(200);
  });

  it('refuses Better Auth writes from a foreign origin', async () => {
    const email = uniqueEmail('origin');
    const c = new Client(t.app, freshIp());
    await c.signUp(email);
    const res = await c.post(
      '/api/auth/organization/create',
      { name: 'Evil', slug: `evil-${Date.now()}` },
      { origin: 'https://evil.example' },
    );
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: 'csrf_invalid' });
    const form = await c.request('POST', '/api/auth/organization/create', 'name=Evil&slug=evil', {
      'content-type': 'text/plain',
    });
    expect(form.statusCode).toBe(415);
    expect((await c.me()).tenants).toEqual([]);
  });
});
