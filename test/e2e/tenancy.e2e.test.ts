// A newcomer's path through the web app: sign up, create a tenant, invite a colleague, the
// colleague accepts, each sees what their role allows, and staff pages stay closed to them.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { STAFF_DOMAIN, uniqueEmail } from '../helpers/app.ts';
import { createAndSignIn, describeBrowser, type E2e, type E2eServer, openE2e, signUpInBrowser } from './harness.ts';

const PASSWORD = 'correct horse battery staple';

describeBrowser('tenancy in the browser', () => {
  let e2e: E2e;
  let server: E2eServer;
  const ownerEmail = uniqueEmail('owner');
  const memberEmail = uniqueEmail('colleague');

  beforeAll(async () => {
    e2e = await openE2e();
    server = e2e.server;
  }, 120_000);
  afterAll(() => e2e?.close());
  const newPage = () => e2e.newPage();

  let owner: Page;
  let member: Page;

  it('signs up and creates the first tenant', async () => {
    owner = await newPage();
    await owner.goto('/');
    await expect.poll(() => owner.url()).toContain('/sign-in');
    await owner.getByRole('link', { name: 'Create an account' }).waitFor();
    await signUpInBrowser(owner, { name: 'Olive Owner', email: ownerEmail, password: PASSWORD });
    await owner.getByLabel('Tenant name', { exact: true }).fill('Acme Defense');
    await owner.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => owner.url()).toMatch(/\/home$/);
    await owner.getByRole('button', { name: /Switch tenant, current: Acme Defense/ }).waitFor();
  });

  it('invites a colleague who signs up from the link and accepts', async () => {
    await owner.goto('/settings/members');
    await owner.getByLabel('Invite email', { exact: true }).fill(memberEmail);
    await owner.getByRole('button', { name: 'Send invitation' }).click();
    await owner.getByRole('button', { name: `Cancel invitation for ${memberEmail}` }).waitFor();

    const link = server.mailer.lastLink(memberEmail, /invited you/);
    member = await newPage();
    await member.goto(link.replace(server.baseUrl, ''));
    await member.getByRole('link', { name: 'Create an account' }).click();
    await member.getByLabel('Name', { exact: true }).fill('Cole League');
    await member.getByLabel('Email', { exact: true }).fill(memberEmail);
    await member.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await member.getByRole('button', { name: 'Create account' }).click();
    // Back on the invitation, which asks for the address to be confirmed first.
    await member.getByRole('heading', { name: 'Confirm your e-mail address first' }).waitFor();
    await expect
      .poll(() => server.mailer.sent.some((m) => m.to === memberEmail && /verify/i.test(m.subject)))
      .toBe(true);
    await member.goto(server.mailer.lastLink(memberEmail, /verify/i).replace(server.baseUrl, ''));
    await member.goto(link.replace(server.baseUrl, ''));
    await member.getByRole('button', { name: 'Accept invitation' }).click();
    await expect.poll(() => member.url()).not.toContain('/accept-invitation');
    await member.goto('/settings/members');
    await member.getByText(ownerEmail).waitFor();
    await member.getByText(memberEmail).first().waitFor();
    // Plain members cannot invite.
    expect(await member.getByRole('button', { name: 'Send invitation' }).count()).toBe(0);
  });

  it('lets the owner change settings and shows them read-only to the member', async () => {
    await owner.goto('/settings/tenant');
    await owner.getByLabel('Daily scan quota', { exact: true }).fill('150');
    await owner.getByRole('button', { name: 'Save settings' }).click();
    // Reload until the stored value shows (each reload waits for the form to be filled again).
    await expect
      .poll(
        async () => {
          await owner.reload();
          const field = owner.getByLabel('Daily scan quota', { exact: true });
          await expect.poll(() => field.inputValue(), { timeout: 10_000 }).not.toBe('');
          return field.inputValue();
        },
        { timeout: 30_000 },
      )
      .toBe('150');

    await member.goto('/settings/tenant');
    await member.getByText('Only admins and owners can change these settings.').waitFor();
    expect(await member.getByRole('button', { name: 'Save settings' }).count()).toBe(0);
    await expect(member.getByLabel('Daily scan quota', { exact: true }).inputValue()).resolves.toBe('150');
    // The audit log is for admins and owners.
    expect(await member.getByRole('link', { name: 'Audit log', exact: true }).count()).toBe(0);
  });

  it('keeps staff pages and APIs closed to non-staff', async () => {
    expect(await member.getByRole('link', { name: 'Audit log (all tenants)' }).count()).toBe(0);
    await member.goto('/settings/staff/audit-log');
    await member.getByText('Staff only').first().waitFor();
    const api = await member.request.get('/api/v1/staff/audit-log');
    expect(api.status()).toBe(403);
    expect(await api.json()).toMatchObject({ error: 'staff_only' });
    await owner.goto('/settings/staff/tenants');
    await owner.getByText('Staff only').first().waitFor();
  });

  it('shows the staff area to a super-admin, with the audit log across tenants', async () => {
    const email = uniqueEmail('root', STAFF_DOMAIN);
    const staff = await newPage();
    await createAndSignIn(server, staff, { email, role: 'super_admin' });
    await staff.getByRole('link', { name: 'Audit log (all tenants)' }).click();
    // Filtered to this test's colleague: on a shared database other tests' entries can push an
    // unfiltered first page past this tenant's.
    await staff.getByLabel('Action prefix', { exact: true }).fill('member.');
    await staff.getByLabel('Actor', { exact: true }).fill(memberEmail);
    await staff.getByRole('button', { name: 'Apply filters' }).click();
    const log = staff.locator('table');
    await log.getByText('member.joined').first().waitFor();
    await log.getByText('Acme Defense').first().waitFor();
    await staff.getByRole('link', { name: 'Platform roles' }).click();
    await staff.getByText(email).first().waitFor();
  });

  it('is usable on a phone-sized screen', async () => {
    await owner.setViewportSize({ width: 375, height: 740 });
    await owner.goto('/settings/members');
    await owner.getByRole('button', { name: 'Open navigation' }).click();
    await owner.getByRole('link', { name: 'Tenant settings' }).click();
    await owner.getByLabel('Daily scan quota', { exact: true }).waitFor();
    const overflow = await owner.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
  });
});
