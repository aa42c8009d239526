// Workers in the browser: enroll a worker with a code shown once (the worker itself enrolls over
// HTTP), generate the webhook signing secret, a signed heartbeat showing up as "last seen", and
// revoking the worker after a confirmation.
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { signBody } from '../../src/lib/worker-wire.ts';
import { uniqueEmail } from '../helpers/app.ts';
import { describeBrowser, openE2e, scanA11y, signUpInBrowser, type E2e } from './harness.ts';

describeBrowser('workers in the browser', () => {
  let e2e: E2e;
  let page: Page;
  let token: string;

  beforeAll(async () => {
    e2e = await openE2e();
    page = await e2e.newPage({ bypassCSP: true });
  }, 120_000);
  afterAll(async () => {
    await e2e?.close();
  });

  const post = (path: string, raw: string, headers: Record<string, string> = {}) =>
    fetch(`${e2e.server.baseUrl}${path}`, {
      method: 'POST',
      body: raw,
      headers: { 'content-type': 'application/json', ...headers },
    });

  it('enrolls a worker with a one-time code', async () => {
    await signUpInBrowser(page, {
      name: 'Wendy Worker',
      email: uniqueEmail('workers-e2e'),
      password: 'correct horse battery staple',
    });
    await page.getByLabel('Tenant name', { exact: true }).fill('Worker Co');
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => page.url()).toMatch(/\/home$/);
    await page.getByRole('link', { name: 'Workers', exact: true }).click();
    await expect.poll(() => page.url()).toMatch(/\/workers$/);
    await page.getByText('No workers yet. Enroll one with a one-time code.').waitFor();
    await page.mouse.move(0, 0);
    await page.waitForLoadState('networkidle');
    expect(await scanA11y(page), 'workers page, empty').toEqual([]);

    await page.getByRole('button', { name: 'Enroll a worker' }).click();
    const dialog = page.getByRole('dialog', { name: 'Enroll a worker' });
    await dialog.getByRole('button', { name: 'Create code' }).click();
    const code = (await dialog.getByTestId('enrollment-code').textContent())!.trim();
    expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{8}$/);
    await dialog.getByText(`rampart-worker enroll --server ${e2e.server.baseUrl} --code ${code}`).waitFor();
    await dialog.getByText(/Expires in 1[45]:\d\d/).waitFor();
    expect(await scanA11y(page), 'enroll dialog').toEqual([]);

    const res = await post(
      '/api/public/worker/v1/enroll',
      JSON.stringify({ code, name: 'build-box', platform: 'linux/amd64', version: '2.0.0' }),
    );
    expect(res.status).toBe(201);
    token = ((await res.json()) as { token: string }).token;
    await dialog.getByRole('button', { name: 'Done' }).click();
    const row = page.getByRole('row', { name: /build-box/ });
    await row.getByText('Active').waitFor();
    await row.getByText('Never').waitFor();
    await row.getByText('2.0.0').waitFor();
  });

  it('generates the signing secret once, and a signed heartbeat shows as last seen', async () => {
    await page.getByRole('button', { name: 'Generate secret' }).click();
    const secret = (await page.getByTestId('webhook-secret').textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    const raw = JSON.stringify({
      sentAt: new Date().toISOString(),
      nonce: randomBytes(16).toString('base64url'),
      version: '2.0.1',
    });
    const beat = await post('/api/public/worker/v1/heartbeat', raw, {
      authorization: `Bearer ${token}`,
      'x-rampart-signature': signBody(secret, raw),
    });
    expect(beat.status).toBe(200);
    await page.reload();
    await page.getByText('Configured', { exact: true }).waitFor();
    expect(await page.content()).not.toContain(secret);
    const row = page.getByRole('row', { name: /build-box/ });
    await row.getByText(/now|seconds? ago/).waitFor();
    await row.getByText('2.0.1').waitFor();
    await page.waitForLoadState('networkidle');
    expect(await scanA11y(page), 'workers page, one worker').toEqual([]);
  });

  it('revokes a worker after confirmation', async () => {
    await page.getByRole('button', { name: 'Revoke build-box' }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke this worker?' });
    await confirm.getByRole('button', { name: 'Revoke' }).click();
    await page
      .getByRole('row', { name: /build-box/ })
      .getByText('Revoked')
      .waitFor();
    const raw = JSON.stringify({ sentAt: new Date().toISOString(), nonce: randomBytes(16).toString('base64url') });
    const beat = await post('/api/public/worker/v1/heartbeat', raw, {
      authorization: `Bearer ${token}`,
      'x-rampart-signature': 'sha256=' + '0'.repeat(64),
    });
    expect(beat.status).toBe(401);
  });
});
