// Assets in the browser: add a domain (client and server errors at the Target field), the TXT
// record with copy buttons, "Check now" (the harness configures no DNS resolver, so the outcome is
// "record not found yet" or "check failed": the page must say which), an IP host that only a
// super-admin bypass can clear, archive and restore, the super-admin bypass and its revocation
// (amber, never "Verified"), and axe scans of the list and detail pages on a laptop and a phone.
import type { Page } from 'playwright-core';
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

const PASSWORD = 'correct horse battery staple';
const RUN = Math.random().toString(36).slice(2, 8);
const DOMAIN = `shop-${RUN}.example.com`;
const IP = '203.0.113.10';

const overflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** Opens "Add asset", fills the form and submits it; returns the dialog. */
async function addAsset(page: Page, v: { kind?: string; target: string; name?: string; tags?: string }) {
  await page.getByRole('button', { name: 'Add asset', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Add asset' });
  await dialog.waitFor();
  if (v.kind) await dialog.getByLabel('Kind', { exact: true }).selectOption({ label: v.kind });
  await dialog.getByLabel('Target', { exact: true }).fill(v.target);
  if (v.name) await dialog.getByLabel('Name', { exact: true }).fill(v.name);
  if (v.tags) await dialog.getByLabel('Tags', { exact: true }).fill(v.tags);
  await dialog.getByRole('button', { name: 'Add asset', exact: true }).click();
  return dialog;
}

describeBrowser('assets in the browser', () => {
  let e2e: E2e;
  let owner: Page;
  let domainUrl = '';
  let hostUrl = '';

  beforeAll(async () => {
    e2e = await openE2e();
    // CSP bypass only so the test can inject axe; the app itself is unchanged.
    owner = await e2e.newPage({ bypassCSP: true });
    await owner.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: e2e.server.baseUrl });
  }, 120_000);
  afterAll(() => e2e?.close());

  it('starts with an empty inventory', async () => {
    await signUpInBrowser(owner, { name: 'Ada Assets', email: uniqueEmail('assets'), password: PASSWORD });
    await owner.getByLabel('Tenant name', { exact: true }).fill(uniqueTenantName('Asset Co'));
    await owner.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => owner.url()).toMatch(/\/home$/);
    // The nav shows once the new tenant is the active one (the URL may read /home before).
    await owner.getByRole('link', { name: 'Assets', exact: true }).first().click();
    await owner.getByText('No assets yet').waitFor();
    await owner.getByLabel('Search assets', { exact: true }).waitFor();
  });

  it('adds a domain, with client and server errors shown at the Target field', async () => {
    const dialog = await addAsset(owner, { target: `https://${DOMAIN}` });
    const target = dialog.getByLabel('Target', { exact: true });
    await dialog.getByText('Enter the domain without http:// or https://').waitFor();
    expect(await target.getAttribute('aria-invalid')).toBe('true');

    // Passes the quick check, refused by the server (an underscore is not allowed in a host name).
    await target.fill(`bad_name.${DOMAIN}`);
    await dialog.getByRole('button', { name: 'Add asset', exact: true }).click();
    await dialog.getByText('Give a DNS name such as example.com').waitFor();
    expect(await target.getAttribute('aria-invalid')).toBe('true');

    await target.fill(DOMAIN);
    await dialog.getByLabel('Name', { exact: true }).fill('Shop');
    await dialog.getByLabel('Tags', { exact: true }).fill('production, web');
    await dialog.getByRole('button', { name: 'Add asset', exact: true }).click();
    await expect.poll(() => owner.url()).toMatch(/\/assets\/[0-9a-f-]{36}$/);
    domainUrl = new URL(owner.url()).pathname;
    await owner.getByRole('heading', { level: 1, name: 'Shop' }).waitFor();
  });

  it('shows the TXT record to publish, with copy buttons, and runs "Check now"', async () => {
    await owner.getByRole('heading', { name: 'Prove ownership' }).waitFor();
    const recordName = `_rampart-verify.${DOMAIN}`;
    await owner.getByText(recordName, { exact: true }).waitFor();
    await owner.getByText(/^rampart-verify=[0-9a-f]+$/).waitFor();
    await owner.getByText(/usually take 1–5 minutes/).waitFor();

    await owner.getByRole('button', { name: 'Copy record name' }).click();
    await owner.getByRole('button', { name: 'Copy record name' }).getByText('Copied').waitFor();
    expect(await owner.evaluate(() => navigator.clipboard.readText())).toBe(recordName);
    await owner.getByRole('button', { name: 'Copy record value' }).click();
    expect(await owner.evaluate(() => navigator.clipboard.readText())).toMatch(/^rampart-verify=[0-9a-f]+$/);

    // Only super-admins see the bypass.
    expect(await owner.getByRole('button', { name: 'Bypass verification' }).count()).toBe(0);

    await owner.getByRole('button', { name: 'Check now' }).click();
    // No resolver is configured here: the record is either not found (pending) or the lookup
    // cannot complete (failed). Either way the page says so, with the detail.
    const outcome = owner
      .getByRole('status')
      .filter({ hasText: 'Record not found yet' })
      .or(owner.getByRole('alert').filter({ hasText: 'Check failed' }));
    await outcome.first().waitFor({ timeout: 25_000 });
    const history = owner.getByRole('region', { name: 'Verification history' });
    await history
      .getByText(/Record not found|Check failed/)
      .first()
      .waitFor();
    await history.getByText('Added', { exact: true }).waitFor();
    await owner
      .getByText(/Last checked|Record not found yet|Check failed/)
      .first()
      .waitFor();
  }, 40_000);

  it('refuses a duplicate at the Target field, with a link to the existing asset', async () => {
    await owner.goto('/assets');
    await owner.getByRole('link', { name: 'Shop' }).waitFor();
    const dialog = await addAsset(owner, { target: DOMAIN.toUpperCase() });
    await dialog.getByText('This domain is already registered.').waitFor();
    expect(await dialog.getByLabel('Target', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await dialog.getByRole('link', { name: 'Open the asset that is already registered' }).click();
    await expect.poll(() => new URL(owner.url()).pathname).toBe(domainUrl);
  });

  it('adds an IP host, pending, explaining that only a super-admin bypass allows scanning it', async () => {
    await owner.goto('/assets');
    await addAsset(owner, { kind: 'Host', target: IP, tags: 'office' });
    await expect.poll(() => owner.url()).toMatch(/\/assets\/[0-9a-f-]{36}$/);
    hostUrl = new URL(owner.url()).pathname;
    await owner.getByRole('heading', { level: 1, name: IP }).waitFor();
    await owner.getByText('Pending', { exact: true }).first().waitFor();
    await owner.getByText(/An IP address cannot be proven with DNS/).waitFor();
    await owner.getByText(/super-admin of this installation can bypass verification/).waitFor();
    expect(await owner.getByRole('button', { name: 'Check now' }).count()).toBe(0);
  });

  it('lists, filters and edits assets', async () => {
    await owner.goto('/assets');
    const table = owner.getByRole('region', { name: 'Assets', exact: true });
    await table.getByRole('link', { name: 'Shop' }).waitFor();
    await table.getByRole('link', { name: IP }).waitFor();
    await owner.getByLabel('Kind', { exact: true }).selectOption({ label: 'Host' });
    await expect.poll(() => table.getByRole('link', { name: 'Shop' }).count()).toBe(0);
    await table.getByRole('link', { name: IP }).waitFor();
    await owner.getByLabel('Kind', { exact: true }).selectOption({ label: 'Any kind' });
    await owner.getByLabel('Search assets', { exact: true }).fill('shop-');
    await expect.poll(() => table.getByRole('link', { name: IP }).count()).toBe(0);
    await table.getByRole('link', { name: 'Shop' }).click();

    await owner.getByRole('heading', { level: 1, name: 'Shop' }).waitFor();
    await owner.getByLabel('Owner', { exact: true }).fill('Web team');
    await owner.getByRole('button', { name: 'Save changes' }).click();
    await owner.getByText('Changes saved.').waitFor();
    await owner.reload();
    await expect.poll(() => owner.getByLabel('Owner', { exact: true }).inputValue()).toBe('Web team');
  });

  it('archives and restores an asset after confirming', async () => {
    await owner.goto(hostUrl);
    await owner.getByRole('button', { name: 'Archive asset' }).click();
    const confirm = owner.getByRole('dialog', { name: `Archive ${IP}?` });
    await confirm.getByRole('button', { name: 'Archive asset' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await owner.getByText('Archived', { exact: true }).first().waitFor();
    await owner.goto('/assets');
    const table = owner.getByRole('region', { name: 'Assets', exact: true });
    await table.getByRole('link', { name: 'Shop' }).waitFor();
    expect(await table.getByRole('link', { name: IP }).count()).toBe(0);
    await owner.getByLabel('Show archived').check({ force: true });
    await table.getByRole('link', { name: IP }).click();
    await owner.getByRole('button', { name: 'Restore asset' }).click();
    const restore = owner.getByRole('dialog', { name: `Restore ${IP}?` });
    await restore.getByRole('button', { name: 'Restore asset' }).click();
    await restore.waitFor({ state: 'hidden' });
    await owner.getByRole('button', { name: 'Archive asset' }).waitFor();
  });

  it('has no serious accessibility violations and no sideways scrolling, on a laptop and a phone', async () => {
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 375, height: 740 },
    ]) {
      await owner.setViewportSize(viewport);
      for (const [path, heading] of [
        ['/assets', 'Assets'],
        [domainUrl, 'Shop'],
        [hostUrl, IP],
      ] as const) {
        await owner.goto(path);
        await owner.getByRole('heading', { level: 1, name: heading }).waitFor();
        await owner.waitForLoadState('networkidle');
        expect(await scanA11y(owner), `${path} at ${viewport.width}px`).toEqual([]);
        expect(await overflow(owner), `${path} at ${viewport.width}px`).toBeLessThanOrEqual(0);
      }
      await owner.goto('/assets');
      await owner.getByRole('button', { name: 'Add asset', exact: true }).click();
      const dialog = owner.getByRole('dialog', { name: 'Add asset' });
      await dialog.waitFor();
      // Scanned once its opening transition is over (half-faded text has too little contrast).
      await expect.poll(() => dialog.evaluate((el) => getComputedStyle(el).opacity)).toBe('1');
      expect(await scanA11y(owner), `add asset dialog at ${viewport.width}px`).toEqual([]);
      await owner.keyboard.press('Escape');
    }
    await owner.setViewportSize({ width: 1280, height: 800 });
  }, 60_000);

  it('lets a super-admin bypass verification (amber, never "Verified") and revoke it, with a reason', async () => {
    const email = uniqueEmail('root', STAFF_DOMAIN);
    const staff = await e2e.newPage({ bypassCSP: true });
    await createAndSignIn(e2e.server, staff, { email, role: 'super_admin' });
    await staff.getByLabel('Tenant name', { exact: true }).fill(uniqueTenantName('Staff Lab'));
    await staff.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => staff.url()).toMatch(/\/home$/);
    // The nav shows once the new tenant is the active one (the URL may read /home before).
    await staff.getByRole('link', { name: 'Assets', exact: true }).first().click();
    await addAsset(staff, { kind: 'Host', target: '198.51.100.7' });
    await staff.getByRole('heading', { level: 1, name: '198.51.100.7' }).waitFor();

    await staff.getByRole('button', { name: 'Bypass verification' }).click();
    const dialog = staff.getByRole('dialog', { name: 'Bypass verification' });
    await dialog.getByText(/platform audit log/).waitFor();
    await dialog.getByLabel('Reason', { exact: true }).fill('too short');
    await dialog.getByRole('button', { name: 'Bypass verification' }).click();
    await dialog.getByText('Use at least 10 characters').waitFor();
    await dialog.getByLabel('Reason', { exact: true }).fill('Lab network range confirmed by ticket OPS-42');
    await dialog.getByRole('button', { name: 'Bypass verification' }).click();
    await dialog.waitFor({ state: 'hidden' });

    const badges = staff.getByRole('group', { name: 'Status' });
    await badges.getByText('Bypassed by admin').waitFor();
    expect(await badges.getByText('Verified').count()).toBe(0);
    const badge = badges.getByText('Bypassed by admin');
    // Amber (Mantine yellow), not green.
    const style = await badge.evaluate((el) => el.closest('.mantine-Badge-root')?.getAttribute('style') ?? '');
    expect(style).toContain('yellow');
    expect(style).not.toContain('green');
    await staff.getByText('Lab network range confirmed by ticket OPS-42').first().waitFor();
    const history = staff.getByRole('region', { name: 'Verification history' });
    await history.getByText('Bypassed by admin').waitFor();
    await history.getByText(`by ${email}`).first().waitFor();
    // Scanned after a reload: the success notification's close button has no accessible name
    // (a Mantine default of the app-wide <Notifications>, not part of this page).
    await staff.reload();
    await badges.getByText('Bypassed by admin').waitFor();
    await staff.waitForLoadState('networkidle');
    expect(await scanA11y(staff), 'bypassed asset').toEqual([]);

    await staff.getByRole('button', { name: 'Revoke bypass' }).click();
    const revoke = staff.getByRole('dialog', { name: 'Revoke bypass' });
    await revoke.getByLabel('Reason', { exact: true }).fill('Ticket OPS-42 was withdrawn');
    // The server's answer is checked first, so that a failure says whether the request was sent,
    // what the server answered, and what the dialog showed.
    const answer = staff.waitForResponse((r) => r.url().endsWith('/bypass/revoke') && r.request().method() === 'POST', {
      timeout: 20_000,
    });
    await revoke.getByRole('button', { name: 'Revoke bypass' }).click();
    const revoked = await answer;
    expect(revoked.status(), await revoked.text()).toBe(200);
    await revoke.waitFor({ state: 'hidden' }).catch(async (e: unknown) => {
      throw new Error(`The dialog stayed open showing: ${await revoke.innerText()}`, { cause: e });
    });
    await badges.getByText('Pending', { exact: true }).waitFor();
    await history.getByText('Bypass revoked').waitFor();
  }, 60_000);

  it("says a host's bypass covers the web apps on that host, and shows the coverage on the app's page", async () => {
    const staff = await e2e.newPage({ bypassCSP: true });
    await createAndSignIn(e2e.server, staff, { email: uniqueEmail('root-lab', STAFF_DOMAIN), role: 'super_admin' });
    await staff.getByLabel('Tenant name', { exact: true }).fill(uniqueTenantName('Local Lab'));
    await staff.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => staff.url()).toMatch(/\/home$/);
    // The URL reads /home from the sign-in on, before the tenant exists; loading another page then
    // would abort its creation. The empty tenant's home page shows once it is the active one.
    await staff.getByText('Start by adding an asset').waitFor();
    await staff.goto('/assets');
    await addAsset(staff, { kind: 'Host', target: '127.0.0.1' });
    await staff.getByRole('heading', { level: 1, name: '127.0.0.1' }).waitFor();
    await staff.getByRole('button', { name: 'Bypass verification' }).click();
    const dialog = staff.getByRole('dialog', { name: 'Bypass verification' });
    await dialog.getByText(/A bypass of a host also covers the web applications on that host/).waitFor();
    await dialog.getByLabel('Reason', { exact: true }).fill('Local test machine of the installation');
    await dialog.getByRole('button', { name: 'Bypass verification' }).click();
    await dialog.waitFor({ state: 'hidden' });

    await staff.goto('/assets');
    await addAsset(staff, { kind: 'Web app', target: 'http://127.0.0.1:8088/' });
    await staff.getByRole('heading', { level: 1, name: 'http://127.0.0.1:8088/' }).waitFor();
    const note = staff.getByRole('note').filter({ hasText: 'Covered by the bypass of host 127.0.0.1' });
    await note.waitFor();
    await note.getByRole('link', { name: '127.0.0.1' }).waitFor();
    await staff.getByRole('group', { name: 'Status' }).getByText('Bypassed by admin').waitFor();
    // The app has no bypass of its own to revoke: the host's is the one that counts.
    expect(await staff.getByRole('button', { name: 'Revoke bypass' }).count()).toBe(0);
    await staff.waitForLoadState('networkidle');
    expect(await scanA11y(staff), 'web app covered by a host bypass').toEqual([]);
  }, 60_000);
});
