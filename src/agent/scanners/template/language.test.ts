// The nuclei language beyond single requests, against a loopback application that behaves like
// the targets such templates are written for: raw requests, variables and constants, values
// carried between requests, req-condition, payload attacks, self-contained requests, dsl and json
// extractors, helper functions in requests and a favicon hash over binary bytes.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScopedHttp, sameOrigin } from '../http/scoped-http.ts';
import { runTemplates, validateTemplate, type Template } from './index.ts';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
const seen: Seen[] = [];
let server: http.Server;
let base: string;
const FAVICON = Buffer.from([0x00, 0x00, 0x01, 0x00, 0xff, 0xfe, 0x80, 0x81, 0x10, 0x20]);

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const u = new URL(req.url!, 'http://x');
      switch (u.pathname.replace(/^\/app(?=\/)/, '')) {
        case '/login':
          // Raw bodies keep the newline their YAML block ends with, as nuclei sends them.
          if (req.method === 'POST' && body.trim() === 'user=admin&pass=secret') {
            res.writeHead(200, { 'set-cookie': 'sid=42; Path=/' });
            return res.end('{"token":"tok-123","user":{"name":"admin","roles":["a","b"]}}');
          }
          res.writeHead(403);
          return res.end('denied');
        case '/api/me':
          if (req.headers.authorization === 'Bearer tok-123' && req.headers.cookie === 'sid=42')
            return res.end('{"id":7,"admin":true}');
          res.writeHead(401);
          return res.end('no');
        case '/echo':
          return res.end(
            `${req.method} ${req.url} host=${req.headers.host} cl=${req.headers['content-length'] ?? '-'} body=${body}`,
          );
        case '/favicon.ico':
          res.writeHead(200, { 'content-type': 'image/x-icon' });
          return res.end(FAVICON);
        case '/version':
          return res.end('<meta name="generator" content="Acme 2.4.49">');
        default:
          res.writeHead(404);
          return res.end('not found');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function tpl(yaml: string, payloadFiles?: Record<string, string>): Template {
  const v = validateTemplate(yaml, payloadFiles ? { payloadFiles } : {});
  if (!v.ok) throw new Error(JSON.stringify(v.errors));
  return v.template;
}
const head = (id: string, extra = '') => `id: ${id}\ninfo: {name: ${id}, severity: high}\n${extra}`;

async function run(templates: Template[], url = base) {
  const signal = new AbortController().signal;
  const client = createScopedHttp({ inScope: sameOrigin(url), signal, ratePerSecond: 1000 });
  try {
    return await runTemplates({ baseUrl: new URL(url), templates, http: client, signal });
  } finally {
    client.close();
  }
}

describe('raw requests', () => {
  it('sends the request as written under the scanned path, with its Host header and a recomputed Content-Length', async () => {
    const t = tpl(
      `${head('raw-post')}http:\n  - raw:\n      - |\n        POST /echo?a=1 HTTP/1.1\n        Host: {{Hostname}}\n        Content-Type: application/x-www-form-urlencoded\n        Content-Length: 999\n\n        x=1&y={{Port}}\n    matchers: [{type: word, words: ["POST /app/echo?a=1"]}]\n`,
    );
    const { matches, stats } = await run([t], `${base}/app/`);
    expect(stats.errorSamples).toEqual([]);
    const port = new URL(base).port;
    expect(seen.at(-1)).toMatchObject({ method: 'POST', url: '/app/echo?a=1', body: `x=1&y=${port}\n` });
    expect(seen.at(-1)!.headers['content-length']).toBe(String(`x=1&y=${port}\n`.length));
    expect(matches.map((m) => m.url)).toEqual([`${base}/app/echo?a=1`]);
  });

  it('refuses a Host header naming another host, and never sends it', async () => {
    const t = tpl(
      `${head('raw-host')}http:\n  - raw:\n      - |\n        GET /echo?evil HTTP/1.1\n        Host: internal.example\n\n    matchers: [{type: status, status: [200]}]\n`,
    );
    const before = seen.length;
    const { matches, stats } = await run([t]);
    expect(matches).toEqual([]);
    expect(stats.errorSamples[0]).toMatch(/Host header of "internal\.example" names another host/);
    expect(seen.length).toBe(before);
  });
});

describe('values across requests', () => {
  it('logs in, carries an internal extracted token and the session cookie to the next request, and matches with body_2', async () => {
    const t = tpl(
      `${head('login-flow', 'variables:\n  user: admin\n  auth: "Bearer {{token}}"\nconstants:\n  pass: secret\n')}http:\n  - raw:\n      - |\n        POST /login HTTP/1.1\n        Host: {{Hostname}}\n\n        user={{user}}&pass={{pass}}\n      - |\n        GET /api/me HTTP/1.1\n        Host: {{Hostname}}\n        Authorization: {{auth}}\n\n    extractors:\n      - {type: json, name: token, internal: true, json: [".token"]}\n    matchers-condition: and\n    matchers:\n      - {type: dsl, dsl: ["status_code_1 == 200 && status_code_2 == 200", "contains(body_2, '\\"admin\\":true')"], condition: and}\n`,
    );
    const { matches, stats } = await run([t]);
    expect(stats.errorSamples).toEqual([]);
    expect(seen.at(-1)).toMatchObject({
      url: '/api/me',
      headers: { authorization: 'Bearer tok-123', cookie: 'sid=42' },
    });
    expect(matches.map((m) => m.url)).toEqual([`${base}/api/me`]);
  });

  it('extracts with json paths and dsl expressions, one result per named extractor', async () => {
    const t = tpl(
      `${head('extract')}http:\n  - method: POST\n    path: ["{{BaseURL}}/login"]\n    body: "user=admin&pass=secret"\n    extractors:\n      - {type: json, name: roles, json: [".user.roles[]"]}\n      - {type: dsl, name: digest, dsl: ["md5(body)"]}\n`,
    );
    const { matches } = await run([t]);
    expect(matches.map((m) => [m.extractor, m.extracted])).toEqual([
      ['digest', [expect.stringMatching(/^[0-9a-f]{32}$/)]],
      ['roles', ['a', 'b']],
    ]);
  });

  it('renders helper functions and randstr in requests and words', async () => {
    const t = tpl(
      `${head('helpers')}http:\n  - path: ["{{BaseURL}}/echo?h={{md5('abc')}}&r={{randstr}}&b={{base64(Host)}}"]\n    matchers: [{type: word, words: ["r={{randstr}}", "h=900150983cd24fb0d6963f7d28e17f72"], condition: and}]\n`,
    );
    const { matches } = await run([t]);
    expect(matches).toHaveLength(1);
    expect(seen.at(-1)!.url).toMatch(/^\/echo\?h=900150983cd24fb0d6963f7d28e17f72&r=[0-9A-Za-z]{27}&b=MTI3LjAuMC4x$/);
  });

  it('hashes binary bodies byte for byte (favicon mmh3)', async () => {
    const b64 = FAVICON.toString('base64');
    const t = tpl(
      `${head('favicon')}http:\n  - path: ["{{BaseURL}}/favicon.ico"]\n    matchers: [{type: dsl, dsl: ["starts_with(base64_py(body), '${b64}') && len(base64_py(body)) == ${b64.length + 1}"]}]\n    extractors: [{type: dsl, dsl: ["mmh3(base64_py(body))"]}]\n`,
    );
    const { matches } = await run([t]);
    expect(matches).toHaveLength(1);
    // murmur3 x86_32 (seed 0) of the base64 text with its newline, checked against an independent implementation.
    expect(matches[0]!.extracted).toEqual(['-716546693']);
  });

  it('checks versions with compare_versions on an extracted value', async () => {
    const t = tpl(
      `${head('version')}http:\n  - path: ["{{BaseURL}}/version"]\n    extractors:\n      - {type: regex, name: version, group: 1, internal: true, regex: ['Acme ([0-9.]+)']}\n    matchers: [{type: dsl, dsl: ["compare_versions(version, '< 2.4.50')"]}]\n`,
    );
    expect((await run([t])).matches).toHaveLength(1);
  });
});

describe('nuclei values of the connection', () => {
  it("reads ip (the address answered from), cname (the target name's CNAME) and nested markers", async () => {
    const t = tpl(
      `${head('conn')}http:\n  - path: ["{{BaseURL}}/echo?h={{md5({{Port}})}}"]\n    matchers:\n      - {type: dsl, name: ip, dsl: ["ip == '127.0.0.1'"]}\n      - {type: dsl, name: cname, dsl: ["cname == 'shop.example-saas.net'"]}\n`,
    );
    const signal = new AbortController().signal;
    const url = base.replace('127.0.0.1', 'localhost');
    const client = createScopedHttp({ inScope: sameOrigin(url), signal, ratePerSecond: 1000 });
    try {
      const { matches, stats } = await runTemplates({
        baseUrl: new URL(url),
        templates: [t],
        http: client,
        signal,
        resolveCname: async (h) => (h === 'localhost' ? ['shop.example-saas.net'] : []),
      });
      expect(stats.errorSamples).toEqual([]);
      expect(matches.map((m) => m.matcher).sort()).toEqual(['cname', 'ip']);
    } finally {
      client.close();
    }
    const { createHash } = await import('node:crypto');
    expect(seen.at(-1)!.url).toBe(`/echo?h=${createHash('md5').update(new URL(base).port).digest('hex')}`);
  });
});

describe('payloads', () => {
  const attack = (kind: string, lists: string) =>
    tpl(
      `${head(`pay-${kind}`)}http:\n  - path: ["{{BaseURL}}/echo?u={{user}}&p={{pass}}"]\n    attack: ${kind}\n    payloads:\n${lists}    matchers: [{type: status, status: [200]}]\n`,
    );
  const sent = (from: number) => seen.slice(from).map((s) => s.url.replace('/echo?', ''));

  it('pairs values with pitchfork and tries every combination with clusterbomb', async () => {
    let from = seen.length;
    await run([attack('pitchfork', '      user: [admin, root]\n      pass: [a1, r1, extra]\n')]);
    expect(sent(from)).toEqual(['u=admin&p=a1', 'u=root&p=r1']);
    from = seen.length;
    await run([attack('clusterbomb', '      user: [admin, root]\n      pass: [a1, r1]\n')]);
    expect(sent(from).sort()).toEqual(['u=admin&p=a1', 'u=admin&p=r1', 'u=root&p=a1', 'u=root&p=r1']);
    from = seen.length;
    const one = tpl(
      `${head('pay-one')}http:\n  - path: ["{{BaseURL}}/echo?f={{file}}"]\n    payloads:\n      file: [a.txt, b.txt]\n    stop-at-first-match: true\n    matchers: [{type: word, words: ["f=a.txt"]}]\n`,
    );
    expect((await run([one])).matches).toHaveLength(1);
    expect(sent(from)).toEqual(['f=a.txt']);
  });

  it('reads payload files uploaded with the template line by line, like inline lists', async () => {
    const files = { 'helpers/users.txt': 'admin\r\nroot\n\n', 'helpers/pass.txt': 'a1\nr1\n' };
    let from = seen.length;
    await run([
      tpl(
        `${head('pay-files-pf')}http:\n  - path: ["{{BaseURL}}/echo?u={{user}}&p={{pass}}"]\n    attack: pitchfork\n    payloads:\n      user: helpers/users.txt\n      pass: helpers/pass.txt\n    matchers: [{type: status, status: [200]}]\n`,
        files,
      ),
    ]);
    expect(sent(from)).toEqual(['u=admin&p=a1', 'u=root&p=r1']);
    from = seen.length;
    await run([
      tpl(
        `${head('pay-files-cb')}http:\n  - path: ["{{BaseURL}}/echo?u={{user}}&p={{pass}}"]\n    attack: clusterbomb\n    payloads:\n      user: helpers/users.txt\n      pass: [x]\n    matchers: [{type: status, status: [200]}]\n`,
        files,
      ),
    ]);
    expect(sent(from).sort()).toEqual(['u=admin&p=x', 'u=root&p=x']);
  });

  it('refuses a template whose payload file was not uploaded, naming the file', () => {
    const v = validateTemplate(
      `${head('pay-missing')}http:\n  - path: ["{{BaseURL}}/?u={{user}}"]\n    payloads:\n      user: helpers/wordlists/users.txt\n    matchers: [{type: status, status: [200]}]\n`,
      { payloadFiles: { 'other.txt': 'a' } },
    );
    expect(v.ok).toBe(false);
    if (!v.ok)
      expect(v.errors).toContainEqual({
        path: 'http[0].payloads.user',
        message: expect.stringMatching(/payload file "helpers\/wordlists\/users\.txt" was not uploaded/),
      });
  });
});

describe('self-contained templates', () => {
  it('runs requests inside the scan scope and skips, without failing, those that leave it', async () => {
    const t = tpl(
      `${head('self', 'self-contained: true\n')}http:\n  - raw:\n      - |\n        GET ${base}/echo?self HTTP/1.1\n        Host: 127.0.0.1:${new URL(base).port}\n\n      - |\n        GET https://api.example.invalid/users HTTP/1.1\n        Host: api.example.invalid\n\n    matchers: [{type: word, words: ["GET /echo?self"]}]\n`,
    );
    const { matches, stats } = await run([t]);
    expect(matches.map((m) => m.url)).toEqual([`${base}/echo?self`]);
    expect(stats.errors).toBe(0);
    expect(stats.skipped).toBe(1);
    expect(stats.skippedSamples[0]).toMatch(/https:\/\/api\.example\.invalid is outside the scan's scope/);
  });
});
