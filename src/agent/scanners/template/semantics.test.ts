// nuclei's semantics inside the HTTP subset, each against a loopback server that answers what
// nuclei would see: framing headers, every hop of a redirect chain, stop-at-first-match at block
// and template level, results per named extractor, cookies kept across requests and hops, paths
// sent as written, bodies shorter than their Content-Length, and empty metadata.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenHttp, runTemplatesAt, validTemplate, type HttpTarget } from '../../../../test/helpers/templates.ts';
import type { ScanTask } from '../types.ts';
import { createTemplateScanner, templateFindings, validateTemplate, type Template } from './index.ts';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let target: HttpTarget;
let base: string;
const seen: Seen[] = [];

beforeAll(async () => {
  target = await listenHttp((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('latin1')));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const path = req.url!.split('?')[0];
      if (path === '/login') {
        res.writeHead(302, {
          location: '/home',
          'set-cookie': ['session=s3cret; Path=/; HttpOnly', 'theme=dark; Path=/other'],
        });
        return res.end('redirecting to home: Login-Marker');
      }
      if (path === '/home') return res.end(`home cookie=${req.headers.cookie ?? ''}`);
      if (path === '/whoami') return res.end(`whoami cookie=${req.headers.cookie ?? ''}`);
      if (path === '/echo')
        return res.end(`${req.method} ${req.url} cl=${req.headers['content-length'] ?? ''} body=${body}`);
      if (path === '/versions') return res.end('app=4.2.0 lib=1.9.3');
      res.writeHead(404);
      res.end('not found');
    });
  });
  base = target.base;
});

afterAll(() => target.close());

const tpl = validTemplate;
const run = (templates: Template[], url = base) => runTemplatesAt(url, templates);

const head = (id: string) => `id: ${id}\ninfo: {name: ${id}, severity: low}\n`;

describe('nuclei semantics', () => {
  it('accepts numeric header values and recalculates Content-Length from the body', async () => {
    const t = tpl(
      `${head('cl')}http:\n  - method: POST\n    path: ["{{BaseURL}}/echo"]\n    headers:\n      Content-Length: 1\n      X-Count: 42\n    body: "abcdef"\n    matchers: [{type: word, words: ["cl=6 body=abcdef"]}]\n`,
    );
    expect(t.requests[0]!.headers).toEqual({ 'Content-Length': '1', 'X-Count': '42' });
    const { matches } = await run([t]);
    expect(matches).toHaveLength(1);
    expect(seen.at(-1)!.headers['x-count']).toBe('42');
  });

  it('matches every answer of a redirect chain and locates each result at its own URL', async () => {
    const t = tpl(
      `${head('hops')}http:\n  - path: ["{{BaseURL}}/login"]\n    redirects: true\n    matchers:\n      - {type: word, name: marker, words: [Login-Marker]}\n      - {type: word, name: landed, words: ["home cookie="]}\n`,
    );
    const { matches } = await run([t]);
    expect(matches.map((m) => [m.matcher, m.url, m.exchange.status])).toEqual([
      ['landed', `${base}/home`, 200],
      ['marker', `${base}/login`, 302],
    ]);
    const findings = templateFindings(matches);
    expect(findings.map((f) => [f.discriminator, f.location!.path])).toEqual([
      ['landed', '/home'],
      ['marker', '/login'],
    ]);
  });

  it('keeps cookies across a redirect chain and the requests of a template, unless disable-cookie is set', async () => {
    const jar = tpl(
      `${head('jar')}http:\n  - path: ["{{BaseURL}}/login"]\n    redirects: true\n    matchers: [{type: word, words: ["home cookie=session=s3cret"]}]\n  - path: ["{{BaseURL}}/whoami"]\n    matchers: [{type: word, words: ["whoami cookie=session=s3cret"]}]\n`,
    );
    const off = tpl(
      `${head('no-jar')}http:\n  - path: ["{{BaseURL}}/login?x=1"]\n    disable-cookie: true\n    matchers: [{type: status, status: [302]}]\n  - path: ["{{BaseURL}}/whoami?x=1"]\n    disable-cookie: true\n    matchers: [{type: word, words: ["whoami cookie="]}]\n    extractors: [{type: regex, regex: ["cookie=.*"]}]\n`,
    );
    const { matches } = await run([jar, off]);
    expect(matches.filter((m) => m.template.id === 'jar').map((m) => m.url)).toEqual([
      `${base}/home`,
      `${base}/whoami`,
    ]);
    // theme is scoped to /other: never sent to /home or /whoami.
    expect(seen.filter((s) => s.url === '/whoami').at(-1)!.headers.cookie).toBe('session=s3cret');
    expect(matches.filter((m) => m.template.id === 'no-jar').map((m) => m.extracted)).toEqual([[], ['cookie=']]);
  });

  it('stops a block only when a matcher fired, not when only an extractor did', async () => {
    const t = tpl(
      `${head('stop-ex')}http:\n  - path: ["{{BaseURL}}/versions?a", "{{BaseURL}}/versions?b"]\n    stop-at-first-match: true\n    extractors: [{type: regex, regex: ["app=[0-9.]+"]}]\n`,
    );
    const { matches } = await run([t]);
    expect(matches.map((m) => m.url)).toEqual([`${base}/versions?a`, `${base}/versions?b`]);
  });

  it('reports one result per named extractor when there are no matchers', async () => {
    const t = tpl(
      `${head('two-ex')}http:\n  - path: ["{{BaseURL}}/versions"]\n    extractors:\n      - {type: regex, name: app, group: 1, regex: ["app=([0-9.]+)"]}\n      - {type: regex, name: lib, group: 1, regex: ["lib=([0-9.]+)"]}\n`,
    );
    const { matches } = await run([t]);
    expect(matches.map((m) => [m.extractor, m.extracted])).toEqual([
      ['app', ['4.2.0']],
      ['lib', ['1.9.3']],
    ]);
    expect(templateFindings(matches).map((f) => [f.discriminator, f.title])).toEqual([
      ['app', 'two-ex (app)'],
      ['lib', 'two-ex (lib)'],
    ]);
  });

  it('sends paths as written: a quote stays a quote and a stray % becomes %25, as nuclei sends them', async () => {
    const t = tpl(
      `${head('raw-path')}http:\n  - path: ["{{BaseURL}}/echo?q=it's&x=%u2s&ok=%41"]\n    matchers: [{type: status, status: [200]}]\n`,
    );
    const { matches } = await run([t]);
    expect(seen.at(-1)!.url).toBe("/echo?q=it's&x=%25u2s&ok=%41");
    expect(matches[0]!.url).toBe(`${base}/echo?q=it's&x=%25u2s&ok=%41`);
  });

  it('reads duration, and refuses names of values it cannot provide instead of never matching', async () => {
    const t = tpl(
      `${head('dur')}http:\n  - path: ["{{BaseURL}}/versions"]\n    matchers: [{type: dsl, dsl: ["duration >= 0 && duration < 60"]}]\n`,
    );
    expect((await run([t])).matches).toHaveLength(1);
    const v = validateTemplate(
      `${head('idx')}http:\n  - path: ["{{BaseURL}}/"]\n    matchers: [{type: dsl, dsl: ["status_code_1 == 200 && contains(interactsh_protocol, 'dns')"]}]\n`,
    );
    expect(v.ok ? [] : v.errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/^interactsh_protocol: out-of-band/),
    ]);
  });

  it('accepts empty metadata as nuclei does', () => {
    const v = validateTemplate(
      `id: empty-meta\ninfo:\n  name: E\n  author:\n  severity: high\n  description:\n  reference:\n    -\n  classification:\n    cve-id:\n    cwe-id: CWE-200\n    cvss-metrics:\n    cvss-score:\n  metadata:\n    max-request: 1\n    verified:\n  tags:\nhttp:\n  - path: ["{{BaseURL}}/"]\n    matchers: [{type: status, status: [200]}]\n`,
    );
    expect(v.ok).toBe(true);
    if (v.ok)
      expect(v.template.info).toMatchObject({ authors: [], references: [], cve: [], cwe: ['CWE-200'], tags: [] });
  });
});

describe('bodies shorter than their Content-Length', () => {
  let short: net.Server;
  let shortUrl: string;
  beforeAll(async () => {
    // Promises 100 bytes, sends 18, closes: nuclei matches on what arrived.
    short = net.createServer((s) => {
      s.once('data', () =>
        s.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\npartial body here!'),
      );
    });
    await new Promise<void>((r) => short.listen(0, '127.0.0.1', r));
    shortUrl = `http://127.0.0.1:${(short.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => short.close(() => r())));

  it('matches what arrived, and the scan of such a site does not fail at its root', async () => {
    const t = tpl(
      `${head('short')}http:\n  - path: ["{{BaseURL}}/anything"]\n    matchers: [{type: word, words: ["partial body"]}]\n`,
    );
    const { matches, stats } = await run([t], shortUrl);
    expect(stats.errors).toBe(0);
    expect(matches[0]!.exchange.incomplete).toBe(true);
    const task: ScanTask = {
      target: `${shortUrl}/`,
      options: { rateLimit: 1000, templateIds: ['short-root'] },
      chunk: null,
      signal: new AbortController().signal,
      progress: () => undefined,
    };
    const scanner = createTemplateScanner({
      extraTemplates: [
        `${head('short-root')}http:\n  - path: ["{{BaseURL}}/"]\n    matchers: [{type: word, words: ["partial body"]}]\n`,
      ],
    });
    const out = await scanner.run(task);
    expect(out.findings.map((f) => f.ruleId)).toEqual(['short-root']);
    expect(out.partial).toBeUndefined();
  });
});
