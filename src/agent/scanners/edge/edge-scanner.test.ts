// The edge scanner against real loopback servers: HTTPS servers built from a test CA (good, weak,
// expired, self-signed, wrong name, expiring in 20 and 45 days), their plain-HTTP companions, a
// non-TLS port, a closed port, and a fake endpoint answering SSLv2/SSLv3 and the suites OpenSSL 3
// cannot serve. Every check fires on its bad server and stays quiet on the good one.
// Over 500 lines on purpose: the TLS servers are built once from one test CA for all cases.
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizedFindingSchema, type NormalizedFindingInput } from '../../../findings/index.ts';
import type { ScanTask } from '../types.ts';
import { edgeCli } from './cli.ts';
import {
  clientHello,
  issuerUrlAllowed,
  createEdgeScanner,
  CIPHER_SUITES,
  gradePort,
  parseAnswer,
  parseHsts,
  sendHello,
  sslv2ClientHello,
  type EdgeResult,
  type EdgeScannerSettings,
  type GradeInput,
} from './index.ts';
import {
  createServers,
  createTestPki,
  fakeTlsServer,
  GOOD_HEADERS,
  helloGate,
  type Servers,
  type TestPki,
} from '../../../../test/fixtures/tls-servers.ts';

const DAY_MS = 86_400_000;
let pki: TestPki;
let servers: Servers;
const port: Record<string, number> = {};

beforeAll(async () => {
  pki = createTestPki();
  servers = createServers();
  const now = Date.now();
  const good = pki.leaf({ name: 'good', to: new Date(now + 365 * DAY_MS) });
  const weak = pki.leaf({ name: 'weak', to: new Date(now + 365 * DAY_MS), key: 'rsa1024', md: 'sha1' });
  const expired = pki.leaf({ name: 'expired', from: new Date(now - 40 * DAY_MS), to: new Date(now - 10 * DAY_MS) });
  const mismatch = pki.leaf({
    name: 'mismatch',
    cn: 'other.example',
    san: 'DNS:other.example',
    to: new Date(now + 365 * DAY_MS),
  });
  // Half a day past the boundary so a slow test run cannot slip to the next whole day.
  const in20 = pki.leaf({ name: 'in20', to: new Date(now + 20.5 * DAY_MS) });
  const in45 = pki.leaf({ name: 'in45', to: new Date(now + 45.5 * DAY_MS) });
  const selfSigned = pki.selfSigned('self');

  port.good = await servers.https(good, GOOD_HEADERS);
  port.goodHttp = await servers.http(301, { location: `https://127.0.0.1:${port.good}/` });
  // Legacy protocols and suites need security level 0 on the server too (OpenSSL 3 refuses them above it).
  port.weak = await servers.https(
    { ...weak, minVersion: 'TLSv1', maxVersion: 'TLSv1.2', ciphers: 'AES128-SHA:NULL-SHA:@SECLEVEL=0' },
    {},
  );
  port.weakHttp = await servers.http(200, {});
  port.expired = await servers.https(expired, GOOD_HEADERS);
  port.self = await servers.https(selfSigned, GOOD_HEADERS);
  port.selfHttp = await servers.http(302, { location: `https://127.0.0.1:${port.self}/` });
  // A 512-bit key cannot make TLS 1.3's RSA-PSS signatures: TLS 1.2 only.
  port.insecure = await servers.https(
    {
      ...pki.selfSigned('insecure', { key: 'rsa512', md: 'md5' }),
      maxVersion: 'TLSv1.2',
      ciphers: 'ECDHE-RSA-AES128-GCM-SHA256:@SECLEVEL=0',
    },
    GOOD_HEADERS,
  );
  port.mismatch = await servers.https(mismatch, GOOD_HEADERS);
  port.in20 = await servers.https(in20, { ...GOOD_HEADERS, 'strict-transport-security': 'max-age=86400' });
  port.in45 = await servers.https(in45, { ...GOOD_HEADERS, 'strict-transport-security': 'max-age=0' });
  port.plain = await servers.http(200, {});
  port.closed = await servers.closedPort();
  port.legacy = await servers.tcp(
    fakeTlsServer({ versions: [0x0300, 0x0301], suites: [0x000a, 0x0005, 0x0003], sslv2: true }),
  );
  port.serverOrder = await servers.tcp(fakeTlsServer({ versions: [0x0303], suites: [0xc02f, 0xc013, 0x009c] }));
  // extended_master_secret (type 0x0017, empty): Node sends it, the raw hellos do not.
  port.gated = await servers.tcp(helloGate(port.good, Buffer.from([0x00, 0x17, 0x00, 0x00])));
  port.clientOrder = await servers.tcp(
    fakeTlsServer({ versions: [0x0303], suites: [0xc02f, 0xc013, 0x009c], clientOrder: true }),
  );

  // Key exchange, renegotiation, suite order and chains (SSL Labs' caps), on real TLS servers.
  const rsa = pki.leaf({ name: 'rsa', to: new Date(now + 365 * DAY_MS), key: 'rsa2048' });
  const dhe = 'DHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:@SECLEVEL=0';
  port.dh1024 = await servers.https(
    { ...rsa, maxVersion: 'TLSv1.2', ciphers: dhe, dhparam: pki.dhParams(1024) },
    GOOD_HEADERS,
  );
  port.dh2048 = await servers.https(
    { ...rsa, ciphers: `TLS_AES_128_GCM_SHA256:${dhe}`, dhparam: 'auto' },
    GOOD_HEADERS,
  );
  port.curve192 = await servers.https(
    {
      ...rsa,
      maxVersion: 'TLSv1.2',
      ciphers: 'ECDHE-RSA-AES128-GCM-SHA256:@SECLEVEL=0',
      ecdhCurve: 'prime256v1:prime192v1',
    },
    GOOD_HEADERS,
  );
  port.curve160 = await servers.https(
    {
      ...rsa,
      maxVersion: 'TLSv1.2',
      ciphers: 'ECDHE-RSA-AES128-GCM-SHA256:@SECLEVEL=0',
      ecdhCurve: 'prime256v1:secp160r1',
    },
    GOOD_HEADERS,
  );
  port.reneg = await servers.https({ ...good, secureOptions: 0 }, GOOD_HEADERS);
  port.followsClient = await servers.https({ ...good, honorCipherOrder: false }, GOOD_HEADERS);
  port.sslv3Cbc = await servers.tcp(fakeTlsServer({ versions: [0x0300, 0x0303], suites: [0xc02f, 0x002f] }));
  port.sslv3Rc4 = await servers.tcp(fakeTlsServer({ versions: [0x0300, 0x0303], suites: [0xc02f, 0x0005] }));
  port.sslv3Only = await servers.tcp(fakeTlsServer({ versions: [0x0300], suites: [0x0005] }));
  // A leaf sent without its intermediate, whose AIA names where to fetch it (here, on this host).
  issuers = await servers.httpHandler((req, res) =>
    req.url === '/int.der'
      ? res.writeHead(200, { 'content-type': 'application/pkix-cert' }).end(chained.intermediateDer)
      : res.writeHead(404).end(),
  );
  chained = pki.viaIntermediate('chained', {
    issuerUrl: `http://127.0.0.1:${issuers}/int.der`,
    to: new Date(now + 365 * DAY_MS),
  });
  const lost = pki.viaIntermediate('lost', {
    issuerUrl: `http://127.0.0.1:${issuers}/gone.der`,
    to: new Date(now + 365 * DAY_MS),
  });
  port.leafOnly = await servers.https({ key: chained.key, cert: chained.cert }, GOOD_HEADERS);
  port.fullChain = await servers.https(
    { key: chained.key, cert: `${chained.cert}${chained.intermediatePem}` },
    GOOD_HEADERS,
  );
  port.lostIssuer = await servers.https({ key: lost.key, cert: lost.cert }, GOOD_HEADERS);
});
let chained: ReturnType<TestPki['viaIntermediate']>;
let issuers = 0;

afterAll(() => {
  servers?.close();
  pki?.cleanup();
});

function task(ports: number[], extra: Partial<ScanTask> & { sni?: string } = {}): ScanTask & { percents: number[] } {
  const percents: number[] = [];
  const { sni, ...rest } = extra;
  return {
    target: '127.0.0.1',
    options: { ports, ...(sni ? { sni } : {}) },
    chunk: null,
    signal: new AbortController().signal,
    progress: (p) => percents.push(p),
    percents,
    ...rest,
  };
}

async function scan(
  ports: number[],
  settings: EdgeScannerSettings = {},
  extra: Partial<ScanTask> & { sni?: string } = {},
) {
  const scanner = createEdgeScanner({ caCertificates: [pki.caPem], httpPort: null, timeoutMs: 3_000, ...settings });
  const t = task(ports, extra);
  const out = await scanner.run(t);
  for (const f of out.findings) expect(normalizedFindingSchema.safeParse(f).success, JSON.stringify(f)).toBe(true);
  return { findings: out.findings, details: out.details as unknown as EdgeResult, percents: t.percents };
}

const rules = (fs: NormalizedFindingInput[]) => fs.map((f) => f.ruleId).sort();
const byRule = (fs: NormalizedFindingInput[], ruleId: string) => fs.find((f) => f.ruleId === ruleId);

describe('edge scanner against loopback servers', () => {
  it('grades the good server A and reports nothing else', async () => {
    const { findings, details, percents } = await scan([port.good!], { httpPort: port.goodHttp! });
    expect(rules(findings)).toEqual(['edge/grade']);
    const p = details.ports[0]!;
    expect(p.protocols).toEqual({
      SSLv2: false,
      SSLv3: false,
      TLSv1: false,
      'TLSv1.1': false,
      'TLSv1.2': true,
      'TLSv1.3': true,
    });
    expect(p.grade).toEqual({ grade: 'A+', gradeIgnoringTrust: 'A+', caps: [] });
    expect(p.certificate).toMatchObject({
      subject: 'CN=localhost',
      issuer: 'CN=Rampart Edge Test CA',
      trusted: true,
      selfSigned: false,
      hostname: { name: '127.0.0.1', matches: true },
      key: { type: 'ec', bits: 256, strength: 'ok' },
      signature: { strength: 'ok' },
    });
    expect(p.ciphers.find((c) => c.protocol === 'TLSv1.3')?.suites).toEqual(
      expect.arrayContaining(['TLS_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256']),
    );
    expect(p.ciphers.find((c) => c.protocol === 'TLSv1.2')?.suites).toContain(
      'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
    );
    expect(p.https).toMatchObject({
      status: 200,
      hsts: { maxAge: 31_536_000, includeSubDomains: true, preload: false },
    });
    expect(details.httpRedirect).toMatchObject({
      state: 'permanent',
      status: 301,
      location: `https://127.0.0.1:${port.good}/`,
    });
    expect(byRule(findings, 'edge/grade')).toMatchObject({
      severity: 'info',
      location: { host: '127.0.0.1', port: port.good, protocol: 'tcp' },
      evidence: { data: { grade: 'A+', gradeIgnoringTrust: 'A+', caps: [] } },
    });
    expect(percents.at(-1)).toBe(100);
  });

  it('distrusts the good certificate when the test CA is not configured', async () => {
    const { findings, details } = await scan([port.good!], { caCertificates: [] });
    expect(rules(findings)).toEqual(['edge/cert-untrusted', 'edge/grade']);
    expect(details.ports[0]!.certificate).toMatchObject({ trusted: false, trustProblem: 'unknown-issuer' });
    expect(details.ports[0]!.grade).toMatchObject({ grade: 'F', gradeIgnoringTrust: 'A+' });
  });

  it('finds every weakness of the weak server and grades it F', async () => {
    const { findings, details } = await scan([port.weak!], { httpPort: port.weakHttp! });
    expect(rules(findings)).toEqual(
      [
        'edge/grade',
        'edge/header-csp-missing',
        'edge/header-frame-options-missing',
        'edge/header-referrer-policy-missing',
        'edge/header-xcto-missing',
        'edge/hsts-missing',
        'edge/no-aead',
        'edge/no-forward-secrecy',
        'edge/no-https-redirect',
        'edge/no-tls-1.3',
        'edge/tls-1.0-enabled',
        'edge/tls-1.1-enabled',
        'edge/weak-cipher',
        'edge/weak-key',
        'edge/weak-signature',
      ].sort(),
    );
    const p = details.ports[0]!;
    // TLS 1.0 and 1.1 complete full handshakes through Node with the client at security level 0.
    expect(p.seenBy).toEqual({ TLSv1: 'handshake', 'TLSv1.1': 'handshake', 'TLSv1.2': 'handshake' });
    expect(p.ciphers.map((c) => c.protocol)).toEqual(['TLSv1', 'TLSv1.1', 'TLSv1.2']);
    for (const c of p.ciphers)
      expect([...c.suites].sort()).toEqual(['TLS_RSA_WITH_AES_128_CBC_SHA', 'TLS_RSA_WITH_NULL_SHA']);
    expect(byRule(findings, 'edge/weak-cipher')).toMatchObject({
      severity: 'high',
      evidence: {
        data: {
          suites: [expect.objectContaining({ name: 'TLS_RSA_WITH_NULL_SHA', weaknesses: ['null', 'under-112-bit'] })],
        },
      },
    });
    expect(byRule(findings, 'edge/no-forward-secrecy')).toMatchObject({
      severity: 'medium',
      evidence: { data: { forwardSecrecyAvailable: false } },
    });
    expect(byRule(findings, 'edge/weak-key')).toMatchObject({
      severity: 'medium',
      evidence: { summary: 'rsa 1024 bits' },
    });
    expect(byRule(findings, 'edge/weak-signature')).toMatchObject({
      severity: 'medium',
      evidence: { summary: 'ecdsa-with-SHA1' },
    });
    expect(byRule(findings, 'edge/no-https-redirect')).toMatchObject({
      location: { url: `http://127.0.0.1:${port.weakHttp}/` },
    });
    expect(byRule(findings, 'edge/hsts-missing')).toMatchObject({
      location: { url: `https://127.0.0.1:${port.weak}/` },
    });
    expect(p.grade?.grade).toBe('F');
    expect(p.grade?.gradeIgnoringTrust).toBe('F');
    expect(p.grade?.caps.map((c) => c.code)).toEqual([
      'null-cipher',
      'cipher-under-112-bit',
      'sha1-signature',
      'weak-key',
      'tls10',
      'tls11',
      'no-forward-secrecy',
      'no-aead',
      'no-tls13',
      'no-hsts',
    ]);
    expect(p.grade?.caps.find((c) => c.code === 'sha1-signature')?.trust).toBe(true);
  });

  it('reports an expired certificate (high) and grades F, A when trust is ignored', async () => {
    const { findings, details } = await scan([port.expired!]);
    expect(rules(findings)).toEqual(['edge/cert-expired', 'edge/grade']);
    expect(byRule(findings, 'edge/cert-expired')?.severity).toBe('high');
    expect(details.ports[0]!.certificate).toMatchObject({ expired: true, trusted: true });
    expect(details.ports[0]!.grade).toMatchObject({ grade: 'F', gradeIgnoringTrust: 'A+' });
  });

  it('reports a self-signed certificate (not also untrusted) and a temporary redirect', async () => {
    const { findings, details } = await scan([port.self!], { httpPort: port.selfHttp! });
    expect(rules(findings)).toEqual(['edge/cert-self-signed', 'edge/grade', 'edge/https-redirect-temporary']);
    expect(details.ports[0]!.grade).toMatchObject({ grade: 'F', gradeIgnoringTrust: 'A+' });
    expect(details.httpRedirect).toMatchObject({ state: 'temporary', status: 302 });
  });

  it('reports an MD5 signature and a 512-bit key as insecure (high, grade F even ignoring trust)', async () => {
    const { findings, details } = await scan([port.insecure!]);
    expect(rules(findings)).toEqual([
      'edge/cert-self-signed',
      'edge/grade',
      'edge/no-tls-1.3',
      'edge/weak-key',
      'edge/weak-signature',
    ]);
    expect(byRule(findings, 'edge/weak-key')).toMatchObject({
      severity: 'high',
      evidence: { summary: 'rsa 512 bits' },
    });
    expect(byRule(findings, 'edge/weak-signature')).toMatchObject({
      severity: 'high',
      evidence: { summary: 'md5WithRSAEncryption' },
    });
    expect(details.ports[0]!.grade).toMatchObject({ grade: 'F', gradeIgnoringTrust: 'F' });
    expect(details.ports[0]!.grade?.caps.map((c) => c.code)).toEqual([
      'md5-signature',
      'insecure-key',
      'cert-self-signed',
      'no-tls13',
    ]);
  });

  it('reports a hostname mismatch, and none when the SNI option names the certificate', async () => {
    const wrong = await scan([port.mismatch!]);
    expect(rules(wrong.findings)).toEqual(['edge/cert-hostname-mismatch', 'edge/grade']);
    expect(wrong.details.ports[0]!.grade).toMatchObject({ grade: 'F', gradeIgnoringTrust: 'A+' });
    expect(wrong.details.ports[0]!.grade?.caps).toEqual([
      { code: 'hostname-mismatch', grade: 'F', reason: 'the certificate does not cover 127.0.0.1', trust: true },
    ]);
    const right = await scan([port.mismatch!], {}, { sni: 'other.example' });
    expect(rules(right.findings)).toEqual(['edge/grade']);
    expect(right.details.serverName).toBe('other.example');
  });

  it('warns 30 days ahead (medium) with a short HSTS, and 60 days ahead (low) with HSTS disabled', async () => {
    const soon = await scan([port.in20!]);
    expect(rules(soon.findings)).toEqual(['edge/cert-expiring-30d', 'edge/grade', 'edge/hsts-short']);
    expect(byRule(soon.findings, 'edge/cert-expiring-30d')).toMatchObject({
      severity: 'medium',
      evidence: { data: { daysLeft: 20 } },
    });
    expect(soon.details.ports[0]!.grade).toMatchObject({
      grade: 'A-',
      caps: [expect.objectContaining({ code: 'hsts-short' })],
    });
    const later = await scan([port.in45!]);
    expect(rules(later.findings)).toEqual(['edge/cert-expiring-60d', 'edge/grade', 'edge/hsts-disabled']);
    expect(byRule(later.findings, 'edge/cert-expiring-60d')).toMatchObject({
      severity: 'low',
      evidence: { data: { daysLeft: 45 } },
    });
    expect(later.details.ports[0]!.grade).toMatchObject({
      grade: 'A-',
      caps: [expect.objectContaining({ code: 'no-hsts' })],
    });
  });

  it('says "no TLS on port N" for a plain-HTTP port and skips a closed one, next to a TLS port', async () => {
    const { findings, details } = await scan([port.good!, port.plain!, port.closed!]);
    expect(rules(findings)).toEqual(['edge/grade', 'edge/no-tls']);
    const plain = details.ports.find((p) => p.port === port.plain)!;
    expect(plain.state).toBe('no-tls');
    expect(plain.note).toMatch(new RegExp(`^no TLS on port ${port.plain} \\(it answered "HTTP/1\\.1 400`));
    expect(byRule(findings, 'edge/no-tls')).toMatchObject({
      location: { host: '127.0.0.1', port: port.plain, protocol: 'tcp' },
    });
    expect(details.ports.find((p) => p.port === port.closed)).toMatchObject({
      state: 'closed',
      note: `port ${port.closed} is closed`,
    });
  });

  it('is inconclusive, with no findings, when no port can be connected', async () => {
    const scanner = createEdgeScanner({ caCertificates: [pki.caPem], httpPort: null, timeoutMs: 3_000 });
    const out = await scanner.run(task([port.closed!]));
    expect(out.findings).toEqual([]);
    expect(out.inconclusive).toBe(
      `no TLS port of 127.0.0.1 could be connected: port ${port.closed} refused the connection`,
    );
    expect(out.partial).toBeUndefined();
    expect(out.coverage).toMatchObject({ hosts: ['127.0.0.1'], ports: [] });
  });

  it('is partial when some ports could not be connected, and covers only the ports it checked', async () => {
    const scanner = createEdgeScanner({ caCertificates: [pki.caPem], httpPort: null, timeoutMs: 3_000 });
    const out = await scanner.run(task([port.good!, port.closed!]));
    expect(out.inconclusive).toBeUndefined();
    expect(out.partial).toBe(`port ${port.closed} refused the connection`);
    expect(out.coverage?.ports).toEqual([[port.good!, port.good!]]);
    expect(out.coverage?.rules).toContain('edge/grade');
  });

  it('detects SSLv2, SSLv3, RC4, 3DES and export suites from raw hellos', async () => {
    const { findings, details } = await scan([port.legacy!]);
    const p = details.ports[0]!;
    expect(p.protocols).toEqual({
      SSLv2: true,
      SSLv3: true,
      TLSv1: true,
      'TLSv1.1': false,
      'TLSv1.2': false,
      'TLSv1.3': false,
    });
    expect(p.seenBy).toEqual({ SSLv2: 'server-hello', SSLv3: 'server-hello', TLSv1: 'server-hello' });
    expect(p.ciphers).toEqual([
      {
        protocol: 'SSLv3',
        suites: ['TLS_RSA_WITH_3DES_EDE_CBC_SHA', 'TLS_RSA_WITH_RC4_128_SHA', 'TLS_RSA_EXPORT_WITH_RC4_40_MD5'],
      },
      {
        protocol: 'TLSv1',
        suites: ['TLS_RSA_WITH_3DES_EDE_CBC_SHA', 'TLS_RSA_WITH_RC4_128_SHA', 'TLS_RSA_EXPORT_WITH_RC4_40_MD5'],
      },
    ]);
    expect(p.serverPreference).toBe(true);
    expect(p.certificate).toBeUndefined();
    expect(p.certificateError).toMatch(/not read/);
    expect(rules(findings)).toEqual([
      'edge/grade',
      'edge/no-aead',
      'edge/no-forward-secrecy',
      'edge/no-tls-1.2',
      'edge/sslv2-enabled',
      'edge/sslv3-enabled',
      'edge/tls-1.0-enabled',
      'edge/weak-cipher',
    ]);
    const weak = byRule(findings, 'edge/weak-cipher')!;
    expect(weak.severity).toBe('high');
    expect(
      (weak.evidence?.data as { suites: { name: string; weaknesses: string[] }[] }).suites.map((s) => [
        s.name,
        s.weaknesses,
      ]),
    ).toEqual([
      ['TLS_RSA_WITH_3DES_EDE_CBC_SHA', ['sweet32']],
      ['TLS_RSA_WITH_RC4_128_SHA', ['rc4']],
      ['TLS_RSA_EXPORT_WITH_RC4_40_MD5', ['export', 'under-112-bit', 'rc4']],
    ]);
    expect(p.grade?.grade).toBe('F');
    expect(p.grade?.caps.map((c) => c.code)).toEqual([
      'sslv2',
      'poodle',
      'sslv3',
      'export-cipher',
      'cipher-under-112-bit',
      'no-tls12',
      'sweet32',
      'tls10',
      'rc4',
      'no-forward-secrecy',
      'no-aead',
      'no-tls13',
    ]);
  });

  it('tells a server that enforces its own suite order from one that follows the client', async () => {
    const { details } = await scan([port.serverOrder!, port.clientOrder!]);
    const [a, b] = [
      details.ports.find((p) => p.port === port.serverOrder)!,
      details.ports.find((p) => p.port === port.clientOrder)!,
    ];
    expect(a.ciphers).toEqual([
      {
        protocol: 'TLSv1.2',
        suites: [
          'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
          'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA',
          'TLS_RSA_WITH_AES_128_GCM_SHA256',
        ],
      },
    ]);
    expect(a.serverPreference).toBe(true);
    expect(b.ciphers[0]!.suites).toHaveLength(3);
    expect(b.serverPreference).toBe(false);
  });

  it('keeps the suite of a full handshake when raw hellos go unanswered', async () => {
    const { details } = await scan([port.gated!]);
    const p = details.ports[0]!;
    expect(p.seenBy).toEqual({ 'TLSv1.2': 'handshake', 'TLSv1.3': 'handshake' });
    expect(p.ciphers[0]).toEqual({
      protocol: 'TLSv1.2',
      suites: [expect.stringMatching(/^TLS_ECDHE_ECDSA_WITH_AES_\d+_GCM_SHA\d+$/)],
      note: expect.stringMatching(/raw hellos went unanswered/),
    });
    expect(p.grade?.grade).toBe('A+');
  });

  it('takes the host of a URL target, and the port of an http:// target for the redirect check', async () => {
    const scanner = createEdgeScanner({ caCertificates: [pki.caPem] });
    const out = await scanner.run({ ...task([port.good!]), target: `http://127.0.0.1:${port.goodHttp}/login` });
    const details = out.details as unknown as EdgeResult;
    expect(details.host).toBe('127.0.0.1');
    expect(details.httpRedirect).toMatchObject({ url: `http://127.0.0.1:${port.goodHttp}/`, state: 'permanent' });
  });

  it('stops when cancelled, before or during the scan', async () => {
    const before = new AbortController();
    before.abort(Object.assign(new Error('stop'), { name: 'AbortError' }));
    await expect(scan([port.good!], {}, { signal: before.signal })).rejects.toThrow('stop');
    const during = new AbortController();
    const progress = (p: number) =>
      p > 0 && during.abort(Object.assign(new Error('stopped midway'), { name: 'AbortError' }));
    await expect(scan([port.good!, port.weak!], {}, { signal: during.signal, progress })).rejects.toThrow(
      'stopped midway',
    );
  });

  it('refuses bad options', async () => {
    await expect(scan([0])).rejects.toThrow(/ports/);
    await expect(scan([port.good!], {}, { sni: 'not a host' })).rejects.toThrow(/sni/);
  });
});

describe('raw hellos', () => {
  it('pads a mid-sized ClientHello to 512 bytes and keeps SSLv3 hellos free of extensions', () => {
    const tls12 = clientHello(
      0x0303,
      CIPHER_SUITES.slice(0, 80).map((s) => s.code),
      'example.test',
    );
    expect(tls12.length - 5).toBeGreaterThanOrEqual(512);
    expect(tls12.readUInt16BE(3)).toBe(tls12.length - 5);
    const ssl3 = clientHello(0x0300, [0x000a]);
    expect(ssl3.readUInt16BE(1)).toBe(0x0300);
    // record (5) + handshake header (4) + version (2) + random (32) + sid (1) + suites (2 + 2) + compression (2): no extensions.
    expect(ssl3.length).toBe(5 + 4 + 2 + 32 + 1 + 4 + 2);
    const v2 = sslv2ClientHello();
    expect(v2[0]! & 0x80).toBe(0x80);
    expect(v2[2]).toBe(1);
  });

  it('reads a ServerHello split across reads and records, an alert, and non-TLS bytes', () => {
    const body = Buffer.concat([Buffer.from([0x03, 0x03]), Buffer.alloc(32, 7), Buffer.from([0, 0xc0, 0x2f, 0])]);
    const hs = Buffer.concat([Buffer.from([2, 0, 0, body.length]), body]);
    const rec = (payload: Buffer) => Buffer.concat([Buffer.from([0x16, 3, 3, 0, payload.length]), payload]);
    const split = Buffer.concat([rec(hs.subarray(0, 20)), rec(hs.subarray(20))]);
    expect(parseAnswer(split.subarray(0, 30))).toBeNull();
    expect(parseAnswer(split)).toEqual({ kind: 'server-hello', version: 0x0303, cipher: 0xc02f });
    expect(parseAnswer(Buffer.from([0x15, 3, 1, 0, 2, 2, 40]))).toEqual({ kind: 'alert', description: 40 });
    expect(parseAnswer(Buffer.from('HTTP/1.1 400 Bad Request\r\n'))).toMatchObject({ kind: 'not-tls' });
  });

  it('reports a silent listener as a timeout and a closed port as unreachable', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const silentPort = (silent.address() as net.AddressInfo).port;
    try {
      expect(
        await sendHello({ address: '127.0.0.1', port: silentPort, timeoutMs: 200 }, clientHello(0x0303, [0xc02f])),
      ).toEqual({ kind: 'timeout' });
      expect(
        await sendHello({ address: '127.0.0.1', port: port.closed!, timeoutMs: 1_000 }, clientHello(0x0303, [0xc02f])),
      ).toMatchObject({ kind: 'unreachable' });
    } finally {
      silent.close();
    }
  });
});

describe('key exchange, renegotiation, suite order and chains (SSL Labs caps)', () => {
  it('records a 1024-bit DH group (Logjam) and caps at B; a 2048-bit group is fine', async () => {
    const weak = await scan([port.dh1024!]);
    expect(weak.details.ports[0]!.keyExchange).toMatchObject({ dh: { bits: 1024 } });
    expect(weak.details.ports[0]!.grade).toMatchObject({
      grade: 'B',
      caps: expect.arrayContaining([expect.objectContaining({ code: 'weak-dh', grade: 'B' })]),
    });
    expect(byRule(weak.findings, 'edge/weak-dh')).toMatchObject({
      severity: 'medium',
      evidence: { data: { dhBits: 1024 } },
    });
    const strong = await scan([port.dh2048!]);
    expect(strong.details.ports[0]!.keyExchange?.dh).toEqual({ bits: 2048 });
    expect(byRule(strong.findings, 'edge/weak-dh')).toBeUndefined();
    expect(strong.details.ports[0]!.grade?.grade).toBe('A+');
  });

  it('finds a small curve a server accepts although it prefers P-256: 192 bits caps at B, 160 at B too (not under 160)', async () => {
    const { findings, details } = await scan([port.curve192!, port.curve160!]);
    const [a, b] = [
      details.ports.find((p) => p.port === port.curve192)!,
      details.ports.find((p) => p.port === port.curve160)!,
    ];
    expect(a.keyExchange).toMatchObject({
      ecdh: { curve: 'prime256v1', bits: 256 },
      smallCurve: { curve: 'prime192v1', bits: 192 },
    });
    expect(a.grade?.caps).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'weak-ecdh', grade: 'B' })]));
    expect(b.keyExchange?.smallCurve).toEqual({ curve: 'secp160r1', bits: 160 });
    expect(b.grade?.grade).toBe('B');
    expect(findings.filter((f) => f.ruleId === 'edge/weak-ecdh').map((f) => [f.location.port, f.severity])).toEqual(
      [
        [port.curve192, 'medium'],
        [port.curve160, 'medium'],
      ].sort((x, y) => Number(x[0]) - Number(y[0])),
    );
    // The good server (P-256 key, default groups) takes none.
    expect((await scan([port.good!])).details.ports[0]!.keyExchange).toEqual({
      ecdh: { curve: expect.stringMatching(/^(X25519|prime256v1)$/), bits: expect.any(Number) },
      notes: [],
    });
  });

  it('reports client-initiated renegotiation, and a server that follows the client order while its suites differ', async () => {
    const { findings, details } = await scan([port.reneg!, port.followsClient!, port.good!]);
    const at = (p: number) => details.ports.find((x) => x.port === p)!;
    expect(at(port.reneg!).clientRenegotiation).toBe(true);
    expect(at(port.good!).clientRenegotiation).toBe(false);
    expect(at(port.reneg!).grade).toMatchObject({
      grade: 'A-',
      caps: [expect.objectContaining({ code: 'client-renegotiation' })],
    });
    expect(at(port.followsClient!).serverPreference).toBe(false);
    expect(at(port.followsClient!).grade).toMatchObject({
      grade: 'A-',
      caps: [expect.objectContaining({ code: 'client-cipher-order' })],
    });
    expect(findings.filter((f) => f.ruleId === 'edge/client-renegotiation').map((f) => f.location.port)).toEqual([
      port.reneg,
    ]);
    expect(
      findings.filter((f) => f.ruleId === 'edge/client-cipher-order').map((f) => [f.location.port, f.severity]),
    ).toEqual([[port.followsClient, 'low']]);
  });

  it('grades SSLv3 as SSL Labs does: B when offered, C with CBC suites (POODLE), F when it is the best protocol', async () => {
    const { details } = await scan([port.sslv3Rc4!, port.sslv3Cbc!, port.sslv3Only!]);
    const at = (p: number) => details.ports.find((x) => x.port === p)!.grade!;
    expect(at(port.sslv3Rc4!)).toMatchObject({ grade: 'B' });
    expect(at(port.sslv3Rc4!).caps.map((c) => c.code)).toEqual(expect.arrayContaining(['sslv3', 'rc4']));
    expect(at(port.sslv3Cbc!)).toMatchObject({
      grade: 'C',
      caps: expect.arrayContaining([expect.objectContaining({ code: 'poodle', grade: 'C' })]),
    });
    expect(at(port.sslv3Only!)).toMatchObject({
      grade: 'F',
      caps: expect.arrayContaining([expect.objectContaining({ code: 'sslv3-best', grade: 'F' })]),
    });
  });

  it('fetches a missing intermediate from the AIA URL: chain incomplete caps at B, not F; a full chain is A+', async () => {
    const { findings, details } = await scan([port.leafOnly!, port.fullChain!, port.lostIssuer!]);
    const at = (p: number) => details.ports.find((x) => x.port === p)!;
    expect(at(port.leafOnly!).certificate).toMatchObject({ trusted: true, chainIncomplete: true, presented: 1 });
    expect(at(port.leafOnly!).grade).toEqual({
      grade: 'B',
      gradeIgnoringTrust: 'B',
      caps: [expect.objectContaining({ code: 'incomplete-chain', grade: 'B', trust: false })],
    });
    expect(
      byRule(
        findings.filter((f) => f.location.port === port.leafOnly),
        'edge/cert-chain-incomplete',
      )?.description,
    ).toMatch(/Rampart Edge Test Intermediate chained/);
    expect(at(port.fullChain!).certificate).toMatchObject({ trusted: true, presented: 2 });
    expect(at(port.fullChain!).certificate?.chainIncomplete).toBeUndefined();
    expect(at(port.fullChain!).grade?.grade).toBe('A+');
    // An issuer that cannot be fetched leaves the chain untrusted, as a client sees it.
    expect(at(port.lostIssuer!).certificate).toMatchObject({ trusted: false, trustProblem: 'unknown-issuer' });
    expect(at(port.lostIssuer!).grade?.grade).toBe('F');
    expect(at(port.lostIssuer!).notes).toEqual([expect.stringMatching(/gone\.der answered 404 without a certificate/)]);
    expect(findings.filter((f) => f.ruleId === 'edge/cert-untrusted').map((f) => f.location.port)).toEqual([
      port.lostIssuer,
    ]);
  });

  it('fetches issuers only on the scanned host or by host name on the web ports', () => {
    expect(issuerUrlAllowed(new URL('http://127.0.0.1:8080/x.der'), '127.0.0.1')).toBe(true);
    expect(
      issuerUrlAllowed(
        new URL('http://crt.sectigo.com/SectigoRSADomainValidationSecureServerCA.crt'),
        'shop.example.com',
      ),
    ).toBe(true);
    expect(issuerUrlAllowed(new URL('http://169.254.169.254/latest/meta-data/'), 'shop.example.com')).toBe(false);
    expect(issuerUrlAllowed(new URL('http://[::1]/x'), 'shop.example.com')).toBe(false);
    expect(issuerUrlAllowed(new URL('http://internal.example.com:8500/x'), 'shop.example.com')).toBe(false);
    expect(issuerUrlAllowed(new URL('http://localhost/x'), 'shop.example.com')).toBe(false);
  });
});

describe('grade caps', () => {
  const suite = (name: string) => CIPHER_SUITES.find((s) => s.name === name)!;
  const base = (over: Partial<GradeInput> = {}): GradeInput => ({
    protocols: { SSLv2: false, SSLv3: false, TLSv1: false, 'TLSv1.1': false, 'TLSv1.2': true, 'TLSv1.3': true },
    suites: [suite('TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256')],
    hsts: { maxAge: 31_536_000 },
    ...over,
  });

  it('caps at B, C, A- and F for the causes docs/scanners.md lists', () => {
    expect(gradePort(base()).grade).toBe('A+');
    expect(gradePort(base({ protocols: { ...base().protocols, TLSv1: true } })).grade).toBe('B');
    expect(gradePort(base({ suites: [...base().suites, suite('TLS_ECDHE_RSA_WITH_RC4_128_SHA')] })).grade).toBe('B');
    expect(gradePort(base({ suites: [...base().suites, suite('TLS_RSA_WITH_3DES_EDE_CBC_SHA')] })).grade).toBe('C');
    expect(
      gradePort(base({ protocols: { ...base().protocols, 'TLSv1.2': false, 'TLSv1.3': false, TLSv1: true } })).grade,
    ).toBe('C');
    expect(gradePort(base({ suites: [...base().suites, suite('TLS_DH_anon_WITH_AES_128_CBC_SHA')] })).grade).toBe('F');
    expect(gradePort(base({ protocols: { ...base().protocols, 'TLSv1.3': false } })).grade).toBe('A-');
    expect(gradePort(base({ hsts: { maxAge: 100 } })).grade).toBe('A-');
    expect(gradePort(base({ hsts: {} })).caps.map((c) => c.code)).toEqual(['no-hsts']);
    // No HTTP answer: HSTS does not apply.
    const { hsts: _, ...noHttp } = base();
    expect(gradePort(noHttp).grade).toBe('A');
    // SSL Labs' SSLv3 rules: B when offered, C with CBC suites (POODLE), F when it is the best protocol.
    const rc4 = suite('TLS_RSA_WITH_RC4_128_SHA');
    const cbc = suite('TLS_RSA_WITH_AES_128_CBC_SHA');
    const v3 = { ...base().protocols, SSLv3: true };
    expect(gradePort(base({ protocols: v3, sslv3Suites: [] })).caps.map((c) => [c.code, c.grade])).toEqual([
      ['sslv3', 'B'],
    ]);
    expect(gradePort(base({ protocols: v3, sslv3Suites: [cbc] })).grade).toBe('C');
    expect(
      gradePort(
        base({
          protocols: { ...base().protocols, SSLv3: true, 'TLSv1.2': false, 'TLSv1.3': false },
          sslv3Suites: [rc4],
          suites: [rc4],
        }),
      ).grade,
    ).toBe('F');
    // Key exchange: SSL Labs' caps for DH groups and (RSA-equivalent) curves.
    expect(gradePort(base({ keyExchange: { dh: { bits: 1024 } } })).caps).toEqual([
      expect.objectContaining({ code: 'weak-dh', grade: 'B' }),
    ]);
    expect(gradePort(base({ keyExchange: { dh: { bits: 768 } } })).grade).toBe('F');
    expect(gradePort(base({ keyExchange: { dh: { bits: 2048 }, ecdh: { curve: 'X25519', bits: 253 } } })).grade).toBe(
      'A+',
    );
    expect(
      gradePort(
        base({
          keyExchange: { ecdh: { curve: 'prime256v1', bits: 256 }, smallCurve: { curve: 'prime192v1', bits: 192 } },
        }),
      ).grade,
    ).toBe('B');
    expect(gradePort(base({ keyExchange: { smallCurve: { curve: 'secp160r1', bits: 160 } } })).grade).toBe('B');
    expect(gradePort(base({ keyExchange: { smallCurve: { curve: 'secp112r1', bits: 112 } } })).grade).toBe('F');
    // A missing intermediate is a B, not a trust failure; warnings keep an A from becoming A+.
    expect(gradePort(base({ clientRenegotiation: true })).grade).toBe('A-');
    expect(gradePort(base({ serverPreference: false })).grade).toBe('A+');
    expect(
      gradePort(
        base({ serverPreference: false, suites: [...base().suites, suite('TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA')] }),
      ).grade,
    ).toBe('A-');
  });

  it('parses HSTS directives', () => {
    expect(parseHsts('max-age="600"; includeSubDomains; preload')).toEqual({
      raw: 'max-age="600"; includeSubDomains; preload',
      maxAge: 600,
      includeSubDomains: true,
      preload: true,
    });
    expect(parseHsts('includeSubDomains')).toEqual({
      raw: 'includeSubDomains',
      includeSubDomains: true,
      preload: false,
    });
  });
});

describe('edge CLI', () => {
  it('turns flags into scanner settings and prints grades, certificates and caps', async () => {
    const caFile = `${pki.dir}/ca.pem`;
    const { scanner, options } = edgeCli.prepare(
      { ports: `${port.weak},${port.good}`, 'ca-file': caFile, 'http-port': String(port.goodHttp), sni: 'localhost' },
      '127.0.0.1',
    );
    expect(options).toEqual({ ports: [port.weak, port.good], sni: 'localhost' });
    const out = await scanner.run({ ...task([]), options });
    const lines = edgeCli.table(out.details!, { durationMs: 1234 });
    const text = lines.join('\n');
    expect(text).toContain('edge check of 127.0.0.1, SNI localhost');
    expect(text).toMatch(new RegExp(`${port.good}/tcp\\s+A\\+\\s+A\\+\\s+TLS1\\.2 TLS1\\.3`));
    expect(text).toMatch(new RegExp(`${port.weak}/tcp\\s+F\\s+F\\s+TLS1\\.0 TLS1\\.1 TLS1\\.2`));
    expect(text).toContain('certificate CN=localhost, issued by CN=Rampart Edge Test CA');
    expect(text).toContain('cap B  TLS 1.0 is offered');
    expect(text).toContain(
      `HTTP redirect: http://127.0.0.1:${port.goodHttp}/ → https://127.0.0.1:${port.good}/: permanent (301)`,
    );
    expect(edgeCli.json(out.details!)).toMatchObject({
      host: '127.0.0.1',
      serverName: 'localhost',
      ports: [expect.objectContaining({ port: Math.min(port.weak!, port.good!) }), expect.anything()],
    });
    expect(() => edgeCli.prepare({ ports: '443,x' }, 'h')).toThrow(/--ports/);
    expect(() => edgeCli.prepare({ 'ca-file': `${pki.dir}/index.txt` }, 'h')).toThrow(/no PEM/);
    expect(() => edgeCli.prepare({ sni: 'bad name' }, 'h')).toThrow(/--sni/);
    writeFileSync(
      `${pki.dir}/broken.pem`,
      '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n',
    );
    expect(() => edgeCli.prepare({ 'ca-file': `${pki.dir}/broken.pem` }, 'h')).toThrow(/cannot be read/);
  });
});
