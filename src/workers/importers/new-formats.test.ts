// The formats added after the first five, read from fixtures laid out the way each tool writes
// them (our own files, reproducing the tools' quirks), and detection of every format.
import { describe, expect, it } from 'vitest';
import { detectFormat, plausibleFormat, describeContent } from './index.ts';
import { collect, fixtureHead, fixtureStream } from './test-helpers.ts';

describe('Nessus v2', () => {
  it('reads every ReportItem per host, with plugin ids keyed by tool and the policy as coverage', async () => {
    const { findings, meta } = await collect('nessus', fixtureStream('nessus-scan.nessus'));
    expect(meta).toMatchObject({ scanner: 'template', records: 4, findings: 4, skipped: 0 });
    expect(findings.map((f) => `${f.ruleId}@${f.location.host}:${f.location.port ?? '-'} ${f.severity}`)).toEqual([
      '19506@203.0.113.20:- info',
      '51192@203.0.113.20:443 medium',
      '187315@203.0.113.20:22 medium',
      '10863@198.51.100.7:3306 critical',
    ]);
    const cert = findings[1]!;
    expect(cert).toMatchObject({
      tool: 'nessus',
      cwe: [295],
      cvss: { score: 6.5, vector: 'CVSS:3.0/AV:N/AC:L/PR:N/UI:R/S:U/C:L/I:L/A:N' },
      references: ['https://www.itu.int/rec/T-REC-X.509/en', 'https://en.wikipedia.org/wiki/X.509'],
    });
    expect(cert.description).toMatch(
      /^The SSL certificate for this service cannot be trusted\.\n\nThe server's X\.509/,
    );
    expect(cert.evidence?.snippet).toMatch(/unknown\ncertificate authority/);
    // The host's other names (HostProperties) are aliases to match assets with.
    expect(cert.aliases).toEqual(['mail.example.com']);
    expect(findings[2]).toMatchObject({ cve: ['CVE-2023-48795'], evidence: { data: { exploitAvailable: false } } });
    const cov = meta.coverage.toJSON();
    expect(cov.ports).toEqual([
      {
        protocol: 'tcp',
        ranges: [
          [1, 1024],
          [3306, 3306],
          [5432, 5432],
        ],
      },
    ]);
    expect(cov.rules).toEqual({ declared: true, ids: ['10863', '187315', '19506', '51192'] });
    expect(cov.hosts.map((h) => h.name)).toEqual(['203.0.113.20', '198.51.100.7']);
  });
});

describe('OpenVAS / Greenbone XML', () => {
  it('reads results with their NVT, skips false positives, keeps Log results as info', async () => {
    const { findings, meta } = await collect('openvas', fixtureStream('openvas-report.xml'));
    expect(meta).toMatchObject({ scanner: 'template', records: 3, findings: 2, skipped: 1 });
    expect(meta.skipReasons).toEqual([
      { reason: 'marked as a false positive in Greenbone', count: 1, where: [expect.stringMatching(/^result 3/)] },
    ]);
    const [weak, os] = findings;
    expect(weak).toMatchObject({
      ruleId: '1.3.6.1.4.1.25623.1.0.103440',
      tool: 'openvas',
      title: 'SSL/TLS: Report Weak Cipher Suites',
      severity: 'medium',
      location: { host: '192.0.2.30', port: 443, protocol: 'tcp' },
      cve: ['CVE-2013-2566', 'CVE-2015-2808'],
      cvss: { score: 5, vector: 'AV:N/AC:L/Au:N/C:P/I:N/A:N' },
      references: ['https://www.bsi.bund.de/'],
      aliases: ['vpn.example.com'],
    });
    expect(weak!.remediation).toMatch(/should be changed/);
    expect(weak!.evidence?.snippet).toContain('TLS_RSA_WITH_RC4_128_SHA');
    expect(os).toMatchObject({ severity: 'info', location: { host: '192.0.2.30' }, discriminator: 'general/tcp' });
    expect(meta.coverage.toJSON()).toMatchObject({
      tools: [{ name: 'OpenVAS', version: '22.4' }],
      classes: ['scan_run_status:Done'],
    });
  });

  it('treats a scan that did not finish as partial', async () => {
    const xml = '<report><report><scan_run_status>Stopped</scan_run_status><results></results></report></report>';
    const { meta } = await collect('openvas', (await import('./test-helpers.ts')).textStream(xml));
    expect(meta.partial).toMatch(/Stopped/);
  });
});

describe('Burp Suite issues XML', () => {
  it('reads issues despite the internal DTD, decodes base64 traffic, names the parameter', async () => {
    const { findings, meta } = await collect('burp', fixtureStream('burp-issues.xml'));
    expect(meta).toMatchObject({
      scanner: 'webapp',
      tool: 'Burp Suite 2023.10.3.4',
      records: 3,
      findings: 2,
      skipped: 1,
    });
    const [xss, hsts] = findings;
    expect(xss).toMatchObject({
      ruleId: '2097920',
      tool: 'burp',
      severity: 'high',
      location: { url: 'https://shop.example.com/search', param: 'q' },
      cwe: [79, 116],
      aliases: ['198.51.100.20'],
    });
    expect(xss!.evidence?.request).toMatch(/^GET \/search\?q=test HTTP\/1\.1/);
    expect(xss!.evidence?.request).toContain('Cookie: [redacted]');
    expect(xss!.evidence?.response).toContain('<p>test</p>');
    expect(xss!.description).toMatch(/^The value of the q request parameter/);
    expect(hsts).toMatchObject({ severity: 'low', cwe: [523], location: { url: 'https://shop.example.com/' } });
  });
});

describe('grype JSON', () => {
  it('maps matches with their related CVE, fix state and package location; ignored matches are skipped', async () => {
    const { findings, meta } = await collect('grype', fixtureStream('grype-image.json'));
    expect(meta).toMatchObject({ scanner: 'container', records: 4, findings: 3, skipped: 1 });
    expect(meta.skipReasons[0]).toMatchObject({ reason: 'ignored by the grype configuration', count: 1 });
    const [proto, glibc, apt] = findings;
    expect(proto).toMatchObject({
      ruleId: 'GHSA-h755-8qp9-cq85',
      severity: 'high',
      cve: ['CVE-2023-36665'],
      cvss: { score: 9.8 },
      location: { package: 'protobufjs', version: '7.2.3', file: '/app/node_modules/protobufjs/package.json' },
      remediation: 'Upgrade protobufjs to 7.2.5 or later.',
    });
    expect(proto!.tool).toBeUndefined();
    // wont-fix is still an affected package; its CVSS comes from the related NVD record.
    expect(glibc).toMatchObject({
      cve: ['CVE-2023-4911'],
      cvss: { score: 7.8 },
      evidence: { data: { fixState: 'wont-fix' } },
    });
    expect(glibc!.description).toMatch(/dynamic loader/);
    expect(apt).toMatchObject({ severity: 'info', remediation: expect.stringMatching(/not-fixed/) });
    expect(meta.coverage.toJSON()).toMatchObject({
      tools: [{ name: 'grype', version: '0.74.7' }],
      targets: ['registry.example.com/shop/api:1.4.2'],
      classes: ['distro:debian 12', 'source:image'],
    });
  });
});

describe('testssl.sh JSON', () => {
  it('reads the pretty layout: rated entries are findings, OK and INFO ones passed checks', async () => {
    const { findings, meta } = await collect('testssl', fixtureStream('testssl-pretty.json'));
    expect(meta).toMatchObject({ scanner: 'edge', records: 9, passed: 4, findings: 5, skipped: 0 });
    expect(findings.map((f) => `${f.ruleId} ${f.severity}`)).toEqual([
      'TLS1 low',
      'cert_chain_of_trust critical',
      'LUCKY13 low',
      'BEAST_CBC_TLS1 medium',
      'overall_grade critical',
    ]);
    expect(findings[2]).toMatchObject({
      tool: 'testssl.sh',
      cve: ['CVE-2013-0169'],
      cwe: [310],
      location: { host: 'mail.example.com', port: 443, protocol: 'tcp' },
      aliases: ['203.0.113.20'],
    });
    expect(meta.coverage.toJSON().classes).toEqual([
      'pretest',
      'protocols',
      'rating',
      'serverDefaults',
      'vulnerabilities',
    ]);
  });

  it('reads the flat layout with "host/address" and counts warnings as skipped', async () => {
    const { findings, meta } = await collect('testssl', fixtureStream('testssl-flat.json'));
    expect(meta).toMatchObject({ records: 4, passed: 2, findings: 1, skipped: 1 });
    expect(meta.skipReasons[0]!.reason).toMatch(/^scan warning: No engine/);
    expect(findings[0]).toMatchObject({
      ruleId: 'SSLv3',
      severity: 'high',
      location: { host: 'vpn.example.com', port: 443 },
      aliases: ['192.0.2.30'],
    });
  });
});

describe('detection', () => {
  it('recognises every format from its first bytes', () => {
    const cases: [string, string][] = [
      ['nessus-scan.nessus', 'nessus'],
      ['openvas-report.xml', 'openvas'],
      ['burp-issues.xml', 'burp'],
      ['grype-image.json', 'grype'],
      ['testssl-pretty.json', 'testssl'],
      ['testssl-flat.json', 'testssl'],
      ['zap-report.xml', 'zap'],
      ['zap-report-2.7.xml', 'zap'],
    ];
    for (const [file, format] of cases) expect(detectFormat(fixtureHead(file)), file).toBe(format);
    expect(detectFormat('[{"Target":"alpine:3.10 (alpine 3.10.2)","Type":"alpine","Vulnerabilities":[')).toBe('trivy');
    expect(detectFormat('{"ClusterName":"prod","Resources":[')).toBe('trivy');
    expect(detectFormat('[\n  {\n    "template": "http/x.yaml",\n    "template-id": "x",\n    "info": {}')).toBe(
      'nuclei',
    );
    expect(detectFormat('{"templateID":"old","matched":"https://a.example/","info":{}}\n')).toBe('nuclei');
  });

  it('says what an unrecognised file looks like', () => {
    expect(
      describeContent(
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]),
      ),
    ).toBe('binary data, not a text report');
    expect(describeContent(Buffer.from('<?xml version="1.0"?><inventory><item/></inventory>'))).toBe(
      'an XML document whose root element is <inventory>',
    );
    expect(describeContent(Buffer.from('{"name":"x","items":[1]}'))).toBe('a JSON document with keys "name", "items"');
    expect(describeContent(Buffer.from('<!DOCTYPE html><html>'))).toBe('an HTML page');
    expect(describeContent(Buffer.from('hello, not a report\n'))).toBe('text starting with "hello, not a report"');
  });

  it('checks a named format against the content', () => {
    expect(plausibleFormat('sarif', '{"version":"2.1.0","runs":[')).toBe(true);
    // A SARIF log whose first 4 KiB hold no $schema still carries "runs".
    expect(plausibleFormat('sarif', '{"runs":[{"tool":')).toBe(true);
    expect(plausibleFormat('sarif', fixtureHead('nessus-scan.nessus'))).toBe(false);
    expect(plausibleFormat('native', Buffer.from([0, 1, 2, 3]))).toBe(false);
    expect(plausibleFormat('nuclei', '')).toBe(true);
  });
});
