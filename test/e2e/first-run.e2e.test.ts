// A newcomer's first run, as the README's tour describes it: `npm start` on an empty data directory
// with its defaults (embedded database, the hosted worker in the server process, no SMTP), then the
// web app only: the first account, the one-time setup link from the sign-in page, a tenant, host
// 127.0.0.1 with an administrator's bypass, a port scan of the server's own port, its findings.
// No CLI call, no restart. Always on the embedded database: it is what `npm start` runs.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort, msUntilHealthy } from '../../bench/lib.ts';
import { describeBrowser, launchChromium } from './harness.ts';

const ROOT = join(import.meta.dirname, '../..');
const poll = expect.poll;

describeBrowser('first run: npm start on an empty data directory, then the web app only', () => {
  let dataDir: string;
  let server: ChildProcess;
  let port: number;
  let browser: Browser;
  let page: Page;
  let output = '';

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rampart-first-run-'));
    port = await freePort();
    // What a newcomer's shell has: no Rampart settings but the port (the suite's own servers use
    // the usual one). A process group of its own, so npm's children stop with it.
    server = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    server.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    server.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    await msUntilHealthy(port, performance.now(), 150_000);
    browser = await launchChromium();
    page = await browser.newPage({ baseURL: `http://localhost:${port}` });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    if (server?.pid) {
      try {
        process.kill(-server.pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
      await new Promise((r) => setTimeout(r, 500));
      try {
        process.kill(-server.pid, 'SIGKILL');
      } catch {
        /* stopped */
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('leads to a finished scan and its findings', { timeout: 240_000 }, async () => {
    // The terminal shows the one-time link; the sign-in page on this machine shows it too.
    expect(output).toMatch(/First run: create your account, then open this one-time link/);
    await page.goto('/sign-in');
    await page.getByText('This installation has no administrator yet').waitFor();
    await page.getByRole('link', { name: 'Open the setup link' }).click();
    await page.getByRole('heading', { name: 'Set up this installation' }).waitFor();
    await page.getByRole('link', { name: 'Create the first account' }).click();

    await page.getByLabel('Name', { exact: true }).fill('Ada Owner');
    await page.getByLabel('Email', { exact: true }).fill('ada@first-run.example');
    await page.getByLabel('Password', { exact: true }).fill('first run passphrase 1');
    await page.getByRole('button', { name: 'Create account' }).click();
    // Back on the setup page, signed in.
    await page.getByText(/You are signed in as/).waitFor();
    await page.getByRole('button', { name: 'Become administrator' }).click();

    await page.getByLabel('Tenant name', { exact: true }).fill('First Run Co');
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await page.getByRole('link', { name: 'Assets', exact: true }).first().click();
    await page.getByText('No assets yet').waitFor();
    await page.getByRole('button', { name: 'Add asset', exact: true }).click();
    const add = page.getByRole('dialog', { name: 'Add asset' });
    await add.getByLabel('Kind', { exact: true }).selectOption({ label: 'Host' });
    await add.getByLabel('Target', { exact: true }).fill('127.0.0.1');
    await add.getByRole('button', { name: 'Add asset', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: '127.0.0.1' }).waitFor();

    // The administrator vouches for the lab host instead of proving it.
    await page.getByRole('button', { name: 'Bypass verification' }).click();
    const bypass = page.getByRole('dialog', { name: 'Bypass verification' });
    await bypass.getByLabel('Reason', { exact: true }).fill('This machine: first-run tour of the README');
    await bypass.getByRole('button', { name: 'Bypass verification' }).click();
    await bypass.waitFor({ state: 'hidden' });
    await page.getByRole('group', { name: 'Status' }).getByText('Bypassed by admin').waitFor();

    await page.getByRole('link', { name: 'Scans', exact: true }).first().click();
    await page.getByRole('heading', { level: 1, name: 'Scans' }).waitFor();
    await page.getByRole('button', { name: 'New scan' }).click();
    const dialog = page.getByRole('dialog', { name: 'New scan' });
    await dialog.getByLabel('Asset', { exact: true }).selectOption({ label: '127.0.0.1' });
    await dialog.getByLabel('Ports', { exact: true }).selectOption({ label: 'A range of ports' });
    await dialog.getByLabel('First port', { exact: true }).fill(String(port));
    await dialog.getByLabel('Last port', { exact: true }).fill(String(port));
    await dialog.getByRole('button', { name: 'Queue scan' }).click();
    await page.getByRole('heading', { level: 1, name: 'Port scan of 127.0.0.1' }).waitFor();

    // The hosted worker in the server process takes it; the page follows it to the end by itself.
    await page.getByText('Succeeded', { exact: true }).first().waitFor({ timeout: 120_000 });
    await page.getByRole('link', { name: 'Findings of this scan', exact: true }).click();
    await page.getByText('Only findings reported by').waitFor();
    await poll(() => page.getByText(new RegExp(`\\b${port}\\b`)).count(), { timeout: 30_000 }).toBeGreaterThan(0);
  });
});
