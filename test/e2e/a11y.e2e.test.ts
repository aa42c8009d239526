// Automated accessibility scan (axe-core, WCAG 2.1 A and AA rules) of the main screens, signed
// out and signed in, on a laptop and a phone. Serious and critical violations fail the test.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { uniqueEmail } from '../helpers/app.ts';
import { describeBrowser, openE2e, scanA11y, signUpInBrowser, type E2e, uniqueTenantName } from './harness.ts';

describeBrowser('accessibility', () => {
  let e2e: E2e;
  let page: Page;

  beforeAll(async () => {
    e2e = await openE2e();
    // CSP bypass only so the test can inject axe; the app itself is unchanged.
    page = await e2e.newPage({ bypassCSP: true });
  }, 120_000);
  afterAll(() => e2e?.close());

  it('has no serious violations on the signed-out pages', async () => {
    for (const path of ['/sign-in', '/sign-up', '/forgot-password', '/reset-password?token=x']) {
      await page.goto(path);
      await page.getByRole('heading').first().waitFor();
      expect(await scanA11y(page), path).toEqual([]);
    }
  });

  it('has no serious violations on the signed-in pages, on a laptop and a phone', async () => {
    await signUpInBrowser(page, {
      name: 'Ally Bright',
      email: uniqueEmail('a11y'),
      password: 'correct horse battery staple',
    });
    await page.getByLabel('Tenant name', { exact: true }).waitFor();
    expect(await scanA11y(page), 'first tenant').toEqual([]);
    await page.getByLabel('Tenant name', { exact: true }).fill(uniqueTenantName('Access Co'));
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => page.url()).toMatch(/\/assets$/);
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 375, height: 740 },
    ]) {
      await page.setViewportSize(viewport);
      for (const path of ['/assets', '/settings/members', '/settings/tenant', '/settings/audit-log', '/account']) {
        await page.goto(path);
        await page.getByRole('heading', { level: 1 }).first().waitFor();
        await page.waitForLoadState('networkidle');
        expect(await scanA11y(page), `${path} at ${viewport.width}px`).toEqual([]);
      }
    }
  });

  it('keeps the shared success notification readable', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto('/settings/tenant');
    const quota = page.getByLabel('Daily scan quota');
    await quota.fill(String(Number(await quota.inputValue()) + 1));
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    expect(await scanA11y(page), 'success notification').toEqual([]);
  });
});
