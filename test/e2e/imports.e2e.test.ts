// "Import results" in the browser: pick an asset and a report file, upload it with automatic
// format detection, follow the import until its findings are in, see it in the history and on
// the scan page's "Report and ingestion" panel; a file that is not a report is refused clearly.
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import { fixturePath } from '../../src/workers/importers/test-helpers.ts';
import { uniqueEmail } from '../helpers/app.ts';
import { describeBrowser, openE2e, scanA11y, signUpInBrowser, type E2e, uniqueTenantName } from './harness.ts';

const HOST = `imports-${Math.random().toString(36).slice(2, 8)}.example.test`;

describeBrowser('import results in the browser', () => {
  let e2e: E2e;
  let page: Page;

  beforeAll(async () => {
    e2e = await openE2e();
    // The runner a server starts in the background (main.ts); the harness builds the app only.
    e2e.server.app.services.ingestion.start();
    page = await e2e.newPage({ bypassCSP: true });
  }, 120_000);
  afterAll(async () => {
    await e2e?.close();
  });

  it('imports a nuclei report for an asset and shows its progress and outcome', async () => {
    await signUpInBrowser(page, { name: 'Ivy Importer', email: uniqueEmail('imports-e2e'), password: 'correct horse battery staple' });
    await page.getByLabel('Tenant name', { exact: true }).fill(uniqueTenantName('Import Co'));
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => page.url()).toMatch(/\/assets$/);
    // The list must have loaded (its empty state is shown) before the page's buttons work.
    await page.getByText('No assets yet').waitFor();
    await page.getByRole('button', { name: 'Add asset', exact: true }).click();
    const add = page.getByRole('dialog', { name: 'Add asset' });
    await add.getByLabel('Kind', { exact: true }).selectOption({ label: 'Host' });
    await add.getByLabel('Target', { exact: true }).fill(HOST);
    await add.getByRole('button', { name: 'Add asset', exact: true }).click();
    await expect.poll(() => page.url()).toMatch(/\/assets\/[0-9a-f-]{36}$/);
    await withService(e2e.server.database.db, (tx) => sql`update assets set verification_status = 'verified', verified_via = 'txt', verified_at = now() where target = ${HOST}`.execute(tx));

    await page.getByRole('link', { name: 'Import results', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Import results' }).waitFor();
    await page.getByText('No reports imported yet.').waitFor();
    await page.mouse.move(0, 0);
    await page.waitForLoadState('networkidle');
    expect(await scanA11y(page), 'import page, empty').toEqual([]);

    // Nothing chosen: the form says what is missing.
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByText('Choose the asset the report is about.').waitFor();
    await page.getByText('Choose the report file.').waitFor();

    await page.getByLabel('Asset', { exact: true }).selectOption({ label: HOST });
    expect(await page.getByLabel('Format', { exact: true }).inputValue()).toBe('auto');
    await page.locator('input[type="file"]').setInputFiles({ name: 'nuclei-results.jsonl', mimeType: 'application/x-ndjson', buffer: readFileSync(fixturePath('nuclei-results.jsonl')) });
    await page.getByRole('button', { name: 'Import', exact: true }).click();

    const current = page.getByRole('region', { name: 'Importing nuclei-results.jsonl' });
    await current.getByText(/^Done: \d+ findings, \d+ new/).waitFor({ timeout: 30_000 });
    const row = page.getByRole('row', { name: /nuclei-results\.jsonl/ });
    await row.getByText('Imported').waitFor();
    await row.getByText('nuclei JSON Lines', { exact: false }).waitFor();
    await page.mouse.move(0, 0);
    expect(await scanA11y(page), 'import page, after an import').toEqual([]);

    await current.getByRole('link', { name: 'Open the scan' }).click();
    await expect.poll(() => page.url()).toMatch(/\/scans\/[0-9a-f-]{36}$/);
    const panel = page.getByRole('region', { name: 'Report and ingestion' });
    await panel.getByText(/Imported file nuclei-results\.jsonl/).waitFor();
    await panel.getByText(/\d+ findings, \d+ new/).waitFor();
  });

  it('refuses a file that is not a report, saying so', async () => {
    await page.getByRole('link', { name: 'Import results', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Import results' }).waitFor();
    await page.getByLabel('Asset', { exact: true }).selectOption({ label: HOST });
    await page.locator('input[type="file"]').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('meeting notes, not a scan report\n') });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByText('The report was not imported').waitFor();
    await page.getByText(/The report format could not be recognised/).waitFor();
  });
});
