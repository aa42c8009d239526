import { describe, expect, it } from 'vitest';
import { loadConfig } from '../lib/config.ts';
import { classifyPeerUrl, createPeerRegistry, describePeer, resolveTransportUrl } from './mesh-peers.ts';

const D = '/api/public/svc/dispatch';

describe('resolveTransportUrl', () => {
  it.each([
    ['bare origin', 'https://a.example', `https://a.example${D}`],
    ['origin with trailing slash', 'https://a.example/', `https://a.example${D}`],
    ['origin with several slashes', 'https://a.example//', `https://a.example${D}`],
    ['origin with port', 'http://127.0.0.1:8080', `http://127.0.0.1:8080${D}`],
    ['origin with query', 'https://a.example/?region=eu', `https://a.example${D}?region=eu`],
    ['origin with query, no slash', 'https://a.example?region=eu', `https://a.example${D}?region=eu`],
    ['full dispatch URL', `https://a.example${D}`, `https://a.example${D}`],
    ['dispatch URL with trailing slash', `https://a.example${D}/`, `https://a.example${D}`],
    ['dispatch URL under a prefix', `https://a.example/peer${D}`, `https://a.example/peer${D}`],
    ['dispatch URL with query', `https://a.example${D}?k=v`, `https://a.example${D}?k=v`],
    ['dispatch URL, trailing slash and query', `https://a.example${D}/?k=v`, `https://a.example${D}?k=v`],
    ['custom path', 'https://a.example/mesh/in', 'https://a.example/mesh/in'],
    ['custom path with trailing slash', 'https://a.example/mesh/in/', 'https://a.example/mesh/in/'],
    ['custom path with query', 'https://a.example/functions/v1/svc?x=1', 'https://a.example/functions/v1/svc?x=1'],
    ['fragment dropped', 'https://a.example/mesh/in#frag', 'https://a.example/mesh/in'],
    ['host case and default port normalised', 'HTTPS://A.Example:443/mesh/in', 'https://a.example/mesh/in'],
  ])('%s', (_label, configured, expected) => {
    expect(resolveTransportUrl(configured)).toBe(expected);
  });

  it('throws on values that are not http(s) URLs', () => {
    expect(() => resolveTransportUrl('a.example')).toThrow(TypeError);
    expect(() => resolveTransportUrl('ftp://a.example')).toThrow(TypeError);
  });

  it('classifies the three forms', () => {
    expect(classifyPeerUrl('https://a.example')).toBe('origin');
    expect(classifyPeerUrl('https://a.example/')).toBe('origin');
    expect(classifyPeerUrl(`https://a.example${D}/`)).toBe('dispatch');
    expect(classifyPeerUrl(`https://a.example/x${D}`)).toBe('dispatch');
    expect(classifyPeerUrl('https://a.example/mesh/in')).toBe('custom');
  });
});

describe('createPeerRegistry', () => {
  const config = loadConfig({
    SVC_PEER_URL_BILLING: 'https://billing.example',
    SVC_SECRET_TO_BILLING: 'to-billing-secret-value',
    SVC_SECRET_FROM_BILLING: 'from-billing-secret-value',
    SVC_PEER_URL_BID_PORTAL: 'https://bid.example/mesh/in',
    SVC_SECRET_TO_BID_PORTAL: 'to-bid-secret-value',
    SVC_PEER_FLOWS_BID_PORTAL: 'ping, health_check,cmmc_status,cmmc_handoff',
    SVC_SECRET_FROM_OPS_HQ: 'from-ops-secret-value',
    SVC_MANAGEMENT_PEER: 'ops.hq',
    SVC_PEER_FLOWS_NOT_A_PEER: 'ping', // flows alone do not make a peer
  });
  const registry = createPeerRegistry(config);

  it('lists every configured peer, sorted by name', () => {
    expect(registry.list().map((p) => p.name)).toEqual(['bid-portal', 'billing', 'ops.hq']);
    const list = registry.list();
    list.pop();
    expect(registry.list()).toHaveLength(3); // callers get a copy
  });

  it('derives the name from the suffix, or takes the configured role name', () => {
    const bid = registry.byName('bid-portal')!;
    expect(bid).toMatchObject({
      name: 'bid-portal',
      suffix: 'BID_PORTAL',
      url: 'https://bid.example/mesh/in',
      transportUrl: 'https://bid.example/mesh/in',
      flows: ['ping', 'health_check', 'cmmc_status', 'cmmc_handoff'],
    });
    expect(bid.secretTo).toBe('to-bid-secret-value');
    expect(bid.secretFrom).toBeUndefined();
    const ops = registry.byName('ops.hq')!;
    expect(ops).toMatchObject({ name: 'ops.hq', suffix: 'OPS_HQ', flows: ['ping', 'health_check'] });
    expect(ops.url).toBeUndefined();
    expect(ops.transportUrl).toBeUndefined();
    expect(registry.byName('billing')?.transportUrl).toBe(`https://billing.example${D}`);
  });

  it('looks names and callers up through the env suffix', () => {
    for (const spelling of ['bid-portal', 'BID_PORTAL', 'bid_portal', 'Bid-Portal']) {
      expect(registry.byName(spelling)?.name).toBe('bid-portal');
      expect(registry.byCaller(spelling)?.name).toBe('bid-portal');
    }
    expect(registry.byCaller('ops-hq')?.name).toBe('ops.hq');
    expect(registry.byCaller('unknown')).toBeUndefined();
    expect(registry.byCaller('')).toBeUndefined();
    expect(registry.byCaller('not-a-peer')).toBeUndefined();
    expect(registry.byCaller(undefined as unknown as string)).toBeUndefined();
  });

  it('keeps secrets out of serialisation, spreads and inspection', () => {
    const all = JSON.stringify(registry.list()) + JSON.stringify(registry.list().map((p) => ({ ...p })));
    for (const secret of [
      'to-billing-secret-value',
      'from-billing-secret-value',
      'to-bid-secret-value',
      'from-ops-secret-value',
    ]) {
      expect(all).not.toContain(secret);
    }
    expect(registry.byName('billing')!.secretFrom).toBe('from-billing-secret-value');
    expect(Object.isFrozen(registry.byName('billing'))).toBe(true);
  });

  it('a peer with neither URL nor secrets is not configured; one with only a URL has no secrets', () => {
    const r = createPeerRegistry(loadConfig({ SVC_PEER_URL_LONELY: 'https://lonely.example/' }));
    const lonely = r.byName('lonely')!;
    expect(lonely.transportUrl).toBe(`https://lonely.example${D}`);
    expect(lonely.secretTo).toBeUndefined();
    expect(createPeerRegistry(loadConfig({})).list()).toEqual([]);
  });
});

describe('describePeer', () => {
  const config = loadConfig({
    SVC_PEER_URL_A: 'https://a.example',
    SVC_SECRET_TO_A: 'secret-a-to',
    SVC_SECRET_FROM_A: 'secret-a-from',
    SVC_PEER_URL_B: `https://b.example${D}`,
    SVC_SECRET_FROM_B: 'secret-b-from',
    SVC_PEER_URL_C: 'https://c.example/mesh/in?token=query-secret',
    SVC_SECRET_TO_D: 'secret-d-to',
  });
  const registry = createPeerRegistry(config);

  it('shows presence only', () => {
    expect(registry.list().map(describePeer)).toEqual([
      {
        name: 'a',
        hasUrl: true,
        urlForm: 'origin',
        secretToPresent: true,
        secretFromPresent: true,
        flows: ['ping', 'health_check'],
      },
      {
        name: 'b',
        hasUrl: true,
        urlForm: 'dispatch',
        secretToPresent: false,
        secretFromPresent: true,
        flows: ['ping', 'health_check'],
      },
      {
        name: 'c',
        hasUrl: true,
        urlForm: 'custom',
        secretToPresent: false,
        secretFromPresent: false,
        flows: ['ping', 'health_check'],
      },
      {
        name: 'd',
        hasUrl: false,
        urlForm: null,
        secretToPresent: true,
        secretFromPresent: false,
        flows: ['ping', 'health_check'],
      },
    ]);
  });

  it('never carries a secret value or the URL', () => {
    const text = JSON.stringify(registry.list().map(describePeer));
    for (const s of ['secret-a-to', 'secret-a-from', 'secret-b-from', 'secret-d-to', 'query-secret', 'example']) {
      expect(text).not.toContain(s);
    }
  });
});
