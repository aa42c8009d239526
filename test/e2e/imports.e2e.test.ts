// "Import results" in the browser: pick an asset and a report file, upload it with automatic
// format detection, follow the import until its findings are in, see it in the history and on
// the scan page's "Report and ingestion" panel and on the import's result page (what was read,
// skipped and why, coverage); a file that is not a report is refused, saying what it looks like.
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
    await signUpInBrowser(page, {
      name: 'Ivy Importer',
      email: uniqueEmail('imports-e2e'),
      password: 'correct horse battery staple',
    });
    await page.getByLabel('Tenant name', { exact: true }).fill(uniqueTenantName('Import Co'));
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => page.url()).toMatch(/\/home$/);
    // The nav shows once the new tenant is the active one (the URL may read /home before).
    await page.getByRole('link', { name: 'Assets', exact: true }).first().click();
    // The list must have loaded (its empty state is shown) before the page's buttons work.
    await page.getByText('No assets yet').waitFor();
    await page.getByRole('button', { name: 'Add asset', exact: true }).click();
    const add = page.getByRole('dialog', { name: 'Add asset' });
    await add.getByLabel('Kind', { exact: true }).selectOption({ label: 'Host' });
    await add.getByLabel('Target', { exact: true }).fill(HOST);
    await add.getByRole('button', { name: 'Add asset', exact: true }).click();
    await expect.poll(() => page.url()).toMatch(/\/assets\/[0-9a-f-]{36}$/);
    await withService(e2e.server.database.db, (tx) =>
      sql`update assets set verification_status = 'verified', verified_via = 'txt', verified_at = now() where target = ${HOST}`.execute(
        tx,
      ),
    );

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
    // The fixture's hosts, as if nuclei had been pointed at this asset.
    const report = readFileSync(fixturePath('nuclei-results.jsonl'), 'utf8')
      .replaceAll('shop.example.com', HOST)
      .replaceAll('legacy.example.com', HOST);
    await page
      .locator('input[type="file"]')
      .setInputFiles({ name: 'nuclei-results.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(report) });
    await page.getByRole('button', { name: 'Import', exact: true }).click();

    const current = page.getByRole('region', { name: 'Importing nuclei-results.jsonl' });
    await current.getByText(/^Done: \d+ findings, \d+ new/).waitFor({ timeout: 30_000 });
    const row = page.getByRole('row', { name: /nuclei-results\.jsonl/ });
    await row.getByText('Imported').waitFor();
    await row.getByText('nuclei JSON (Lines or array)', { exact: false }).waitFor();
    await page.mouse.move(0, 0);
    expect(await scanA11y(page), 'import page, after an import').toEqual([]);

    // The result page: what was read, the skipped line and its reason, what the report covered.
    await row.getByRole('link', { name: 'nuclei-results.jsonl', exact: true }).click();
    await expect.poll(() => page.url()).toMatch(/\/imports\/[0-9a-f-]{36}$/);
    await page.getByRole('heading', { level: 1, name: 'nuclei-results.jsonl' }).waitFor();
    const skipped = page.getByRole('region', { name: 'Skipped records' });
    await skipped.getByRole('row', { name: /no template-id 1 line 7/ }).waitFor();
    const coverage = page.getByRole('region', { name: 'What the report covered' });
    await coverage.getByText(/http-missing-security-headers/).waitFor();
    await page.getByText('Records read').waitFor();
    await page.mouse.move(0, 0);
    await page.waitForLoadState('networkidle');
    expect(await scanA11y(page), 'import result page').toEqual([]);

    await page.getByRole('link', { name: 'Open the scan' }).click();
    await expect.poll(() => page.url()).toMatch(/\/scans\/[0-9a-f-]{36}$/);
    const panel = page.getByRole('region', { name: 'Report and ingestion' });
    await panel.getByText(/Imported file nuclei-results\.jsonl/).waitFor();
    await panel.getByText(/\d+ findings, \d+ new/).waitFor();
  });

  it('refuses a file that is not a report, saying so', async () => {
    await page.getByRole('link', { name: 'Import results', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Import results' }).waitFor();
    await page.getByLabel('Asset', { exact: true }).selectOption({ label: HOST });
    await page.locator('input[type="file"]').setInputFiles({
      name: 'notes.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('meeting notes, not a scan report\n'),
    });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByText('The report was not imported').waitFor();
    await page
      .getByText(/The report format could not be recognised: the file looks like text starting with "meeting notes/)
      .waitFor();
  });

  it('shows an import whose every result was unreadable as inconclusive, with the reason', async () => {
    await page.getByRole('link', { name: 'Import results', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Import results' }).waitFor();
    await page.getByLabel('Asset', { exact: true }).selectOption({ label: HOST });
    const sarif = JSON.stringify({
      version: '2.1.0',
      runs: [{ tool: { driver: { name: 'gitleaks', semanticVersion: 'v8.18.2' } }, results: [{ locations: [] }] }],
    });
    await page
      .locator('input[type="file"]')
      .setInputFiles({ name: 'gitleaks.sarif', mimeType: 'application/json', buffer: Buffer.from(sarif) });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    const row = page.getByRole('row', { name: /gitleaks\.sarif/ });
    await row.getByRole('link', { name: 'gitleaks.sarif', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'gitleaks.sarif' }).waitFor();
    const alert = page.getByRole('alert').filter({ hasText: 'Inconclusive: nothing was closed' });
    await alert
      .getByText(/all 1 result was skipped \(no ruleId and no message\).*Findings stay as they were\./)
      .waitFor({ timeout: 30_000 });
  });
});
