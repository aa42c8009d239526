// Tenants, invitations and what each role may do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_BASE_URL, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function invite(owner: Client, tenantId: string, email: string, role: 'member' | 'admin'): Promise<string> {
  const res = await owner.post('/api/auth/organization/invite-member', { email, role, organizationId: tenantId });
  expect(res.statusCode, res.body).toBe(200);
  const link = t.mailer.lastLink(email, /invited you/);
  expect(link.startsWith(`${TEST_BASE_URL}/accept-invitation/`)).toBe(true);
  const url = new URL(link);
  expect(url.searchParams.get('email')).toBe(email);
  return url.pathname.split('/').pop()!;
}

async function joinAs(email: string, tenantId: string, owner: Client, role: 'member' | 'admin'): Promise<Client> {
  const invitationId = await invite(owner, tenantId, email, role);
  const c = new Client(t.app);
  await c.signUp(email);
  // The invited address must be proven before an invitation can be accepted.
  await c.get(t.mailer.lastLink(email, /verify/i).replace(TEST_BASE_URL, ''));
  const accept = await c.post('/api/auth/organization/accept-invitation', { invitationId });
  expect(accept.statusCode, accept.body).toBe(200);
  await c.me();
  return c;
}

describe('tenants and members', () => {
  let owner: Client;
  let tenant: string;
  let member: Client;
  let admin: Client;
  let ownerEmail: string;

  beforeAll(async () => {
    owner = new Client(t.app);
    ownerEmail = uniqueEmail('owner');
    await owner.signUp(ownerEmail, 'Olive Owner');
    tenant = await owner.createTenant('Acme Defense');
    await owner.me();
    member = await joinAs(uniqueEmail('member'), tenant, owner, 'member');
    admin = await joinAs(uniqueEmail('admin'), tenant, owner, 'admin');
  });

  it('creates a tenant with the creator as owner and default settings', async () => {
    const me = await owner.me();
    expect(me.tenants).toEqual([expect.objectContaining({ id: tenant, name: 'Acme Defense', role: 'owner' })]);
    const settings = await owner.get(`/api/v1/tenants/${tenant}/settings`);
    expect(settings.json()).toMatchObject({ dailyScanQuota: 200, perAssetConcurrentScans: 1, canEdit: true });
  });

  it('lists members to every member, invitations only to admins and owners', async () => {
    const asMember = (await member.get(`/api/v1/tenants/${tenant}/members`)).json() as {
      members: { role: string }[];
      invitations: unknown[];
    };
    expect(asMember.members.map((m) => m.role).sort()).toEqual(['admin', 'member', 'owner']);
    expect(asMember.invitations).toEqual([]);
    const pendingEmail = uniqueEmail('pending');
    await invite(owner, tenant, pendingEmail, 'member');
    const asAdmin = (await admin.get(`/api/v1/tenants/${tenant}/members`)).json() as {
      invitations: { email: string; status: string }[];
    };
    expect(asAdmin.invitations).toEqual([expect.objectContaining({ email: pendingEmail, status: 'pending' })]);
  });

  it('lets admins and owners change settings, and refuses plain members', async () => {
    const body = { dailyScanQuota: 25, perAssetConcurrentScans: 3 };
    const denied = await member.put(`/api/v1/tenants/${tenant}/settings`, body);
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toMatchObject({ error: 'tenant_forbidden' });
    expect((await member.get(`/api/v1/tenants/${tenant}/settings`)).json()).toMatchObject({
      dailyScanQuota: 200,
      canEdit: false,
    });
    const ok = await admin.put(`/api/v1/tenants/${tenant}/settings`, body);
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ ...body, canEdit: true });
  });

  it('validates settings with field-level details', async () => {
    for (const bad of [
      { dailyScanQuota: -1, perAssetConcurrentScans: 1 },
      { dailyScanQuota: 1.5, perAssetConcurrentScans: 1 },
      { dailyScanQuota: 10, perAssetConcurrentScans: 0 },
      { dailyScanQuota: '10', perAssetConcurrentScans: 1 },
      { dailyScanQuota: 10 },
    ]) {
      const res = await owner.put(`/api/v1/tenants/${tenant}/settings`, bad);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'validation_failed', details: expect.any(Array) });
    }
  });

  it('keeps members to what their role allows in the membership API', async () => {
    const res = await member.post('/api/auth/organization/invite-member', {
      email: uniqueEmail('x'),
      role: 'member',
      organizationId: tenant,
    });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: 'forbidden' });
    expect((await member.get(`/api/v1/tenants/${tenant}/audit-log`)).statusCode).toBe(403);
  });

  it('hides a tenant from non-members', async () => {
    const outsider = new Client(t.app);
    await outsider.signUp(uniqueEmail('outsider'));
    for (const path of ['members', 'settings', 'audit-log']) {
      const res = await outsider.get(`/api/v1/tenants/${tenant}/${path}`);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ error: 'tenant_forbidden' });
    }
    expect((await outsider.get('/api/v1/tenants/not-a-uuid/members')).json()).toMatchObject({
      error: 'validation_failed',
    });
  });

  it('audits role changes, settings and membership in the tenant audit log', async () => {
    const list = (await owner.get(`/api/v1/tenants/${tenant}/members`)).json() as {
      members: { id: string; role: string }[];
    };
    const m = list.members.find((x) => x.role === 'member')!;
    const res = await owner.post('/api/auth/organization/update-member-role', {
      memberId: m.id,
      role: 'admin',
      organizationId: tenant,
    });
    expect(res.statusCode, res.body).toBe(200);
    const log = (await owner.get(`/api/v1/tenants/${tenant}/audit-log?limit=100`)).json() as {
      entries: { action: string; details: Record<string, unknown> }[];
    };
    const actions = log.entries.map((e) => e.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        'tenant.created',
        'member.invited',
        'member.joined',
        'member.role_changed',
        'tenant.settings_updated',
      ]),
    );
    expect(log.entries.find((e) => e.action === 'member.role_changed')?.details).toMatchObject({
      from: 'member',
      to: 'admin',
    });
    // Filters and pagination.
    const filtered = (await owner.get(`/api/v1/tenants/${tenant}/audit-log?action=member.&limit=2`)).json() as {
      entries: { action: string }[];
      nextBefore: number | null;
    };
    expect(filtered.entries).toHaveLength(2);
    expect(filtered.entries.every((e) => e.action.startsWith('member.'))).toBe(true);
    expect(filtered.nextBefore).not.toBeNull();
    const next = (
      await owner.get(`/api/v1/tenants/${tenant}/audit-log?action=member.&limit=2&before=${filtered.nextBefore}`)
    ).json() as { entries: { id: number }[] };
    expect(next.entries.length).toBeGreaterThan(0);
  });

  it('refuses an invitation to an address that is not verified yet', async () => {
    const email = uniqueEmail('unverified');
    const invitationId = await invite(owner, tenant, email, 'member');
    const c = new Client(t.app);
    await c.signUp(email);
    const res = await c.post('/api/auth/organization/accept-invitation', { invitationId });
    expect(res.statusCode).toBe(403);
    expect((await c.me()).tenants).toEqual([]);
  });

  it('refuses to accept an invitation addressed to someone else', async () => {
    const invitationId = await invite(owner, tenant, uniqueEmail('intended'), 'member');
    const intruder = new Client(t.app);
    await intruder.signUp(uniqueEmail('intruder'));
    const res = await intruder.post('/api/auth/organization/accept-invitation', { invitationId });
    expect(res.statusCode).toBe(403);
    expect((await intruder.me()).tenants).toEqual([]);
  });
});
