// Out-of-band checks end to end: a server with a reachable public address accepts templates using
// {{interactsh-url}}, gives template leases a callback prefix, records callbacks to /oob/<token>
// only for scans under lease, hands them to the worker holding the lease (no one else), and the
// template scanner reports a template whose target called back — and not one whose target did not.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import { createTemplateScanner } from '../../src/agent/scanners/template/index.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { enrollWorker, signingSecret, type TestWorker } from '../helpers/workers.ts';
import { scanTenant, type ScanTenant } from './scans-fixtures.ts';

let t: TestApp;
let s: ScanTenant;
let other: ScanTenant;
let w: TestWorker;
let outsider: TestWorker;
let target: Server;
let targetUrl: string;

// As the public collections write blind SSRF checks: the target is asked to fetch the callback URL.
const SSRF = `id: acme-blind-ssrf
info: {name: Blind SSRF, severity: high}
http:
  - method: GET
    path: ["{{BaseURL}}/fetch?url=http://{{interactsh-url}}/probe"]
    matchers-condition: and
    matchers:
      - type: word
        part: interactsh_protocol
        words: [http]
      - type: word
        part: interactsh_request
        words: ["GET /oob/"]
`;

beforeAll(async () => {
  t = await createTestApp({ env: { OOB_CALLBACKS: 'on' } });
  s = await scanTenant(t);
  other = await scanTenant(t);
  w = await enrollWorker(t, s.owner, s.tenantId, { name: 'oob-w', secret: await signingSecret(s.owner, s.tenantId) });
  outsider = await enrollWorker(t, other.owner, other.tenantId, {
    name: 'oob-outsider',
    secret: await signingSecret(other.owner, other.tenantId),
  });
  // A vulnerable target fetches what /fetch names; the callback reaches Rampart as it would over
  // the network (here injected: the public name does not resolve in tests).
  target = createServer((req, res) => {
    const u = new URL(req.url!, 'http://x').searchParams.get('url');
    if (!req.url!.startsWith('/fetch') || !u) return void res.writeHead(404).end('no');
    if (req.headers['x-vulnerable'] === 'no') return void res.end('fetched nothing');
    const to = new URL(u);
    void t.app
      .inject({
        method: 'GET',
        url: `${to.pathname}${to.search}`,
        headers: { host: to.host, 'user-agent': 'target-fetcher' },
      })
      .then(() => res.end('fetched'));
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await new Promise((r) => target.close(r));
  await t.close();
});

async function leaseTemplateScan(): Promise<{ scanId: string; leaseToken: string; options: Record<string, unknown> }> {
  const asset = await s.asset('host');
  await withService(t.database.db, (tx) =>
    sql`update assets set last_checked_at = now() where id = ${asset}`.execute(tx),
  );
  await s.queue({ assetId: asset, kind: 'template', options: { templateIds: ['acme-blind-ssrf'] } });
  const res = await w.post('lease', { kinds: ['template'], waitSeconds: 0 });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().lease;
}

describe('out-of-band callbacks', () => {
  let lease: Awaited<ReturnType<typeof leaseTemplateScan>>;

  it('accepts a template using {{interactsh-url}} and gives its lease a callback prefix', async () => {
    await s.settings(1000, 5);
    const up = await s.owner.post(`${s.base}/scan-templates`, { yaml: SSRF });
    expect(up.statusCode, up.body).toBe(201);
    lease = await leaseTemplateScan();
    const oob = lease.options.oob as { prefix: string; httpBase: string };
    expect(oob.prefix).toMatch(/^[a-z0-9]{12}$/);
    expect(oob.httpBase).toMatch(/^[\w.-]+(?::\d+)?\/oob\/$/);
  });

  it('records callbacks of a leased scan only, and hands them to the lease holder alone', async () => {
    const prefix = (lease.options.oob as { prefix: string }).prefix;
    const hit = await t.app.inject({
      method: 'POST',
      url: `/oob/${prefix}abcdefghijklm/x?q=1`,
      payload: 'callback-body',
      headers: { 'content-type': 'application/json' },
    });
    expect([hit.statusCode, hit.body]).toEqual([200, 'ok\n']);
    // Unknown prefixes are answered the same and kept nowhere.
    expect((await t.app.inject({ method: 'GET', url: '/oob/zzzzzzzzzzzzabcdefghijklm' })).statusCode).toBe(200);
    const read = await w.post(`scans/${lease.scanId}/interactions`, { leaseToken: lease.leaseToken });
    expect(read.statusCode, read.body).toBe(200);
    const got = read.json().interactions;
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ token: `${prefix}abcdefghijklm`, protocol: 'http' });
    expect(got[0].request).toMatch(/^POST \/oob\/\w+\/x\?q=1 HTTP\/1\.1\r\n[\s\S]*\r\n\r\ncallback-body$/);
    expect(
      (await w.post(`scans/${lease.scanId}/interactions`, { leaseToken: lease.leaseToken, after: got[0].id })).json()
        .interactions,
    ).toEqual([]);
    const stranger = await outsider.post(`scans/${lease.scanId}/interactions`, { leaseToken: lease.leaseToken });
    expect([stranger.statusCode, stranger.json().error]).toEqual([409, 'lease_lost']);
  });

  it('reports the template when the target calls back, and not when it does not', async () => {
    const scanner = createTemplateScanner({ concurrency: 2, timeoutMs: 5_000, oobWaitMs: 3_000 });
    const reader = () => {
      let after = '0';
      return async () => {
        const r = (await w.post(`scans/${lease.scanId}/interactions`, { leaseToken: lease.leaseToken, after })).json()
          .interactions as { id: string }[];
        if (r.length) after = r.at(-1)!.id;
        return r as never;
      };
    };
    const task = (options: Record<string, unknown>) => ({
      target: targetUrl,
      options,
      chunk: null,
      signal: new AbortController().signal,
      progress: () => undefined,
      oobInteractions: reader(),
    });
    const out = await scanner.run(task(lease.options));
    expect(out.findings.map((f) => f.ruleId)).toEqual(['acme-blind-ssrf']);

    // The same template against a target that never calls back: no finding.
    const quiet = SSRF.replace('acme-blind-ssrf', 'acme-quiet').replace(
      '    matchers-condition',
      '    headers: {X-Vulnerable: "no"}\n    matchers-condition',
    );
    const custom = [{ id: 'acme-quiet', yaml: quiet }];
    const none = await scanner.run(task({ ...lease.options, templateIds: ['acme-quiet'], customTemplates: custom }));
    expect(none.findings).toEqual([]);
    expect((none.details as { warnings: string[] }).warnings).toEqual([]);
  });
});
