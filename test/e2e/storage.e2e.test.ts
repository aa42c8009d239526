// Settings → Storage in the browser against a real S3-compatible server on loopback: a failed and
// a working connection test, saving (the secret never comes back to the page), an image archive
// uploaded through "Add asset" landing in the bucket, and switching back to built-in storage.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { uniqueEmail } from '../helpers/app.ts';
import { startS3Server, type TestS3Server } from '../helpers/s3-server.ts';
import { describeBrowser, openE2e, scanA11y, signUpInBrowser, type E2e } from './harness.ts';

describeBrowser('storage settings in the browser', () => {
  let e2e: E2e;
  let s3: TestS3Server;
  let page: Page;
  let work: string;

  beforeAll(async () => {
    s3 = await startS3Server();
    e2e = await openE2e();
    page = await e2e.newPage({ bypassCSP: true });
    work = mkdtempSync(join(tmpdir(), 'rampart-e2e-archive-'));
  }, 120_000);
  afterAll(async () => {
    await e2e?.close();
    await s3?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const fill = async (label: string, value: string) => page.getByLabel(label, { exact: true }).fill(value);

  it('connects a bucket after a failed test, and never shows the secret again', async () => {
    await signUpInBrowser(page, {
      name: 'Sam Storage',
      email: uniqueEmail('storage-e2e'),
      password: 'correct horse battery staple',
    });
    await page.getByLabel('Tenant name', { exact: true }).fill('Bucket Co');
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => page.url()).toMatch(/\/home$/);
    await page.getByRole('link', { name: 'Storage', exact: true }).click();
    await expect.poll(() => page.url()).toMatch(/\/settings\/storage$/);
    await page.getByText('Built-in', { exact: true }).waitFor();
    // Off the link just clicked: a hovered item is not what the page looks like.
    await page.mouse.move(0, 0);
    await page.waitForLoadState('networkidle');
    expect(await scanA11y(page), 'storage page, built-in').toEqual([]);

    await fill('Endpoint', s3.endpoint);
    await fill('Region', s3.region);
    await fill('Bucket', s3.bucket);
    await fill('Key prefix', 'e2e');
    await fill('Access key id', s3.accessKeyId);
    await fill('Secret access key', 'not-the-right-secret');
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.getByText('Connection failed').waitFor();
    await page.getByText('Code: storage_auth_failed').waitFor();

    await fill('Secret access key', s3.secretAccessKey);
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.getByText('Connection works').waitFor();
    await page.getByRole('button', { name: 'Save bucket settings' }).click();
    await page.getByText('Your bucket', { exact: true }).waitFor();

    await page.reload();
    await page.getByText('Your bucket', { exact: true }).waitFor();
    expect(await page.getByLabel('Secret access key', { exact: true }).inputValue()).toBe('');
    await page.getByText('Set. Leave empty to keep it. It is stored encrypted and never shown again.').waitFor();
    expect(await page.content()).not.toContain(s3.secretAccessKey);
    expect(await scanA11y(page), 'storage page, bucket').toEqual([]);
  });

  it('uploads an image archive into the bucket from "Add asset"', async () => {
    const dir = join(work, 'image');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'manifest.json'), '[{"Config":"config.json","RepoTags":["acme/app:1"],"Layers":[]}]');
    writeFileSync(join(dir, 'config.json'), '{}');
    const archive = join(work, 'acme-app.tar');
    execFileSync('tar', ['-cf', archive, '-C', dir, '.']);

    await page.goto('/assets');
    await page.getByRole('button', { name: 'Add asset', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Add asset' });
    await dialog.getByLabel('Kind', { exact: true }).selectOption({ label: 'Container image' });
    await dialog.getByText('Upload archive', { exact: true }).click();
    const chooser = page.waitForEvent('filechooser');
    await dialog.getByRole('button', { name: /Image archive/ }).click();
    await (await chooser).setFiles(archive);
    await dialog.getByRole('button', { name: 'Upload and add' }).click();
    await expect.poll(() => page.url()).toMatch(/\/assets\/[0-9a-f-]{36}$/);
    await page.getByRole('heading', { name: 'Image archive' }).waitFor();
    await page.getByText('Verified by upload').waitFor();
    expect(s3.objectKeys().some((k) => k.startsWith('e2e/assets/'))).toBe(true);
    await page.mouse.move(0, 0);
    await page.waitForLoadState('networkidle');
    expect(await scanA11y(page), 'archive asset page').toEqual([]);
  });

  it('switches back to built-in storage', async () => {
    await page.goto('/settings/storage');
    await page.getByRole('button', { name: 'Switch back to built-in storage' }).click();
    const confirm = page.getByRole('dialog', { name: 'Switch back to built-in storage?' });
    await confirm.getByRole('button', { name: 'Switch back' }).click();
    await page.getByText('Built-in', { exact: true }).waitFor();
    expect(await page.getByLabel('Bucket', { exact: true }).inputValue()).toBe('');
  });
});
