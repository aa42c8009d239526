// Account security in the browser: enable two-factor, sign in with a code, reset a forgotten
// password from the mailed link.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { uniqueEmail } from '../helpers/app.ts';
import { totp } from '../helpers/totp.ts';
import { describeBrowser, openE2e, signUpInBrowser, type E2e, type E2eServer } from './harness.ts';

const PASSWORD = 'correct horse battery staple';
const NEW_PASSWORD = 'a different long passphrase';

describeBrowser('account security in the browser', () => {
  let e2e: E2e;
  let server: E2eServer;
  let page: Page;
  let secret = '';
  const email = uniqueEmail('secure');

  beforeAll(async () => {
    e2e = await openE2e();
    server = e2e.server;
    page = await e2e.newPage();
  }, 120_000);
  afterAll(() => e2e?.close());

  async function signOut() {
    await page.getByRole('button', { name: 'User menu' }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await expect.poll(() => page.url()).toContain('/sign-in');
  }

  async function signIn(password: string) {
    await page.goto('/sign-in');
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  it('enables two-factor with an authenticator code', async () => {
    await signUpInBrowser(page, { name: 'Sam Secure', email, password: PASSWORD });
    await page.getByLabel('Tenant name', { exact: true }).waitFor();
    await page.goto('/account');
    await page.getByRole('button', { name: 'Enable two-factor authentication' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await dialog.getByRole('button', { name: 'Continue' }).click();
    secret = ((await page.getByTestId('totp-secret').textContent()) ?? '').replace(/\s+/g, '');
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
    const codes = (await page.getByTestId('recovery-codes').textContent()) ?? '';
    expect(codes.length).toBeGreaterThan(50);
    await page.getByLabel('Authentication code', { exact: true }).fill(totp(secret));
    await page.getByRole('button', { name: 'Verify and enable' }).click();
    await page.getByRole('button', { name: 'Disable two-factor authentication' }).waitFor();
  });

  it('asks for the code at sign-in, refuses a wrong one, accepts the right one', async () => {
    await signOut();
    await signIn(PASSWORD);
    const code = page.getByLabel('Authentication code', { exact: true });
    await code.fill(totp(secret) === '000000' ? '111111' : '000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').filter({ hasText: /code/i }).first().waitFor();
    await code.fill(totp(secret));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('button', { name: 'User menu' }).waitFor();
    expect(page.url()).not.toContain('/sign-in');
  });

  it('resets a forgotten password from the mailed link', async () => {
    await signOut();
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await expect.poll(() => server.mailer.sent.some((m) => m.to === email && /password/i.test(m.subject))).toBe(true);
    const link = server.mailer.lastLink(email, /password/i);
    await page.goto(link.replace(server.baseUrl, ''));
    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel('Confirm password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();
    await expect.poll(() => page.url()).toContain('/sign-in');
    await signIn(PASSWORD);
    await page
      .getByRole('alert')
      .filter({ hasText: /invalid|incorrect/i })
      .first()
      .waitFor();
    await signIn(NEW_PASSWORD);
    await page.getByLabel('Authentication code', { exact: true }).fill(totp(secret));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('button', { name: 'User menu' }).waitFor();
  });
});
