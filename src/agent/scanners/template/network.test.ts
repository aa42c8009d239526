// Network (tcp) templates against a loopback TCP service that answers like the ones nuclei's own
// network tests talk to: hex input and a hex word, multi-step reads kept by name, a banner read,
// and a host that is not the scanned one refused at upload.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizedFindingSchema } from '../../../findings/index.ts';
import { createScopedHttp, sameHost } from '../http/scoped-http.ts';
import { createTemplateScanner, runTemplates, templateFindings, validateTemplate, type Template } from './index.ts';

let server: net.Server;
let port: number;
const received: string[] = [];

beforeAll(async () => {
  server = net.createServer((s) => {
    s.write('SSH-2.0-OpenSSH_8.2p1 Ubuntu\r\n');
    let seen = '';
    s.on('data', (c: Buffer) => {
      seen += c.toString('latin1');
      received.push(c.toString('latin1'));
      if (seen.includes('PING\r\n')) s.end('PONG');
      else if (seen === 'FIRST') s.write('PING');
      else if (seen === 'FIRSTSECOND') s.end('PONGNUCLEI');
    });
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

function tpl(yaml: string): Template {
  const v = validateTemplate(yaml);
  if (!v.ok) throw new Error(JSON.stringify(v.errors));
  return v.template;
}

async function run(templates: Template[]) {
  const signal = new AbortController().signal;
  const client = createScopedHttp({ inScope: sameHost('127.0.0.1'), signal });
  try {
    return await runTemplates({
      baseUrl: new URL(`http://127.0.0.1:${port}/`),
      templates,
      http: client,
      signal,
      timeoutMs: 2_000,
    });
  } finally {
    client.close();
  }
}

describe('network templates', () => {
  it('sends hex and text inputs and matches a hex word in what it read', async () => {
    const t = tpl(
      `id: net-hex\ninfo: {name: Hex ping, severity: info}\nnetwork:\n  - host: ["{{Hostname}}"]\n    inputs:\n      - data: "50494e47"\n        type: hex\n      - data: "\\r\\n"\n    read-size: 64\n    matchers:\n      - type: word\n        part: data\n        encoding: hex\n        words: ["504f4e47"]\n`,
    );
    const { matches, stats } = await run([t]);
    expect(stats.errorSamples).toEqual([]);
    expect(matches.map((m) => m.url)).toEqual([`tcp://127.0.0.1:${port}`]);
    const findings = templateFindings(matches);
    expect(findings[0]!.location).toEqual({ host: '127.0.0.1', port, protocol: 'tcp' });
    for (const f of findings) normalizedFindingSchema.parse(f);
  });

  it('keeps named reads of a multi-step exchange for the matchers', async () => {
    const t = tpl(
      `id: net-steps\ninfo: {name: Steps, severity: info}\nnetwork:\n  - host: ["{{Hostname}}"]\n    inputs:\n      - {data: FIRST, read: 34, name: first}\n      - {data: SECOND, read: 4, name: second}\n    read-size: 6\n    matchers-condition: and\n    matchers:\n      - {type: word, part: first, words: [PING, OpenSSH]}\n      - {type: word, part: second, words: [PONG]}\n      - {type: word, part: data, words: [NUCLEI]}\n    extractors:\n      - {type: regex, part: raw, regex: ["OpenSSH_[0-9.p]+"]}\n`,
    );
    const { matches } = await run([t]);
    expect(matches.map((m) => m.extracted)).toEqual([['OpenSSH_8.2p1']]);
  });

  it('reaches only the scanned host, on the port the template names', () => {
    const bad = validateTemplate(
      'id: net-other\ninfo: {name: O, severity: info}\nnetwork:\n  - host: ["10.0.0.1:22"]\n    matchers: [{type: word, words: [SSH]}]\n',
    );
    expect(bad.ok ? [] : bad.errors).toEqual([
      { path: 'network[0].host[0]', message: expect.stringMatching(/only reach the scanned host/) },
    ]);
    expect(
      validateTemplate(
        'id: net-port\ninfo: {name: P, severity: info}\ntcp:\n  - host: ["{{Host}}:22"]\n    port: "22,2222"\n    matchers: [{type: word, words: [SSH]}]\n',
      ).ok,
    ).toBe(true);
  });

  it('runs network templates on a host without a web server', async () => {
    const scanner = createTemplateScanner({
      timeoutMs: 2_000,
      extraTemplates: [
        `id: net-banner\ninfo: {name: Banner, severity: low}\nnetwork:\n  - host: ["{{Host}}:${port}"]\n    read-size: 64\n    matchers: [{type: word, words: [OpenSSH]}]\n`,
      ],
    });
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const r = await scanner.scan({
      target: `127.0.0.1:${deadPort}`,
      options: { rateLimit: 1000, templateIds: ['net-banner'] },
      chunk: null,
      signal: new AbortController().signal,
      progress: () => undefined,
    });
    expect(r.baseUrl).toBeNull();
    expect(r.matches.map((m) => m.url)).toEqual([`tcp://127.0.0.1:${port}`]);
  });
});
