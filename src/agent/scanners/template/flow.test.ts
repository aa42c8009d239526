// nuclei's flow as public templates write it: boolean chains of protocol calls with JavaScript's
// short-circuit, internal values carried from one block to the next, run against a loopback
// server that records what was asked; and the flows that are programs, refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenHttp, runTemplatesAt, validTemplate, type HttpTarget } from '../../../../test/helpers/templates.ts';
import { parseFlow } from './flow.ts';
import { validateTemplate, type Template } from './index.ts';

let target: HttpTarget;
let base: string;
let asked: string[] = [];

beforeAll(async () => {
  target = await listenHttp((req, res) => {
    asked.push(req.url!);
    if (req.url === '/version') return res.end('Acme Portal 2.4.1');
    if (req.url === '/token') return res.end('{"token":"tk-7731"}');
    if (req.url?.startsWith('/admin?token=tk-7731')) return res.end('admin console');
    if (req.url?.startsWith('/admin')) return res.writeHead(403).end('forbidden');
    res.writeHead(404).end('not found');
  });
  base = target.base;
});

afterAll(() => target.close());

const tpl = validTemplate;
async function run(t: Template) {
  asked = [];
  return (await runTemplatesAt(base, [t])).matches;
}

const head = (id: string, flow: string) => `id: ${id}\ninfo: {name: ${id}, severity: high}\nflow: ${flow}\n`;
const detect = (word: string) =>
  `  - method: GET\n    path: ["{{BaseURL}}/version"]\n    matchers:\n      - {type: word, internal: true, words: ["${word}"]}\n`;
const exploit = '  - method: GET\n    path: ["{{BaseURL}}/admin"]\n    matchers: [{type: status, status: [403]}]\n';

describe('flow', () => {
  it('runs the second block only when the first matched (http(1) && http(2))', async () => {
    const hit = tpl(`${head('chain', 'http(1) && http(2)')}http:\n${detect('Acme Portal 2.4')}${exploit}`);
    const found = await run(hit);
    expect(asked).toEqual(['/version', '/admin']);
    // The detection's matchers are internal: only the second block reports.
    expect(found.map((m) => m.url)).toEqual([`${base}/admin`]);
    const miss = tpl(`${head('chain-miss', 'http(1) && http(2)')}http:\n${detect('Other Product')}${exploit}`);
    expect(await run(miss)).toEqual([]);
    expect(asked).toEqual(['/version']);
  });

  it('stops an || chain at the first block that matched, and reads ! and parentheses', async () => {
    const or = tpl(`${head('or', 'http(1) || http(2)')}http:\n${detect('Acme')}${exploit}`);
    await run(or);
    expect(asked).toEqual(['/version']);
    const not = tpl(`${head('not', '"!http(1) && (http(2))"')}http:\n${detect('Other')}${exploit}`);
    expect(await run(not)).toHaveLength(1);
    expect(asked).toEqual(['/version', '/admin']);
  });

  it('carries an internal value into the next block, with flow and without', async () => {
    const blocks =
      'http:\n  - method: GET\n    path: ["{{BaseURL}}/token"]\n    extractors:\n      - {type: json, name: token, internal: true, json: [".token"]}\n  - method: GET\n    path: ["{{BaseURL}}/admin?token={{token}}"]\n    matchers: [{type: word, words: ["admin console"]}]\n';
    const flowed = tpl(`${head('carry', 'http(1) && http(2)')}${blocks}`);
    expect((await run(flowed)).map((m) => m.url)).toEqual([`${base}/admin?token=tk-7731`]);
    const plain = tpl(`id: carry-plain\ninfo: {name: carry, severity: high}\n${blocks}`);
    expect((await run(plain)).map((m) => m.url)).toEqual([`${base}/admin?token=tk-7731`]);
  });

  it('calls a block by id', async () => {
    const t = tpl(
      `${head('by-id', 'http("detect") && http(2)')}http:\n  - id: detect\n    method: GET\n    path: ["{{BaseURL}}/version"]\n    matchers: [{type: word, internal: true, words: ["Acme"]}]\n${exploit}`,
    );
    expect(await run(t)).toHaveLength(1);
    expect(asked).toEqual(['/version', '/admin']);
  });
});

describe('flow validation', () => {
  it('parses the chains public templates use', () => {
    expect(parseFlow('http(1) && http(2) && (http(3) || http(4));')).toEqual({
      kind: 'and',
      left: {
        kind: 'and',
        left: { kind: 'call', protocol: 'http', block: 1 },
        right: { kind: 'call', protocol: 'http', block: 2 },
      },
      right: {
        kind: 'or',
        left: { kind: 'call', protocol: 'http', block: 3 },
        right: { kind: 'call', protocol: 'http', block: 4 },
      },
    });
    expect(parseFlow('ssl() || tcp(1)')).toEqual({
      kind: 'or',
      left: { kind: 'call', protocol: 'ssl' },
      right: { kind: 'call', protocol: 'network', block: 1 },
    });
  });

  it('refuses programs and calls of blocks the template lacks, naming the flow', () => {
    const errorsOf = (flow: string) => {
      const v = validateTemplate(`${head('x', JSON.stringify(flow))}http:\n${detect('a')}${exploit}`);
      return v.ok ? [] : v.errors.map((e) => `${e.path}: ${e.message}`);
    };
    for (const program of [
      'for (let v of iterate(template["paths"])) { set("p", v); http(2) }',
      'http(1)\nhttp(2)',
      'http(1) &&',
      'dns(1) && http(1)',
    ])
      expect(errorsOf(program)[0]).toMatch(/^flow: only chains of protocol calls are supported/);
    expect(errorsOf('http(1) && http(3)')).toEqual(['flow: http(3) names no http request of this template']);
    expect(errorsOf('http(1) && ssl()')).toEqual(['flow: ssl() names no ssl request of this template']);
  });
});
