// XPath matchers and extractors against a loopback server answering the way real sites do: HTML
// with unclosed tags, upper-case names and unquoted attributes, an Atom feed in a default
// namespace behind an XML declaration, and a login form whose CSRF token a later request sends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenHttp, runTemplatesAt, validTemplate, type HttpTarget } from '../../../../test/helpers/templates.ts';
import { validateTemplate, type Template } from './index.ts';

const PAGE = `<!DOCTYPE html>
<HTML><HEAD><TITLE>Acme Intranet</TITLE>
<meta name=generator content="WordPress 6.4.2">
<link rel=stylesheet href=/wp-content/themes/acme/style.css?ver=6.4.2>
</HEAD><BODY class=home>
<div id=nav><a href="/about">About</a><a href='/wp-login.php'>Log in</a>
<p>Welcome<br>to the <b>intranet
</BODY></HTML>`;

const FEED = `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Releases</title>
<entry><title>v2.14.1</title><link href="https://example.test/r/2.14.1"/></entry>
<entry><title>v2.14.0</title><link href="https://example.test/r/2.14.0"/></entry>
</feed>`;

let target: HttpTarget;
let base: string;
const posted: string[] = [];

beforeAll(async () => {
  target = await listenHttp((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const path = req.url!.split('?')[0];
      if (path === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
      if (path === '/feed') return res.writeHead(200, { 'content-type': 'application/atom+xml' }).end(FEED);
      if (path === '/login' && req.method === 'GET')
        return res.end(
          '<form method=post><input type=hidden name=csrf_token value="t0k3n-91f2"><input name=user></form>',
        );
      if (path === '/login') {
        posted.push(body);
        return res.end(body.includes('csrf_token=t0k3n-91f2') ? 'Welcome back' : 'CSRF check failed');
      }
      res.writeHead(404).end('not found');
    });
  });
  base = target.base;
});

afterAll(() => target.close());

const tpl = validTemplate;
const run = async (t: Template) => (await runTemplatesAt(base, [t])).matches;

const head = (id: string) => `id: ${id}\ninfo: {name: ${id}, severity: info}\n`;

describe('xpath matchers', () => {
  it('match lenient HTML: unclosed tags, upper-case names and unquoted attributes', async () => {
    const t = tpl(
      `${head('wp')}http:\n  - path: ["{{BaseURL}}/"]\n    matchers:\n      - type: xpath\n        xpath:\n          - "//meta[@name='generator'][starts-with(@content, 'WordPress')]"\n          - "//a[@href='/nope']"\n`,
    );
    expect((await run(t)).map((m) => m.template.id)).toEqual(['wp']);
  });

  it('need every expression to select a node with condition: and, and can be negative', async () => {
    const and = tpl(
      `${head('and')}http:\n  - path: ["{{BaseURL}}/"]\n    matchers:\n      - type: xpath\n        condition: and\n        xpath: ["/html/head/title", "//a[@href='/nope']"]\n`,
    );
    expect(await run(and)).toEqual([]);
    const both = tpl(
      `${head('both')}http:\n  - path: ["{{BaseURL}}/"]\n    matchers:\n      - type: xpath\n        condition: and\n        xpath: ["/html/head/title", "//div[@id='nav']/a[2]"]\n`,
    );
    expect(await run(both)).toHaveLength(1);
    const negative = tpl(
      `${head('neg')}http:\n  - path: ["{{BaseURL}}/"]\n    matchers-condition: and\n    matchers:\n      - {type: status, status: [200]}\n      - {type: xpath, negative: true, xpath: ["//form"]}\n`,
    );
    expect(await run(negative)).toHaveLength(1);
  });

  it('select nothing with an expression that is not a node set, as nuclei', async () => {
    const t = tpl(
      `${head('count')}http:\n  - path: ["{{BaseURL}}/"]\n    matchers: [{type: xpath, xpath: ["count(//a)"]}]\n`,
    );
    expect(await run(t)).toEqual([]);
  });
});

describe('xpath extractors', () => {
  it('take an attribute, an attribute node or an element text', async () => {
    const t = tpl(
      `${head('ex')}http:\n  - path: ["{{BaseURL}}/"]\n    extractors:\n      - {type: xpath, name: generator, attribute: content, xpath: ["//meta[@name='generator']"]}\n      - {type: xpath, name: links, xpath: ["//div[@id='nav']/a/@href"]}\n      - {type: xpath, name: title, xpath: ["/html/head/title"]}\n`,
    );
    expect((await run(t)).map((m) => [m.extractor, m.extracted])).toEqual([
      ['generator', ['WordPress 6.4.2']],
      ['links', ['/about', '/wp-login.php']],
      ['title', ['Acme Intranet']],
    ]);
  });

  it('read a document behind an XML declaration, names in a default namespace included', async () => {
    const t = tpl(
      `${head('feed')}http:\n  - path: ["{{BaseURL}}/feed"]\n    extractors:\n      - {type: xpath, xpath: ["//entry/title"]}\n      - {type: xpath, attribute: href, xpath: ["//entry[1]/link"]}\n`,
    );
    expect((await run(t)).flatMap((m) => m.extracted)).toEqual(['v2.14.1', 'v2.14.0', 'https://example.test/r/2.14.1']);
  });

  it('carry an internal value (a CSRF token) into the next request of the block', async () => {
    const t = tpl(
      `${head('csrf')}http:\n  - raw:\n      - |\n        GET /login HTTP/1.1\n        Host: {{Hostname}}\n\n      - |\n        POST /login HTTP/1.1\n        Host: {{Hostname}}\n        Content-Type: application/x-www-form-urlencoded\n\n        csrf_token={{csrf}}&user=admin\n    extractors:\n      - {type: xpath, name: csrf, internal: true, attribute: value, xpath: ["//input[@name='csrf_token']"]}\n    matchers: [{type: word, words: ["Welcome back"]}]\n`,
    );
    expect(await run(t)).toHaveLength(1);
    expect(posted.at(-1)?.trim()).toBe('csrf_token=t0k3n-91f2&user=admin');
  });
});

describe('xpath validation', () => {
  it('refuses an expression that does not compile, and an attribute outside an xpath extractor', () => {
    const v = validateTemplate(
      `${head('bad')}http:\n  - path: ["{{BaseURL}}/"]\n    matchers: [{type: xpath, xpath: ["//a[@href="]}]\n    extractors: [{type: regex, attribute: href, regex: ["x"]}]\n`,
    );
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(v.errors.map((e) => e.path)).toEqual(['http[0].matchers[0].xpath[0]', 'http[0].extractors[0].attribute']);
    expect(v.errors[0]!.message).toMatch(/not a valid XPath 1\.0 expression/);
  });
});
