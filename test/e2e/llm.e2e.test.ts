// The language-model helpers in the browser, with a local OpenAI-compatible model server. The
// result-file explainer: the answer streams in piece by piece, Stop closes the connection (the
// model request is aborted, nothing is saved), a complete answer lands in the private history,
// can be viewed and deleted, a busy model or exhausted credits are friendly messages above the
// offline analysis; the Findings and Import results pages lead to the explainer. On the CMMC
// page: the evidence review (Word refused in the browser, a scan reported, an invalid model answer
// replaced by the offline analysis, Stop aborting the model request) and the device-check
// explainer (streamed with Stop).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../../bench/lib.ts';
import { ensureWebBuilt } from '../../scripts/build-web.ts';
import { loadConfig } from '../../src/lib/config.ts';
import { buildApp, type App } from '../../src/server/app.ts';
import { fixturePath } from '../../src/workers/importers/test-helpers.ts';
import { openTestDatabase, STAFF_DOMAIN, TEST_EGRESS_ALLOW, testDeps, uniqueEmail } from '../helpers/app.ts';
import { createMemoryMailer } from '../helpers/mailer.ts';
import { startLlmServer, type LlmServer } from '../helpers/llm-server.ts';
import { makeImagePdf, makeTextPdf } from '../helpers/llm-server.ts';
import { describeBrowser, launchChromium, scanA11y, signUpInBrowser } from './harness.ts';

describeBrowser('language-model helpers in the browser', () => {
  let llm: LlmServer;
  let app: App;
  let database: Awaited<ReturnType<typeof openTestDatabase>>['database'];
  let cleanup: () => Promise<void>;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    await ensureWebBuilt({});
    llm = await startLlmServer();
    const db = await openTestDatabase();
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const config = loadConfig({
      DATA_DIR: db.dataDir,
      PUBLIC_BASE_URL: baseUrl,
      STAFF_EMAIL_DOMAINS: STAFF_DOMAIN,
      LOG_LEVEL: 'silent',
      EGRESS_ALLOW: TEST_EGRESS_ALLOW,
      LLM_BASE_URL: llm.url,
      LLM_API_KEY: 'sk-e2e',
      LLM_MODEL: 'e2e-model',
    });
    app = await buildApp({
      ...testDeps(config, db.database, createMemoryMailer()),
      signUpPerMinute: 1_000,
      webDir: join(import.meta.dirname, '../../dist/web'),
    });
    await app.listen({ port, host: '127.0.0.1' });
    cleanup = db.cleanup;
    database = db.database;
    browser = await launchChromium();
    const context = await browser.newContext({ baseURL: baseUrl, bypassCSP: true });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await cleanup?.();
    await llm?.close();
  });

  it('streams an explanation, stops it, and keeps a complete one in the private history', async () => {
    await signUpInBrowser(page, {
      name: 'Lena Reader',
      email: uniqueEmail('llm-e2e'),
      password: 'correct horse battery staple',
    });
    // A unique name (and slug): a PostgreSQL test database keeps the tenants of earlier runs.
    await page.getByLabel('Tenant name', { exact: true }).fill(`Explain Co ${Math.random().toString(36).slice(2, 8)}`);
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => page.url()).toMatch(/\/home$/);
    // The nav shows once the new tenant is the active one (the URL may read /home before).
    await page.getByRole('link', { name: 'Assets', exact: true }).first().click();
    await page.getByText('No assets yet').waitFor();

    await page.getByRole('link', { name: 'Explain a result file', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Explain a result file' }).waitFor();
    await page.getByText('No explanations yet.').waitFor();
    await page.mouse.move(0, 0);
    await page.waitForLoadState('networkidle');
    expect(await scanA11y(page), 'explainer page, empty').toEqual([]);

    // An answer still being written: six words, then nothing until the connection closes.
    const first = llm.requests.length;
    llm.enqueue({ kind: 'stream', chunks: Array.from({ length: 200 }, (_, i) => `word${i} `), holdAfter: 6 });
    await page.locator('input[type="file"]').setInputFiles({
      name: 'trivy-image.json',
      mimeType: 'application/json',
      buffer: readFileSync(fixturePath('trivy-image.json')),
    });
    await page.getByRole('button', { name: 'Explain', exact: true }).click();
    // Text arrives before the answer is complete, with the Stop button.
    await page
      .getByTestId('streamed-answer')
      .getByText(/word3 /)
      .waitFor();
    await page.getByText('Answering…').waitFor();
    // That a model answers, never which one.
    await expect.poll(() => page.getByTestId('answer-source').textContent()).toBe('model answer');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByText('Stopped. The answer above is incomplete and was not saved.').waitFor();
    await llm.closed(first);
    expect(llm.requests[first]!.closedEarly).toBe(true);
    const shown = (await page.getByTestId('streamed-answer').textContent()) ?? '';
    expect(shown).toMatch(/^word0 word1 word2 word3 /);
    expect(shown).not.toContain('word199');
    await page.getByText('No explanations yet.').waitFor();

    // A complete answer is saved in the history; view it, then delete it.
    llm.enqueue({ kind: 'stream', chunks: ['## Summary\n', 'Upgrade openssl first [F1].'], delayMs: 20 });
    await page.getByRole('button', { name: 'Explain', exact: true }).click();
    await page.getByText('Answer complete.').waitFor();
    await page.getByRole('button', { name: 'View the explanation of trivy-image.json' }).click();
    const dialog = page.getByRole('dialog', { name: 'Explanation of trivy-image.json' });
    // Rendered Markdown: the heading and the paragraph, no raw "##".
    await dialog.getByTestId('saved-answer').getByText('Summary', { exact: true }).waitFor();
    await dialog.getByTestId('saved-answer').getByText('Upgrade openssl first [F1].', { exact: true }).waitFor();
    expect(await dialog.getByTestId('saved-answer').textContent()).not.toContain('##');
    await dialog.getByText(/^Language model · /).waitFor();
    expect(await page.content()).not.toContain('e2e-model');
    // The uploaded file is kept with it: shown as text, and downloadable as the same bytes.
    await dialog.getByRole('button', { name: 'Show the result file' }).click();
    await dialog
      .getByTestId('saved-result-file')
      .getByText(/"SchemaVersion": 2/)
      .waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      dialog.getByRole('link', { name: 'Download the result file' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('trivy-image.json');
    const saved = await download.path();
    expect(readFileSync(saved).equals(readFileSync(fixturePath('trivy-image.json')))).toBe(true);
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No explanations yet.').waitFor();
  });

  it('shows a busy model as a friendly message with the wait, and the offline analysis meanwhile', async () => {
    llm.enqueue({ kind: 'status', status: 429, retryAfter: '40' });
    await page.getByRole('button', { name: 'Explain', exact: true }).click();
    await page.getByRole('alert').getByText('The language model is busy. Try again in 40 seconds.').waitFor();
    await page.getByText('Answer complete.').waitFor();
    await expect.poll(() => page.getByTestId('answer-source').textContent()).toBe('offline analysis');
    await page.getByTestId('streamed-answer').getByText('Offline analysis', { exact: true }).waitFor();
    // Try again asks the model again: this time it answers.
    llm.enqueue({ kind: 'stream', chunks: ['## Summary\n', 'Upgrade openssl first [F1].'] });
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByTestId('streamed-answer').getByText('Upgrade openssl first [F1].', { exact: true }).waitFor();
    await page.getByText('Answer complete.').waitFor();
    expect(await page.getByText('Showing the offline analysis').count()).toBe(0);
  });

  it('shows exhausted credits as a friendly message, with the offline analysis and no retry', async () => {
    llm.enqueue({ kind: 'status', status: 402 });
    await page.getByRole('button', { name: 'Explain', exact: true }).click();
    await page
      .getByRole('alert')
      .getByText(
        /The language model account has run out of credits\. Ask an operator to top it up; the offline analysis still works meanwhile\./,
      )
      .waitFor();
    await page.getByText('Answer complete.').waitFor();
    await expect.poll(() => page.getByTestId('answer-source').textContent()).toBe('offline analysis');
    expect(await page.getByRole('button', { name: 'Try again' }).count()).toBe(0);
  });

  it('opens the explainer from the Findings and Import results pages', async () => {
    for (const [nav, heading] of [
      ['Findings', 'Findings'],
      ['Import results', 'Import results'],
    ] as const) {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: nav, exact: true }).click();
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      // The page's own button, not the navigation entry of the same name.
      await page.getByRole('main').getByRole('link', { name: 'Explain a result file', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Explain a result file' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/explain-results');
      await page.getByRole('button', { name: 'Explain', exact: true }).waitFor();
    }
  });

  it('reviews evidence on the CMMC page: Word refused, scans reported, an invalid model answer replaced', async () => {
    await page.getByRole('link', { name: 'CMMC', exact: true }).click();
    await page.getByRole('tab', { name: 'Evidence review' }).click();
    const files = page.locator('input[type="file"]');
    await files.setInputFiles([
      {
        name: 'policy.docx',
        mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        buffer: Buffer.from('PK\u0003\u0004word/'),
      },
    ]);
    await page.getByRole('button', { name: 'Review documents' }).click();
    await page.getByText('"policy.docx" is a Word document. Save it as PDF first').waitFor();
    // The model answers prose instead of the verdicts: the offline analysis stands in, labelled.
    llm.enqueue({ kind: 'json', content: 'Everything looks compliant to me.' });
    await files.setInputFiles([
      {
        name: 'access.pdf',
        mimeType: 'application/pdf',
        buffer: await makeTextPdf([
          'Access control policy: authorized users only, user accounts reviewed, offboarding removes access.',
        ]),
      },
      { name: 'scan.pdf', mimeType: 'application/pdf', buffer: await makeImagePdf(1) },
    ]);
    await page.getByRole('button', { name: 'Review documents' }).click();
    await page.getByText('Review complete.').waitFor();
    await expect.poll(() => page.getByTestId('review-source').textContent()).toBe('offline analysis');
    await page.getByText(/The model's answer was not used/).waitFor();
    const row = page
      .getByRole('row')
      .filter({ hasText: 'AC.L1-b.1.i' })
      .filter({ hasText: 'Authorized Access Control' });
    await expect.poll(() => row.getByText('Partial').count()).toBe(1);
    await row.getByText('access.pdf (p. 1)').waitFor();
    await page.getByText(/scan\.pdf: No extractable text/).waitFor();

    // A slow model: the offline analysis shows at once as the preliminary review; Stop ends it,
    // and the model request with it (the local model server sees the platform hang up).
    const slow = llm.requests.length;
    llm.enqueue({ kind: 'json', content: '{}', delayMs: 60_000 });
    await page.getByRole('button', { name: 'Review documents' }).click();
    await page.getByRole('heading', { name: 'Preliminary review' }).waitFor();
    await page
      .getByText('The language model is reviewing the documents; the offline analysis is shown meanwhile…')
      .waitFor();
    await expect.poll(() => llm.requests.length).toBe(slow + 1);
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByText('Stopped. Nothing was reviewed.').waitFor();
    expect(await page.getByRole('heading', { name: 'Preliminary review' }).count()).toBe(0);
    await llm.closed(slow);
    expect(llm.requests[slow]!.closedEarly).toBe(true);
  });

  it('explains device checks on the CMMC page, streamed, with Stop', async () => {
    const tenantId = await page.evaluate(
      async () => ((await (await fetch('/api/v1/me')).json()) as { tenants: { id: string }[] }).tenants[0]!.id,
    );
    const profile = await sql<{ id: string }>`
      insert into compliance_profiles (tenant_id, cage_code, company_name, mail_platform, affirming_official_name, affirming_official_title, affirming_official_email)
      values (${tenantId}::uuid, '1AB2C', 'Explain Co', 'm365', 'Lena', 'President', 'lena@explain.test') returning id`.execute(
      database.db,
    );
    await sql`insert into endpoint_audit_runs (tenant_id, profile_id, hostname, os, os_version, results, details, script_version)
      values (${tenantId}::uuid, ${profile.rows[0]!.id}::uuid, 'FRONT-DESK', 'windows', 'Windows 11', '{"win.firewall_enabled": "fail", "win.av_enabled": "pass"}'::jsonb, '{}'::jsonb, '1.0.0')`.execute(
      database.db,
    );
    await page.reload();
    await page.getByRole('tab', { name: 'Device check' }).click();
    const n = llm.requests.length;
    llm.enqueue({
      kind: 'stream',
      chunks: ['Turn on the firewall on FRONT-DESK [C1]. ', ...Array.from({ length: 100 }, (_, i) => `step${i} `)],
      delayMs: 100,
    });
    await page.getByRole('button', { name: 'Explain results' }).click();
    await page
      .getByTestId('streamed-answer')
      .getByText(/Turn on the firewall on FRONT-DESK \[C1\]/)
      .waitFor();
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByText('Stopped. The answer above is incomplete and was not saved.').waitFor();
    await llm.closed(n);
    expect(llm.requests[n]!.closedEarly).toBe(true);
    expect(JSON.stringify(llm.requests[n]!.body)).toContain('win.firewall_enabled');
  });
});
