// Scan templates in the browser: the empty state, uploading a template from a .yaml file, seeing
// it listed next to the built-in ones, viewing and replacing its YAML, a pasted invalid template refused with
// the exact place of each problem, a template uploaded with its payload file (refused without it,
// naming the file), and deleting after a confirmation; axe scans on the way.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { uniqueEmail } from '../helpers/app.ts';
import { describeBrowser, openE2e, scanA11y, signUpInBrowser, type E2e } from './harness.ts';

const template = (id: string, regex: string) => `id: ${id}
info:
  name: Exposed backup config
  author: e2e
  severity: high
  tags: backup,config
http:
  - method: GET
    path:
      - "{{BaseURL}}/config.bak"
    matchers-condition: and
    matchers:
      - type: status
        status: [200]
      - type: regex
        regex:
          - '${regex}'
`;

describeBrowser('scan templates in the browser', () => {
  let e2e: E2e;
  let page: Page;

  beforeAll(async () => {
    e2e = await openE2e();
    page = await e2e.newPage({ bypassCSP: true });
  }, 120_000);
  afterAll(async () => {
    await e2e?.close();
  });

  /** No hover, no requests in flight, no transition running (a dialog fading in has washed-out colours). */
  const calm = async () => {
    await page.mouse.move(0, 0);
    await page.waitForLoadState('networkidle');
    await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== 'running'));
  };

  // Many browser steps (upload, payload files, replace, refusals, delete): more than the default 30 s when busy.
  it(
    'uploads a template file, lists it, shows and replaces its YAML, refuses an invalid one by path, and deletes',
    { timeout: 90_000 },
    async () => {
      await signUpInBrowser(page, {
        name: 'Tess Templates',
        email: uniqueEmail('templates-e2e'),
        password: 'correct horse battery staple',
      });
      // Unique: tenant slugs are global, and a PostgreSQL database is shared by runs.
      await page
        .getByLabel('Tenant name', { exact: true })
        .fill(`Template Co ${Math.random().toString(36).slice(2, 8)}`);
      await page.getByRole('button', { name: 'Create tenant' }).click();
      await expect.poll(() => page.url()).toMatch(/\/home$/);

      await page.getByRole('link', { name: 'Scan templates', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Scan templates' }).waitFor();
      await page.getByText('No templates of your own yet').waitFor();
      const builtin = page.getByRole('region', { name: 'Built-in templates' });
      await builtin.getByText('rampart-ds-store').waitFor();
      await calm();
      expect(await scanA11y(page), 'templates page, empty').toEqual([]);

      // Upload from a file: its text lands in the box, then the server validates and stores it.
      await page.getByRole('button', { name: 'Upload template', exact: true }).click();
      const dialog = page.getByRole('dialog', { name: 'Upload template' });
      await dialog
        .locator('input[type="file"]')
        .first()
        .setInputFiles({
          name: 'backup-config.yaml',
          mimeType: 'application/yaml',
          buffer: Buffer.from(template('acme-backup-config', 'DB_PASSWORD=\\S+')),
        });
      await expect.poll(() => dialog.getByLabel('Template YAML').inputValue()).toContain('id: acme-backup-config');
      await calm();
      expect(await scanA11y(page), 'upload dialog with a file').toEqual([]);
      await dialog.getByRole('button', { name: 'Upload template', exact: true }).click();
      await dialog.waitFor({ state: 'hidden' });
      const row = page.getByRole('row', { name: /acme-backup-config/ });
      await row.getByText('Exposed backup config').waitFor();
      await row.getByText('High').waitFor();
      await row.getByText('backup', { exact: true }).waitFor();
      await calm();
      expect(await scanA11y(page), 'templates page, one template').toEqual([]);

      await row.getByRole('button', { name: 'View acme-backup-config' }).click();
      const view = page.getByRole('dialog', { name: 'Template acme-backup-config' });
      await view.getByText('DB_PASSWORD=').waitFor();
      await view.getByRole('button', { name: 'Close template' }).click();
      await view.waitFor({ state: 'hidden' });

      // Replace: the current YAML is the starting point; the new severity shows in the list.
      await row.getByRole('button', { name: 'Replace acme-backup-config' }).click();
      const replace = page.getByRole('dialog', { name: 'Replace acme-backup-config' });
      const box = replace.getByLabel('Template YAML');
      await expect.poll(() => box.inputValue()).toContain('id: acme-backup-config');
      await box.fill((await box.inputValue()).replace('severity: high', 'severity: critical'));
      await replace.getByRole('button', { name: 'Replace template' }).click();
      await replace.waitFor({ state: 'hidden' });
      await row.getByText('Critical').waitFor();

      // A pasted template with a lookahead regex: refused, the matcher named.
      await page.getByRole('button', { name: 'Upload template', exact: true }).click();
      await dialog.getByLabel('Template YAML').fill(template('acme-lookahead', 'password(?=:)'));
      await dialog.getByRole('button', { name: 'Upload template', exact: true }).click();
      const problems = dialog.getByRole('alert');
      await problems.getByText('The template has a problem').waitFor();
      await problems.getByText('http[0].matchers[1].regex[0]', { exact: true }).waitFor();
      await problems.getByText(/lookahead/).waitFor();
      await calm();
      expect(await scanA11y(page), 'upload dialog with problems').toEqual([]);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'hidden' });
      expect(await page.getByRole('row', { name: /acme-lookahead/ }).count()).toBe(0);

      // A template naming a payload file: refused without it (the file named), stored with it.
      const withFile = `id: acme-users
info: {name: Default users, author: e2e, severity: low}
http:
  - path: ["{{BaseURL}}/login?u={{user}}"]
    payloads:
      user: helpers/wordlists/users.txt
    matchers: [{type: word, words: [WELCOME]}]
`;
      await page.getByRole('button', { name: 'Upload template', exact: true }).click();
      await dialog.getByLabel('Template YAML').fill(withFile);
      await dialog.getByRole('button', { name: 'Upload template', exact: true }).click();
      await problems.getByText('http[0].payloads.user', { exact: true }).waitFor();
      await problems.getByText(/payload file "helpers\/wordlists\/users\.txt" was not uploaded/).waitFor();
      await dialog
        .locator('input[type="file"]')
        .nth(1)
        .setInputFiles({
          name: 'users.txt',
          mimeType: 'text/plain',
          buffer: Buffer.from('admin\nroot\n'),
        });
      await calm();
      expect(await scanA11y(page), 'upload dialog with a payload file').toEqual([]);
      await dialog.getByRole('button', { name: 'Upload template', exact: true }).click();
      await dialog.waitFor({ state: 'hidden' });
      await page
        .getByRole('row', { name: /acme-users/ })
        .getByText('Default users')
        .waitFor();

      // Delete, confirmed.
      await row.getByRole('button', { name: 'Delete acme-backup-config' }).click();
      const confirm = page.getByRole('dialog', { name: 'Delete template?' });
      await confirm.getByRole('button', { name: 'Delete template' }).click();
      await confirm.waitFor({ state: 'hidden' });
      await page
        .getByRole('row', { name: /acme-users/ })
        .getByRole('button', { name: 'Delete acme-users' })
        .click();
      await confirm.getByRole('button', { name: 'Delete template' }).click();
      await page.getByText('No templates of your own yet').waitFor();
    },
  );
});
