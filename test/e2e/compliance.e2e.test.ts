// Compliance in the browser: the framework overview, a framework's control table with search and
// status filter, a control failing because of an open finding (inserted as a scan would), the
// evidence upload form (client-side checks, upload, download of identical bytes, delete), the
// status turning "Evidenced", and axe scans of the pages.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { sql } from 'kysely';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { uniqueEmail } from '../helpers/app.ts';
import { describeBrowser, openE2e, scanA11y, signUpInBrowser, type E2e } from './harness.ts';

const PASSWORD = 'correct horse battery staple';

describeBrowser('compliance in the browser', () => {
  let e2e: E2e;
  let page: Page;
  let tenantId = '';

  beforeAll(async () => {
    e2e = await openE2e();
    page = await e2e.newPage({ bypassCSP: true });
  }, 120_000);
  afterAll(() => e2e?.close());

  const row = (control: string) => page.locator(`tr[data-control="${control}"]`);

  it('shows the five frameworks with their control counts', async () => {
    await signUpInBrowser(page, { name: 'Grace Compliance', email: uniqueEmail('compliance-e2e'), password: PASSWORD });
    // A name (and so a slug) of its own: the PostgreSQL database is shared between runs.
    await page.getByLabel('Tenant name', { exact: true }).fill(`Audit Co ${Math.random().toString(36).slice(2, 8)}`);
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await page.waitForURL(/\/home$/);
    // The only tenant of this user, once its creation has gone through (the URL may already read
    // /home before it has).
    const firstTenant = () =>
      page.evaluate(
        async () => ((await (await fetch('/api/v1/me')).json()) as { tenants: { id: string }[] }).tenants[0]?.id ?? '',
      );
    await expect.poll(firstTenant, { timeout: 10_000 }).not.toBe('');
    tenantId = await firstTenant();

    await page.goto('/compliance');
    await page.getByRole('heading', { level: 1, name: 'Compliance' }).waitFor();
    const frameworks = page.getByRole('list', { name: 'Frameworks' });
    for (const [name, count] of [
      ['SOC 2', '61 criteria'],
      ['GDPR', '37 articles'],
      ['ISO 27001', '93 controls'],
      ['NIST CSF 2.0', '106 subcategories'],
      ['CIS v8', '153 safeguards'],
    ] as const) {
      const card = frameworks.getByRole('listitem').filter({ has: page.getByRole('heading', { name, exact: true }) });
      await card.getByText(count, { exact: true }).waitFor();
    }
  });

  it('lists a framework’s controls, with search, a status filter and failing controls from open findings', async () => {
    // An open finding as a scan would leave it: cleartext login on a web app (CWE-319).
    const db = e2e.server.database.db;
    const { rows } = await sql<{
      id: string;
    }>`insert into assets (tenant_id, kind, target, dns_name, name, verification_token)
      values (${tenantId}, 'webapp', 'https://shop.audit.test', 'shop.audit.test', 'Shop', 'token') returning id`.execute(
      db,
    );
    await sql`insert into findings (tenant_id, asset_id, scanner, rule_id, title, severity, cwe_ids, location_text, fingerprint, scope_key, first_seen_at, last_seen_at)
      values (${tenantId}, ${rows[0]!.id}, 'webapp', 'http.cleartext-login', 'Login form served over HTTP', 'high', '{319}', 'https://shop.audit.test/login', ${randomBytes(8).toString('hex')}, 'full', now(), now())`.execute(
      db,
    );

    await page.getByRole('link', { name: 'Open ISO 27001 controls' }).click();
    await page.waitForURL(/\/compliance\/iso27001$/);
    await page.getByRole('heading', { level: 1, name: 'ISO 27001' }).waitFor();
    await row('A.8.24').getByText('Failing', { exact: true }).waitFor();
    await row('A.5.1').getByText('No evidence', { exact: true }).waitFor();
    await page.getByText('93 of 93 shown.').waitFor();

    await page.getByLabel('Search controls', { exact: true }).fill('cryptography');
    await page.waitForURL(/q=cryptography/);
    await page.getByText('1 of 93 shown.').waitFor();
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByText('93 of 93 shown.').waitFor();

    await page.getByLabel('Status', { exact: true }).selectOption({ label: 'Failing' });
    await page.waitForURL(/controlStatus=failing/);
    await row('A.8.24').waitFor();
    // The URL changes before the filtered list replaces the full one: wait for the list itself.
    await row('A.5.1').waitFor({ state: 'detached' });
    expect(await page.locator('tr[data-control]').count()).toBeGreaterThan(0);
    for (const status of await page
      .locator('tr[data-control] [data-status]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-status'))))
      expect(status).toBe('failing');

    // Switching frameworks keeps the page and drops the filters.
    await page.locator('.mantine-SegmentedControl-label', { hasText: /^NIST CSF$/ }).click();
    await page.waitForURL(/\/compliance\/nist-csf$/);
    await row('PR.DS-02').getByText('Failing', { exact: true }).waitFor();
    expect(await scanA11y(page)).toEqual([]);
  });

  it('shows a failing control with its mapped finding, and uploads, downloads and deletes evidence', async () => {
    await page.goto('/compliance/iso27001/A.8.24');
    await page.getByRole('heading', { level: 1, name: 'A.8.24 Use of cryptography' }).waitFor();
    const findings = page.getByRole('region', { name: 'Mapped findings' });
    await findings.getByText('Login form served over HTTP').waitFor();
    await findings.getByRole('link', { name: 'Shop' }).waitFor();
    await findings.getByText('https://shop.audit.test/login').waitFor();
    await page.getByText('No evidence yet. Upload the first file below.').waitFor();

    const form = page.locator('form[aria-labelledby="upload-heading"]');
    await form.getByRole('button', { name: 'Upload evidence' }).click();
    await form.getByText('Choose a file', { exact: true }).last().waitFor();
    await form.getByText('Give the evidence a title').waitFor();

    const content = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(3000)]);
    await form
      .locator('input[type="file"]')
      .setInputFiles({ name: 'crypto-standard.pdf', mimeType: 'application/pdf', buffer: content });
    await form.getByLabel('Title').fill('Cryptography standard');
    await form.getByLabel('Effective date').fill('2025-01-01');
    await form.getByLabel('Expires').fill('2024-06-01');
    await form.getByRole('button', { name: 'Upload evidence' }).click();
    await form.getByText('The expiry date must be after the effective date').waitFor();
    await form.getByLabel('Expires').fill('2099-01-01');
    await form.getByRole('button', { name: 'Upload evidence' }).click();

    const evidence = page.getByRole('region', { name: 'Evidence', exact: true });
    await evidence.getByText('Cryptography standard').waitFor();
    await evidence.getByText('Current', { exact: true }).waitFor();
    // Still failing: evidence does not outweigh an open finding.
    await page.getByRole('group', { name: 'Status' }).getByText('Failing', { exact: true }).waitFor();

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      evidence.getByRole('link', { name: 'Download crypto-standard.pdf' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('crypto-standard.pdf');
    const saved = await download.path();
    expect(Buffer.compare(await readFile(saved), content)).toBe(0);

    await evidence.getByRole('button', { name: 'Delete Cryptography standard' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete evidence?' });
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByText('No evidence yet. Upload the first file below.').waitFor();
    // A closing dialog fades out; scanning it mid-fade reports its half-transparent text.
    await dialog.waitFor({ state: 'detached' });
    expect(await scanA11y(page)).toEqual([]);
  });

  it('marks a control without findings "Evidenced" once current evidence is uploaded', async () => {
    await page.goto('/compliance/iso27001/A.5.1');
    await page.getByRole('heading', { level: 1, name: 'A.5.1 Policies for information security' }).waitFor();
    await page.getByRole('group', { name: 'Status' }).getByText('No evidence', { exact: true }).waitFor();
    const form = page.locator('form[aria-labelledby="upload-heading"]');
    await form.locator('input[type="file"]').setInputFiles({
      name: 'policy.md',
      mimeType: 'text/markdown',
      buffer: Buffer.from('# Information security policy\nApproved.\n'),
    });
    await form.getByLabel('Title').fill('Information security policy');
    await form.getByLabel('Effective date').fill('2025-01-01');
    await form.getByRole('button', { name: 'Upload evidence' }).click();
    await page.getByRole('group', { name: 'Status' }).getByText('Evidenced', { exact: true }).waitFor();

    await page.getByRole('link', { name: '← All controls' }).click();
    await row('A.5.1').getByText('Evidenced', { exact: true }).waitFor();
    await row('A.5.1').getByText('1 current').waitFor();
  });
});
