import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizedFindingSchema } from '../../../findings/index.ts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  startHitRecorder,
  startThreePageSite,
  startVulnerableWeb,
  type VulnerableWeb,
} from '../../../../test/fixtures/vulnerable-web/index.ts';
import { normaliseLocation } from '../../../findings/index.ts';
import { planScan, webappOptionsSchema } from '../../../scans/index.ts';
import { UsageError } from '../../commands/common.ts';
import { ScannerError, type ScanOutput, type ScanTask } from '../types.ts';
import { webappCli } from './cli.ts';
import { createWebappScanner, PASSIVE_RULE_IDS, RULES, webappPlan } from './index.ts';

// Fast against a local fixture; the default rate (20/s) is for real sites.
const scanner = createWebappScanner({ ratePerSecond: 2000 });
const ACTIVE_IDS = ['40012', '20019', '40018'];

function scan(
  target: string,
  options: Record<string, unknown> = {},
  extra: Partial<ScanTask> = {},
  s = scanner,
): Promise<ScanOutput> {
  return s.run({ target, options, chunk: null, signal: new AbortController().signal, progress: () => {}, ...extra });
}
const ruleIds = (out: ScanOutput) => new Set(out.findings.map((f) => f.ruleId));
const details = (out: ScanOutput) =>
  out.details as {
    pagesCrawled: number;
    stopReason: string;
    passive: boolean;
    robotsPaths: string[];
    blockedRedirects: string[];
    pages: { url: string; source: string }[];
    formsFound: number;
    rulesFired: Record<string, number>;
  };
const pageHits = (app: VulnerableWeb) => app.hits.filter((h) => !/robots\.txt|sitemap/.test(h));

let offsite: Awaited<ReturnType<typeof startHitRecorder>>;
const apps: VulnerableWeb[] = [];
const start = async (mode: 'vulnerable' | 'clean', https = false) => {
  const app = await startVulnerableWeb({ mode, https, offsite: offsite.origin });
  apps.push(app);
  return app;
};
const results: Record<'vulnHttp' | 'vulnHttps' | 'cleanHttp' | 'cleanHttps', ScanOutput> = {} as never;

beforeAll(async () => {
  offsite = await startHitRecorder();
  const [vh, vs, ch, cs] = await Promise.all([
    start('vulnerable'),
    start('vulnerable', true),
    start('clean'),
    start('clean', true),
  ]);
  [results.vulnHttp, results.vulnHttps, results.cleanHttp, results.cleanHttps] = await Promise.all([
    scan(vh.url),
    scan(vs.url),
    scan(ch.url),
    scan(cs.url),
  ]);
});

afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await offsite.close();
});

describe('passive rules', () => {
  it('has at least 25 ZAP baseline rules', () => {
    expect(new Set(PASSIVE_RULE_IDS.map((id) => id.split('-')[0])).size).toBeGreaterThanOrEqual(25);
  });

  it.each(PASSIVE_RULE_IDS)('rule %s fires on the vulnerable app and stays quiet on the clean one', (id) => {
    const fired = ruleIds(results.vulnHttp).has(id) || ruleIds(results.vulnHttps).has(id);
    expect(fired, `${id} ${RULES[id]!.title}`).toBe(true);
    expect(ruleIds(results.cleanHttps).has(id)).toBe(false);
    // Over plain HTTP a password form is a real weakness even in the clean app.
    if (id !== '10105-1') expect(ruleIds(results.cleanHttp).has(id)).toBe(false);
  });

  it('reports the clean app over HTTPS with no findings at all', () => {
    expect(results.cleanHttps.findings).toEqual([]);
    expect(results.cleanHttp.findings.map((f) => f.ruleId)).toEqual(['10105-1']);
  });

  it('produces valid findings, one per rule, path and parameter, with secrets masked', () => {
    const all = [...results.vulnHttp.findings, ...results.vulnHttps.findings];
    for (const f of all) normalizedFindingSchema.parse(f);
    const keys = results.vulnHttp.findings.map((f) =>
      JSON.stringify([f.ruleId, f.location.path, f.location.param, f.discriminator]),
    );
    expect(new Set(keys).size).toBe(keys.length);
    const text = JSON.stringify([all, results.vulnHttp.details]);
    for (const secret of ['s3cr3tvalue', 'hunter2', 'abc123secret', '0A1B2C3D4E']) expect(text).not.toContain(secret);
    const cookie = results.vulnHttp.findings.find((f) => f.ruleId === '10010')!;
    expect(cookie.location).toEqual({ url: new URL(apps[0]!.url).origin + '/', param: 'session' });
    expect(cookie.evidence?.summary).toContain('Cookie "session" set with attributes: Path=/');
    const server = results.vulnHttp.findings.find((f) => f.ruleId === '10036-2')!;
    expect(server).toMatchObject({ severity: 'low', cwe: [497] });
    expect(server.evidence?.summary).toContain('Server: Apache/2.4.1 (Unix)');
  });

  it('does not run active checks with the baseline profile', () => {
    for (const id of ACTIVE_IDS) expect(ruleIds(results.vulnHttp).has(id)).toBe(false);
  });
});

describe('crawl', () => {
  it('finds pages only robots.txt and the sitemap index mention', () => {
    const d = details(results.vulnHttp);
    expect(d.stopReason).toBe('exhausted');
    expect(d.robotsPaths).toContain('/secret-area/');
    const byUrl = new Map(d.pages.map((p) => [new URL(p.url).pathname, p.source]));
    expect(byUrl.get('/secret-area/')).toBe('robots');
    expect(byUrl.get('/hidden-from-sitemap')).toBe('sitemap');
    expect(byUrl.has('/deep/3')).toBe(true);
    expect(d.formsFound).toBe(3);
  });

  it('records the off-scope redirect without following it', () => {
    expect(details(results.vulnHttp).blockedRedirects).toEqual([`${offsite.origin}/from-redirect`]);
  });

  it('stops at maxPages', async () => {
    const app = await start('vulnerable');
    const out = await scan(app.url, { maxPages: 5 });
    expect(details(out)).toMatchObject({ pagesCrawled: 5, stopReason: 'page-limit' });
    expect(pageHits(app)).toHaveLength(5);
  });

  it('stops at maxDepth', async () => {
    const app = await start('clean');
    await scan(app.url, { maxDepth: 2, paths: ['/deep/1'] });
    // /deep/1 is a seed (depth 0); /deep/3 is two links away, /deep/4 three.
    expect(app.hits).toContain('GET /deep/3');
    expect(app.hits).not.toContain('GET /deep/4');
  });

  it('stops when the time budget is spent', async () => {
    const app = await start('clean');
    const out = await scan(app.url, {}, {}, createWebappScanner({ timeBudgetMs: 1 }));
    expect(details(out).stopReason).toBe('time-budget');
    expect(details(out).pagesCrawled).toBeLessThan(details(results.cleanHttp).pagesCrawled);
  });

  it('stops when cancelled, with an error', async () => {
    const app = await start('vulnerable');
    const ctl = new AbortController();
    const run = scan(
      app.url,
      {},
      { signal: ctl.signal, progress: (_p, msg) => (/^2\//.test(msg ?? '') ? ctl.abort() : undefined) },
      createWebappScanner({ ratePerSecond: 2000, concurrency: 1 }),
    );
    await expect(run).rejects.toThrow();
    expect(pageHits(app).length).toBeLessThan(details(results.vulnHttp).pagesCrawled);
  });
});

describe('chunks', () => {
  it('a chunk without passiveBaseline crawls from its paths and runs the passive rules on them, without discovery', async () => {
    const app = await start('vulnerable');
    const out = await scan(
      app.url,
      { profile: 'baseline' },
      {
        chunk: {
          index: 1,
          count: 2,
          spec: { kind: 'webapp', paths: ['/search', '/item'], profile: 'baseline', passiveBaseline: false },
        },
      },
    );
    expect(details(out).passive).toBe(true);
    expect([...ruleIds(out)]).toEqual(expect.arrayContaining(['10037', '10038-1', '10020-1']));
    expect(out.coverage?.urls?.map((u) => new URL(u).pathname).sort()).toEqual(['/item', '/item', '/item', '/search']);
    expect(app.hits).toContain('GET /search');
    expect(app.hits).toContain('GET /item');
    expect(app.hits).not.toContain('GET /robots.txt');
    expect(app.hits).not.toContain('GET /');
  });

  it('the passiveBaseline chunk runs the passive rules and discovery', async () => {
    const app = await start('vulnerable');
    const out = await scan(
      app.url,
      {},
      {
        chunk: {
          index: 0,
          count: 2,
          spec: { kind: 'webapp', paths: ['/about'], profile: 'baseline', passiveBaseline: true },
        },
      },
    );
    expect(ruleIds(out).has('10037')).toBe(true);
    expect(app.hits).toContain('GET /robots.txt');
  });

  it('a full-profile chunk runs the active checks on its paths, and the passive rules', async () => {
    const app = await start('vulnerable');
    const out = await scan(
      app.url,
      {},
      {
        chunk: {
          index: 1,
          count: 2,
          spec: { kind: 'webapp', paths: ['/search', '/item'], profile: 'full', passiveBaseline: false },
        },
      },
    );
    expect([...ruleIds(out)]).toEqual(expect.arrayContaining(['40012', '40018', '90022', '10037', '10038-1']));
    expect(out.coverage?.rules).toEqual([...PASSIVE_RULE_IDS, '40012', '20019', '40018']);
  });

  it('webappPlan reads options leniently and narrows them by the chunk', () => {
    expect(webappPlan({ maxPages: 'x', maxDepth: 99, paths: ['/a', 'b'] }, null)).toEqual({
      profile: 'baseline',
      maxDepth: 10,
      maxPages: 200,
      paths: ['/a'],
      passive: true,
      discover: true,
    });
    expect(
      webappPlan(
        { profile: 'full', paths: ['/a', '/b'] },
        { index: 1, count: 2, spec: { paths: ['/b'], profile: 'full', passiveBaseline: false } },
      ),
    ).toMatchObject({ profile: 'full', paths: ['/b'], passive: true, discover: false });
  });

  // The identity of a finding as the server computes it (rule, normalised location, discriminator).
  const identities = (fs: ScanOutput['findings']) =>
    new Set(fs.map((f) => JSON.stringify([f.ruleId, normaliseLocation(f.location).key, f.discriminator ?? null])));

  it.each([2, 3, 8])(
    'a scan split into %i chunks finds at least what the unsplit scan finds on the same site',
    async (n) => {
      const app = await start('vulnerable');
      for (const profile of ['baseline', 'full'] as const) {
        const options = webappOptionsSchema.parse({ profile });
        const whole = await scan(app.url, options);
        const plan = planScan({ kind: 'webapp', options, chunkCount: n });
        expect(plan.chunks).toHaveLength(n);
        const parts = await Promise.all(
          plan.chunks.map((spec, index) => scan(app.url, plan.options, { chunk: { index, count: n, spec } })),
        );
        const union = new Set(parts.flatMap((p) => [...identities(p.findings)]));
        const missing = [...identities(whole.findings)].filter((id) => !union.has(id));
        expect(missing, `${profile}, ${n} chunks`).toEqual([]);
        expect(whole.findings.length).toBeGreaterThan(profile === 'full' ? 25 : 20);
      }
    },
  );
});

describe('active checks (profile full)', () => {
  it('finds reflected input, the open redirect, the SQL error and a stack trace on the vulnerable app', async () => {
    const app = await start('vulnerable');
    const out = await scan(app.url, { profile: 'full' });
    const find = (id: string) =>
      out.findings.filter((f) => f.ruleId === id).map((f) => `${f.location.path} ${f.location.param}`);
    expect(find('40012')).toEqual(['/search q']);
    expect(find('20019')).toEqual(['/go next']);
    expect(find('40018')).toEqual(['/item id']);
    expect(find('90022')).toContain('/item id');
    for (const f of out.findings) normalizedFindingSchema.parse(f);
    const xss = out.findings.find((f) => f.ruleId === '40012')!;
    expect(xss.evidence?.request).toMatch(/^GET \/search\?q=rmp/);
    expect(out.findings.find((f) => f.ruleId === '20019')!.evidence?.response).toMatch(
      /^Location: https:\/\/rampart-redirect\.invalid\/$/im,
    );
  });

  it('stays quiet on the clean app', async () => {
    const app = await start('clean', true);
    const out = await scan(app.url, { profile: 'full' });
    expect(out.findings).toEqual([]);
  });
});

describe('site-wide problems and error pages', () => {
  const siteWideRules = [
    '10010',
    '10011',
    '10015',
    '10020-1',
    '10021',
    '10035-1',
    '10036-2',
    '10038-1',
    '10054-1',
    '10063-1',
  ];

  it.each([false, true])(
    'a 3-page site gives one finding per site-wide problem with its pages as instances (https: %s)',
    async (https) => {
      const site = await startThreePageSite({ https });
      try {
        const out = await scan(site.url);
        const pages = ['/', '/about', '/contact'].map((p) => new URL(p, site.url).href);
        const expected = siteWideRules.filter((id) => https || (id !== '10011' && id !== '10035-1'));
        expect(out.findings.map((f) => f.ruleId).sort()).toEqual(expected);
        for (const f of out.findings) {
          expect(f.location, f.ruleId).toEqual({ url: site.url, param: expect.any(String) });
          // The 404 pages of the start paths (/api, /admin, /login, ...) are not instances of a header problem.
          expect((f.evidence?.data as { urls: string[] }).urls, f.ruleId).toEqual(
            f.ruleId === '10036-2' ? expect.arrayContaining(pages) : pages,
          );
          expect(f.evidence?.data).toMatchObject({ siteWide: true });
        }
        const server = out.findings.find((f) => f.ruleId === '10036-2')!;
        expect((server.evidence?.data as { instances: number }).instances).toBeGreaterThan(3);
        expect(
          (out.findings.find((f) => f.ruleId === '10038-1')!.evidence?.data as { instances: number }).instances,
        ).toBe(3);
        expect(details(out).pagesCrawled).toBeGreaterThan(8);
      } finally {
        await site.close();
      }
    },
  );

  it('does not report missing headers on error pages, but keeps what an error page discloses', async () => {
    const ids = (path: string) =>
      results.vulnHttp.findings
        .filter((f) => (f.evidence?.data as { urls: string[] }).urls.some((u) => new URL(u).pathname === path))
        .map((f) => f.ruleId);
    // /error answers 500 with a stack trace, /files/backup.sql and the probed start paths 404.
    expect(ids('/error')).toContain('90022');
    for (const path of ['/error', '/api', '/files/backup.sql'])
      for (const id of ['10020-1', '10021', '10038-1', '10063-1']) expect(ids(path), `${id} ${path}`).not.toContain(id);
  });
});

describe('what a crawl covered', () => {
  it('is inconclusive when no page could be fetched', async () => {
    const app = await start('clean');
    const url = app.url;
    await app.close();
    const out = await scan(url);
    expect(out.findings).toEqual([]);
    expect(out.inconclusive).toMatch(
      new RegExp(
        `^no page of ${new URL(url).origin.replace(/\./g, '\\.')} could be fetched: \\d+ page requests got no answer \\(`,
      ),
    );
    expect(out.coverage).toMatchObject({ urls: [], urlCount: 0 });
  });

  it('is partial when some pages gave no answer, and lists the URLs that did', async () => {
    const server = http.createServer((req, res) => {
      if (req.url === '/broken') return void req.socket.destroy();
      res.writeHead(200, { 'content-type': 'text/html' }).end('<a href="/ok">ok</a> <a href="/broken">broken</a>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const out = await scan(`${origin}/`, { paths: ['/'] });
      expect(out.inconclusive).toBeUndefined();
      expect(out.partial).toMatch(
        new RegExp(`^1 page request got no answer \\(${origin.replace(/\./g, '\\.')}/broken: `),
      );
      expect(out.coverage?.urls).toEqual([`${origin}/`, `${origin}/ok`]);
      expect(out.coverage?.rules).toEqual(PASSIVE_RULE_IDS);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('scanner and CLI', () => {
  it('refuses targets that are not http(s) URLs', async () => {
    for (const target of ['example.com', 'ftp://example.com/']) {
      const err = await scan(target).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ScannerError);
      expect((err as ScannerError).retryable).toBe(false);
    }
  });

  it('the CLI maps flags to options and prints an alerts table', () => {
    const { options } = webappCli.prepare(
      { profile: 'full', 'max-pages': '10', 'max-depth': '2', paths: '/a,/b', 'time-budget': '30' },
      'http://127.0.0.1:1/',
    );
    expect(options).toEqual({ profile: 'full', maxPages: 10, maxDepth: 2, paths: ['/a', '/b'] });
    expect(() => webappCli.prepare({ profile: 'loud' }, 'http://a.test/')).toThrow(UsageError);
    expect(() => webappCli.prepare({ paths: 'a' }, 'http://a.test/')).toThrow(UsageError);
    expect(() => webappCli.prepare({}, 'a.test')).toThrow(UsageError);
    const lines = webappCli.table(results.vulnHttp.details!, { durationMs: 1 });
    expect(lines[0]).toMatch(/^Crawled \d+ pages/);
    expect(lines[2]).toMatch(/^RISK\s+RULE\s+TITLE\s+COUNT\s+FIRST URL$/);
    expect(lines.some((l) => /^MEDIUM\s+10020-1\s+Missing Anti-clickjacking Header\s+\d+\s+http/.test(l))).toBe(true);
    expect(webappCli.json(results.vulnHttp.details!)).not.toHaveProperty('alerts');
  });
});

describe('scope', () => {
  it('never contacts the off-scope server', () => {
    expect(offsite.hits).toEqual([]);
  });
});
