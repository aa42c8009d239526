// Findings in the browser: severity chips with counts, filters kept in the URL, sorting, the detail
// page with evidence, CWE/CVE links and history, a status change from the detail page, a bulk
// accepted-risk change from the list, the CSV export download, the SLA days in tenant settings,
// and axe scans of the list, the dialog and the detail page on a laptop and a phone.
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { withTenant } from '../../src/db/tenant.ts';
import type { NormalizedFindingInput } from '../../src/findings/index.ts';
import { uniqueEmail } from '../helpers/app.ts';
import { ingestFindings } from '../helpers/findings.ts';
import { describeBrowser, openE2e, scanA11y, signUpInBrowser, type E2e, uniqueTenantName } from './harness.ts';

const PASSWORD = 'correct horse battery staple';
const RUN = Math.random().toString(36).slice(2, 8);
const HOST = `web-${RUN}.example.com`;

/** Page updates wait on the server; on a busy machine that can take more than poll's default second. */
const POLL = { timeout: 10_000 };
const overflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

const FINDINGS: NormalizedFindingInput[] = [
  {
    ruleId: 'exposed-redis',
    title: 'Unauthenticated Redis reachable',
    severity: 'critical',
    cvss: { score: 9.8, vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H' },
    cwe: ['CWE-306'],
    cve: ['CVE-2022-0543'],
    location: { host: HOST, port: 6379 },
    evidence: { summary: 'PING answered +PONG without AUTH', response: '+PONG' },
    remediation: 'Bind Redis to localhost and require a password.',
    references: ['https://redis.io/docs/latest/operate/oss_and_stack/management/security/'],
  },
  {
    ruleId: 'sqli',
    title: 'SQL injection in search',
    severity: 'high',
    cwe: [89],
    location: { url: `https://${HOST}/search?q=1`, param: 'q' },
    evidence: { request: 'GET /search?q=1%27 HTTP/1.1' },
  },
  {
    ruleId: 'missing-hsts',
    title: 'Strict-Transport-Security header missing',
    severity: 'medium',
    location: { url: `https://${HOST}/` },
  },
  {
    ruleId: 'cookie-no-secure',
    title: 'Session cookie without Secure flag',
    severity: 'low',
    location: { url: `https://${HOST}/login` },
  },
  { ruleId: 'open-port', title: 'Open port 443/tcp', severity: 'info', location: { host: HOST, port: 443 } },
];

describeBrowser('findings in the browser', () => {
  let e2e: E2e;
  let owner: Page;

  beforeAll(async () => {
    e2e = await openE2e();
    owner = await e2e.newPage({ bypassCSP: true });
  }, 120_000);
  afterAll(() => e2e?.close());

  it('shows an empty state, then the findings a scan reported, worst first, with severity counts', async () => {
    await signUpInBrowser(owner, { name: 'Fin Dings', email: uniqueEmail('findings-e2e'), password: PASSWORD });
    await owner.getByLabel('Tenant name', { exact: true }).fill(uniqueTenantName('Findings Co'));
    await owner.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => owner.url(), POLL).toMatch(/\/home$/);
    await owner.getByRole('link', { name: 'Findings', exact: true }).first().click();
    await owner.getByText('No open findings').waitFor();

    // A scan of a registered asset reports five findings (the scans API is another module's).
    const me = (await (await owner.request.get('/api/v1/me')).json()) as {
      user: { id: string; email: string };
      activeTenantId: string;
    };
    const tenantId = me.activeTenantId;
    const { asset } = await e2e.server.app.services.assets.create(
      tenantId,
      { userId: me.user.id, email: me.user.email },
      { kind: 'host', target: HOST, name: 'Web server' },
    );
    const scanId = await withTenant(
      e2e.server.database.db,
      { tenantId },
      async (tx) =>
        (
          await tx
            .insertInto('scans')
            .values({ tenant_id: tenantId, asset_id: asset.id, kind: 'template', status: 'succeeded' })
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id,
    );
    await ingestFindings(e2e.server.app.services.findingsIngest, { scanId, findings: FINDINGS });

    await owner.reload();
    const table = owner.getByRole('region', { name: 'Findings', exact: true });
    await table.getByRole('link', { name: 'Unauthenticated Redis reachable' }).waitFor();
    const titles = await table.locator('tbody tr a[href^="/findings/"]').allTextContents();
    expect(titles).toEqual(FINDINGS.map((f) => f.title));
    const severity = owner.getByRole('group', { name: 'Severity' });
    for (const label of ['Critical · 1', 'High · 1', 'Medium · 1', 'Low · 1', 'Info · 1'])
      await severity.getByText(label).waitFor();
    await owner.getByText('5 of 5 findings shown.').waitFor();
  });

  it('filters by severity chips and search, keeps filters in the URL, and sorts', async () => {
    const table = owner.getByRole('region', { name: 'Findings', exact: true });
    const severity = owner.getByRole('group', { name: 'Severity' });
    await severity.getByText('Critical · 1').click();
    await severity.getByText('High · 1').click();
    await expect.poll(() => new URL(owner.url()).searchParams.get('severity'), POLL).toBe('critical,high');
    await owner.getByText('2 of 2 findings shown.').waitFor();
    await owner.reload();
    await owner.getByText('2 of 2 findings shown.').waitFor();
    await owner.getByRole('button', { name: 'Clear filters' }).click();
    await owner.getByText('5 of 5 findings shown.').waitFor();

    await owner.getByLabel('Search findings', { exact: true }).fill('cookie');
    await expect.poll(() => new URL(owner.url()).searchParams.get('q'), POLL).toBe('cookie');
    await owner.getByText('1 of 1 finding shown.').waitFor();
    await table.getByRole('link', { name: 'Session cookie without Secure flag' }).waitFor();
    await owner.getByLabel('Search findings', { exact: true }).fill('');
    await owner.getByText('5 of 5 findings shown.').waitFor();

    await owner.getByRole('button', { name: /^SLA due/ }).click();
    await expect.poll(() => new URL(owner.url()).searchParams.get('sort'), POLL).toBe('sla_due');
    await expect.poll(() => owner.locator('th[aria-sort="ascending"]').textContent(), POLL).toMatch(/SLA due/);
    await expect
      .poll(async () => (await table.locator('tbody tr a[href^="/findings/"]').allTextContents()).at(-1), POLL)
      .toBe('Open port 443/tcp');
    await owner.getByRole('button', { name: /^SLA due/ }).click();
    await expect.poll(() => owner.locator('th[aria-sort="descending"]').textContent(), POLL).toMatch(/SLA due/);
    await expect
      .poll(async () => (await table.locator('tbody tr a[href^="/findings/"]').allTextContents())[0], POLL)
      .toBe('Open port 443/tcp');
  });

  it('shows a finding with evidence, links and history, and marks it a false positive', async () => {
    await owner.goto('/findings');
    await owner.getByRole('link', { name: 'Unauthenticated Redis reachable' }).click();
    await owner.getByRole('heading', { level: 1, name: 'Unauthenticated Redis reachable' }).waitFor();
    await owner.getByText(`tcp://${HOST}:6379`).first().waitFor();
    expect(await owner.getByRole('link', { name: 'CWE-306' }).getAttribute('href')).toBe(
      'https://cwe.mitre.org/data/definitions/306.html',
    );
    expect(await owner.getByRole('link', { name: 'CVE-2022-0543' }).getAttribute('href')).toContain('CVE-2022-0543');
    await owner.getByText('PING answered +PONG without AUTH').waitFor();
    await owner.getByText('Bind Redis to localhost and require a password.').waitFor();
    const history = owner.getByRole('region', { name: 'History', exact: true });
    await history.getByText('Found', { exact: true }).waitFor();

    await owner.getByRole('button', { name: 'Change status' }).click();
    const dialog = owner.getByRole('dialog', { name: 'Change status' });
    await dialog.getByLabel('New status').selectOption({ label: 'False positive' });
    await dialog.getByRole('button', { name: 'Save status' }).click();
    await dialog.getByText('Reason is required').waitFor();
    await dialog.getByLabel('Reason').fill('Redis here is a lab honeypot with no data');
    await dialog.getByRole('button', { name: 'Save status' }).click();
    await dialog.waitFor({ state: 'detached' });
    await owner.getByRole('group', { name: 'Status' }).getByText('False positive').waitFor();
    await history.getByText('Status changed → False positive').waitFor();
    await history.getByText('Redis here is a lab honeypot with no data').waitFor();
  });

  it('accepts a risk for several findings at once from the list', async () => {
    await owner.goto('/findings');
    const table = owner.getByRole('region', { name: 'Findings', exact: true });
    await owner.getByText('4 of 4 findings shown.').waitFor(); // the false positive is no longer open
    await table.getByRole('checkbox', { name: 'Select SQL injection in search' }).check();
    await table.getByRole('checkbox', { name: 'Select Strict-Transport-Security header missing' }).check();
    await owner.getByText('2 findings selected').waitFor();
    await owner.getByRole('button', { name: 'Change status…' }).click();
    const dialog = owner.getByRole('dialog', { name: 'Change status of 2 findings' });
    await dialog.getByLabel('New status').selectOption({ label: 'Accepted risk' });
    await dialog.getByLabel('Reason').fill('Behind the office VPN until the rewrite ships');
    await dialog.getByLabel('Accepted until').waitFor();
    await dialog.getByRole('button', { name: 'Save status' }).click();
    await dialog.waitFor({ state: 'detached' });
    await owner.getByText('2 of 2 findings shown.').waitFor();
    await owner.getByLabel('Status', { exact: true }).selectOption({ label: 'Accepted risk' });
    await owner.getByText('2 of 2 findings shown.').waitFor();
    await table
      .getByText(/^until /)
      .first()
      .waitFor();
    await owner.getByLabel('Status', { exact: true }).selectOption({ label: 'Any status' });
    await owner.getByText('5 of 5 findings shown.').waitFor();
  });

  it('downloads a CSV export of the current filters', async () => {
    await owner.goto('/findings?status=all&severity=critical,high');
    await owner.getByText('2 of 2 findings shown.').waitFor();
    await owner.getByRole('button', { name: 'Export' }).click();
    const csv = owner.getByRole('menuitem', { name: 'CSV (spreadsheet)' });
    expect(await csv.getAttribute('href')).toMatch(/\/findings\/export\?format=csv&severity=critical%2Chigh/);
    const [download] = await Promise.all([owner.waitForEvent('download'), csv.click()]);
    expect(download.suggestedFilename()).toMatch(/^rampart-findings-\d{8}-\d{6}\.csv$/);
    const text = readFileSync((await download.path())!, 'utf8');
    const lines = text.trim().split('\n');
    expect(lines[0]!.startsWith('ID,Severity,Status,Title')).toBe(true);
    expect(lines).toHaveLength(3);
    expect(text).toContain('Unauthenticated Redis reachable');
    expect(text).not.toContain('Open port 443/tcp');
  });

  it('sets the SLA days per severity in tenant settings', async () => {
    await owner.goto('/settings/tenant');
    const critical = owner
      .getByRole('group', { name: 'Finding SLA (days to fix)' })
      .getByLabel('Critical', { exact: true });
    await expect.poll(() => critical.inputValue(), POLL).toBe('7 days');
    await critical.fill('3');
    await owner.getByRole('button', { name: 'Save settings' }).click();
    await owner.getByText('Settings saved.').waitFor();
    await owner.reload();
    await expect
      .poll(
        () =>
          owner
            .getByRole('group', { name: 'Finding SLA (days to fix)' })
            .getByLabel('Critical', { exact: true })
            .inputValue(),
        POLL,
      )
      .toBe('3 days');
  });

  it('passes axe checks without horizontal scrolling on a laptop and a phone', async () => {
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 375, height: 740 },
    ]) {
      await owner.setViewportSize(viewport);
      await owner.goto('/findings?status=all');
      await owner.getByText('5 of 5 findings shown.').waitFor();
      expect(await scanA11y(owner), `list at ${viewport.width}px`).toEqual([]);
      expect(await overflow(owner), `list at ${viewport.width}px`).toBeLessThanOrEqual(0);
      await owner
        .getByRole('region', { name: 'Findings', exact: true })
        .getByRole('checkbox', { name: 'Select Open port 443/tcp' })
        .check();
      await owner.getByRole('button', { name: 'Change status…' }).click();
      await owner.getByRole('dialog', { name: 'Change status' }).waitFor();
      // Scan once the opening transition is over: mid-fade colours are not what users read.
      await owner.waitForFunction(() =>
        [...document.querySelectorAll('.mantine-Modal-content, .mantine-Modal-overlay')].every(
          (e) => getComputedStyle(e).opacity === '1',
        ),
      );
      expect(await scanA11y(owner), `status dialog at ${viewport.width}px`).toEqual([]);
      await owner.getByRole('button', { name: 'Cancel' }).click();
      await owner.getByRole('link', { name: 'SQL injection in search' }).click();
      await owner.getByRole('heading', { level: 1, name: 'SQL injection in search' }).waitFor();
      expect(await scanA11y(owner), `detail at ${viewport.width}px`).toEqual([]);
      expect(await overflow(owner), `detail at ${viewport.width}px`).toBeLessThanOrEqual(0);
    }
    await owner.setViewportSize({ width: 1280, height: 800 });
  }, 60_000);
});
