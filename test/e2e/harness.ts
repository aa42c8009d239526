// Browser tests: a real server on loopback (the built SPA, a real database, a capturing mailer)
// driven by Debian's Chromium through playwright-core. Without Chromium they are skipped with a
// notice, except under CI=true, where a missing browser is a failure.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ensureWebBuilt } from '../../scripts/build-web.ts';
import { loadConfig } from '../../src/lib/config.ts';
import { buildApp, type App, type AppDeps } from '../../src/server/app.ts';
import { runAdmin } from '../../src/ops/admin-cli.ts';
import { openTestDatabase, STAFF_DOMAIN, TEST_AUTH_SECRET, TEST_EGRESS_ALLOW, testDeps } from '../helpers/app.ts';
import { createMemoryMailer, type MemoryMailer } from '../helpers/mailer.ts';
import { freePort } from '../../bench/lib.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);

/** describe() for browser suites: skip with a notice without Chromium, fail under CI. */
export function describeBrowser(name: string, fn: () => void): void {
  if (available) {
    describe(name, fn);
    return;
  }
  if (process.env.CI === 'true') {
    describe(name, () =>
      it('needs Chromium', () => {
        throw new Error(`Chromium not found at ${CHROMIUM}; CI installs it with apt-get install chromium`);
      }),
    );
    return;
  }
  console.warn(`notice: browser tests "${name}" skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`);
  describe.skip(name, fn);
}

export interface E2eServer {
  baseUrl: string;
  app: App;
  mailer: MemoryMailer;
  database: Awaited<ReturnType<typeof openTestDatabase>>['database'];
  config: ReturnType<typeof loadConfig>;
  close(): Promise<void>;
}

/** The server of a browser suite; `deps` overrides app dependencies (e.g. outbox options). */
export async function startE2eServer(
  env: Record<string, string> = {},
  deps: Partial<AppDeps> = {},
): Promise<E2eServer> {
  await ensureWebBuilt({});
  const db = await openTestDatabase();
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    DATA_DIR: db.dataDir,
    PUBLIC_BASE_URL: baseUrl,
    STAFF_EMAIL_DOMAINS: STAFF_DOMAIN,
    LOG_LEVEL: 'silent',
    TENANT_HOSTED_WORKER: 'off',
    EGRESS_ALLOW: TEST_EGRESS_ALLOW,
    ...env,
  });
  const mailer = createMemoryMailer();
  // Every simulated user signs up from 127.0.0.1, and on a shared PostgreSQL database (where the
  // limits are stored) the suites running side by side would share one sign-up and one sign-in
  // budget. Throttling itself is tested in test/integration/auth.test.ts.
  const app = await buildApp({
    ...testDeps(config, db.database, mailer),
    signUpPerMinute: 1_000,
    signInPerMinute: 1_000,
    webDir: join(import.meta.dirname, '../../dist/web'),
    ...deps,
  });
  await app.listen({ port, host: '127.0.0.1' });
  return {
    baseUrl,
    app,
    mailer,
    database: db.database,
    config,
    async close() {
      await app.close();
      await db.cleanup();
    },
  };
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Closed network here: no background or component traffic.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

export interface E2e {
  server: E2eServer;
  browser: Browser;
  /** A page in a fresh browser context (its own cookies) at the server's base URL. */
  newPage(opts?: { bypassCSP?: boolean }): Promise<Page>;
  close(): Promise<void>;
}

/** Server and browser for one suite: call in beforeAll, close in afterAll. */
export async function openE2e(opts: { env?: Record<string, string>; deps?: Partial<AppDeps> } = {}): Promise<E2e> {
  const server = await startE2eServer(opts.env, opts.deps);
  const browser = await launchChromium();
  return {
    server,
    browser,
    async newPage(opts = {}) {
      const context = await browser.newContext({ baseURL: server.baseUrl, ...opts });
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      return page;
    },
    async close() {
      await browser.close();
      await server.close();
    },
  };
}

/** Signs up through the sign-up page; resolves on the first-tenant screen. */
export async function signUpInBrowser(
  page: Page,
  user: { name: string; email: string; password: string },
): Promise<void> {
  await page.goto('/sign-up');
  await page.getByLabel('Name', { exact: true }).fill(user.name);
  await page.getByLabel('Email', { exact: true }).fill(user.email);
  await page.getByLabel('Password', { exact: true }).fill(user.password);
  await page.getByRole('button', { name: 'Create account' }).click();
}

const AXE_PATH = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core scan (WCAG 2.1 A and AA rules) of the page as it is: the serious and critical
 * violations, one line each. The page's context needs bypassCSP to inject axe.
 */
export async function scanA11y(page: Page): Promise<string[]> {
  // Let finite CSS transitions settle first: a dialog fading out has half-transparent text, which
  // axe reports as low contrast (seen once on a loaded CI machine). Endless spinners are skipped.
  await page.evaluate(async () => {
    const settling = document
      .getAnimations()
      .filter((a) => a.playState === 'running' && a.effect?.getTiming().iterations !== Infinity)
      .map((a) =>
        a.finished.then(
          () => undefined,
          () => undefined,
        ),
      );
    await Promise.race([Promise.all(settling), new Promise((resolve) => setTimeout(resolve, 3_000))]);
  });
  await page.addScriptTag({ path: AXE_PATH });
  const result = await page.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run(ctx: Document, opts: object): Promise<{ violations: AxeViolation[] }> } }
    ).axe;
    return axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
  });
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/**
 * A tenant name no other test uses: on PostgreSQL every test file shares one database, and a
 * fixed name's slug collides with the same name created by another file (the form then says the
 * slug is taken and no tenant is made).
 */
export const uniqueTenantName = (base: string): string => `${base} ${Math.random().toString(36).slice(2, 8)}`;

export const STAFF_PASSWORD = 'staff passphrase 123';

/**
 * Creates a platform user with the admin CLI (`create`, as an operator would) and signs them in
 * on `page` through the set-password link it prints. Resolves once "Sign in" was pressed.
 */
export async function createAndSignIn(
  server: Pick<E2eServer, 'config' | 'database' | 'baseUrl'>,
  page: Page,
  user: { email: string; role: 'staff' | 'super_admin'; name?: string; password?: string },
): Promise<void> {
  const out: string[] = [];
  const code = await runAdmin(
    ['create', '--email', user.email, '--role', user.role, ...(user.name ? ['--name', user.name] : [])],
    {
      config: server.config,
      database: server.database,
      authSecret: TEST_AUTH_SECRET,
      io: { out: (l) => out.push(l), err: () => {} },
    },
  );
  expect(code).toBe(0);
  const link = /(http\S+reset-password\S+)/.exec(out.join('\n'))![1]!;
  const password = user.password ?? STAFF_PASSWORD;
  await page.goto(link.replace(server.baseUrl, ''));
  await page.getByLabel('New password', { exact: true }).fill(password);
  await page.getByLabel('Confirm password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Set password' }).click();
  await expect.poll(() => page.url()).toContain('/sign-in');
  await page.getByLabel('Email', { exact: true }).fill(user.email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}
