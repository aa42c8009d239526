// Staff mesh tools in the browser (docs/mesh.md §11), against loopback peers: a second Rampart instance
// (the live leg), an HTML page (route not deployed), a peer that holds its answer until the test
// releases it, and the local OpenAI-compatible model server. Non-staff see none of the three
// pages; staff may ask but not open health or the console; a super-admin runs the sweep (a result
// shows while the sweep still runs; exported as CSV and JSON; a sweep that stops midway shows an
// error), drills into a peer, keeps the window in the URL, sends a console call and retries it
// with the same id (replayed), and asks a question (model answer with its citations checked; one
// citing evidence that does not exist, or a failing model, falls back to the offline summary,
// labelled; a busy model's friendly message shows with "Try again", which then gets the model's answer).
// Every API answer, page (the Mesh records page included) and export is scanned for
// each configured secret value: the mesh peer secrets, the model key and every platform secret.
// Over 500 lines on purpose: the three staff mesh tools share one browser, one second Rampart instance and the
// loopback peers; a file per tool would start them three times.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../../bench/lib.ts';
import { ensureWebBuilt } from '../../scripts/build-web.ts';
import { loadConfig } from '../../src/lib/config.ts';
import { buildApp, type App } from '../../src/server/app.ts';
import {
  createTestApp,
  openTestDatabase,
  STAFF_DOMAIN,
  TEST_AUTH_SECRET,
  TEST_EGRESS_ALLOW,
  testDeps,
  uniqueEmail,
  type TestApp,
} from '../helpers/app.ts';
import { configuredSecrets } from '../helpers/configured-secrets.ts';
import { startLlmServer, type LlmServer } from '../helpers/llm-server.ts';
import { closeAllPeers, startPeer } from '../helpers/loopback-peer.ts';
import { createMemoryMailer } from '../helpers/mailer.ts';
import { createAndSignIn, describeBrowser, launchChromium, scanA11y } from './harness.ts';
import type { Browser } from 'playwright-core';

const RUN = Math.random().toString(36).slice(2, 8);
const sfx = (n: string) => n.toUpperCase().replace(/[^A-Z0-9]/g, '_');
const SELF = `e2eself-${RUN}`;
const LIVE = `e2elive-${RUN}`;
const HTML = `e2ehtml-${RUN}`;
const HELD = `e2eheld-${RUN}`;
const S = (n: string) => `e2e-${n}-${RUN}-s3cret`;
const LLM_KEY = `sk-e2e-${RUN}-llmkey`;
const PLATFORM = configuredSecrets(RUN, { authSecret: TEST_AUTH_SECRET });
const SECRETS = [S('live-to'), S('live-from'), S('html'), S('held'), LLM_KEY, ...PLATFORM.values];
const PASSWORD = 'staff passphrase 123';

describeBrowser('staff mesh tools in the browser', () => {
  let app: App;
  let live: TestApp;
  let llm: LlmServer;
  let browser: Browser;
  let baseUrl: string;
  let cleanupDb: () => Promise<void>;
  let database: Awaited<ReturnType<typeof openTestDatabase>>['database'];
  let config: ReturnType<typeof loadConfig>;
  /** Answers the held peer's waiting pings (a pong). */
  let releaseHeld: () => void = () => {};
  const seen: { where: string; text: string }[] = [];

  const noSecret = (text: string, where: string) => {
    for (const s of SECRETS) expect(text.includes(s), `${where} carries a secret`).toBe(false);
  };

  /** A page in its own context; every API answer it receives is kept for the secret scan. */
  async function newPage(): Promise<Page> {
    // CSP bypass only so the test can inject axe; the app itself is unchanged.
    const context = await browser.newContext({ baseURL: baseUrl, acceptDownloads: true, bypassCSP: true });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on('response', (r) => {
      if (!r.url().includes('/api/')) return;
      void r.text().then(
        (text) => seen.push({ where: r.url(), text }),
        () => undefined,
      );
    });
    return page;
  }

  async function signInStaff(role: 'staff' | 'super_admin', name: string): Promise<Page> {
    const email = uniqueEmail(`mt-${role}`, STAFF_DOMAIN);
    const page = await newPage();
    await createAndSignIn({ config, database, baseUrl }, page, { email, role, name, password: PASSWORD });
    await page.getByRole('link', { name: 'Mesh records' }).waitFor();
    return page;
  }

  async function pageText(page: Page, where: string): Promise<void> {
    noSecret(await page.content(), where);
  }

  beforeAll(async () => {
    await ensureWebBuilt({});
    llm = await startLlmServer();
    const html = await startPeer((_r, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><html><body>Marketing site</body></html>');
    });
    const heldAnswers: (() => void)[] = [];
    releaseHeld = () => heldAnswers.splice(0).forEach((answer) => answer());
    const held = await startPeer((_r, res) => {
      heldAnswers.push(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ pong: true, self: HELD }));
      });
    });
    const db = await openTestDatabase();
    database = db.database;
    cleanupDb = db.cleanup;
    const livePort = await freePort();
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    config = loadConfig({
      DATA_DIR: db.dataDir,
      PUBLIC_BASE_URL: baseUrl,
      STAFF_EMAIL_DOMAINS: STAFF_DOMAIN,
      LOG_LEVEL: 'silent',
      EGRESS_ALLOW: TEST_EGRESS_ALLOW,
      SVC_SELF_NAME: SELF,
      [`SVC_PEER_URL_${sfx(LIVE)}`]: `http://127.0.0.1:${livePort}`,
      [`SVC_SECRET_TO_${sfx(LIVE)}`]: S('live-to'),
      [`SVC_SECRET_FROM_${sfx(LIVE)}`]: S('live-from'),
      [`SVC_PEER_URL_${sfx(HTML)}`]: `${html.origin}/`,
      [`SVC_SECRET_TO_${sfx(HTML)}`]: S('html'),
      [`SVC_PEER_URL_${sfx(HELD)}`]: held.origin,
      [`SVC_SECRET_TO_${sfx(HELD)}`]: S('held'),
      LLM_BASE_URL: llm.url,
      LLM_API_KEY: LLM_KEY,
      LLM_MODEL: 'test-model',
      ...PLATFORM.env,
    });
    app = await buildApp({
      ...testDeps(config, database, createMemoryMailer()),
      ...PLATFORM.deps,
      signUpPerMinute: 1_000,
      webDir: join(import.meta.dirname, '../../dist/web'),
      llmOptions: { connectMs: 3_000, firstTokenMs: 5_000, busyRetries: 0 },
    });
    await app.listen({ port, host: '127.0.0.1' });
    live = await createTestApp({
      env: {
        SVC_SELF_NAME: LIVE,
        [`SVC_SECRET_FROM_${sfx(SELF)}`]: S('live-to'),
        [`SVC_PEER_FLOWS_${sfx(SELF)}`]: 'ping,health_check,event_report',
      },
      database,
    });
    await live.app.listen({ port: livePort, host: '127.0.0.1' });
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    releaseHeld();
    await browser?.close();
    await app?.close();
    await live?.app.close();
    await closeAllPeers();
    await llm?.close();
    await cleanupDb?.();
  });

  it('shows none of the three pages to a signed-in non-staff user', async () => {
    const page = await newPage();
    await page.goto('/sign-up');
    await page.getByLabel('Name', { exact: true }).fill('Plain User');
    await page.getByLabel('Email', { exact: true }).fill(uniqueEmail('mt-plain'));
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery staple');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByLabel('Tenant name', { exact: true }).fill('Plain Co');
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => page.url()).toMatch(/\/home$/);
    for (const link of ['Mesh health', 'Mesh console', 'Ask operations'])
      expect(await page.getByRole('link', { name: link }).count()).toBe(0);
    for (const path of ['/settings/mesh-health', '/settings/mesh', '/settings/mesh-ask']) {
      await page.goto(path);
      await page.getByText('Staff only').first().waitFor();
      expect(
        await page.getByRole('button', { name: /Run health sweep|Send with a new request id|^Ask$/ }).count(),
        path,
      ).toBe(0);
    }
    for (const url of [
      '/api/v1/staff/mesh/health?window=24h',
      '/api/v1/staff/mesh/console/peers',
      '/api/v1/staff/mesh/ask/answers',
    ])
      expect((await page.request.get(url)).status(), url).toBe(403);
    await page.context().close();
  });

  it('lets staff ask (a busy model falls back to the offline summary, labelled, with the friendly message and "Try again") but not open health or the console', async () => {
    const page = await signInStaff('staff', 'S');
    expect(await page.getByRole('link', { name: 'Mesh health' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Mesh console' }).count()).toBe(0);
    for (const path of ['/settings/mesh-health', '/settings/mesh']) {
      await page.goto(path);
      await page.getByText('Super-admins only').first().waitFor();
    }
    llm.enqueue({ kind: 'status', status: 429, retryAfter: '30', message: 'slow down' });
    await page.getByRole('link', { name: 'Ask operations' }).click();
    await page.getByRole('heading', { level: 1, name: 'Ask operations' }).waitFor();
    await page.getByRole('textbox', { name: 'Question' }).fill(`Is ${HTML} healthy?`);
    await page
      .locator('label')
      .filter({ hasText: /^24 hours$/ })
      .click();
    expect(await page.getByRole('radio', { name: '24 hours' }).isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Ask', exact: true }).click();
    await page.getByText('Answer complete.').waitFor();
    await expect
      .poll(async () => page.getByTestId('answer-source').textContent())
      .toBe('offline summary (the language model failed)');
    await page
      .getByText(/^The language model is busy\. Try again in 30 seconds\. The offline analysis below/)
      .waitFor();
    const answer = page.getByTestId('streamed-answer');
    expect(await answer.textContent()).toMatch(/^AnswerOffline summary: the language model could not answer/);
    for (const h of ['Answer', 'Relevant findings', 'Trends', 'Suggested next steps', 'Caveats'])
      await answer.getByText(h, { exact: true }).waitFor();
    await page
      .getByTestId('citation-check')
      .getByText(/all in the evidence/)
      .waitFor();
    const evidence = page.getByRole('region', { name: 'Evidence', exact: true });
    await evidence.getByText('E1', { exact: true }).waitFor();
    await page.getByRole('region', { name: 'Past answers' }).getByText(`Is ${HTML} healthy?`).waitFor();
    await pageText(page, 'ask page (staff)');
    // The model may answer now: "Try again" asks once more, and the model's answer replaces the summary.
    await page.getByRole('button', { name: 'Try again' }).click();
    await expect.poll(async () => page.getByTestId('answer-source').textContent()).toBe('model: test-model');
    await page.getByText('Answer complete.').waitFor();
    expect(await page.getByText(/The language model is busy/).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Try again' }).count()).toBe(0);
    await page.context().close();
  });

  let admin: Page;

  it('runs the health sweep for a super-admin, showing results as they arrive, exporting them, and keeps the window in the URL', async () => {
    admin = await signInStaff('super_admin', 'A');
    await admin.getByRole('link', { name: 'Mesh health' }).click();
    await admin.getByRole('heading', { level: 1, name: 'Mesh health' }).waitFor();
    await admin.getByRole('button', { name: 'Run health sweep' }).click();
    const results = admin.getByRole('region', { name: 'Sweep results' });
    const status = admin.getByRole('status').filter({ hasText: /^Sweep / });
    // The held peer has not answered: the live and HTML results are on the page while the sweep runs.
    await results.getByText(`OK: pong from ${LIVE}`).waitFor();
    await results.getByText(/^Route not deployed: HTTP 200/).waitFor();
    expect(await status.textContent()).toBe('Sweep running: 2 of 3 peers answered.');
    expect(await results.getByText(HELD, { exact: true }).count()).toBe(0);
    expect(await admin.getByRole('button', { name: 'Export results as CSV' }).isDisabled()).toBe(true);
    releaseHeld();
    await admin.getByText('Sweep finished: 2 of 3 peers OK.').waitFor();
    await results.getByText(`OK: pong from ${HELD}`).waitFor();
    await admin.getByRole('note').filter({ hasText: 'its dispatch route is not deployed' }).waitFor();

    const [csv] = await Promise.all([
      admin.waitForEvent('download'),
      admin.getByRole('button', { name: 'Export results as CSV' }).click(),
    ]);
    expect(csv.suggestedFilename()).toMatch(new RegExp(`^${SELF}-mesh-check-results-\\d{8}-\\d{6}\\.csv$`));
    const csvText = readFileSync((await csv.path())!, 'utf8');
    expect(csvText.startsWith('\uFEFF')).toBe(true);
    expect(csvText).toContain(LIVE);
    noSecret(csvText, 'mesh check CSV');
    const [json] = await Promise.all([
      admin.waitForEvent('download'),
      admin.getByRole('button', { name: 'Export results as JSON' }).click(),
    ]);
    expect(json.suggestedFilename()).toMatch(new RegExp(`^${SELF}-mesh-check-results-\\d{8}-\\d{6}\\.json$`));
    const doc = JSON.parse(readFileSync((await json.path())!, 'utf8')) as {
      items: { peer: string; outcome: string }[];
    };
    expect(doc.items.map((i) => i.outcome).sort()).toEqual(['ok', 'ok', 'route_not_deployed']);
    noSecret(JSON.stringify(doc), 'mesh check JSON');

    // The sweep's pings are in the rollup: the HTML peer fails, with its failure in the drill-down.
    await admin
      .locator('label')
      .filter({ hasText: /^Last 30 days$/ })
      .click();
    await expect.poll(() => admin.url()).toMatch(/\/settings\/mesh-health\?window=30d$/);
    await admin.getByRole('button', { name: `Details of ${HTML}` }).click();
    const dialog = admin.getByRole('dialog', { name: `Mesh health of ${HTML}` });
    await dialog
      .getByRole('region', { name: `Recent failures of ${HTML}` })
      .getByText('route_not_deployed')
      .first()
      .waitFor();
    await admin.keyboard.press('Escape');
    await admin.reload();
    await admin.getByRole('heading', { level: 1, name: 'Mesh health' }).waitFor();
    await expect.poll(() => admin.getByRole('radio', { name: 'Last 30 days' }).isChecked()).toBe(true);
    await pageText(admin, 'mesh health page');
  });

  it('shows an error, not "Sweep finished", when a sweep stops midway or its stream breaks off', async () => {
    // The route's error line is checked in mesh-health.test.ts; here the page's handling of it, and
    // of a stream that ends without its done line, with the answer played back by the browser.
    const at = new Date().toISOString();
    const start = { type: 'start', sweepId: `s-${RUN}`, startedAt: at, timeoutMs: 5_000, peers: [LIVE, HTML, HELD] };
    const result = {
      type: 'result',
      peer: LIVE,
      outcome: 'ok',
      label: `OK: pong from ${LIVE}`,
      ok: true,
      httpStatus: 200,
      error: null,
      durationMs: 4,
      requestId: `r-${RUN}`,
      at,
    };
    const error = {
      type: 'error',
      error: 'internal_error',
      message:
        'The sweep stopped unexpectedly. The results above stand; peers without a result may not have been pinged.',
    };
    const SWEEP = '**/api/v1/staff/mesh/health/sweep';
    for (const [lines, message] of [
      [[start, result, error], /^The sweep stopped unexpectedly\./],
      [[start, result], /^The connection closed before the sweep finished\./],
    ] as const) {
      await admin.route(SWEEP, (route) =>
        route.fulfill({
          status: 200,
          contentType: 'application/x-ndjson',
          body: lines.map((l) => `${JSON.stringify(l)}\n`).join(''),
        }),
      );
      try {
        await admin.getByRole('button', { name: 'Run health sweep' }).click();
        const alert = admin.getByRole('alert').filter({ hasText: 'The sweep stopped before it finished' });
        await alert.getByText(message).waitFor();
        await admin.getByText('Sweep stopped: 1 of 3 peers answered, 1 OK.').waitFor();
        expect(await admin.getByText(/^Sweep finished/).count()).toBe(0);
        await admin.getByRole('region', { name: 'Sweep results' }).getByText(`OK: pong from ${LIVE}`).waitFor();
      } finally {
        await admin.unroute(SWEEP);
      }
    }
  });

  it('sends a signed console call and retries it with the same id (replayed), showing the stored attempts', async () => {
    await admin.getByRole('link', { name: 'Mesh console' }).click();
    await admin.getByRole('heading', { level: 1, name: 'Mesh client console' }).waitFor();
    await admin.getByRole('region', { name: 'Configured peers' }).getByText(LIVE).waitFor();
    await admin.getByLabel('Peer', { exact: true }).selectOption(LIVE);
    await admin.getByLabel('Flow', { exact: true }).selectOption('ping');
    await admin.getByLabel('Payload (JSON object)').fill(`{"nonce": "n-${RUN}"}`);
    await admin.getByRole('button', { name: 'Send with a new request id' }).click();
    const answer = admin.getByRole('region', { name: 'Answer' });
    await answer.getByText('OK: HTTP 200').waitFor();
    await answer.getByText(`"self": "${LIVE}"`).waitFor();
    expect(await answer.getByRole('region', { name: 'Stored outbound attempts' }).locator('tbody tr').count()).toBe(1);
    // A gated flow: the same id again is answered from the peer's idempotency record.
    await admin.getByLabel('Flow', { exact: true }).selectOption('event_report');
    await admin
      .getByLabel('Payload (JSON object)')
      .fill(`{"kind": "test.console", "severity": "info", "title": "console ${RUN}"}`);
    await admin.getByRole('button', { name: 'Send with a new request id' }).click();
    await answer.getByText('event_report to', { exact: false }).waitFor();
    await answer.getByText('OK: HTTP 200', { exact: true }).waitFor();
    await admin.getByRole('button', { name: 'Retry with the same id' }).click();
    await answer.getByText('OK: HTTP 200, replayed from the peer’s idempotency record').waitFor();
    await answer.getByText('Replayed', { exact: true }).waitFor();
    await expect
      .poll(() => answer.getByRole('region', { name: 'Stored outbound attempts' }).locator('tbody tr').count())
      .toBe(2);
    await pageText(admin, 'console page');
  });

  it('asks a question with the model: streamed sections, citations checked, stored and listed; an answer citing evidence that does not exist is replaced by the offline summary, labelled', async () => {
    llm.enqueue({
      kind: 'stream',
      delayMs: 30,
      chunks: [
        '## Answer\n',
        `${HTML} is failing [E1].\n\n`,
        '## Relevant findings\n- Route not deployed [E1–E2]\n\n',
        '## Trends\n- No notable change [E1]\n\n',
        '## Suggested next steps\n- Fix the URL [E2, 1]\n\n',
        '## Caveats\n- One sweep only.\n',
      ],
    });
    await admin.getByRole('link', { name: 'Ask operations' }).click();
    await admin.getByTestId('llm-configured').getByText('Language model configured').waitFor();
    await admin.getByRole('textbox', { name: 'Question' }).fill(`What is wrong with ${HTML}?`);
    await admin.getByRole('button', { name: 'Ask', exact: true }).click();
    await admin.getByText('Answer complete.').waitFor();
    await expect.poll(async () => admin.getByTestId('answer-source').textContent()).toBe('model: test-model');
    expect(await admin.getByTestId('streamed-answer').textContent()).toContain(`${HTML} is failing [E1].`);
    await admin
      .getByTestId('citation-check')
      .getByText('Citations checked: E1, E2 cited, all in the evidence.')
      .waitFor();
    const history = admin.getByRole('region', { name: 'Past answers' });
    await history.getByText(`What is wrong with ${HTML}?`).waitFor();
    await history.getByRole('button', { name: `View the answer to: What is wrong with ${HTML}?` }).click();
    const dialog = admin.getByRole('dialog', { name: 'Stored answer' });
    await dialog.getByText('Model: test-model', { exact: false }).waitFor();
    expect(await dialog.getByTestId('saved-answer').textContent()).toContain(`${HTML} is failing [E1].`);
    await admin.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });

    // Invented evidence: the streamed text is replaced by the offline summary, labelled, and that is stored.
    llm.enqueue({
      kind: 'stream',
      delayMs: 30,
      chunks: [
        '## Answer\n',
        `${HTML} is failing [E1][E999].\n\n`,
        '## Relevant findings\n- x [E1]\n\n',
        '## Trends\n- none [E1]\n\n',
        '## Suggested next steps\n- y [E1]\n\n',
        '## Caveats\n- z\n',
      ],
    });
    await admin.getByRole('textbox', { name: 'Question' }).fill(`Invented: ${HTML}?`);
    await admin.getByRole('button', { name: 'Ask', exact: true }).click();
    await admin.getByText('Answer complete.').waitFor();
    await expect
      .poll(async () => admin.getByTestId('answer-source').textContent())
      .toBe('offline summary (the model’s answer was not used)');
    await admin.getByText('Showing the offline analysis').waitFor();
    const text = (await admin.getByTestId('streamed-answer').textContent())!;
    expect(text).toMatch(
      /^AnswerOffline summary: the language model's answer was not used because it cites evidence that does not exist \(E999\)/,
    );
    expect(text).not.toContain('[E999]');
    await admin
      .getByTestId('citation-check')
      .getByText(/cites evidence that does not exist: E999\. It was not used/)
      .waitFor();
    await history.getByRole('button', { name: `View the answer to: Invented: ${HTML}?` }).click();
    await dialog.getByText(/^Offline summary · last/).waitFor();
    expect(await dialog.getByTestId('saved-answer').textContent()).not.toContain('E999]');
    await admin.keyboard.press('Escape');
    await pageText(admin, 'ask page (super-admin)');
  });

  it('exports the operations log from the Mesh records page as CSV and JSON, without secrets', async () => {
    await admin.goto('/settings/staff/mesh?tab=outbound');
    const table = admin.getByRole('region', { name: 'Outbound attempts', exact: true });
    await table.getByText(HTML).first().waitFor();
    const [csv] = await Promise.all([
      admin.waitForEvent('download'),
      admin.getByRole('button', { name: /^Export CSV of the loaded/ }).click(),
    ]);
    expect(csv.suggestedFilename()).toMatch(new RegExp(`^${SELF}-operations-log-\\d{8}-\\d{6}\\.csv$`));
    const csvText = readFileSync((await csv.path())!, 'utf8');
    expect(csvText.startsWith('\uFEFFRecord,Time,Peer,Flow')).toBe(true);
    expect(csvText).toContain(`outbound,`);
    noSecret(csvText, 'operations log CSV');
    const [json] = await Promise.all([
      admin.waitForEvent('download'),
      admin.getByRole('button', { name: /^Export JSON of the loaded/ }).click(),
    ]);
    expect(json.suggestedFilename()).toMatch(new RegExp(`^${SELF}-operations-log-\\d{8}-\\d{6}\\.json$`));
    const doc = JSON.parse(readFileSync((await json.path())!, 'utf8')) as {
      format: string;
      source: string;
      items: { record: string; peer: string }[];
    };
    expect(doc).toMatchObject({ format: 'rampart-operations-log', source: SELF });
    expect(doc.items.some((i) => i.record === 'outbound' && i.peer === HTML)).toBe(true);
    noSecret(JSON.stringify(doc), 'operations log JSON');
    // No peer URL in either export (the records carry the redacted URL each attempt went to).
    expect(doc.items.some((i) => 'url' in i)).toBe(false);
    for (const text of [csvText, JSON.stringify(doc)]) expect(text).not.toContain('127.0.0.1');
    await pageText(admin, 'mesh records page');
  });

  it('has no serious accessibility violations and no sideways scrolling on the three pages, on a laptop and a phone', async () => {
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 375, height: 740 },
    ]) {
      await admin.setViewportSize(viewport);
      for (const [path, heading] of [
        ['/settings/mesh-health?window=30d', 'Mesh health'],
        ['/settings/mesh', 'Mesh client console'],
        ['/settings/mesh-ask', 'Ask operations'],
      ] as const) {
        await admin.goto(path);
        await admin.getByRole('heading', { level: 1, name: heading }).waitFor();
        await admin.waitForLoadState('networkidle');
        expect(await scanA11y(admin), `${path} at ${viewport.width}px`).toEqual([]);
        const overflow = await admin.evaluate(
          () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
        );
        expect(overflow, `${path} at ${viewport.width}px`).toBeLessThanOrEqual(0);
      }
    }
    await admin.setViewportSize({ width: 1280, height: 800 });
  }, 90_000);

  it('carries no configured secret in any API answer the pages received', async () => {
    await new Promise((r) => setTimeout(r, 200));
    expect(seen.length).toBeGreaterThan(10);
    for (const s of seen) noSecret(s.text, s.where);
    await admin.context().close();
  });
});
