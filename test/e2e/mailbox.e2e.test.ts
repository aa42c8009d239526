// The development mailbox in the browser: a server without SMTP_URL. A newcomer signs up and the
// app says where the verification mail is; a super-admin opens Staff → Mailbox, finds that mail
// and its link, and the link verifies the newcomer. A support-role staff user is turned away.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { STAFF_DOMAIN, uniqueEmail } from '../helpers/app.ts';
import {
  createAndSignIn,
  describeBrowser,
  type E2e,
  openE2e,
  scanA11y,
  signUpInBrowser,
  uniqueTenantName,
} from './harness.ts';

const NOTICE = 'This installation sends no e-mail: an administrator finds the message under Staff → Mailbox.';

describeBrowser('the staff mailbox in the browser', () => {
  let e2e: E2e;
  beforeAll(async () => (e2e = await openE2e()));
  afterAll(() => e2e.close());

  it('sign-up says where the mail is; a super-admin reads it and its link verifies the address', async () => {
    const newcomer = await e2e.newPage();
    const email = uniqueEmail('newcomer');
    await signUpInBrowser(newcomer, { name: 'Nia Newcomer', email, password: 'correct horse battery staple' });
    await newcomer.getByLabel('Tenant name', { exact: true }).waitFor();
    const banner = newcomer.getByRole('alert').filter({ hasText: 'Verify your e-mail' });
    await expect.poll(() => banner.textContent()).toContain(NOTICE);
    expect(await banner.textContent()).not.toContain('We sent');

    // Password reset says the same on its confirmation.
    const other = await e2e.newPage();
    await other.goto('/forgot-password');
    await other.getByLabel('Email', { exact: true }).fill(email);
    await other.getByRole('button', { name: 'Send reset link' }).click();
    await other.getByRole('heading', { name: 'Ask an administrator for the link' }).waitFor();
    expect(await other.getByTestId('mailbox-notice').textContent()).toBe(NOTICE);

    const admin = await e2e.newPage({ bypassCSP: true });
    await createAndSignIn(e2e.server, admin, { email: uniqueEmail('root', STAFF_DOMAIN), role: 'super_admin' });
    await admin.getByRole('link', { name: 'Mailbox', exact: true }).click();
    await admin.getByRole('heading', { name: 'Mailbox', level: 1 }).waitFor();
    await admin.getByRole('textbox', { name: 'Recipient' }).fill(email);
    await admin.getByRole('button', { name: 'Filter' }).click();
    const rows = admin.getByRole('table', { name: 'Kept mails' }).getByRole('row');
    await expect.poll(() => rows.count()).toBe(3); // header, reset, verification
    await admin.getByRole('link', { name: 'Verify your e-mail address for Rampart' }).click();
    const link = admin.getByTestId('mail-link');
    await link.waitFor();
    const href = await link.getAttribute('href');
    expect(href).toBe(e2e.server.mailer.lastLink(email, /Verify/));
    // The text part shows the same link, clickable.
    expect(await admin.getByTestId('mail-text').getByRole('link').getAttribute('href')).toBe(href);
    expect(await scanA11y(admin)).toEqual([]);

    // The newcomer opens the link the administrator passed on.
    await newcomer.goto(href!.replace(e2e.server.baseUrl, ''));
    await newcomer.getByLabel('Tenant name', { exact: true }).waitFor();
    await expect.poll(() => newcomer.getByText('Verify your e-mail').count()).toBe(0);
  });

  it('an invitation says where it is; a super-admin goes from there to the mail', async () => {
    const admin = await e2e.newPage();
    await createAndSignIn(e2e.server, admin, { email: uniqueEmail('owner', STAFF_DOMAIN), role: 'super_admin' });
    const tenant = uniqueTenantName('Mailbox Co');
    await admin.getByLabel('Tenant name', { exact: true }).fill(tenant);
    await admin.getByRole('button', { name: 'Create tenant' }).click();
    await admin.getByRole('button', { name: new RegExp(`Switch tenant, current: ${tenant}`) }).waitFor();
    await admin.goto('/settings/members');
    const invitee = uniqueEmail('invitee');
    await admin.getByLabel('Invite email', { exact: true }).fill(invitee);
    await admin.getByRole('button', { name: 'Send invitation' }).click();
    await admin.getByRole('button', { name: `Cancel invitation for ${invitee}` }).waitFor();
    await admin.getByText(NOTICE).first().waitFor();
    await admin.getByRole('link', { name: 'Open the mailbox' }).click();
    await admin.getByRole('heading', { name: 'Mailbox', level: 1 }).waitFor();
    const row = admin.getByRole('row').filter({ hasText: invitee });
    await expect.poll(() => row.textContent()).toContain(tenant);
    await row.getByRole('link').click();
    await expect
      .poll(() => admin.getByTestId('mail-link').getAttribute('href'))
      .toBe(e2e.server.mailer.lastLink(invitee, /invited you/));
  });

  it('is not shown to a support-role staff user', async () => {
    const support = await e2e.newPage();
    await createAndSignIn(e2e.server, support, { email: uniqueEmail('support', STAFF_DOMAIN), role: 'staff' });
    await support.getByRole('link', { name: 'Mesh outbox' }).waitFor();
    expect(await support.getByRole('link', { name: 'Mailbox', exact: true }).count()).toBe(0);
    await support.goto('/settings/staff/mailbox');
    await support.getByRole('heading', { name: 'Super-admins only' }).waitFor();
  });
});
