import { describe, expect, it } from 'vitest';
import { normalizeUrl, parseRobots, parseSitemap } from './crawl.ts';
import { maskSecrets } from './findings.ts';
import { decodeEntities, parsePage, resolveRef, tokenizeHtml } from './html.ts';
import { cspWeaknesses, looselyScoped } from './rules.ts';

describe('tokenizeHtml', () => {
  it('reads double-, single- and unquoted attributes, and attributes without a value', () => {
    const { tags } = tokenizeHtml(`<A HREF="/a" class='x y' data-n=3 hidden><input type=checkbox checked/>`);
    expect(tags[0]!.name).toBe('a');
    expect(Object.fromEntries(tags[0]!.attrs)).toEqual({ href: '/a', class: 'x y', 'data-n': '3', hidden: '' });
    expect(Object.fromEntries(tags[1]!.attrs)).toEqual({ type: 'checkbox', checked: '' });
  });

  it('decodes entities in attribute values', () => {
    const { tags } = tokenizeHtml('<a href="/s?a=1&amp;b=2&#38;c=&#x33;">');
    expect(tags[0]!.attrs.get('href')).toBe('/s?a=1&b=2&c=3');
    expect(decodeEntities('&lt;&unknown;&#0;')).toBe('<&unknown;&#0;');
  });

  it('keeps comments and script bodies, and finds no tags inside them', () => {
    const doc = tokenizeHtml(
      '<!-- <a href="/in-comment"> --><script>if (a<b) document.write("<a href=/in-script>")</script><a href="/real">',
    );
    expect(doc.comments).toEqual([' <a href="/in-comment"> ']);
    expect(doc.scripts).toEqual(['if (a<b) document.write("<a href=/in-script>")']);
    expect(doc.tags.filter((t) => t.name === 'a').map((t) => t.attrs.get('href'))).toEqual(['/real']);
  });

  it('survives broken markup: stray <, unclosed tags, quotes and comments at the end', () => {
    expect(tokenizeHtml('a < b <3 <a href="/x').tags.map((t) => t.name)).toEqual(['a']);
    expect(tokenizeHtml('<p>text<!-- never closed').comments).toEqual([' never closed']);
    expect(tokenizeHtml('<!DOCTYPE html><?xml x?></div><br/>').tags.map((t) => t.name)).toEqual(['/div', 'br']);
  });
});

describe('parsePage', () => {
  it('resolves links against <base href> and skips non-http schemes and fragments', () => {
    const page = parsePage(
      `<base href="/app/"><a href="page?b=2&amp;a=1#frag">x</a><a href="mailto:a@b.c">m</a><a href="javascript:alert(1)">j</a><a href="#top">t</a>
       <img src=img.png><script src="//cdn.example.com/x.js"></script><iframe src="/frame"></iframe><link href="style.css"><a href="data:text/html,hi">d</a>`,
      'https://site.test/dir/index.html',
    );
    expect(page.base).toBe('https://site.test/app/');
    expect(page.links).toEqual([
      'https://site.test/app/page?b=2&a=1#frag',
      'https://site.test/app/img.png',
      'https://cdn.example.com/x.js',
      'https://site.test/frame',
      'https://site.test/app/style.css',
    ]);
  });

  it('records forms with method, absolute action and named fields', () => {
    const page = parsePage(
      `<form action="/login" method=post><input type="hidden" name="csrf" value="t"><input name="user"><input type="password" name="pw"><button>Go</button></form>
       <form><select name="sort"></select><textarea name="note"></textarea></form><input name="outside">`,
      'http://site.test/p',
    );
    expect(page.forms).toEqual([
      {
        method: 'POST',
        action: 'http://site.test/login',
        fields: [
          { name: 'csrf', type: 'hidden', value: 't' },
          { name: 'user', type: 'text', value: '' },
          { name: 'pw', type: 'password', value: '' },
        ],
      },
      {
        method: 'GET',
        action: 'http://site.test/p',
        fields: [
          { name: 'sort', type: 'select', value: '' },
          { name: 'note', type: 'textarea', value: '' },
        ],
      },
    ]);
  });

  it('resolveRef refuses what a crawler must not follow', () => {
    expect(resolveRef('  JavaScript:void(0)', 'http://a.test/')).toBeUndefined();
    expect(resolveRef('ftp://a.test/x', 'http://a.test/')).toBeUndefined();
    expect(resolveRef('http://[::1', 'http://a.test/')).toBeUndefined();
    expect(resolveRef('../up', 'http://a.test/a/b/')?.href).toBe('http://a.test/a/up');
  });
});

describe('crawl helpers', () => {
  it('normalizeUrl drops the fragment and orders query parameters', () => {
    expect(normalizeUrl(new URL('http://A.test/p?b=2&a=1#x'))).toBe(normalizeUrl(new URL('http://a.test/p?a=1&b=2')));
    expect(normalizeUrl(new URL('http://a.test/p?a=1'))).not.toBe(normalizeUrl(new URL('http://a.test/p?a=2')));
  });

  it('parseRobots reads Disallow/Allow paths (wildcards cut) and sitemaps', () => {
    expect(
      parseRobots(
        'User-agent: *\nDisallow: /admin/ # staff\nDisallow: /tmp*.php$\nAllow: /\nDisallow:\nSitemap: https://a.test/s.xml',
      ),
    ).toEqual({ paths: ['/admin/', '/tmp'], sitemaps: ['https://a.test/s.xml'] });
  });

  it('parseSitemap tells an index from a URL set', () => {
    expect(parseSitemap('<sitemapindex><sitemap><loc> https://a.test/s1.xml </loc></sitemap></sitemapindex>')).toEqual({
      index: true,
      locs: ['https://a.test/s1.xml'],
    });
    expect(parseSitemap('<urlset><url><loc>https://a.test/p?a=1&amp;b=2</loc></url></urlset>')).toEqual({
      index: false,
      locs: ['https://a.test/p?a=1&b=2'],
    });
  });
});

describe('rule helpers', () => {
  it('cspWeaknesses maps a policy to ZAP 10055 alert references', () => {
    expect(cspWeaknesses("default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'self'")).toEqual(
      [],
    );
    expect(cspWeaknesses("default-src 'self'").map(([r]) => r)).toEqual(['10055-4']);
    expect(cspWeaknesses("default-src * 'unsafe-inline' 'unsafe-eval'").map(([r]) => r)).toEqual([
      '10055-4',
      '10055-5',
      '10055-6',
      '10055-10',
    ]);
    // A nonce makes browsers ignore 'unsafe-inline'.
    expect(
      cspWeaknesses(
        "default-src 'self'; script-src 'self' 'unsafe-inline' 'nonce-abc'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
      ),
    ).toEqual([]);
  });

  it('looselyScoped compares domain labels', () => {
    expect(looselyScoped('.example.com', 'app.example.com')).toBe(true);
    expect(looselyScoped('app.example.com', 'app.example.com')).toBe(false);
    expect(looselyScoped('ample.com', 'app.example.com')).toBe(false);
    expect(looselyScoped('other.com', 'app.example.com')).toBe(false);
  });

  it('maskSecrets hides credential and session values in URLs', () => {
    expect(maskSecrets('GET /a;jsessionid=ABC?token=t0k&x=1&Password=pw')).toBe(
      'GET /a;jsessionid=***?token=***&x=1&Password=***',
    );
    expect(maskSecrets('HTTP/1.1 200 OK\r\nSet-Cookie: sid=abc; HttpOnly\r\ncookie: a=b\r\nX-Other: 1')).toBe(
      'HTTP/1.1 200 OK\r\nSet-Cookie: [masked]\r\ncookie: [masked]\r\nX-Other: 1',
    );
  });
});
