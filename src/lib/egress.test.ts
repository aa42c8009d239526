// The egress policy against a real DNS server and real loopback sockets: names answering loopback,
// private, metadata and mixed addresses; every numeric spelling of 127.0.0.1; the operator's
// allow-list; and that the connection goes to the address that was checked.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../test/helpers/dns-server.ts';
import {
  createEgressPolicy,
  dnsServerResolver,
  EgressRefusedError,
  guardedAgents,
  guardedFetch,
  guardedNetConnect,
  internalRange,
  isEgressRefusal,
  type EgressPolicy,
} from './egress.ts';

let dnsServer: TestDnsServer;
let web: http.Server;
let port: number;

beforeAll(async () => {
  dnsServer = await startDnsServer();
  dnsServer.zone.set('loopback.egress.test', { a: ['127.0.0.1'] });
  dnsServer.zone.set('private.egress.test', { a: ['10.1.2.3'], aaaa: ['fd12::1'] });
  dnsServer.zone.set('metadata.egress.test', { a: ['169.254.169.254'], aaaa: ['fd00:ec2::254'] });
  dnsServer.zone.set('cgnat.egress.test', { a: ['100.64.0.7'] });
  dnsServer.zone.set('mixed.egress.test', { a: ['93.184.215.14', '127.0.0.1'] });
  dnsServer.zone.set('public.egress.test', { a: ['93.184.215.14'] });
  web = http.createServer((_req, res) => res.end('internal secret'));
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  port = (web.address() as AddressInfo).port;
});
afterAll(async () => {
  await dnsServer.close();
  web.closeAllConnections();
  await new Promise((r) => web.close(r));
});

const policy = (allow: string[] = []): EgressPolicy =>
  createEgressPolicy({ allow, resolver: dnsServerResolver([dnsServer.address]) });

describe('internalRange', () => {
  it('refuses every internal range and every numeric spelling, allows public unicast', () => {
    for (const a of [
      '127.0.0.1',
      '127.1',
      '0x7f000001',
      '2130706433',
      '0177.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fd00:ec2::254',
      'fe80::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      '64:ff9b::a9fe:a9fe',
      '2002:7f00:1::',
      'fec0::1',
      '[::1]',
    ])
      expect(internalRange(a), a).not.toBeNull();
    for (const a of ['93.184.215.14', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'])
      expect(internalRange(a), a).toBeNull();
  });
});

describe('resolve', () => {
  it('refuses names answering loopback, private, metadata and carrier-grade NAT addresses', async () => {
    const p = policy();
    for (const name of ['loopback', 'private', 'metadata', 'cgnat'])
      await expect(p.resolve(`${name}.egress.test`)).rejects.toBeInstanceOf(EgressRefusedError);
    expect(await p.resolve('public.egress.test')).toEqual(['93.184.215.14']);
    // Of a mixed answer only the public address is ever returned to connect to.
    expect(await p.resolve('mixed.egress.test')).toEqual(['93.184.215.14']);
    for (const literal of ['127.1', '0x7f000001', '2130706433', '0177.0.0.1', '::ffff:7f00:1'])
      await expect(p.resolve(literal), literal).rejects.toBeInstanceOf(EgressRefusedError);
  });

  it('allows the operator ranges of EGRESS_ALLOW, and only those', async () => {
    const p = policy(['127.0.0.0/8', 'fd12::/16']);
    expect(await p.resolve('loopback.egress.test')).toEqual(['127.0.0.1']);
    expect(await p.resolve('0x7f000001')).toEqual(['127.0.0.1']);
    expect(await p.resolve('private.egress.test')).toEqual(['fd12::1']);
    await expect(p.resolve('metadata.egress.test')).rejects.toBeInstanceOf(EgressRefusedError);
    // withAllowed adds to the list (one scan's bypassed asset).
    expect(await policy().withAllowed(['10.1.2.3/32']).resolve('private.egress.test')).toEqual(['10.1.2.3']);
  });
});

describe('connections', () => {
  const connect = (p: EgressPolicy, host: string) =>
    new Promise<string>((resolve) => {
      const s = guardedNetConnect(p, { host, port });
      s.once('connect', () => {
        s.destroy();
        resolve('connected');
      });
      s.once('error', (e) => resolve(isEgressRefusal(e) ? 'refused' : `error ${String(e)}`));
    });

  it('net connections: refused with an empty allow-list, by name and by every literal; allowed when listed', async () => {
    for (const host of ['loopback.egress.test', '127.0.0.1', '127.1', '0x7f000001', '2130706433'])
      expect(await connect(policy(), host), host).toBe('refused');
    expect(await connect(policy(['127.0.0.0/8']), 'loopback.egress.test')).toBe('connected');
    expect(await connect(policy(['127.0.0.0/8']), '127.1')).toBe('connected');
  });

  it('http agents and fetch: a loopback service is never reached unless allowed', async () => {
    const get = (p: EgressPolicy, host: string) =>
      new Promise<string>((resolve) => {
        const req = http.get({ host, port, agent: guardedAgents(p).http }, (res) => {
          res.resume();
          resolve(`status ${res.statusCode}`);
        });
        req.once('error', (e) => resolve(isEgressRefusal(e) ? 'refused' : `error ${String(e)}`));
      });
    expect(await get(policy(), '127.0.0.1')).toBe('refused');
    expect(await get(policy(), 'loopback.egress.test')).toBe('refused');
    expect(await get(policy(['127.0.0.1']), 'loopback.egress.test')).toBe('status 200');
    // The https agent (the S3 client's, the scanners') refuses the same way before any handshake.
    const tlsRefusal = await new Promise<unknown>((resolve) => {
      const req = https.get({ host: 'loopback.egress.test', port, agent: guardedAgents(policy()).https }, resolve);
      req.once('error', resolve);
    });
    expect(isEgressRefusal(tlsRefusal)).toBe(true);

    const refused = await guardedFetch(policy())(`http://127.1:${port}/`).catch((e: unknown) => e);
    expect(isEgressRefusal(refused)).toBe(true);
    const byName = await guardedFetch(policy())(`http://loopback.egress.test:${port}/`).catch((e: unknown) => e);
    expect(isEgressRefusal(byName)).toBe(true);
    const ok = await guardedFetch(policy(['127.0.0.0/8']))(`http://loopback.egress.test:${port}/`);
    expect(await ok.text()).toBe('internal secret');
  });
});
