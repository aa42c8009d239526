// Assets and DNS ownership proof against a real DNS server on loopback; the super-admin bypass.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import type { Clock } from '../../src/lib/clock.ts';
import { createTestApp, STAFF_DOMAIN, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';
import { bootstrapStaff } from '../helpers/staff.ts';

let dns: TestDnsServer;
let t: TestApp;
let owner: Client;
let tenant: string;
let now = new Date();
const clock: Clock = { now: () => new Date(now) };
const RUN = Math.random().toString(36).slice(2, 8);
const domain = (label: string) => `${label}-${RUN}.example.test`;

beforeAll(async () => {
  dns = await startDnsServer();
  t = await createTestApp({ env: { DNS_RESOLVERS: dns.address, DNS_TIMEOUT_MS: '300' }, deps: { clock } });
  owner = new Client(t.app);
  await owner.signUp(uniqueEmail('assets-owner'));
  tenant = await owner.createTenant('Asset Co');
  await owner.me();
});
afterAll(async () => {
  await t.close();
  await dns.close();
});

const base = () => `/api/v1/tenants/${tenant}/assets`;
async function add(kind: string, target: string, extra: Record<string, unknown> = {}) {
  const res = await owner.post(base(), { kind, target, ...extra });
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { asset: { id: string; target: string; verification: { status: string } } }).asset;
}
const detail = async (id: string) =>
  (await owner.get(`${base()}/${id}`)).json() as {
    asset: { verification: Record<string, unknown> };
    instructions: { recordName: string; recordValue: string } | null;
    log: { event: string; detail: string | null }[];
  };
const verify = async (id: string) =>
  (await owner.post(`${base()}/${id}/verify`)).json() as {
    asset: { verification: { status: string; via: string | null } };
    result: { outcome: string; detail: string };
  };

describe('registering assets', () => {
  it('normalises targets and refuses duplicates and junk', async () => {
    const a = await add('domain', `Shop-${RUN}.Example.TEST.`);
    expect(a.target).toBe(`shop-${RUN}.example.test`);
    expect(a.verification.status).toBe('pending');
    const dup = await owner.post(base(), { kind: 'domain', target: `shop-${RUN}.example.test` });
    expect([dup.statusCode, dup.json().error]).toEqual([409, 'asset_exists']);
    for (const [kind, target] of [
      ['domain', 'https://x.com'],
      ['domain', 'localhost'],
      ['host', 'not a host'],
      ['webapp', 'ftp://x.example'],
      ['container_image', 'UPPER/Case'],
      ['container_image', 'nginx'],
    ]) {
      const res = await owner.post(base(), { kind, target });
      expect(res.statusCode, `${kind} ${target}`).toBe(400);
      expect(res.json()).toMatchObject({ error: 'validation_failed', details: [{ path: 'body.target' }] });
    }
    expect((await add('container_image', `ghcr.io/acme-${RUN}/app:1.2`)).target).toBe(`ghcr.io/acme-${RUN}/app:1.2`);
    expect((await add('webapp', `https://app-${RUN}.example.test/login#x`)).target).toBe(
      `https://app-${RUN}.example.test/login`,
    );
  });

  it('lists with search, filters and cursor pagination', async () => {
    for (let i = 0; i < 3; i++) await add('host', `node${i}-${RUN}.internal.test`, { tags: ['fleet'] });
    const page1 = (await owner.get(`${base()}?tag=fleet&limit=2`)).json() as {
      assets: { target: string }[];
      nextBefore: string;
    };
    expect(page1.assets).toHaveLength(2);
    const page2 = (
      await owner.get(`${base()}?tag=fleet&limit=2&before=${encodeURIComponent(page1.nextBefore)}`)
    ).json() as { assets: { target: string }[]; nextBefore: string | null };
    expect(page2.assets).toHaveLength(1);
    expect(new Set([...page1.assets, ...page2.assets].map((a) => a.target)).size).toBe(3);
    expect(page2.nextBefore).toBeNull();
    for (const bad of [
      '2024-01-01T00:00:00Z_------------------------------------',
      'garbage',
      `${page1.nextBefore}x`,
    ]) {
      const res = await owner.get(`${base()}?before=${encodeURIComponent(bad)}`);
      expect([res.statusCode, res.json().error], bad).toEqual([400, 'validation_failed']);
    }
    const found = (await owner.get(`${base()}?q=node1-${RUN}`)).json() as { assets: unknown[] };
    expect(found.assets).toHaveLength(1);
  });

  it('keeps other tenants out', async () => {
    const a = await add('domain', domain('private'));
    const other = new Client(t.app);
    await other.signUp(uniqueEmail('other'));
    const res = await other.get(`${base()}/${a.id}`);
    expect([res.statusCode, res.json().error]).toEqual([403, 'tenant_forbidden']);
    const otherTenant = await other.createTenant('Other');
    expect((await other.get(`/api/v1/tenants/${otherTenant}/assets/${a.id}`)).json()).toMatchObject({
      error: 'asset_not_found',
    });
  });
});

describe('DNS ownership proof', () => {
  it('shows the TXT record to publish, stays pending while it is absent, verifies when it appears', async () => {
    const name = domain('proof');
    const a = await add('domain', name);
    const d = await detail(a.id);
    expect(d.instructions!.recordName).toBe(`_rampart-verify.${name}`);
    expect(d.instructions!.recordValue).toMatch(/^rampart-verify=[0-9a-f]{32}$/);

    dns.zone.set(`_rampart-verify.${name}`, 'nxdomain');
    expect((await verify(a.id)).result.outcome).toBe('pending');
    dns.zone.set(`_rampart-verify.${name}`, 'nodata');
    expect((await verify(a.id)).result.outcome).toBe('pending');
    dns.zone.set(`_rampart-verify.${name}`, {
      txt: ['v=spf1 -all', 'rampart-verify=0000000000000000000000000000dead'],
    });
    const mismatch = await verify(a.id);
    expect(mismatch.result).toMatchObject({ outcome: 'pending', detail: expect.stringMatching(/different token/) });
    expect(mismatch.asset.verification.status).toBe('pending');

    // A long record split into character-strings still counts.
    const value = d.instructions!.recordValue;
    dns.zone.set(`_rampart-verify.${name}`, { txt: ['other=1', [value.slice(0, 10), value.slice(10)]] });
    const ok = await verify(a.id);
    expect(ok.result.outcome).toBe('verified');
    expect(ok.asset.verification).toMatchObject({ status: 'verified', via: 'txt' });
    expect((await detail(a.id)).instructions).toBeNull();
    expect((await detail(a.id)).log.map((l) => l.event)).toEqual(
      expect.arrayContaining(['created', 'pending', 'verified']),
    );
  });

  it('treats resolver errors and timeouts as failures that change nothing and are reported', async () => {
    const name = domain('flaky');
    const a = await add('domain', name);
    for (const behaviour of ['servfail', 'timeout'] as const) {
      dns.zone.set(`_rampart-verify.${name}`, behaviour);
      const r = await verify(a.id);
      expect(r.result.outcome).toBe('failed');
      expect(r.result.detail).toMatch(behaviour === 'servfail' ? /SERVFAIL/ : /did not answer/);
      expect(r.asset.verification.status).toBe('pending');
    }
    expect((await detail(a.id)).log.filter((l) => l.event === 'failed')).toHaveLength(2);
  });

  it('covers subdomains, hosts, URLs and registry images under a verified domain', async () => {
    const apex = domain('apex');
    const root = await add('domain', apex);
    const sub = await add('domain', `www.${apex}`);
    const host = await add('host', `db.${apex}`);
    const url = await add('webapp', `https://portal.${apex}/`);
    const image = await add('container_image', `registry.${apex}/team/api:7`);
    const ip = await add('host', '192.0.2.10');
    const elsewhere = await add('host', `db.${domain('unrelated')}`);
    const { instructions } = await detail(root.id);
    dns.zone.set(instructions!.recordName, { txt: [instructions!.recordValue] });
    await verify(root.id);
    for (const a of [sub, host, url, image]) {
      const d = await detail(a.id);
      expect(d.asset.verification, a.target).toMatchObject({
        status: 'verified',
        via: 'covered',
        coveredBy: { assetId: root.id, target: apex },
      });
    }
    for (const a of [ip, elsewhere]) expect((await detail(a.id)).asset.verification.status).toBe('pending');
    expect((await verify(ip.id)).result.detail).toMatch(/super-admin can bypass/);

    // The proof disappears at re-check: the domain and everything it covered fall back to pending.
    dns.zone.set(instructions!.recordName, 'nxdomain');
    const lost = await verify(root.id);
    expect(lost.asset.verification.status).toBe('pending');
    expect((await detail(root.id)).log[0]).toMatchObject({ event: 'proof_lost' });
    for (const a of [sub, host, url, image]) expect((await detail(a.id)).asset.verification.status).toBe('pending');
  });

  it('re-checks due domains daily as the service role', async () => {
    const name = domain('daily');
    const a = await add('domain', name);
    const { instructions } = await detail(a.id);
    dns.zone.set(instructions!.recordName, { txt: [instructions!.recordValue] });
    now = new Date(now.getTime() + 25 * 3600_000);
    await t.app.services.assets.recheckDue(1000);
    expect((await detail(a.id)).asset.verification).toMatchObject({ status: 'verified', via: 'txt' });
  });
});

describe('re-check before a scan is leased', () => {
  it('re-checks a stale proof (own or covering), keeps a fresh one, and says whether to lease', async () => {
    const name = domain('lease');
    const root = await add('domain', name);
    const { instructions } = await detail(root.id);
    dns.zone.set(instructions!.recordName, { txt: [instructions!.recordValue] });
    expect((await verify(root.id)).asset.verification.status).toBe('verified');
    const host = await add('host', `worker.${name}`);
    expect((await detail(host.id)).asset.verification).toMatchObject({ status: 'verified', via: 'covered' });

    // A fresh proof is trusted without asking DNS.
    const asked = dns.queries.length;
    expect(await t.app.services.assets.recheckForLease(host.id)).toEqual({
      scannable: true,
      checked: false,
      status: 'verified',
    });
    expect(dns.queries.length).toBe(asked);

    // The record goes away; an hour later the lease-time check finds out, through the covering domain.
    dns.zone.set(instructions!.recordName, 'nxdomain');
    now = new Date(now.getTime() + 61 * 60_000);
    expect(await t.app.services.assets.recheckForLease(host.id)).toEqual({
      scannable: false,
      checked: true,
      status: 'pending',
    });
    expect((await detail(root.id)).log[0]).toMatchObject({ event: 'proof_lost' });
    expect(await t.app.services.assets.recheckForLease(root.id)).toMatchObject({ scannable: false });
  });
});

describe('super-admin bypass', () => {
  it('bypasses with a reason, shows amber state, writes both logs; revokes', async () => {
    const email = uniqueEmail('root', STAFF_DOMAIN);
    const root = await bootstrapStaff(t, email, 'super_admin');

    const ip = await add('host', '198.51.100.7');
    const path = `/api/v1/staff/assets/${ip.id}/bypass`;
    expect((await owner.post(path, { reason: 'Customer data centre' })).json()).toMatchObject({ error: 'staff_only' });
    expect((await root.post(path, { reason: 'short' })).json()).toMatchObject({ error: 'validation_failed' });
    const res = await root.post(path, { reason: 'Customer data centre, contract #42' });
    expect(res.statusCode).toBe(200);
    expect(res.json().asset.verification).toMatchObject({
      status: 'bypassed',
      via: 'bypass',
      bypass: { reason: 'Customer data centre, contract #42', by: email },
    });
    expect((await root.post(path, { reason: 'Customer data centre, contract #42' })).json()).toMatchObject({
      error: 'conflict',
    });
    expect((await detail(ip.id)).log[0]).toMatchObject({
      event: 'bypassed',
      detail: 'Customer data centre, contract #42',
    });
    const audit = await withService(t.database.db, (tx) =>
      tx
        .selectFrom('audit_log')
        .select(['action', 'actor_email', 'tenant_id'])
        .where('target_id', '=', ip.id)
        .execute(),
    );
    expect(audit).toEqual(
      expect.arrayContaining([{ action: 'asset.bypassed', actor_email: email, tenant_id: tenant }]),
    );

    const revoked = await root.post(`${path}/revoke`, { reason: 'Contract ended in November' });
    expect(revoked.json().asset.verification).toMatchObject({ status: 'pending', bypass: null });
    expect((await detail(ip.id)).log[0]).toMatchObject({ event: 'bypass_revoked' });
  });
});

describe('archive', () => {
  it('is for admins and owners, and archived assets leave the default list', async () => {
    const a = await add('domain', domain('old'));
    expect((await owner.post(`${base()}/${a.id}/archive`)).json().asset.archivedAt).not.toBeNull();
    const active = (await owner.get(`${base()}?q=old-${RUN}`)).json() as { assets: unknown[] };
    expect(active.assets).toHaveLength(0);
    const archived = (await owner.get(`${base()}?q=old-${RUN}&archived=true`)).json() as { assets: unknown[] };
    expect(archived.assets).toHaveLength(1);
    expect((await owner.post(`${base()}/${a.id}/restore`)).json().asset.archivedAt).toBeNull();
  });
});

describe('bypass and proof', () => {
  it('never reports a bypass as verified, and lets real proof supersede it', async () => {
    const root = await bootstrapStaff(t, uniqueEmail('root2', STAFF_DOMAIN), 'super_admin');
    const ip = await add('host', '203.0.113.9');
    await root.post(`/api/v1/staff/assets/${ip.id}/bypass`, { reason: 'Lab network for the pilot' });
    const check = await verify(ip.id);
    expect(check.result.outcome).toBe('pending');
    expect(check.asset.verification.status).toBe('bypassed');

    const name = domain('bypassed');
    const d = await add('domain', name);
    await root.post(`/api/v1/staff/assets/${d.id}/bypass`, { reason: 'Proof pending at the registrar' });
    const { instructions } = await detail(d.id);
    expect(instructions).toBeNull(); // bypassed: nothing to publish is asked for
    const token = await withService(t.database.db, (tx) =>
      tx.selectFrom('assets').select('verification_token').where('id', '=', d.id).executeTakeFirstOrThrow(),
    );
    dns.zone.set(`_rampart-verify.${name}`, { txt: [`rampart-verify=${token.verification_token}`] });
    const proven = await verify(d.id);
    expect(proven.asset.verification).toMatchObject({ status: 'verified', via: 'txt', bypass: null });
  });
});

describe("a host's bypass covers the web applications on that host", () => {
  it('covers URLs on exactly that host, any port, until the bypass ends; a proven domain wins', async () => {
    const root = await bootstrapStaff(t, uniqueEmail('root3', STAFF_DOMAIN), 'super_admin');
    const bypass = (id: string, revoke = false) =>
      root.post(`/api/v1/staff/assets/${id}/bypass${revoke ? '/revoke' : ''}`, { reason: 'Lab machine of the pilot' });
    const before = await add('webapp', 'http://192.0.2.44:8088/');
    const ip = await add('host', '192.0.2.44');
    const lab = await add('host', domain('lab'));
    expect((await bypass(ip.id)).statusCode).toBe(200);
    expect((await bypass(lab.id)).statusCode).toBe(200);
    const after = await add('webapp', 'https://192.0.2.44/admin');
    const named = await add('webapp', `http://${domain('lab')}:3000/`);
    const otherHost = await add('webapp', 'http://192.0.2.45:8088/');
    const subdomain = await add('webapp', `http://api.${domain('lab')}/`);

    for (const [id, host] of [
      [before.id, ip],
      [after.id, ip],
      [named.id, lab],
    ] as const) {
      expect((await detail(id)).asset.verification).toMatchObject({
        status: 'bypassed',
        via: 'covered',
        coveredBy: { assetId: host.id, target: host.target },
        bypass: null,
      });
      expect(await t.app.services.assets.recheckForLease(id)).toMatchObject({ scannable: true, checked: false });
    }
    for (const id of [otherHost.id, subdomain.id])
      expect((await detail(id)).asset.verification).toMatchObject({ status: 'pending', coveredBy: null });
    expect((await verify(before.id)).result.detail).toMatch(/^Covered by the bypass of host 192\.0\.2\.44/);
    const listed = (await owner.get(`${base()}?q=192.0.2.44:8088`)).json() as {
      assets: { verification: Record<string, unknown> }[];
    };
    expect(listed.assets[0]!.verification).toMatchObject({ status: 'bypassed', via: 'covered' });

    // The covered app has no bypass of its own to add or revoke: the host's is the one that counts.
    for (const revoke of [false, true]) {
      const res = await bypass(before.id, revoke);
      expect([res.statusCode, res.json().error]).toEqual([409, 'conflict']);
      expect(res.json().message).toMatch(/covered by the bypass of host 192\.0\.2\.44/);
    }

    // Ending the host's bypass (revoked, or the host archived) ends the coverage.
    expect((await bypass(ip.id, true)).statusCode).toBe(200);
    for (const id of [before.id, after.id]) {
      expect((await detail(id)).asset.verification).toMatchObject({ status: 'pending', via: null, coveredBy: null });
      expect(await t.app.services.assets.recheckForLease(id)).toMatchObject({ scannable: false });
    }
    expect((await owner.post(`${base()}/${lab.id}/archive`)).statusCode).toBe(200);
    expect((await detail(named.id)).asset.verification).toMatchObject({ status: 'pending' });
    expect((await owner.post(`${base()}/${lab.id}/restore`)).statusCode).toBe(200);
    expect((await detail(named.id)).asset.verification).toMatchObject({ status: 'bypassed', via: 'covered' });

    // Proof outranks a bypass: once the domain is proven, the app is verified through it.
    const d = await add('domain', domain('lab'));
    const { instructions } = await detail(d.id);
    dns.zone.set(instructions!.recordName, { txt: [instructions!.recordValue] });
    expect((await verify(d.id)).asset.verification.status).toBe('verified');
    expect((await detail(named.id)).asset.verification).toMatchObject({
      status: 'verified',
      via: 'covered',
      coveredBy: { assetId: d.id },
    });
  });
});
