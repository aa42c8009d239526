// The scan's variables (nuclei's -var): templates reading names nothing in them defines are
// accepted, list those names, get the scan's values (over their own variables, as nuclei merges
// them), and without a value the requests needing it are not sent, with a warning saying why.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactScanOptions, REDACTED_VARIABLE, templateOptionsSchema } from '../../../scans/scans-schemas.ts';
import type { ScanTask } from '../types.ts';
import { createTemplateScanner, validateTemplate } from './index.ts';

let server: http.Server;
let base: string;
const seen: { url: string; body: string; auth?: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('latin1')));
    req.on('end', () => {
      seen.push({ url: req.url!, body, ...(req.headers.authorization ? { auth: req.headers.authorization } : {}) });
      if (req.url === '/api/login' && body.trim() === '{"user":"alice","pass":"pa:ss"}')
        return res.end('{"token":"t0k3n"}');
      res.writeHead(req.url === '/' ? 200 : 401);
      res.end('no');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

// As credential-checking templates of the public collections write it: a raw request with
// placeholders only the command line (-var) fills.
const LOGIN = `id: login-check
info: {name: Login check, severity: high}
variables:
  basic: "{{base64(username + ':' + password)}}"
  greeting: hello
http:
  - raw:
      - |
        POST /api/login HTTP/1.1
        Host: {{Hostname}}
        Authorization: Basic {{basic}}
        X-Greeting: {{greeting}}
        Content-Type: application/json

        {"user":"{{username}}","pass":"{{password}}"}
    matchers:
      - {type: word, part: body, words: ['"token"']}
`;

function task(options: Record<string, unknown>): ScanTask {
  return {
    target: `${base}/`,
    options: { rateLimit: 1000, templateIds: ['login-check'], ...options },
    chunk: null,
    signal: new AbortController().signal,
    progress: () => undefined,
  };
}

describe('scan variables', () => {
  it('accepts a template reading values only the scan gives, and names them', () => {
    const v = validateTemplate(LOGIN);
    expect(v.ok).toBe(true);
    if (v.ok) expect(v.template.inputs).toEqual(['password', 'username']);
    // Built-in URL names and the template's own values are not inputs.
    const own = validateTemplate(
      `id: own\ninfo: {name: own, severity: info}\nvariables: {a: "1"}\nhttp:\n  - path: ["{{BaseURL}}/{{a}}"]\n    matchers: [{type: status, status: [200]}]\n`,
    );
    expect(own.ok && own.template.inputs).toEqual([]);
  });

  it("sends the scan's values, over the template's own variables, and matches", async () => {
    const scanner = createTemplateScanner({ extraTemplates: [LOGIN] });
    const out = await scanner.scan(task({ variables: { username: 'alice', password: 'pa:ss', greeting: 'hi' } }));
    expect(out.warnings).toEqual([]);
    expect(out.matches.map((m) => m.template.id)).toEqual(['login-check']);
    const login = seen.filter((s) => s.url === '/api/login').at(-1)!;
    expect(login.body.trim()).toBe('{"user":"alice","pass":"pa:ss"}');
    expect(login.auth).toBe(`Basic ${Buffer.from('alice:pa:ss').toString('base64')}`);
  });

  it('does not send a request needing a value the scan lacks, and says which', async () => {
    const before = seen.filter((s) => s.url === '/api/login').length;
    const scanner = createTemplateScanner({ extraTemplates: [LOGIN] });
    const out = await scanner.scan(task({ variables: { username: 'alice' } }));
    expect(out.matches).toEqual([]);
    expect(seen.filter((s) => s.url === '/api/login')).toHaveLength(before);
    expect(out.warnings).toEqual([
      "Template login-check reads {{password}}, which this scan's variables do not give: the requests using them were not sent",
    ]);
  });

  it('checks variable names and sizes, and redacts secret-looking values when shown', () => {
    const parse = (variables: unknown) => templateOptionsSchema.safeParse({ variables });
    expect(parse({ username: 'a', 'api-key': 'b' }).success).toBe(true);
    expect(parse({ BaseURL: 'http://elsewhere' }).success).toBe(false);
    expect(parse({ '1x': 'a' }).success).toBe(false);
    expect(parse({ a: 'x'.repeat(4_097) }).success).toBe(false);
    expect(parse(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`v${i}`, 'x']))).success).toBe(false);
    expect(
      redactScanOptions({ rateLimit: 5, variables: { username: 'alice', password: 'p', api_key: 'k', Token: 't' } }),
    ).toEqual({
      rateLimit: 5,
      variables: {
        username: 'alice',
        password: REDACTED_VARIABLE,
        api_key: REDACTED_VARIABLE,
        Token: REDACTED_VARIABLE,
      },
    });
  });
});
