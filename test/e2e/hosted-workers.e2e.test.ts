// Staff → Hosted workers in the browser: a super-admin finds the page in the navigation, starts a
// hosted worker for a tenant (listed with its tenant; this test server does not run hosted
// workers, and the page says so), and creates a hosted enrollment code shown once with its
// command, without serious accessibility violations.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { STAFF_DOMAIN, uniqueEmail } from '../helpers/app.ts';
import { createAndSignIn, describeBrowser, type E2e, openE2e, scanA11y } from './harness.ts';

const RUN = Math.random().toString(36).slice(2, 8);
const TENANT = `Hosted Co ${RUN}`;

describeBrowser('staff hosted workers in the browser', () => {
  let e2e: E2e;
  let staff: Page;

  beforeAll(async () => {
    e2e = await openE2e();
    // The tenant itself is not what this page is about: a row is enough.
    await e2e.server.database.db
      .insertInto('organization')
      .values({ name: TENANT, slug: `hosted-co-${RUN}`, logo: null, createdAt: new Date(), metadata: null })
      .execute();
  }, 120_000);
  afterAll(async () => {
    await e2e?.close();
  });

  async function pickTenant(label: string) {
    await staff.getByRole('combobox', { name: label, exact: true }).click();
    await staff.getByRole('option', { name: new RegExp(`^${TENANT}`) }).click();
  }

  it('a super-admin finds the page in the navigation', async () => {
    const email = uniqueEmail('hostedstaff', STAFF_DOMAIN);
    // CSP bypass only so the test can inject axe; the app itself is unchanged.
    staff = await e2e.newPage({ bypassCSP: true });
    await createAndSignIn(e2e.server, staff, { email, role: 'super_admin', name: 'Admin' });
    await staff.getByRole('link', { name: 'Hosted workers' }).click();
    await staff.getByRole('heading', { level: 1, name: 'Hosted workers' }).waitFor();
    await expect.poll(() => staff.url()).toMatch(/\/settings\/staff\/workers$/);
    // The test server was not started with the runner (main.ts starts it when EMBEDDED_WORKER is on).
    await staff.getByText('This server does not run hosted workers').waitFor();
    await staff.mouse.move(0, 0);
    await staff.waitForLoadState('networkidle');
    expect(await scanA11y(staff), 'hosted workers page').toEqual([]);
  });

  // On a shared PostgreSQL database other files' mesh records show up as peers: PGlite only.
  it.skipIf(Boolean(process.env.DATABASE_URL))(
    'mesh health of an installation without peers says so, without empty tables or a "0 of 0" sweep',
    async () => {
      await staff.goto('/settings/mesh-health');
      await staff.getByRole('heading', { level: 1, name: 'Mesh health' }).waitFor();
      await staff.getByRole('note').getByText('No peers configured', { exact: true }).waitFor();
      expect(await staff.getByRole('table').count()).toBe(0);
      await staff.getByRole('button', { name: 'Run health sweep' }).click();
      await staff.getByText('No peers configured: there was nothing to ping.').waitFor();
      expect(await staff.getByText(/0 of 0/).count()).toBe(0);
      await staff.mouse.move(0, 0);
      expect(await scanA11y(staff), 'mesh health without peers').toEqual([]);
      await staff.goto('/settings/staff/workers');
      await staff.getByRole('heading', { level: 1, name: 'Hosted workers' }).waitFor();
    },
  );

  it('asks for a tenant, then starts a hosted worker for it', async () => {
    await staff.getByRole('button', { name: 'Start hosted worker' }).click();
    await staff.getByText('Pick a tenant.').first().waitFor();
    await pickTenant('Tenant for the new hosted worker');
    await staff.getByRole('button', { name: 'Start hosted worker' }).click();
    const row = staff.getByRole('row', { name: new RegExp(TENANT) });
    await row.getByText('hosted-1').waitFor();
    await row.getByText('Active').waitFor();
    await row.getByText('No (EMBEDDED_WORKER is off)').waitFor();
    await row.getByText('Never').waitFor();
    // The tenant's worker list has it, marked hosted.
    const res = await e2e.server.app.services.hostedWorkers.list();
    expect(res.workers.filter((w) => w.tenantName === TENANT)).toMatchObject([
      { name: 'hosted-1', embedded: true, running: false, status: 'active' },
    ]);
  });

  it('creates a hosted enrollment code, shown once with the CLI command', async () => {
    await pickTenant('Tenant for the enrollment code');
    await staff.getByRole('button', { name: 'Create code' }).click();
    const code = (await staff.getByTestId('hosted-enrollment-code').textContent())!.trim();
    expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{8}$/);
    await staff.getByText(`rampart-worker enroll --server ${e2e.server.baseUrl} --code ${code}`).waitFor();
    await staff.getByText(/Single use; expires/).waitFor();
    // The previous step's toast (shared notification styles) closes by itself after 4 s.
    await staff.getByText('Hosted worker started').waitFor({ state: 'hidden' });
    await staff.mouse.move(0, 0);
    expect(await scanA11y(staff), 'hosted workers page with a code').toEqual([]);
    // Shown once: after a reload the code is gone from the page.
    await staff.reload();
    await staff.getByRole('heading', { level: 1, name: 'Hosted workers' }).waitFor();
    expect(await staff.content()).not.toContain(code);
  });
});
