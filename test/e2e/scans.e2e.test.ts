// Scans and schedules in the browser: queue a chunked port scan of a verified host, watch the
// parent and per-chunk progress follow the chunks (written to the database as a worker would),
// the per-asset limit shown at the Asset field, cancel with confirmation, a schedule in another
// time zone with its next runs, enable/disable, and axe scans of the pages on a laptop and a phone.
import { sql } from 'kysely';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import { uniqueEmail } from '../helpers/app.ts';
import { describeBrowser, openE2e, scanA11y, signUpInBrowser, type E2e } from './harness.ts';

const PASSWORD = 'correct horse battery staple';
const RUN = Math.random().toString(36).slice(2, 8);
const HOST = `scanme-${RUN}.example.com`;

/** The page may take a moment on a busy machine: poll for up to 15 s. */
const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 15_000 });

const overflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

describeBrowser('scans and schedules in the browser', () => {
  let e2e: E2e;
  let page: Page;
  let scanUrl = '';
  let scheduleUrl = '';
  let inconclusiveUrl = '';
  const db = () => e2e.server.database.db;
  /** What a worker's reports do to a scan row (the aggregation trigger does the rest). */
  const work = (where: string, status: string, percent: number) =>
    withService(db(), (tx) =>
      sql`update scans set status = ${status}, percent = ${percent}, attempts = 1 where ${sql.raw(where)}`.execute(tx),
    );

  beforeAll(async () => {
    e2e = await openE2e();
    page = await e2e.newPage({ bypassCSP: true });
  }, 120_000);
  afterAll(() => e2e?.close());

  it('shows an empty scan list, then queues a chunked port scan of a verified host', async () => {
    await signUpInBrowser(page, { name: 'Sam Scans', email: uniqueEmail('scans-e2e'), password: PASSWORD });
    await page.getByLabel('Tenant name', { exact: true }).fill('Scan Co');
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await poll(() => page.url()).toMatch(/\/home$/);
    // The nav shows once the new tenant is the active one (the URL may read /home before).
    await page.getByRole('link', { name: 'Assets', exact: true }).first().click();
    // The list has loaded (as in assets.e2e): on a loaded CI machine a click while the new
    // tenant's page was still settling opened no dialog (five failures in a row followed).
    await page.getByText('No assets yet').waitFor();
    // A host, proven as the assets flow would after its domain's TXT check.
    await page.getByRole('button', { name: 'Add asset', exact: true }).click();
    const add = page.getByRole('dialog', { name: 'Add asset' });
    await add.getByLabel('Kind', { exact: true }).selectOption({ label: 'Host' });
    await add.getByLabel('Target', { exact: true }).fill(HOST);
    await add.getByRole('button', { name: 'Add asset', exact: true }).click();
    await poll(() => page.url()).toMatch(/\/assets\/[0-9a-f-]{36}$/);
    await withService(db(), (tx) =>
      sql`update assets set verification_status = 'verified', verified_via = 'txt', verified_at = now() where target = ${HOST}`.execute(
        tx,
      ),
    );

    await page.getByRole('link', { name: 'Scans', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Scans' }).waitFor();
    await page.getByText('No scans yet').waitFor();
    await page.getByRole('button', { name: 'New scan' }).click();
    const dialog = page.getByRole('dialog', { name: 'New scan' });
    await dialog.getByText(/0 of 200 scans used today/).waitFor();
    await dialog.getByLabel('Asset', { exact: true }).selectOption({ label: HOST });
    expect(await dialog.getByLabel('Scanner', { exact: true }).inputValue()).toBe('port');
    await dialog.getByLabel('Split into chunks', { exact: true }).selectOption({ label: '4 chunks' });
    await dialog.getByLabel('First port', { exact: true }).fill('1');
    await dialog.getByLabel('Last port', { exact: true }).fill('40000');
    await dialog.getByRole('button', { name: 'Queue scan' }).click();
    await poll(() => page.url()).toMatch(/\/scans\/[0-9a-f-]{36}$/);
    scanUrl = new URL(page.url()).pathname;
    await page.getByRole('heading', { level: 1, name: `Port scan of ${HOST}` }).waitFor();
    await page.getByText('Queued (chunked)').waitFor();
    const chunks = page.getByRole('region', { name: 'Chunks' });
    for (const range of ['Ports 1–10000', 'Ports 10001–20000', 'Ports 20001–30000', 'Ports 30001–40000'])
      await chunks.getByText(range).waitFor();
  });

  it('follows the chunks live: per-chunk bars and the combined progress', async () => {
    const id = scanUrl.split('/').pop()!;
    await work(`parent_id = '${id}' and chunk_index = 0`, 'running', 60);
    await work(`parent_id = '${id}' and chunk_index = 1`, 'running', 20);
    await page.getByText('Running (chunked)').waitFor();
    await poll(() => page.getByRole('progressbar', { name: 'Overall progress' }).getAttribute('aria-valuenow')).toBe(
      '20',
    );
    await poll(() => page.getByRole('progressbar', { name: 'Progress of chunk 1' }).getAttribute('aria-valuenow')).toBe(
      '60',
    );
    await work(`parent_id = '${id}'`, 'succeeded', 100);
    await page.getByText('Succeeded').first().waitFor();
    await poll(() => page.getByRole('progressbar', { name: 'Overall progress' }).getAttribute('aria-valuenow')).toBe(
      '100',
    );
    await poll(() => page.getByRole('button', { name: 'Cancel scan' }).count()).toBe(0);
    // The finished scan links to its own findings (no reload happened since it was queued).
    await page.getByRole('link', { name: 'Findings of this scan', exact: true }).click();
    await poll(() => new URL(page.url()).searchParams.get('scanId')).toBe(id);
    await page.getByText('Only findings reported by').waitFor();
    await page.getByRole('link', { name: 'this scan', exact: true }).waitFor();
  });

  it('shows the per-asset limit at the Asset field, and cancels a scan after asking', async () => {
    await page.goto('/scans');
    await page.getByRole('button', { name: 'New scan' }).click();
    let dialog = page.getByRole('dialog', { name: 'New scan' });
    await dialog.getByLabel('Asset', { exact: true }).selectOption({ label: HOST });
    await dialog.getByLabel('Scanner', { exact: true }).selectOption({ label: 'Edge check (TLS and HTTP)' });
    await dialog.getByRole('button', { name: 'Queue scan' }).click();
    await page.getByRole('heading', { level: 1, name: `Edge check (TLS and HTTP) of ${HOST}` }).waitFor();
    const edgeUrl = new URL(page.url()).pathname;

    await page.goto('/scans');
    await page.getByRole('button', { name: 'New scan' }).click();
    dialog = page.getByRole('dialog', { name: 'New scan' });
    await dialog.getByLabel('Asset', { exact: true }).selectOption({ label: HOST });
    await dialog.getByRole('button', { name: 'Queue scan' }).click();
    await dialog.getByText(/already has 1 unfinished scan/).waitFor();
    expect(await dialog.getByLabel('Asset', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    // A template scan's request rate is checked field by field too.
    await dialog.getByLabel('Scanner', { exact: true }).selectOption({ label: 'Template scan' });
    await dialog.getByLabel('Requests per second', { exact: true }).fill('5000');
    await dialog.getByRole('button', { name: 'Queue scan' }).click();
    await poll(() => dialog.getByLabel('Requests per second', { exact: true }).getAttribute('aria-invalid')).toBe(
      'true',
    );
    await page.keyboard.press('Escape');

    await page.goto(edgeUrl);
    await page.getByRole('button', { name: 'Cancel scan' }).click();
    const confirm = page.getByRole('dialog', { name: 'Cancel this scan?' });
    await confirm.getByRole('button', { name: 'Cancel scan' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await page.getByText('Cancelled', { exact: true }).waitFor();

    await page.goto('/scans?active=true');
    await page.getByText('No scans match these filters.').waitFor();
    await page.goto('/scans');
    // The header row and the two scans.
    await poll(() => page.getByRole('region', { name: 'Scans' }).getByRole('row').count()).toBe(3);
  });

  it('creates a schedule in another time zone, shows its next runs there, and disables it', async () => {
    await page.getByRole('link', { name: 'Schedules', exact: true }).first().click();
    await page.getByRole('heading', { level: 1, name: 'Scan schedules' }).waitFor();
    await page.getByText('No schedules yet').waitFor();
    await page.getByRole('button', { name: 'New schedule' }).click();
    const dialog = page.getByRole('dialog', { name: 'New schedule' });
    await dialog.getByLabel('Name', { exact: true }).fill('Morning edge check');
    await dialog.getByLabel('Asset', { exact: true }).selectOption({ label: HOST });
    await dialog.getByLabel('Scanner', { exact: true }).selectOption({ label: 'Edge check (TLS and HTTP)' });
    await dialog.getByLabel('When (cron expression)', { exact: true }).fill('not cron');
    // An autocomplete: its accessible name is not exactly the label text.
    await dialog.getByLabel('Time zone').fill('America/New_York');
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    await dialog
      .getByText(/five fields/i)
      .first()
      .waitFor();
    // The hint names five fields before submitting too: wait for the field itself to be marked.
    await poll(() => dialog.getByLabel('When (cron expression)', { exact: true }).getAttribute('aria-invalid')).toBe(
      'true',
    );
    await dialog.getByLabel('When (cron expression)', { exact: true }).fill('0 9 * * *');
    await dialog
      .getByText(/09:00 E[SD]T/)
      .first()
      .waitFor();
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    await poll(() => page.url()).toMatch(/\/schedules\/[0-9a-f-]{36}$/);
    scheduleUrl = new URL(page.url()).pathname;
    await page.getByRole('heading', { level: 1, name: 'Morning edge check' }).waitFor();
    await poll(() => page.getByTestId('next-run').textContent()).toMatch(/^\d{4}-\d{2}-\d{2} 09:00 E[SD]T$/);
    await page.getByText('No runs yet.').waitFor();

    await page.getByRole('switch', { name: 'Enabled: Morning edge check' }).click({ force: true });
    await poll(() => page.getByTestId('next-run').textContent()).toBe('None while disabled');
    await page.goto('/schedules');
    await page.getByRole('region', { name: 'Scan schedules' }).getByText('Disabled').waitFor();
  });

  it('shows a scan whose target did not answer as inconclusive, with the reason and what it covered', async () => {
    const reason = `no port of ${HOST} (192.0.2.10) answered: all 1000 probes timed out or found the host unreachable (the host is down, or a firewall drops everything)`;
    const coverage = {
      hosts: [HOST, '192.0.2.10'],
      ports: [[1, 1000]],
      rules: ['port.open.tcp.*', 'service.exposed.*'],
    };
    const { rows } = await withService(db(), (tx) =>
      sql<{
        id: string;
      }>`insert into scans (tenant_id, asset_id, kind, options, status, percent, attempts, outcome, outcome_reason, coverage, started_at, finished_at)
        select tenant_id, id, 'port', '{"topPorts":1000}', 'succeeded', 100, 1, 'inconclusive', ${reason}, ${JSON.stringify(coverage)}::jsonb, now(), now()
        from assets where target = ${HOST} returning id`.execute(tx),
    );
    inconclusiveUrl = `/scans/${rows[0]!.id}`;
    await page.goto(inconclusiveUrl);
    await page.getByRole('heading', { level: 1, name: `Port scan of ${HOST}` }).waitFor();
    const progress = page.getByRole('region', { name: 'Progress' });
    await progress.getByText('Inconclusive', { exact: true }).waitFor();
    const alert = progress.getByRole('alert');
    await alert.getByText('Inconclusive: nothing was looked at').waitFor();
    await alert.getByText(reason).waitFor();
    await alert.getByText(/No finding was closed/).waitFor();
    await progress.getByText('1,000 TCP ports: 1–1000').waitFor();
    await page.goto('/scans');
    await page.getByRole('region', { name: 'Scans' }).getByText('Inconclusive', { exact: true }).waitFor();
  });

  it('has no serious accessibility violations and no sideways scrolling, on a laptop and a phone', async () => {
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 375, height: 740 },
    ]) {
      await page.setViewportSize(viewport);
      for (const [path, heading] of [
        ['/scans', 'Scans'],
        [scanUrl, `Port scan of ${HOST}`],
        [inconclusiveUrl, `Port scan of ${HOST}`],
        ['/schedules', 'Scan schedules'],
        [scheduleUrl, 'Morning edge check'],
      ] as const) {
        await page.goto(path);
        await page.getByRole('heading', { level: 1, name: heading }).waitFor();
        await page.waitForLoadState('networkidle');
        expect(await scanA11y(page), `${path} at ${viewport.width}px`).toEqual([]);
        expect(await overflow(page), `${path} at ${viewport.width}px`).toBeLessThanOrEqual(0);
      }
      await page.goto('/scans');
      await page.getByRole('button', { name: 'New scan' }).click();
      const dialog = page.getByRole('dialog', { name: 'New scan' });
      await dialog.getByLabel('Asset', { exact: true }).waitFor();
      await poll(() => dialog.evaluate((el) => getComputedStyle(el).opacity)).toBe('1');
      expect(await scanA11y(page), `new scan dialog at ${viewport.width}px`).toEqual([]);
      await page.keyboard.press('Escape');
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  }, 90_000);
});
