// Staff = verified address in an approved domain AND a platform role row; super-admin on top.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, STAFF_DOMAIN, TEST_BASE_URL, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { bootstrapStaff, runAdminCli } from '../helpers/staff.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const admin = (argv: string[]) => runAdminCli(t, argv);
const bootstrap = (email: string, role: 'staff' | 'super_admin') => bootstrapStaff(t, email, role);

const STAFF_PATHS = ['/api/v1/staff/audit-log', '/api/v1/staff/tenants'];

describe('staff rule', () => {
  let superAdmin: Client;
  beforeAll(async () => {
    superAdmin = await bootstrap(uniqueEmail('root', STAFF_DOMAIN), 'super_admin');
  });

  it('the CLI prints a one-time set-password link and makes a verified super-admin', async () => {
    const me = await superAdmin.me();
    expect(me).toMatchObject({
      staff: true,
      superAdmin: true,
      platformRole: 'super_admin',
      user: { emailVerified: true },
    });
    for (const p of [...STAFF_PATHS, '/api/v1/staff/platform-roles'])
      expect((await superAdmin.get(p)).statusCode).toBe(200);
  });

  it('refuses staff APIs to ordinary users', async () => {
    const c = new Client(t.app);
    const me = await c.signUp(uniqueEmail('plain'));
    expect(me).toMatchObject({ staff: false, superAdmin: false, platformRole: null });
    for (const p of STAFF_PATHS) {
      const res = await c.get(p);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ error: 'staff_only' });
    }
    expect((await new Client(t.app).get('/api/v1/staff/tenants')).statusCode).toBe(401);
  });

  it('needs the role row AND an approved domain AND a verified address', async () => {
    // Approved domain, verified, but no role.
    const noRole = new Client(t.app);
    const noRoleEmail = uniqueEmail('norole', STAFF_DOMAIN);
    await noRole.signUp(noRoleEmail);
    await noRole.get(t.mailer.lastLink(noRoleEmail, /verify/i).replace(TEST_BASE_URL, ''));
    expect((await noRole.get('/api/v1/staff/tenants')).statusCode).toBe(403);

    // Role, verified, but a domain that is not approved.
    const outsideEmail = uniqueEmail('outside', 'gmail.test');
    const outside = new Client(t.app);
    await outside.signUp(outsideEmail);
    await outside.get(t.mailer.lastLink(outsideEmail, /verify/i).replace(TEST_BASE_URL, ''));
    const granted = await superAdmin.put('/api/v1/staff/platform-roles', { email: outsideEmail, role: 'staff' });
    expect(granted.json()).toMatchObject({ role: { domainApproved: false, emailVerified: true } });
    expect((await outside.get('/api/v1/staff/tenants')).statusCode).toBe(403);

    // Approved domain and role, but unverified; verifying the address opens the door.
    const pendingEmail = uniqueEmail('pending', STAFF_DOMAIN);
    const pending = new Client(t.app);
    await pending.signUp(pendingEmail);
    await superAdmin.put('/api/v1/staff/platform-roles', { email: pendingEmail, role: 'staff' });
    expect((await pending.get('/api/v1/staff/tenants')).statusCode).toBe(403);
    await pending.get(t.mailer.lastLink(pendingEmail, /verify/i).replace(TEST_BASE_URL, ''));
    expect((await pending.get('/api/v1/staff/tenants')).statusCode).toBe(200);
    // Staff, but not super-admin.
    const roles = await pending.get('/api/v1/staff/platform-roles');
    expect(roles.statusCode).toBe(403);
    expect(roles.json()).toMatchObject({ error: 'super_admin_only' });
  });

  it('super-admins grant and revoke roles, and it is audited', async () => {
    const email = uniqueEmail('grantee', STAFF_DOMAIN);
    const c = new Client(t.app);
    const me = await c.signUp(email);
    await c.get(t.mailer.lastLink(email, /verify/i).replace(TEST_BASE_URL, ''));
    expect(
      (await superAdmin.put('/api/v1/staff/platform-roles', { email: email.toUpperCase(), role: 'staff' })).statusCode,
    ).toBe(200);
    expect((await c.me()).staff).toBe(true);
    expect((await superAdmin.delete(`/api/v1/staff/platform-roles/${me.user.id}`)).statusCode).toBe(204);
    expect((await c.me()).staff).toBe(false);
    const again = await superAdmin.delete(`/api/v1/staff/platform-roles/${me.user.id}`);
    expect(again.json()).toMatchObject({ error: 'role_not_found' });
    const unknown = await superAdmin.put('/api/v1/staff/platform-roles', {
      email: uniqueEmail('nobody'),
      role: 'staff',
    });
    expect(unknown.json()).toMatchObject({ error: 'user_not_found' });
    const log = (await superAdmin.get(`/api/v1/staff/audit-log?action=platform_role.&limit=200`)).json() as {
      entries: { action: string; targetId: string }[];
    };
    const mine = log.entries.filter((e) => e.targetId === me.user.id).map((e) => e.action);
    expect(mine).toEqual(['platform_role.revoked', 'platform_role.granted']);
  });

  it('staff read the audit log across tenants and filter it by tenant', async () => {
    const a = new Client(t.app);
    await a.signUp(uniqueEmail('ta'));
    const tenantA = await a.createTenant('Alpha');
    const b = new Client(t.app);
    await b.signUp(uniqueEmail('tb'));
    const tenantB = await b.createTenant('Beta');
    const all = (await superAdmin.get('/api/v1/staff/audit-log?action=tenant.created&limit=200')).json() as {
      entries: { tenantId: string }[];
    };
    expect(all.entries.map((e) => e.tenantId)).toEqual(expect.arrayContaining([tenantA, tenantB]));
    const onlyA = (await superAdmin.get(`/api/v1/staff/audit-log?tenantId=${tenantA}`)).json() as {
      entries: { tenantId: string }[];
    };
    expect(onlyA.entries.length).toBeGreaterThan(0);
    expect(onlyA.entries.every((e) => e.tenantId === tenantA)).toBe(true);
    const tenants = (await superAdmin.get('/api/v1/staff/tenants')).json() as {
      tenants: { id: string; memberCount: number }[];
    };
    expect(tenants.tenants.find((x) => x.id === tenantA)?.memberCount).toBe(1);
  });

  it('the CLI validates its arguments and warns about unapproved domains', async () => {
    expect((await admin(['create', '--email', 'not-an-email', '--role', 'staff'])).code).toBe(64);
    expect((await admin(['create', '--email', uniqueEmail()])).code).toBe(64);
    expect((await admin(['explode'])).code).toBe(64);
    const r = await admin(['create', '--email', uniqueEmail('cli', 'elsewhere.test'), '--role', 'staff']);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/not in STAFF_EMAIL_DOMAINS/);
    expect((await admin(['revoke', '--email', uniqueEmail('ghost')])).code).toBe(1);
  });
});

describe('bootstrapping an address someone else registered', () => {
  it('removes the squatter’s password, sessions and two-factor before granting the role', async () => {
    const email = uniqueEmail('boss', STAFF_DOMAIN);
    const squatter = new Client(t.app);
    await squatter.signUp(email, 'Not The Boss', 'squatter password 1');
    expect((await squatter.me()).staff).toBe(false);
    const r = await runAdminCli(t, ['create', '--email', email, '--role', 'super_admin']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/existed unverified/);
    expect((await squatter.get('/api/v1/me')).statusCode).toBe(401); // session gone
    expect((await new Client(t.app).signIn(email, 'squatter password 1')).statusCode).toBe(401); // password gone
  });
});
