// Out-of-band callbacks by DNS: with a zone delegated to the server (OOB_DNS_DOMAIN), templates that
// wait for DNS interactions are accepted, leases name the zone, the server's own DNS listener (a
// real UDP socket) records questions for names of leased scans and answers A with OOB_DNS_ANSWER,
// HTTP requests for such names on any path count as callbacks, and nothing else is recorded.
import dns2 from 'dns2';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import { startOobDnsServer, type OobDnsServer } from '../../src/templates/oob-dns.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { enrollWorker, signingSecret, type TestWorker } from '../helpers/workers.ts';
import { scanTenant, type ScanTenant } from './scans-fixtures.ts';

const ZONE = 'oob.rampart.test';
let t: TestApp;
let s: ScanTenant;
let w: TestWorker;
let dns: OobDnsServer;
let resolve: ReturnType<typeof dns2.UDPClient>;

// As public templates write blind command injection: the target only resolves the name.
const NSLOOKUP = `id: acme-blind-nslookup
info: {name: Blind command injection, severity: critical}
http:
  - method: GET
    path: ["{{BaseURL}}/ping?host=$(nslookup%20{{interactsh-url}})"]
    matchers:
      - type: word
        part: interactsh_protocol
        words: [dns]
`;

beforeAll(async () => {
  t = await createTestApp({ env: { OOB_CALLBACKS: 'on', OOB_DNS_DOMAIN: ZONE } });
  s = await scanTenant(t);
  w = await enrollWorker(t, s.owner, s.tenantId, { name: 'dns-w', secret: await signingSecret(s.owner, s.tenantId) });
  dns = await startOobDnsServer({
    domain: ZONE,
    host: '127.0.0.1',
    port: 0,
    answer: '192.0.2.10',
    oob: t.app.services.oob,
    log: t.app.log,
  });
  resolve = dns2.UDPClient({ dns: '127.0.0.1', port: dns.port, timeout: 3_000 });
});

afterAll(async () => {
  await dns.close();
  await t.close();
});

const read = async (scanId: string, leaseToken: string) =>
  (await w.post(`scans/${scanId}/interactions`, { leaseToken })).json().interactions as {
    token: string;
    protocol: string;
    request: string;
  }[];

describe('out-of-band callbacks by DNS', () => {
  let lease: { scanId: string; leaseToken: string; options: { oob: { prefix: string; dnsDomain?: string } } };

  it('accepts a template waiting for DNS, and names the zone in its lease', async () => {
    await s.settings(1000, 5);
    const up = await s.owner.post(`${s.base}/scan-templates`, { yaml: NSLOOKUP });
    expect(up.statusCode, up.body).toBe(201);
    const asset = await s.asset('host');
    await withService(t.database.db, (tx) =>
      sql`update assets set last_checked_at = now() where id = ${asset}`.execute(tx),
    );
    await s.queue({ assetId: asset, kind: 'template', options: { templateIds: ['acme-blind-nslookup'] } });
    const res = await w.post('lease', { kinds: ['template'], waitSeconds: 0 });
    expect(res.statusCode, res.body).toBe(200);
    lease = res.json().lease;
    expect(lease.options.oob).toMatchObject({ prefix: expect.stringMatching(/^[a-z0-9]{12}$/), dnsDomain: ZONE });
  });

  it('records a question for a leased scan and answers A with the configured address', async () => {
    const name = `${lease.options.oob.prefix}abcdefghijklm.${ZONE}`;
    const answer = await resolve(name, 'A');
    expect(answer.answers.map((a) => (a as { address?: string }).address)).toEqual(['192.0.2.10']);
    // A name of no leased scan is answered alike and kept nowhere.
    await resolve(`zzzzzzzzzzzzabcdefghijklm.${ZONE}`, 'A');
    await expect.poll(() => read(lease.scanId, lease.leaseToken)).toHaveLength(1);
    const [got] = await read(lease.scanId, lease.leaseToken);
    expect(got).toMatchObject({ token: `${lease.options.oob.prefix}abcdefghijklm`, protocol: 'dns' });
    expect(got!.request).toMatch(new RegExp(`^${name} A from 127\\.0\\.0\\.1$`));
  });

  it('refuses questions outside its zone: it is no resolver', async () => {
    const r = await resolve('example.com', 'A');
    expect(r.header.rcode).toBe(5);
    expect(r.answers).toEqual([]);
  });

  it('counts an HTTP request for a name under the zone as a callback, on any path', async () => {
    const host = `${lease.options.oob.prefix}nopqrstuvwxyz.${ZONE}`;
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/anything?x=1', headers: { host }, payload: 'hi' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('ok\n');
    const got = await read(lease.scanId, lease.leaseToken);
    expect(got.map((g) => g.protocol).sort()).toEqual(['dns', 'http']);
    // Requests for the server's own name go on as before.
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});
