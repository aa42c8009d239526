// First run of a self-hosted install: the one-time setup link makes the first signed-in account
// the installation's super-admin (approved domain kept in the installation's settings AND a role
// row), only once; the sign-in page sees the link only from the server's own machine; super-admins
// edit the approved domains. On its own database (PGlite, or a fresh PostgreSQL database), since
// "no administrator yet" is a property of the whole installation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.ts';
import { openFreshDatabase } from '../helpers/fresh-database.ts';
import { createTestApp, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';

let database: Database;
let cleanup: () => Promise<void>;
let t: TestApp;

beforeAll(async () => {
  ({ database, cleanup } = await openFreshDatabase('setup'));
  // No STAFF_EMAIL_DOMAINS: the setup alone must make the administrator staff.
  t = await createTestApp({ database, env: { STAFF_EMAIL_DOMAINS: '' } });
});
afterAll(async () => {
  await t.app.close();
  await cleanup();
});

const status = (remoteAddress: string) => t.app.inject({ method: 'GET', url: '/api/v1/setup', remoteAddress });

describe('first-run setup', () => {
  it('makes the first account super-admin through the one-time link, once', async () => {
    expect((await status('127.0.0.1')).json()).toEqual({ needed: true, setupUrl: null });
    const link = await t.app.services.setup.prepare();
    expect(link).toMatch(/^http:\/\/rampart\.test\/setup\?token=rsu_/);
    // Shown to a browser on this machine only: the link makes its holder administrator.
    expect((await status('127.0.0.1')).json()).toEqual({ needed: true, setupUrl: link });
    expect((await status('203.0.113.9')).json()).toEqual({ needed: true, setupUrl: null });
    const token = new URL(link!).searchParams.get('token')!;

    expect((await new Client(t.app).post('/api/v1/setup', { token })).statusCode).toBe(401);
    const first = new Client(t.app);
    await first.signUp(uniqueEmail('owner', 'first-install.example'));
    const wrong = await first.post('/api/v1/setup', { token: `${token}x` });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error).toBe('setup_link_invalid');
    expect((await first.me()).superAdmin).toBe(false);

    const done = await first.post('/api/v1/setup', { token });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toEqual({ staffEmailDomains: ['first-install.example'] });
    const me = await first.me();
    expect(me).toMatchObject({ staff: true, superAdmin: true, platformRole: 'super_admin' });
    expect((await first.get('/api/v1/staff/platform-roles')).statusCode).toBe(200);

    // Once: the link is spent, no other account can use it, and the status says so.
    const second = new Client(t.app);
    await second.signUp(uniqueEmail('late', 'first-install.example'));
    const again = await second.post('/api/v1/setup', { token });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toBe('setup_done');
    expect((await second.me()).staff).toBe(false);
    expect((await status('127.0.0.1')).json()).toEqual({ needed: false, setupUrl: null });
    expect(await t.app.services.setup.prepare()).toBeNull();

    // The administrator edits the approved domains; others may not; bad domains are refused.
    const put = await first.put('/api/v1/staff/installation', {
      staffEmailDomains: ['first-install.example', 'Ops.First-Install.example'],
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toEqual({
      staffEmailDomains: ['first-install.example', 'ops.first-install.example'],
      configuredStaffEmailDomains: [],
    });
    expect((await first.put('/api/v1/staff/installation', { staffEmailDomains: ['not a domain'] })).json().error).toBe(
      'validation_failed',
    );
    expect((await second.get('/api/v1/staff/installation')).statusCode).toBe(403);
    // Removing the administrator's own domain takes staff rights away (the rule still needs both).
    await first.put('/api/v1/staff/installation', { staffEmailDomains: [] });
    expect((await first.me()).staff).toBe(false);
  });
});
