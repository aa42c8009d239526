// Automated accessibility scan (axe-core, WCAG 2.1 A and AA rules) of every page the web router
// defines: signed out, then as a super-admin (so the staff area opens) in a tenant with realistic
// data (assets proven and not, an imported report with findings, a queued scan, a schedule, a CMMC
// profile), on a laptop and a phone, CMMC tabs included. Serious and critical violations fail.
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { STAFF_DOMAIN, uniqueEmail } from '../helpers/app.ts';
import { cage } from '../helpers/cmmc-program.ts';
import { fixturePath } from '../../src/workers/importers/test-helpers.ts';
import {
  createAndSignIn,
  describeBrowser,
  openE2e,
  scanA11y,
  signUpInBrowser,
  type E2e,
  uniqueTenantName,
} from './harness.ts';

const SIGNED_OUT = [
  '/sign-in',
  '/sign-up',
  '/forgot-password',
  '/reset-password?token=x',
  '/setup?token=x',
  '/verify-script',
  '/accept-invitation/00000000-0000-4000-8000-000000000000',
];

describeBrowser('accessibility', () => {
  let e2e: E2e;
  let page: Page;

  beforeAll(async () => {
    e2e = await openE2e();
    // The report-ingestion runner main.ts starts in the background (imports need it).
    e2e.server.app.services.ingestion.start();
    // CSP bypass only so the test can inject axe; the app itself is unchanged.
    page = await e2e.newPage({ bypassCSP: true });
  }, 120_000);
  afterAll(() => e2e?.close());

  /** Opens a page, waits for its heading and data, and returns its serious violations. */
  async function scanPath(path: string): Promise<string[]> {
    await page.goto(path);
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    await page.waitForLoadState('networkidle');
    await page.mouse.move(0, 0);
    return scanA11y(page);
  }

  it('has no serious violations on the signed-out pages', async () => {
    for (const path of SIGNED_OUT) {
      await page.goto(path);
      await page.getByRole('heading').first().waitFor();
      await page.waitForLoadState('networkidle');
      expect(await scanA11y(page), path).toEqual([]);
    }
  });

  it('has no serious violations on the first-tenant page', async () => {
    const newcomer = await e2e.newPage({ bypassCSP: true });
    await signUpInBrowser(newcomer, {
      name: 'Ally Bright',
      email: uniqueEmail('a11y'),
      password: 'correct horse battery staple',
    });
    await newcomer.getByLabel('Tenant name', { exact: true }).waitFor();
    expect(await scanA11y(newcomer), 'first tenant').toEqual([]);
    await newcomer.getByLabel('Tenant name', { exact: true }).fill(uniqueTenantName('Access Co'));
    await newcomer.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => newcomer.url()).toMatch(/\/home$/);
    // The home page of an empty tenant: what to do first.
    await newcomer.getByText('Start by adding an asset').waitFor();
    expect(await scanA11y(newcomer), 'empty home').toEqual([]);
    await newcomer.context().close();
  });

  it('has no serious violations on any signed-in page, on a laptop and a phone', async () => {
    await createAndSignIn(e2e.server, page, { email: uniqueEmail('a11y-root', STAFF_DOMAIN), role: 'super_admin' });
    await page.getByLabel('Tenant name', { exact: true }).fill(uniqueTenantName('Access Co'));
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => page.url()).toMatch(/\/home$/);

    // Realistic data, through the API the web app uses.
    // The URL may read /home before the new tenant is the active one.
    const readMe = async () =>
      (await (await page.request.get('/api/v1/me')).json()) as { activeTenantId: string | null; csrfToken: string };
    await expect.poll(async () => (await readMe()).activeTenantId).toBeTruthy();
    const me = await readMe();
    const base = `/api/v1/tenants/${me.activeTenantId}`;
    const call = async (method: 'post' | 'put', path: string, data: unknown) => {
      const res = await page.request[method](path.startsWith('/api/') ? path : `${base}${path}`, {
        data,
        headers: { 'x-csrf-token': me.csrfToken },
      });
      expect(res.status(), `${path}: ${await res.text()}`).toBeLessThan(300);
      return (await res.json()) as Record<string, { id: string }>;
    };
    const host = 'a11y.example.test';
    const proven = (await call('post', '/assets', { kind: 'host', target: host })).asset!.id;
    await call('post', `/api/v1/staff/assets/${proven}/bypass`, { reason: 'Lab host for the accessibility test' });
    await call('post', '/assets', { kind: 'domain', target: 'pending-a11y.example.test' });
    // An imported report: findings, the import's result page and its scan.
    await page.goto('/imports');
    await page.getByLabel('Asset', { exact: true }).selectOption({ label: host });
    const report = readFileSync(fixturePath('nuclei-results.jsonl'), 'utf8')
      .replaceAll('shop.example.com', host)
      .replaceAll('legacy.example.com', host);
    await page
      .locator('input[type="file"]')
      .setInputFiles({ name: 'nuclei-results.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(report) });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page
      .getByRole('region', { name: 'Importing nuclei-results.jsonl' })
      .getByText(/^Done: \d+ findings/)
      .waitFor({ timeout: 30_000 });
    const imports = (await (await page.request.get(`${base}/imports`)).json()) as { imports: { id: string }[] };
    const importId = imports.imports[0]!.id;
    const scan = (await call('post', '/scans', { assetId: proven, kind: 'port' })).scan!.id;
    const schedule = (
      await call('post', '/scan-schedules', { assetId: proven, kind: 'port', name: 'Nightly ports', cron: '0 2 * * *' })
    ).schedule!.id;
    await call('put', '/cmmc/profile', {
      cageCode: cage(),
      companyName: 'Access Machining LLC',
      biddingUsers: [{ name: 'Ally Bright', email: 'ally@access.test' }],
      mailPlatform: 'm365',
      affirmingOfficial: { name: 'Ally Bright', title: 'President', email: 'ally@access.test' },
      scopeDescription: 'Office network and 2 laptops',
    });
    const findings = (await (await page.request.get(`${base}/findings`)).json()) as { findings: { id: string }[] };
    const findingId = findings.findings[0]!.id;

    // The home page shows what the tenant has, each card linking to its filtered list.
    await page.goto('/home');
    const findingsCard = page.getByRole('region', { name: 'Open findings' });
    await findingsCard.getByText(/^Last 30 days: \d+ opened, 0 fixed\.$/).waitFor();
    await findingsCard.locator('a[data-severity="high"]').click();
    await expect.poll(() => new URL(page.url()).searchParams.get('severity')).toBe('high');
    await page.goto('/home');
    const scansCard = page.getByRole('region', { name: 'Scans under way' });
    await scansCard.getByText('0 running, 1 queued').waitFor();
    // The queued scan says why it waits: this tenant has no worker (nor, in tests, a signing secret).
    await scansCard.getByText(/no (webhook signing secret|worker)/).waitFor();
    await scansCard.getByRole('link', { name: `Port scan of ${host}` }).waitFor();
    const assetsCard = page.getByRole('region', { name: 'Assets awaiting proof' });
    await assetsCard.getByRole('link', { name: 'pending-a11y.example.test' }).waitFor();
    await page.getByRole('region', { name: 'CMMC Level 1' }).getByText('In progress').waitFor();

    const paths = [
      '/home',
      '/assets',
      `/assets/${proven}`,
      '/scans',
      `/scans/${scan}`,
      '/schedules',
      `/schedules/${schedule}`,
      '/scan-templates',
      '/findings',
      `/findings/${findingId}`,
      '/compliance',
      '/compliance/iso27001',
      '/compliance/iso27001/A.8.24',
      '/cmmc',
      '/cmmc/start?token=x',
      '/workers',
      '/imports',
      `/imports/${importId}`,
      '/explain-results',
      '/account',
      '/settings/members',
      '/settings/tenant',
      '/settings/audit-log',
      '/settings/storage',
      '/settings/staff/audit-log',
      '/settings/staff/tenants',
      '/settings/staff/roles',
      '/settings/staff/workers',
      '/settings/staff/language-model',
      '/settings/staff/mesh-outbox',
      '/settings/staff/mailbox',
      '/settings/staff/mesh',
      '/settings/mesh-health',
      '/settings/mesh',
      '/settings/mesh-ask',
      '/settings/cmmc',
    ];
    // Every path the router defines is among the pages scanned here (or the signed-out ones): a
    // new page fails this test until it is added above.
    const visited = [...SIGNED_OUT, ...paths].map((p) => p.split('?')[0]!);
    const router = readFileSync(new URL('../../src/web/router.tsx', import.meta.url), 'utf8');
    for (const [, path] of router.matchAll(/path: '([^']+)'/g)) {
      if (path === '/') continue;
      const pattern = new RegExp(path!.replace(/\$[A-Za-z]+/g, '[^/]+').replace(/[.]/g, '\\.') + '(/|$)');
      expect(
        visited.some((v) => pattern.test(v)),
        `router path ${path} is scanned`,
      ).toBe(true);
    }

    // Every page's violations are collected first, so one run reports them all.
    const problems: Record<string, string[]> = {};
    const record = (label: string, found: string[]) => {
      if (found.length > 0) problems[label] = found;
    };
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 375, height: 740 },
    ]) {
      await page.setViewportSize(viewport);
      for (const path of paths) record(`${path} at ${viewport.width}px`, await scanPath(path));
      // CMMC's steps are tabs of one page.
      await scanPath('/cmmc');
      for (const tab of ['Scope', 'Device check', 'Attestations', 'Policies', 'Evidence review', 'Score & SPRS']) {
        await page.getByRole('tab', { name: tab }).click();
        await page.waitForLoadState('networkidle');
        await page.getByRole('tabpanel').first().waitFor();
        record(`CMMC ${tab} at ${viewport.width}px`, await scanA11y(page));
        // Headings go down one level at a time (axe's heading-order is only "moderate").
        const levels = await page
          .locator('h1, h2, h3, h4, h5, h6')
          .evaluateAll((hs) => hs.filter((h) => h.getClientRects().length > 0).map((h) => Number(h.tagName[1])));
        const skip = levels.findIndex((l, i) => i > 0 && l > levels[i - 1]! + 1);
        if (skip > 0)
          record(`CMMC ${tab} headings at ${viewport.width}px`, [`h${levels[skip - 1]} then h${levels[skip]}`]);
      }
    }
    expect(problems).toEqual({});
  }, 600_000);

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
