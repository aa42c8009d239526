// The template engine and scanner against real loopback servers: matcher and extractor semantics,
// filters, variables, redirects inside and outside the scope, request sharing, target handling,
// tenant templates, cancellation, and the CLI's share.
// Over 500 lines on purpose: one feature's cases share a single app, tenants and loopback peers set up once; splitting
// them would repeat that set-up in every file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizedFindingSchema } from '../../../findings/index.ts';
import { UsageError } from '../../commands/common.ts';
import { createScopedHttp, sameOrigin } from '../http/scoped-http.ts';
import { ScannerError, type ScanTask } from '../types.ts';
import { templateCli } from './cli.ts';
import {
  builtinTemplates,
  createTemplateScanner,
  runTemplates,
  selectTemplates,
  templateFindings,
  templateTarget,
  validateTemplate,
  type Template,
} from './index.ts';

interface Server {
  url: string;
  port: number;
  hits: string[];
  close(): Promise<void>;
}

async function serve(
  handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void,
): Promise<Server> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => handler(req, res, body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    hits,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let app: Server;
let offScope: Server;

beforeAll(async () => {
  offScope = await serve((_req, res) => res.end('offscope-secret'));
  app = await serve((req, res, body) => {
    const path = new URL(req.url!, 'http://x').pathname;
    switch (path) {
      case '/page':
        res.writeHead(200, { 'content-type': 'text/html', 'x-api-version': '4.2', 'set-cookie': 'sid=abc' });
        return res.end('<html><title>Acme Admin</title>Version: 1.2.3 token=abc123 token=def456</html>');
      case '/echo':
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end(`${req.method} ${req.url} probe=${req.headers['x-probe'] ?? ''} body=${body}`);
      case '/bytes':
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return res.end(Buffer.from('00ff1f8b0800', 'hex'));
      case '/hop':
        res.writeHead(302, { location: '/landing' });
        return res.end();
      case '/landing':
        return res.end('landed-ok');
      case '/away':
        res.writeHead(302, { location: `${offScope.url}/stolen` });
        return res.end();
      case '/hostile':
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end(`${'a'.repeat(256 * 1024)}!${'<title>Index of /'.repeat(4096)}${' '.repeat(64 * 1024)}`);
      case '/slow':
        return; // never answers: the cancellation test aborts it
      default:
        res.writeHead(404);
        return res.end('nothing here');
    }
  });
});

afterAll(async () => {
  await Promise.all([app?.close(), offScope?.close()]);
});

function tpl(yaml: string): Template {
  const v = validateTemplate(yaml);
  if (!v.ok) throw new Error(JSON.stringify(v.errors));
  return v.template;
}

/** A template with one GET block on `path` and the given block fields (YAML, indented 4). */
function block(id: string, path: string, fields: string, severity = 'medium', tags = 'test'): string {
  return `id: ${id}\ninfo:\n  name: ${id} name\n  severity: ${severity}\n  tags: ${tags}\nhttp:\n  - method: GET\n    path: ["{{BaseURL}}${path}"]\n${fields}`;
}

async function run(templates: Template[], base = app.url, signal = new AbortController().signal) {
  const client = createScopedHttp({ inScope: sameOrigin(base), signal, ratePerSecond: 1000 });
  try {
    return await runTemplates({ baseUrl: new URL(base), templates, http: client, signal });
  } finally {
    client.close();
  }
}

const matched = async (fields: string, path = '/page') =>
  (await run([tpl(block('m', path, fields))])).matches.length > 0;

function task(target: string, options: Record<string, unknown> = {}, extra: Partial<ScanTask> = {}): ScanTask {
  return {
    target,
    options: { rateLimit: 1000, ...options },
    chunk: null,
    signal: new AbortController().signal,
    progress: () => undefined,
    ...extra,
  };
}

describe('matchers', () => {
  it.each([
    ['word or', '    matchers: [{type: word, words: [nope, Acme]}]\n', true],
    ['word and', '    matchers: [{type: word, words: [nope, Acme], condition: and}]\n', false],
    ['word and, all present', '    matchers: [{type: word, words: [Acme, Admin], condition: and}]\n', true],
    ['word case-sensitive', '    matchers: [{type: word, words: [acme admin]}]\n', false],
    ['word case-insensitive', '    matchers: [{type: word, words: [ACME ADMIN], case-insensitive: true}]\n', true],
    ['negative', '    matchers: [{type: word, words: [Acme], negative: true}]\n', false],
    ['negative of absent', '    matchers: [{type: word, words: [Zebra], negative: true}]\n', true],
    ['body word not in header', '    matchers: [{type: word, part: header, words: [Acme]}]\n', false],
    [
      'header word (names as nuclei dumps them)',
      '    matchers: [{type: word, part: header, words: ["X-Api-Version: 4.2"]}]\n',
      true,
    ],
    [
      'header word as the server wrote it',
      '    matchers: [{type: word, part: header, words: ["x-api-version: 4.2"]}]\n',
      false,
    ],
    ['header word not in body', '    matchers: [{type: word, part: body, words: [x-api-version]}]\n', false],
    ['all part', '    matchers: [{type: word, part: all, words: ["4.2", "Acme"], condition: and}]\n', true],
    ['named header part', '    matchers: [{type: word, part: x-api-version, words: ["4.2"]}]\n', true],
    ['set-cookie part', '    matchers: [{type: word, part: set_cookie, words: ["sid=abc"]}]\n', true],
    ['status hit', '    matchers: [{type: status, status: [404, 200]}]\n', true],
    ['status miss', '    matchers: [{type: status, status: [404]}]\n', false],
    ['size hit', '    matchers: [{type: size, size: [78]}]\n', true],
    ['size miss', '    matchers: [{type: size, size: [77]}]\n', false],
    ['regex', "    matchers: [{type: regex, regex: ['Version: \\d+\\.\\d+']}]\n", true],
    ['regex case-insensitive flag', "    matchers: [{type: regex, regex: ['(?i)acme admin']}]\n", true],
    ['regex and', "    matchers: [{type: regex, regex: ['Acme', 'Zebra'], condition: and}]\n", false],
    [
      'dsl',
      "    matchers: [{type: dsl, dsl: [\"status_code == 200 && x_api_version == '4.2' && contains(body, 'Acme')\"]}]\n",
      true,
    ],
    [
      'dsl and',
      "    matchers: [{type: dsl, dsl: ['status_code == 200', 'status_code == 201'], condition: and}]\n",
      false,
    ],
    [
      'matchers-condition and',
      '    matchers-condition: and\n    matchers:\n      - {type: status, status: [200]}\n      - {type: word, words: [Zebra]}\n',
      false,
    ],
    [
      'matchers-condition or',
      '    matchers:\n      - {type: status, status: [500]}\n      - {type: word, words: [Acme]}\n',
      true,
    ],
  ])('%s', async (_name, fields, want) => {
    expect(await matched(fields)).toBe(want);
  });

  it('binary matchers compare raw bytes, including ones that are not UTF-8', async () => {
    expect(await matched('    matchers: [{type: binary, binary: ["1f8b08"]}]\n', '/bytes')).toBe(true);
    expect(await matched('    matchers: [{type: binary, binary: ["1f8b09"]}]\n', '/bytes')).toBe(false);
  });

  it('reports one result per fired named matcher, and one result for an and block', async () => {
    const or = tpl(
      block(
        'named',
        '/page',
        '    matchers:\n      - {type: word, name: has-acme, words: [Acme]}\n      - {type: word, name: has-zebra, words: [Zebra]}\n      - {type: status, name: ok, status: [200]}\n      - {type: status, status: [200]}\n',
      ),
    );
    const and = tpl(
      block(
        'named-and',
        '/page',
        '    matchers-condition: and\n    matchers:\n      - {type: word, name: has-acme, words: [Acme]}\n      - {type: status, name: ok, status: [200]}\n',
      ),
    );
    const { matches } = await run([or, and]);
    expect(matches.map((m) => [m.template.id, m.matcher ?? null])).toEqual([
      ['named', 'has-acme'],
      ['named', 'ok'],
      ['named-and', null],
    ]);
    const findings = templateFindings(matches);
    expect(findings.map((f) => [f.ruleId, f.discriminator, f.title])).toEqual([
      ['named', 'has-acme', 'named name (has-acme)'],
      ['named', 'ok', 'named name (ok)'],
      ['named-and', undefined, 'named-and name'],
    ]);
    for (const f of findings) normalizedFindingSchema.parse(f);
  });

  it('stops a request block at its first match, and the whole template with a top-level stop-at-first-match', async () => {
    const blocks = `http:\n  - path: ["{{BaseURL}}/page?first=1", "{{BaseURL}}/page?again=1"]\n    stop-at-first-match: true\n    matchers: [{type: status, status: [200]}]\n  - path: ["{{BaseURL}}/page?third=1"]\n    matchers: [{type: status, status: [200]}]\n`;
    const block = tpl(`id: first-block\ninfo: {name: F, severity: low}\n${blocks}`);
    let before = app.hits.length;
    expect((await run([block])).matches.map((m) => m.url)).toEqual([
      `${app.url}/page?first=1`,
      `${app.url}/page?third=1`,
    ]);
    expect(app.hits.slice(before)).toEqual(['GET /page?first=1', 'GET /page?third=1']);
    const whole = tpl(
      `id: first-template\ninfo: {name: F, severity: low}\nstop-at-first-match: true\n${blocks.replace(/\?/g, '?t&')}`,
    );
    before = app.hits.length;
    expect((await run([whole])).matches.map((m) => m.url)).toEqual([`${app.url}/page?t&first=1`]);
    expect(app.hits.slice(before)).toEqual(['GET /page?t&first=1']);
  });
});

describe('extractors', () => {
  it('extracts regex groups and header values (kval keys with - read as _), hiding internal ones', async () => {
    const t = tpl(
      block(
        'ex',
        '/page',
        "    matchers: [{type: status, status: [200]}]\n    extractors:\n      - {type: regex, name: token, group: 1, regex: ['token=(\\w+)']}\n      - {type: regex, regex: ['Version: [0-9.]+']}\n      - {type: kval, kval: [x_api_version, Content-Type]}\n      - {type: regex, internal: true, regex: ['Acme']}\n",
      ),
    );
    // As nuclei: with no named matcher, a named extractor makes the result (its values only).
    const { matches } = await run([t]);
    expect(matches.map((m) => [m.extractor, m.extracted])).toEqual([['token', ['abc123', 'def456']]]);
    const unnamed = tpl(
      t.id === 'ex'
        ? block(
            'ex2',
            '/page',
            "    matchers: [{type: status, status: [200]}]\n    extractors:\n      - {type: regex, regex: ['Version: [0-9.]+']}\n      - {type: kval, kval: [x_api_version, Content-Type]}\n      - {type: regex, internal: true, regex: ['Acme']}\n",
          )
        : '',
    );
    expect((await run([unnamed])).matches.map((m) => m.extracted)).toEqual([['Version: 1.2.3', '4.2', 'text/html']]);
  });

  it('reports an extractor-only block when it extracts something', async () => {
    const hit = tpl(
      block('only-ex', '/page', "    extractors: [{type: regex, group: 1, regex: ['Version: ([0-9.]+)']}]\n"),
    );
    const miss = tpl(block('only-ex-miss', '/page', "    extractors: [{type: regex, regex: ['Zebra \\d+']}]\n"));
    const { matches } = await run([hit, miss]);
    expect(matches.map((m) => [m.template.id, m.extracted])).toEqual([['only-ex', ['1.2.3']]]);
  });
});

describe('requests', () => {
  it('fills in the URL variables in paths, headers and bodies and sends POST bodies', async () => {
    const t = tpl(
      `id: vars\ninfo: {name: V, severity: info}\nhttp:\n  - method: POST\n    path: ["{{RootURL}}/echo?h={{Host}}&p={{Port}}&s={{Scheme}}"]\n    headers: {X-Probe: "{{Hostname}}"}\n    body: "base={{BaseURL}}"\n    matchers: [{type: status, status: [200]}]\n    extractors: [{type: regex, regex: ['.+']}]\n`,
    );
    const { matches } = await run([t], `${app.url}/sub/`);
    expect(matches[0]!.extracted).toEqual([
      `POST /echo?h=127.0.0.1&p=${app.port}&s=http probe=127.0.0.1:${app.port} body=base=${app.url}/sub`,
    ]);
    expect(templateFindings(matches)[0]!.evidence!.curl).toBe(
      `curl -sk -X POST '${app.url}/echo?h=127.0.0.1&p=${app.port}&s=http' -H 'X-Probe: 127.0.0.1:${app.port}' --data-raw 'base=${app.url}/sub'`,
    );
  });

  it('sends an identical GET once per scan but never shares POSTs', async () => {
    const g = (id: string) => tpl(block(id, '/echo?dedupe=1', '    matchers: [{type: status, status: [200]}]\n'));
    const p = (id: string) =>
      tpl(
        `id: ${id}\ninfo: {name: P, severity: info}\nhttp:\n  - method: POST\n    path: ["{{BaseURL}}/echo?dedupe=2"]\n    matchers: [{type: status, status: [200]}]\n`,
      );
    const before = app.hits.length;
    const { matches, stats } = await run([g('g1'), g('g2'), g('g3'), p('p1'), p('p2')]);
    expect(matches).toHaveLength(5);
    expect(app.hits.slice(before).sort()).toEqual(['GET /echo?dedupe=1', 'POST /echo?dedupe=2', 'POST /echo?dedupe=2']);
    expect(stats.cacheHits).toBe(2);
    expect(stats.requests).toBe(3);
  });

  it('follows redirects inside the scope only when the template asks', async () => {
    const follow = tpl(
      block('follow', '/hop', '    redirects: true\n    matchers: [{type: word, words: [landed-ok]}]\n'),
    );
    const stay = tpl(block('stay', '/hop', '    matchers: [{type: word, words: [landed-ok]}]\n'));
    const status = tpl(block('stay-302', '/hop', '    matchers: [{type: status, status: [302]}]\n'));
    const { matches } = await run([follow, stay, status]);
    expect(matches.map((m) => [m.template.id, m.url])).toEqual([
      ['follow', `${app.url}/landing`],
      ['stay-302', `${app.url}/hop`],
    ]);
    const finding = templateFindings(matches)[0]!;
    expect(finding.location!.url).toBe(`${app.url}/landing`);
    expect(finding.evidence!.data).toMatchObject({ requestedUrl: `${app.url}/hop`, redirects: [`${app.url}/hop`] });
  });

  it('never follows a redirect off the scope', async () => {
    const t = tpl(
      block(
        'escape',
        '/away',
        '    redirects: true\n    max-redirects: 5\n    matchers: [{type: word, words: [offscope-secret]}]\n',
      ),
    );
    const { matches, stats } = await run([t]);
    expect(matches).toEqual([]);
    expect(stats.errors).toBe(0);
    expect(offScope.hits).toEqual([]);
  });

  it('matches crafted bodies in linear time: nested repetition and every built-in template', async () => {
    const evil = tpl(
      block(
        'evil',
        '/hostile',
        "    matchers: [{type: regex, regex: ['^(a+)+$', '(?i)(?:a|aa)+b', '(\\s*\\s*)*z']}]\n",
      ),
    );
    const builtins = builtinTemplates().map((t) => ({
      ...t,
      requests: t.requests.map((b) => ({ ...b, paths: ['{{BaseURL}}/hostile'] })),
    }));
    const { matches, stats } = await run([evil, ...builtins]);
    expect(stats.errors).toBe(0);
    expect(
      matches
        .map((m) => m.template.id)
        .filter((id) => id !== 'rampart-missing-security-headers' && id !== 'rampart-tech-detect'),
    ).toEqual([]);
  });

  it('stops on cancellation and rejects with the abort reason', async () => {
    const ac = new AbortController();
    const slow = tpl(block('slow', '/slow', '    matchers: [{type: status, status: [200]}]\n'));
    const others = Array.from({ length: 5 }, (_, i) =>
      tpl(block(`after-${i}`, `/page?after=${i}`, '    matchers: [{type: status, status: [200]}]\n')),
    );
    const before = app.hits.length;
    const scan = run([slow, ...others], app.url, ac.signal);
    await expect.poll(() => app.hits.slice(before).includes('GET /slow')).toBe(true);
    ac.abort(new Error('cancelled by test'));
    await expect(scan).rejects.toThrow('cancelled by test');
  });
});

describe('filters', () => {
  const templates = [
    tpl(block('crit-a', '/page', '    matchers: [{type: status, status: [200]}]\n', 'critical', 'cve,rce')),
    tpl(block('high-b', '/page', '    matchers: [{type: status, status: [200]}]\n', 'high', 'exposure')),
    tpl(block('info-c', '/page', '    matchers: [{type: status, status: [200]}]\n', 'info', 'tech,exposure')),
  ];
  const ids = (f: Parameters<typeof selectTemplates>[1]) => selectTemplates(templates, f).map((t) => t.id);

  it('selects by severity, any tag, and id together', () => {
    expect(ids({ severities: ['critical', 'high', 'info'], tags: [], templateIds: [] })).toEqual([
      'crit-a',
      'high-b',
      'info-c',
    ]);
    expect(ids({ severities: ['high', 'info'], tags: [], templateIds: [] })).toEqual(['high-b', 'info-c']);
    expect(ids({ severities: ['critical', 'high', 'info'], tags: ['EXPOSURE', 'nope'], templateIds: [] })).toEqual([
      'high-b',
      'info-c',
    ]);
    expect(
      ids({ severities: ['critical', 'high', 'info'], tags: ['exposure'], templateIds: ['info-c', 'crit-a'] }),
    ).toEqual(['info-c']);
    expect(ids({ severities: ['low'], tags: [], templateIds: [] })).toEqual([]);
  });

  it('takes the filters from the options, and from the chunk spec when the scan is split', async () => {
    const scanner = createTemplateScanner();
    const total = builtinTemplates().length;
    const highs = builtinTemplates().filter((t) => t.info.severity === 'high').length;
    const byOptions = await scanner.scan(task(app.url, { severities: ['high'] }));
    expect(byOptions.templatesRun).toBe(highs);
    expect(byOptions.templatesAvailable).toBe(total);
    const byChunk = await scanner.scan(
      task(
        app.url,
        { severities: ['high'] },
        {
          chunk: {
            index: 0,
            count: 2,
            spec: { kind: 'template', severities: ['info'], tags: ['git'], templateIds: [] },
          },
        },
      ),
    );
    expect(byChunk.templatesRun).toBe(
      builtinTemplates().filter((t) => t.info.severity === 'info' && t.info.tags.includes('git')).length,
    );
    const byId = await scanner.scan(task(app.url, { templateIds: ['rampart-git-head', 'rampart-htpasswd'] }));
    expect(byId.templatesRun).toBe(2);
    await expect(scanner.scan(task(app.url, { severities: ['severe'] }))).rejects.toThrow(ScannerError);
  });
});

describe('scanner', () => {
  it('runs tenant templates from the options and skips invalid or duplicate ones with a warning', async () => {
    const scanner = createTemplateScanner();
    const good = block(
      'tenant-acme',
      '/page',
      '    matchers: [{type: word, name: title, words: [Acme Admin]}]\n',
      'high',
    );
    const out = await scanner.run(
      task(app.url, {
        templateIds: ['tenant-acme', 'rampart-git-head'],
        customTemplates: [
          { id: 'upl-1', yaml: good },
          { id: 'upl-2', yaml: block('tenant-bad', '/page', "    matchers: [{type: regex, regex: ['(?<=a)b']}]\n") },
          { id: 'upl-3', yaml: block('rampart-git-head', '/page', '    matchers: [{type: status, status: [200]}]\n') },
          { id: 'upl-4', yaml: 42 },
        ],
      }),
    );
    expect(out.findings.map((f) => [f.ruleId, f.discriminator, f.severity])).toEqual([
      ['tenant-acme', 'title', 'high'],
    ]);
    expect(out.details!.warnings).toEqual([
      'Custom template upl-2: skipped, invalid: http[0].matchers[0].regex[0]: lookbehind (?<=…) is not supported (templates use RE2 syntax)',
      'Custom template upl-3: skipped, the template id rampart-git-head is already taken',
      expect.stringMatching(/^Custom template upl-4: skipped, invalid: /),
    ]);
    expect(out.details!.templatesRun).toBe(2);
  });

  it('scans a host over http when https does not answer, and reports progress', async () => {
    const progress: number[] = [];
    const scanner = createTemplateScanner({
      extraTemplates: [block('extra-page', '/page', '    matchers: [{type: word, words: [Acme]}]\n')],
    });
    const r = await scanner.scan(
      task(`127.0.0.1:${app.port}`, { templateIds: ['extra-page'] }, { progress: (p) => progress.push(p) }),
    );
    expect(r.baseUrl).toBe(`${app.url}/`);
    expect(r.matches.map((m) => m.url)).toEqual([`${app.url}/page`]);
    expect(progress.at(-1)).toBe(100);
  });

  it('returns an empty result for a host without a web server, and a retryable error for a dead URL', async () => {
    const dead = await serve(() => undefined);
    const port = dead.port;
    await dead.close();
    const scanner = createTemplateScanner({ timeoutMs: 2_000 });
    const out = await scanner.run(task(`127.0.0.1:${port}`));
    expect(out.findings).toEqual([]);
    expect(out.details).toMatchObject({
      baseUrl: null,
      templatesRun: 0,
      warnings: [expect.stringMatching(/^No web server answered on 127\.0\.0\.1: .*connection refused/)],
    });
    // Refused on both web ports: the host answered that nothing serves the web, a result.
    expect(out.inconclusive).toBeUndefined();
    expect(out.coverage?.urls).toEqual([]);
    expect(out.coverage?.templates?.length).toBeGreaterThan(30);
    const err = await scanner.run(task(`http://127.0.0.1:${port}/`)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScannerError);
    expect((err as ScannerError).retryable).toBe(true);
  });

  it('is inconclusive for a host that does not answer at all (down), and names the templates it ran otherwise', async () => {
    const scanner = createTemplateScanner({ timeoutMs: 500 });
    // 100::/64 discards everything (RFC 6666): no answer, not even a refusal.
    const down = await scanner.run(task('[100::1]'));
    expect(down.findings).toEqual([]);
    expect(down.inconclusive).toMatch(/^No web server answered on 100::1: /);
    const up = await scanner.run(task(app.url, { templateIds: ['rampart-git-config', 'rampart-dotenv-file'] }));
    expect(up.inconclusive).toBeUndefined();
    expect(up.coverage).toEqual({ templates: ['rampart-dotenv-file', 'rampart-git-config'], urls: [`${app.url}/`] });
  });

  it('reads targets as URLs or hosts', () => {
    expect(templateTarget('https://a.example:8443/app/?q=1#x')).toEqual({
      kind: 'url',
      base: new URL('https://a.example:8443/app/'),
    });
    expect(templateTarget('a.example')).toEqual({
      kind: 'host',
      host: 'a.example',
      candidates: [new URL('https://a.example/'), new URL('http://a.example/')],
    });
    expect(templateTarget('[::1]')).toEqual({
      kind: 'host',
      host: '::1',
      candidates: [new URL('https://[::1]/'), new URL('http://[::1]/')],
    });
    expect(() => templateTarget('ftp://a.example/')).toThrow(ScannerError);
    expect(() => templateTarget('not a host')).toThrow(ScannerError);
  });

  it('refuses invalid extra templates when created', () => {
    expect(() => createTemplateScanner({ extraTemplates: ['id: x\n'] })).toThrow(
      /Extra template #1 is invalid: info: the template needs an info block/,
    );
  });
});

describe('cli', () => {
  it('loads a template directory, turns flags into options and prints the matches table', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rampart-templates-'));
    try {
      writeFileSync(
        join(dir, 'acme.yaml'),
        block('cli-acme', '/page', '    matchers: [{type: word, name: title, words: [Acme]}]\n', 'high', 'acme'),
      );
      const { scanner, options } = templateCli.prepare(
        { templates: dir, severity: 'high,critical', tags: 'acme', id: 'cli-acme', rate: '500' },
        app.url,
      );
      expect(options).toEqual({
        severities: ['high', 'critical'],
        tags: ['acme'],
        templateIds: ['cli-acme'],
        rateLimit: 500,
      });
      const withVars = templateCli.prepare({ templates: dir, var: ['user=alice', 'pass=a=b'] }, app.url).options as {
        variables?: unknown;
      };
      expect(withVars.variables).toEqual({ user: 'alice', pass: 'a=b' });
      expect(() => templateCli.prepare({ var: ['novalue'] }, app.url)).toThrow(/--var: give NAME=VALUE/);
      const out = await scanner.run(task(app.url, options));
      const lines = templateCli.table(out.details!, { durationMs: 1200 });
      expect(lines[0]).toBe(
        `template scan of ${app.url}/: 1 of ${builtinTemplates().length + 1} templates run, 2 requests sent (0 shared), 0 failed, 1 match in 1.2 s`,
      );
      expect(lines.slice(2).join('\n')).toMatch(
        new RegExp(`^SEVERITY +TEMPLATE +MATCHER +URL\n[- ]+\nHIGH +cli-acme +title +${app.url}/page$`),
      );
      expect(templateCli.json(out.details!)).toMatchObject({
        templatesRun: 1,
        matches: [{ severity: 'high', templateId: 'cli-acme', matcher: 'title', url: `${app.url}/page` }],
      });
      writeFileSync(
        join(dir, 'bad.yml'),
        'id: bad\ninfo: {name: B, severity: low}\nhttp:\n  - raw: ["GET / HTTP/1.1"]\n    unsafe: true\n',
      );
      expect(() => templateCli.prepare({ templates: dir }, app.url)).toThrow(
        /--templates: 1 invalid template:\n {2}.*bad\.yml: http\[0\]\.unsafe: unsafe \(raw socket\) requests are not supported/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(() => templateCli.prepare({ severity: 'severe' }, app.url)).toThrow(UsageError);
    expect(() => templateCli.prepare({ rate: '0' }, app.url)).toThrow(/--rate must be between 1 and 1000/);
    expect(() => templateCli.prepare({ templates: '/nonexistent-rampart-dir' }, app.url)).toThrow(/does not exist/);
  });
});
