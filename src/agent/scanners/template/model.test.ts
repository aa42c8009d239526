// The template parser and validator: a full template in the supported subset, and each kind of
// invalid input with the exact path and message a tenant sees on upload.
import { describe, expect, it } from 'vitest';
import { validateTemplate, type TemplateValidation } from './model.ts';
import { compileTemplateRegex, LINEAR_REGEX } from './regex.ts';

const GOOD = `
id: acme-debug-page
info:
  name: Acme debug page
  author: alice, bob
  severity: High
  description: The debug page is public.
  remediation: Turn it off.
  reference: https://example.com/advisory
  tags: [Debug, acme]
  classification:
    cve-id: CVE-2024-12345
    cwe-id: [CWE-215, CWE-200]
    cvss-metrics: CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N
    cvss-score: 7.5
requests:
  - method: post
    path:
      - "{{BaseURL}}/debug?x={{Host}}"
      - "{{RootURL}}/debug"
    headers:
      X-Probe: "{{Hostname}}"
    body: "a=1"
    host-redirects: true
    max-redirects: 2
    stop-at-first-match: true
    matchers-condition: and
    matchers:
      - type: status
        status: [200]
      - type: word
        name: banner
        part: response
        words: [DEBUG, Trace]
        condition: and
        case-insensitive: true
      - type: regex
        part: content-type
        regex: ['(?i)^text/html']
      - type: size
        size: [10, 20]
      - type: dsl
        dsl:
          - "status_code == 200 && contains(body, 'x')"
      - type: binary
        binary: ["cafe"]
        negative: true
    extractors:
      - type: regex
        name: token
        group: 1
        regex: ['token=(\\w+)']
      - type: kval
        kval: [X-Debug-Token]
        internal: true
`;

function errorsOf(v: TemplateValidation) {
  expect(v.ok).toBe(false);
  return v.ok ? [] : v.errors;
}

/** A minimal valid template with one block, to vary one field at a time. */
function withBlock(block: string): string {
  return `id: t1\ninfo:\n  name: T\n  severity: low\nhttp:\n${block}`;
}

describe('validateTemplate', () => {
  it('parses the supported subset into a runnable template', () => {
    const v = validateTemplate(GOOD);
    if (!v.ok) throw new Error(JSON.stringify(v.errors));
    const t = v.template;
    expect(t.id).toBe('acme-debug-page');
    expect(t.info).toMatchObject({
      name: 'Acme debug page',
      authors: ['alice', 'bob'],
      severity: 'high',
      references: ['https://example.com/advisory'],
      tags: ['debug', 'acme'],
      cve: ['CVE-2024-12345'],
      cwe: ['CWE-215', 'CWE-200'],
      cvssScore: 7.5,
      cvssMetrics: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N',
    });
    const b = t.requests[0]!;
    expect(b.body!.parts).toEqual([{ k: 'text', v: 'a=1' }]);
    expect(b).toMatchObject({
      method: 'POST',
      maxRedirects: 2,
      stopAtFirstMatch: true,
      matchersCondition: 'and',
      headers: { 'X-Probe': '{{Hostname}}' },
    });
    expect(b.matchers.map((m) => [m.type, m.part])).toEqual([
      ['status', 'body'],
      ['word', 'response'],
      ['regex', 'content_type'],
      ['size', 'body'],
      ['dsl', 'body'],
      ['binary', 'body'],
    ]);
    expect(b.matchers[1]).toMatchObject({
      name: 'banner',
      condition: 'and',
      caseInsensitive: true,
      words: ['debug', 'trace'],
    });
    expect(b.matchers[5]!.negative).toBe(true);
    expect(b.extractors[0]).toMatchObject({ type: 'regex', name: 'token', group: 1, part: 'body', internal: false });
    expect(b.extractors[1]).toMatchObject({ type: 'kval', part: 'header', keys: ['x_debug_token'], internal: true });
  });

  it('maps severity unknown to info and accepts tags and references as lists or comma strings', () => {
    const v = validateTemplate(
      `id: t2\ninfo:\n  name: T\n  severity: unknown\n  tags: "a, b,c"\n  reference: [https://a.example, not a url]\nhttp:\n  - path: ["{{BaseURL}}"]\n    matchers: [{type: status, status: [200]}]\n`,
    );
    if (!v.ok) throw new Error(JSON.stringify(v.errors));
    expect(v.template.info.severity).toBe('info');
    expect(v.template.info.tags).toEqual(['a', 'b', 'c']);
    expect(v.template.info.references).toEqual(['https://a.example', 'not a url']);
    expect(v.template.requests[0]!.method).toBe('GET');
    expect(v.template.requests[0]!.maxRedirects).toBe(0);
  });

  it.each([
    [
      'lookahead',
      withBlock(
        '  - path: ["{{BaseURL}}/"]\n    matchers:\n      - type: word\n        words: [a]\n      - type: regex\n        regex: ["a(?=b)"]\n',
      ),
      'http[0].matchers[1].regex[0]',
      /^lookahead \(\?=…\) is not supported \(templates use RE2 syntax\)$/,
    ],
    [
      'lookbehind',
      withBlock('  - path: ["{{BaseURL}}/"]\n    matchers: [{type: regex, regex: ["(?<!x)y"]}]\n'),
      'http[0].matchers[0].regex[0]',
      /negative lookbehind/,
    ],
    [
      'backreference',
      withBlock('  - path: ["{{BaseURL}}/"]\n    matchers: [{type: regex, regex: ["(a)\\\\1"]}]\n'),
      'http[0].matchers[0].regex[0]',
      /backreference \\1/,
    ],
    [
      'ambiguous class',
      withBlock('  - path: ["{{BaseURL}}/"]\n    matchers: [{type: regex, regex: ["[]a]"]}]\n'),
      'http[0].matchers[0].regex[0]',
      /must be escaped/,
    ],
    [
      'invalid regex',
      withBlock('  - path: ["{{BaseURL}}/"]\n    matchers: [{type: regex, regex: ["a[b"]}]\n'),
      'http[0].matchers[0].regex[0]',
      /invalid regular expression/,
    ],
    [
      'long regex',
      withBlock(`  - path: ["{{BaseURL}}/"]\n    matchers: [{type: regex, regex: ["${'a'.repeat(1001)}"]}]\n`),
      'http[0].matchers[0].regex[0]',
      /1001 characters long; at most 1000/,
    ],
    [
      'extractor regex',
      withBlock('  - path: ["{{BaseURL}}/"]\n    extractors: [{type: regex, regex: ["(?=x)"]}]\n'),
      'http[0].extractors[0].regex[0]',
      /lookahead/,
    ],
    [
      'path off the site',
      withBlock('  - path: ["https://evil.example/x"]\n    matchers: [{type: status, status: [200]}]\n'),
      'http[0].path[0]',
      /must start with \{\{BaseURL\}\} or \{\{RootURL\}\}/,
    ],
    [
      'userinfo trick',
      withBlock('  - path: ["{{BaseURL}}@evil.example/"]\n    matchers: [{type: status, status: [200]}]\n'),
      'http[0].path[0]',
      /must start with \/, \? or #/,
    ],
    [
      'unknown matcher type',
      withBlock('  - path: ["{{BaseURL}}/"]\n    matchers: [{type: css, css: ["a"]}]\n'),
      'http[0].matchers[0].type',
      /must be word, regex, binary, status, size, dsl or xpath/,
    ],
    [
      'missing list',
      withBlock('  - path: ["{{BaseURL}}/"]\n    matchers: [{type: word}]\n'),
      'http[0].matchers[0]',
      /needs a words list/,
    ],
    [
      'mismatched list',
      withBlock('  - path: ["{{BaseURL}}/"]\n    matchers: [{type: word, words: [a], regex: [b]}]\n'),
      'http[0].matchers[0].regex',
      /does not use regex/,
    ],
    [
      'bad condition',
      withBlock(
        '  - path: ["{{BaseURL}}/"]\n    matchers-condition: xor\n    matchers: [{type: status, status: [200]}]\n',
      ),
      'http[0].matchers-condition',
      /"and" or "or"/,
    ],
    [
      'bad hex',
      withBlock('  - path: ["{{BaseURL}}/"]\n    matchers: [{type: binary, binary: ["xyz"]}]\n'),
      'http[0].matchers[0].binary[0]',
      /hex bytes/,
    ],
    ['unknown field', withBlock('  - path: ["{{BaseURL}}/"]\n    matcher: []\n'), 'http[0]', /unknown field matcher/],
    ['nothing to report', withBlock('  - path: ["{{BaseURL}}/"]\n'), 'http[0]', /needs matchers or extractors/],
    [
      'too many blocks',
      withBlock('  - path: ["{{BaseURL}}/"]\n    matchers: [{type: status, status: [200]}]\n'.repeat(11)),
      'http',
      /at most 10 requests/,
    ],
    [
      'too many matchers',
      withBlock(`  - path: ["{{BaseURL}}/"]\n    matchers:\n${'      - {type: status, status: [200]}\n'.repeat(51)}`),
      'http[0].matchers',
      /at most 50 matchers/,
    ],
    [
      'bad id',
      'id: "bad id!"\ninfo: {name: T, severity: low}\nhttp:\n  - path: ["{{BaseURL}}/"]\n    matchers: [{type: status, status: [200]}]\n',
      'id',
      /letters and digits/,
    ],
    [
      'missing severity',
      'id: t1\ninfo: {name: T}\nhttp:\n  - path: ["{{BaseURL}}/"]\n    matchers: [{type: status, status: [200]}]\n',
      'info.severity',
      /needs info.severity/,
    ],
    [
      'bad severity',
      'id: t1\ninfo: {name: T, severity: severe}\nhttp:\n  - path: ["{{BaseURL}}/"]\n    matchers: [{type: status, status: [200]}]\n',
      'info.severity',
      /must be info, low/,
    ],
    ['no requests', 'id: t1\ninfo: {name: T, severity: low}\n', 'http', /needs an http, network or ssl list/],
    [
      'cvss out of range',
      'id: t1\ninfo: {name: T, severity: low, classification: {cvss-score: 11}}\nhttp:\n  - path: ["{{BaseURL}}/"]\n    matchers: [{type: status, status: [200]}]\n',
      'info.classification.cvss-score',
      /0 to 10/,
    ],
    [
      'not YAML',
      'id: [unclosed\n',
      'line 2',
      /^not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a \]$/,
    ],
    ['duplicate keys', 'id: a\nid: b\n', 'line 2', /not valid YAML/],
    ['not a mapping', '- a\n- b\n', '(template)', /YAML mapping/],
    [
      'unsafe raw requests',
      withBlock('  - raw: ["GET / HTTP/1.1"]\n    unsafe: true\n    matchers: [{type: status, status: [200]}]\n'),
      'http[0].unsafe',
      /unsafe \(raw socket\) requests are not supported/,
    ],
    [
      'raw request off the site',
      withBlock('  - raw: ["GET https://evil.example/ HTTP/1.1"]\n    matchers: [{type: status, status: [200]}]\n'),
      'http[0].raw[0]',
      /needs self-contained/,
    ],
    [
      'raw without request line',
      withBlock('  - raw: ["nothing"]\n    matchers: [{type: status, status: [200]}]\n'),
      'http[0].raw[0]',
      /request line/,
    ],
    [
      'unknown dsl function',
      withBlock('  - path: ["{{BaseURL}}/"]\n    matchers: [{type: dsl, dsl: ["nosuch(body) == \'x\'"]}]\n'),
      'http[0].matchers[0].dsl[0]',
      /unknown function nosuch\(\)/,
    ],
    [
      'dsl argument count',
      withBlock('  - path: ["{{BaseURL}}/"]\n    matchers: [{type: dsl, dsl: ["md5(body, body) == \'x\'"]}]\n'),
      'http[0].matchers[0].dsl[0]',
      /md5\(\) takes 1 argument, not 2/,
    ],
    [
      'unknown variable',
      withBlock('  - path: ["{{BaseURL}}/{{no.such}}"]\n    matchers: [{type: status, status: [200]}]\n'),
      'http[0].path[0]',
      /unknown variable \{\{no\.such\}\}/,
    ],
    [
      'interactsh',
      withBlock('  - path: ["{{BaseURL}}/?u={{interactsh-url}}"]\n    matchers: [{type: status, status: [200]}]\n'),
      'http[0].path[0]',
      /out-of-band \(interactsh\) checks need a callback address/,
    ],
    [
      'Host header',
      withBlock(
        '  - path: ["{{BaseURL}}/"]\n    headers: {Host: evil.example}\n    matchers: [{type: status, status: [200]}]\n',
      ),
      'http[0].headers.Host',
      /can only be \{\{Hostname\}\} or \{\{Host\}\}/,
    ],
    [
      'too many paths',
      withBlock(
        `  - path: [${Array.from({ length: 101 }, () => '"{{BaseURL}}/"').join(', ')}]\n    matchers: [{type: status, status: [200]}]\n`,
      ),
      'http[0].path',
      /at most 100 paths/,
    ],
    [
      'payload combinations',
      withBlock(
        `  - path: ["{{BaseURL}}/{{a}}{{b}}"]\n    attack: clusterbomb\n    payloads:\n      a: [${Array.from({ length: 50 }, (_, i) => i).join(',')}]\n      b: [${Array.from({ length: 50 }, (_, i) => i).join(',')}]\n    matchers: [{type: status, status: [200]}]\n`,
      ),
      'http[0].payloads',
      /2500 times; at most 2000/,
    ],
    [
      'batteringram over two lists',
      withBlock(
        '  - path: ["{{BaseURL}}/{{a}}{{b}}"]\n    payloads: {a: [1], b: [2]}\n    matchers: [{type: status, status: [200]}]\n',
      ),
      'http[0].attack',
      /single payload list/,
    ],
    [
      'payload file',
      withBlock(
        '  - path: ["{{BaseURL}}/{{a}}"]\n    payloads: {a: helpers/wordlists/users.txt}\n    matchers: [{type: status, status: [200]}]\n',
      ),
      'http[0].payloads.a',
      /payload file "helpers\/wordlists\/users\.txt" was not uploaded with the template/,
    ],
    [
      'json extractor outside the jq paths',
      withBlock('  - path: ["{{BaseURL}}/"]\n    extractors: [{type: json, json: [".a | select(.b)"]}]\n'),
      'http[0].extractors[0].json[0]',
      /must start with \./,
    ],
    [
      'bad method',
      withBlock('  - method: BREW\n    path: ["{{BaseURL}}/"]\n    matchers: [{type: status, status: [200]}]\n'),
      'http[0].method',
      /must be GET, HEAD/,
    ],
    [
      'dns template',
      'id: t1\ninfo: {name: T, severity: low}\ndns:\n  - name: "{{FQDN}}"\n',
      'dns',
      /dns templates are not supported/,
    ],
    [
      'flow',
      'id: t1\ninfo: {name: T, severity: low}\nflow: "for (const p of iterate(template.paths)) { http(1) }"\nhttp:\n  - path: ["{{BaseURL}}/"]\n    matchers: [{type: status, status: [200]}]\n',
      'flow',
      /only chains of protocol calls are supported/,
    ],
  ])('refuses %s with the path and a reason', (_name, text, path, message) => {
    const errors = errorsOf(validateTemplate(text));
    const hit = errors.find((e) => e.path === path);
    expect(hit, JSON.stringify(errors)).toBeDefined();
    expect(hit!.message).toMatch(message);
  });

  it('accepts out-of-band checks where callbacks are received, refusing those waiting for others', () => {
    const oob = (words: string) =>
      withBlock(
        `  - path: ["{{BaseURL}}/?u={{interactsh-url}}"]\n    matchers: [{type: word, part: interactsh_protocol, words: [${words}]}]\n`,
      );
    const ok = validateTemplate(oob('http'), { oob: { http: true, dns: false } });
    expect(ok.ok && ok.template.oob && ok.template.requests[0]!.oob).toBe(true);
    expect(errorsOf(validateTemplate(oob('dns'), { oob: { http: true, dns: false } }))).toEqual([
      {
        path: 'http',
        message: 'the out-of-band check waits for dns callbacks; this server receives http callbacks only',
      },
    ]);
    expect(errorsOf(validateTemplate(oob('http'))).map((e) => e.message)).toEqual([
      expect.stringMatching(/^\{\{interactsh-url\}\}: out-of-band/),
      expect.stringMatching(/^interactsh_protocol: out-of-band/),
    ]);
  });

  it('refuses templates over 64 KiB before parsing them', () => {
    const errors = errorsOf(validateTemplate(`id: t\n# ${'x'.repeat(70_000)}\n`));
    expect(errors).toEqual([{ path: '(template)', message: expect.stringMatching(/at most 65536 are allowed/) }]);
  });

  it('refuses alias bombs without expanding them', () => {
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 12; i++)
      lines.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(',')}]`,
      );
    const errors = errorsOf(validateTemplate(lines.join('\n')));
    expect(errors[0]!.message).toMatch(/not valid YAML/);
  });
});

describe('compileTemplateRegex', () => {
  it('turns leading inline flags into JavaScript flags and (?P<name>) into a named group', () => {
    const r = compileTemplateRegex('(?is)^a.b(?P<x>c)');
    if (!r.ok) throw new Error(r.message);
    expect(r.re.dotAll).toBe(true);
    expect(r.re.exec('A\nBC')?.groups?.x).toBe('C');
  });

  it('runs on the linear-time engine, so nested repetition cannot backtrack catastrophically', () => {
    expect(LINEAR_REGEX).toBe(true);
    const r = compileTemplateRegex('(a+)+$');
    if (!r.ok) throw new Error(r.message);
    expect(r.re.flags).toContain('l');
    expect(r.re.test(`${'a'.repeat(100_000)}!`)).toBe(false);
  });

  it('rewrites case-insensitive patterns and counts above 16 for the linear engine without changing what they match', () => {
    const cases: [string, string, boolean][] = [
      ['(?i)hello [a-c]{20}', `HeLLo ${'AbC'.repeat(7)}`, true],
      ['(?i)hello [a-c]{20}', `hello ${'abd'.repeat(7)}`, false],
      ['(?i)[^a-z]', 'Q', false],
      ['(?i)[^a-z]', '1', true],
      ['^[0-9a-f]{40}$', 'a'.repeat(40), true],
      ['^[0-9a-f]{40}$', 'a'.repeat(39), false],
      ['^x{3,40}$', 'x'.repeat(40), true],
      ['^x{3,40}$', 'x'.repeat(41), false],
      ['^(?:ab){17,}$', 'ab'.repeat(30), true],
      ['^(?:ab){17,}$', 'ab'.repeat(16), false],
    ];
    for (const [p, s, want] of cases) {
      const r = compileTemplateRegex(p);
      if (!r.ok) throw new Error(r.message);
      expect(r.re.test(s), `${p} on ${s}`).toBe(want);
    }
  });

  it('keeps escapes and classes that look like refused syntax', () => {
    for (const p of ['\\(?=x\\)', '[(?=]', '\\\\1', '[\\1]', '(?:ab)+', '(a|b)*c', 'x{2,}', '(?:a{1,3})+', '[\\]a]'])
      expect(compileTemplateRegex(p).ok, p).toBe(true);
  });

  it.each([
    ['a(?i)b', /start of the pattern/],
    ['(?U)a', /ungreedy/],
    ['\\k<n>', /named backreference/],
    ['[[:alpha:]]', /POSIX/],
    ['a\\z', /\\z is not supported/],
    ['(a{20}){20}', /linear time/],
    ['a)', /unbalanced/],
  ])('refuses %s', (p, why) => {
    const r = compileTemplateRegex(p);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(why);
  });
});
