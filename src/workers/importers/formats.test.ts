// Over 500 lines on purpose: table-driven detection and parsing cases of every report format, sharing the fixture
// readers.
import { describe, expect, it } from 'vitest';
import { batchFindings, detectFormat, ImportError, parseReport, plausibleFormat } from './index.ts';
import { collect, fixtureHead, fixtureStream, parseError, textStream } from './test-helpers.ts';

describe('nmap XML', () => {
  it('counts vulners CVEs past the per-port cap as skipped, never drops them silently', async () => {
    const lines = Array.from(
      { length: 203 },
      (_, i) =>
        `&#xa;    &#x9;CVE-2024-${String(10_000 + i)}&#x9;5.0&#x9;https://vulners.com/cve/CVE-2024-${10_000 + i}`,
    ).join('');
    const xml = `<?xml version="1.0"?><nmaprun scanner="nmap" version="7.94"><scaninfo type="connect" protocol="tcp" numservices="1" services="22"/>
<host><status state="up"/><address addr="203.0.113.9" addrtype="ipv4"/><ports><port protocol="tcp" portid="22"><state state="open"/>
<service name="ssh" product="OpenSSH" version="7.4"/><script id="vulners" output="&#xa;  cpe:/a:openbsd:openssh:7.4: ${lines}"/></port></ports></host></nmaprun>`;
    const { findings, meta } = await collect('nmap', textStream(xml));
    expect(findings.filter((f) => f.ruleId.startsWith('CVE-'))).toHaveLength(200);
    expect(meta.skipped).toBe(3);
    expect(meta.skipReasons).toEqual([
      { reason: 'vulners CVE beyond the first 200 of one port', count: 3, where: expect.any(Array) },
    ]);
  });

  it('turns open ports into info findings and risky services into rated findings', async () => {
    const { findings, meta } = await collect('nmap', fixtureStream('nmap-scan.xml'));
    expect(meta).toMatchObject({ scanner: 'port', tool: 'nmap 7.94SVN', findings: 12, skipped: 0 });
    expect(findings.map((f) => `${f.ruleId}@${f.location.host}:${f.location.port}`)).toEqual([
      'port.open.tcp.22@203.0.113.10:22',
      'CVE-2023-38408@203.0.113.10:22',
      'CVE-2023-48795@203.0.113.10:22',
      'CVE-2023-51385@203.0.113.10:22',
      'port.open.tcp.23@203.0.113.10:23',
      'service.exposed.telnet@203.0.113.10:23',
      'port.open.tcp.80@203.0.113.10:80',
      'port.open.tcp.443@203.0.113.10:443',
      'port.open.tcp.6379@203.0.113.10:6379',
      'service.exposed.redis@203.0.113.10:6379',
      'port.open.tcp.3306@203.0.113.11:3306',
      'service.exposed.mysql@203.0.113.11:3306',
    ]);
    const ssh = findings[0]!;
    // The address identifies the host; its names are aliases an import matches assets with.
    expect(ssh).toMatchObject({
      severity: 'info',
      title: 'Open port 22/tcp (ssh)',
      location: { host: '203.0.113.10', port: 22, protocol: 'tcp' },
      aliases: ['web1.example.com'],
    });
    expect(ssh.evidence?.summary).toBe('22/tcp open ssh OpenSSH 8.9p1 Ubuntu 3ubuntu0.6 (Ubuntu Linux; protocol 2.0)');
    expect(ssh.evidence?.data).toMatchObject({
      product: 'OpenSSH',
      version: '8.9p1 Ubuntu 3ubuntu0.6',
      hostname: 'web1.example.com',
    });
    expect(meta.coverage.toJSON()).toMatchObject({
      tools: [{ name: 'nmap', version: '7.94SVN', scanner: 'port', key: null }],
    });
    // Character references in script output are decoded.
    expect(ssh.evidence?.snippet).toContain('ssh-hostkey:\n256 3f:1a:9c');
    // vulners output: one finding per CVE, rated by its score (the PACKETSTORM entry is not a CVE).
    expect(findings[1]).toMatchObject({
      severity: 'critical',
      cve: ['CVE-2023-38408'],
      cvss: { score: 9.8 },
      references: ['https://vulners.com/cve/CVE-2023-38408'],
      evidence: { data: { exploit: true } },
    });
    expect(findings[1]!.title).toBe(
      'CVE-2023-38408 in OpenSSH 8.9p1 Ubuntu 3ubuntu0.6 (Ubuntu Linux; protocol 2.0) on 22/tcp',
    );
    expect(findings[2]).toMatchObject({ severity: 'medium', cvss: { score: 5.9 } });
    findings.splice(1, 3);
    expect(findings[4]!.title).toBe('Open port 443/tcp (ssl/http)');
    const telnet = findings[2]!;
    expect(telnet).toMatchObject({ severity: 'high', title: 'Telnet exposed on 23/tcp' });
    expect(telnet.remediation).toMatch(/SSH/);
    expect(findings[6]!.severity).toBe('high');
    expect(findings[8]!.severity).toBe('medium');
    // The filtered 9200 and the down host produce nothing.
    expect(findings.some((f) => f.location.port === 9200 || f.location.host === '203.0.113.12')).toBe(false);
  });

  it('reports a truncated document with its line', async () => {
    const xml = (await import('node:fs')).readFileSync(
      new URL('../../../test/fixtures/reports/nmap-scan.xml', import.meta.url),
      'utf8',
    );
    const cut = xml.slice(0, xml.indexOf('<port protocol="tcp" portid="80">'));
    const err = await parseError('nmap', textStream(cut));
    expect(err).toBeInstanceOf(ImportError);
    expect((err as ImportError).code).toBe('invalid_xml');
    expect((err as ImportError).message).toMatch(/unclosed tag: ports/);
    expect((err as ImportError).line).toBeGreaterThan(20);
  });

  it('refuses XML that is not nmap, and garbage', async () => {
    expect(
      ((await parseError('nmap', textStream('<?xml version="1.0"?><OWASPZAPReport version="2.15"/>'))) as ImportError)
        .code,
    ).toBe('invalid_report');
    expect(((await parseError('nmap', textStream('hello world'))) as ImportError).code).toBe('invalid_xml');
    expect(((await parseError('nmap', textStream('<nmaprun><host></nmaprun>'))) as ImportError).message).toMatch(
      /not well-formed XML: unexpected close tag/,
    );
  });
});

describe('nuclei JSONL', () => {
  it('maps results, keeps matcher names apart and skips unusable lines', async () => {
    const { findings, meta } = await collect('nuclei', fixtureStream('nuclei-results.jsonl'));
    expect(meta).toMatchObject({ scanner: 'template', findings: 5, skipped: 1 });
    expect(meta.skipSamples).toEqual([{ where: 'line 7', reason: 'no template-id' }]);
    const [hsts, csp, cve, ssh, weird] = findings;
    expect(hsts).toMatchObject({
      ruleId: 'http-missing-security-headers',
      title: 'HTTP Missing Security Headers (strict-transport-security)',
      severity: 'info',
      discriminator: 'strict-transport-security',
      location: { url: 'https://shop.example.com' },
    });
    expect(csp!.discriminator).toBe('content-security-policy');
    // Credentials copied into requests and curl lines are redacted by the findings schema.
    expect(hsts!.evidence?.request).toContain('Cookie: [redacted]');
    expect(hsts!.evidence?.curl).not.toContain('abc123secret');
    expect(hsts!.evidence?.data).toMatchObject({ tags: ['misconfig', 'headers', 'generic'], ip: '198.51.100.20' });
    expect(cve).toMatchObject({
      ruleId: 'CVE-2021-41773',
      severity: 'critical',
      cve: ['CVE-2021-41773'],
      cwe: [22],
      cvss: { score: 9.8, vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H' },
      remediation: 'Update to Apache HTTP Server 2.4.51 or later.',
      location: { url: 'http://legacy.example.com:8080/icons/.%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd' },
    });
    expect(cve!.references).toEqual([
      'https://github.com/apache/httpd/commit/e150697086e70c552b2588f369f2d17815cb1782',
      'https://nvd.nist.gov/vuln/detail/CVE-2021-41773',
    ]);
    expect(cve!.evidence?.extracted).toEqual(['root:x:0:0:root:/root:/bin/bash']);
    expect(ssh).toMatchObject({
      ruleId: 'openssh-detect',
      title: 'OpenSSH Service - Detect (version)',
      location: { host: 'shop.example.com', port: 22, protocol: 'tcp' },
    });
    expect(weird!.severity).toBe('info');
  });

  it('stops at a line that is not JSON, naming the line', async () => {
    const good = '{"template-id":"a","info":{"name":"A","severity":"low"},"matched-at":"https://x.example/"}\n';
    const err = (await parseError('nuclei', textStream(`${good}${good}{"template-id":"b",\n${good}`))) as ImportError;
    expect(err).toBeInstanceOf(ImportError);
    expect(err).toMatchObject({ code: 'invalid_json', line: 3, format: 'nuclei' });
    const garbage = (await parseError('nuclei', textStream('\u0000\u0001binary garbage\n'))) as ImportError;
    expect(garbage).toMatchObject({ code: 'invalid_json', line: 1 });
  });

  it('refuses an overlong line without buffering it', async () => {
    const long = `{"template-id":"a","info":{"name":"${'x'.repeat(5 * 1024 * 1024)}"}}\n`;
    const err = (await parseError('nuclei', textStream(`\n${long}`, 65_536))) as ImportError;
    expect(err).toMatchObject({ code: 'line_too_long', line: 2 });
  });

  it('clips over-long text to the schema caps', async () => {
    const line = JSON.stringify({
      'template-id': 't'.repeat(300),
      info: { name: 'N'.repeat(900), severity: 'HIGH', description: 'd'.repeat(30_000) },
      'matched-at': 'https://x.example/',
      response: 'r'.repeat(100_000),
    });
    const { findings } = await collect('nuclei', textStream(line));
    const f = findings[0]!;
    expect(f.ruleId.length).toBe(200);
    expect(f.title.length).toBe(500);
    expect(f.description!.length).toBe(20_000);
    expect(f.evidence!.response!.length).toBe(32_768);
    expect(f.severity).toBe('high');
  });
});

describe('ZAP traditional JSON', () => {
  it('makes one finding per alert instance', async () => {
    const { findings, meta } = await collect('zap', fixtureStream('zap-report.json'));
    expect(meta).toMatchObject({ scanner: 'webapp', tool: 'ZAP 2.15.0', findings: 4, skipped: 1 });
    expect(meta.skipSamples[0]).toEqual({ where: 'site[0].alerts[2]', reason: 'marked as a false positive in ZAP' });
    const [csp1, csp2, cookie, comments] = findings;
    expect(csp1).toMatchObject({
      ruleId: '10038-1',
      title: 'Content Security Policy (CSP) Header Not Set',
      severity: 'medium',
      cwe: [693],
      location: { url: 'https://shop.example.com/' },
    });
    expect(csp1!.description).toMatch(/^Content Security Policy \(CSP\) is an added layer/);
    expect(csp1!.description).not.toContain('<p>');
    expect(csp1!.remediation).toMatch(/^Ensure that your web server/);
    expect(csp1!.references).toHaveLength(2);
    expect(csp1!.evidence?.data).toMatchObject({ pluginId: '10038', confidence: 'high', wascId: 15, method: 'GET' });
    expect(csp2!.location.url).toBe('https://shop.example.com/cart?item=42');
    expect(cookie).toMatchObject({
      ruleId: '10010',
      severity: 'low',
      cwe: [1004],
      location: { url: 'https://shop.example.com/login', param: 'session_id' },
    });
    expect(cookie!.evidence?.snippet).toBe('Set-Cookie: [redacted]');
    expect(comments).toMatchObject({ severity: 'info', ruleId: '10027' });
    expect(comments!.cwe).toBeUndefined();
    expect(comments!.evidence?.summary).toContain('TODO remove debug endpoint');
  });

  it('reports truncated JSON with line and offset', async () => {
    const err = (await parseError(
      'zap',
      textStream('{\n  "@programName": "ZAP",\n  "site": [ {"@name": "x", '),
    )) as ImportError;
    expect(err).toMatchObject({ code: 'invalid_json', format: 'zap' });
    expect(err.message).toMatch(/ends too early/);
    expect(((await parseError('zap', textStream('{"SchemaVersion":2}'))) as ImportError).code).toBe('invalid_report');
    expect(((await parseError('zap', textStream(''))) as ImportError).message).toMatch(/empty/);
  });
});

describe('Trivy JSON v2', () => {
  it('maps vulnerabilities, failed misconfigurations and secrets', async () => {
    const { findings, meta } = await collect('trivy', fixtureStream('trivy-image.json'));
    // A passed check is neither a finding nor a skipped record.
    expect(meta).toMatchObject({ scanner: 'container', findings: 5, skipped: 0, passed: 1, records: 6 });
    const [xz, zlib, micromatch, root, secret] = findings;
    expect(xz).toMatchObject({
      ruleId: 'CVE-2024-3094',
      title: 'CVE-2024-3094: xz-utils 5.6.0-0.2 — xz: malicious code in distributed source',
      severity: 'critical',
      cve: ['CVE-2024-3094'],
      cwe: [506],
      cvss: { score: 10, vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H' },
      location: {
        package: 'xz-utils',
        version: '5.6.0-0.2',
        file: 'registry.example.com/shop/api:1.4.2 (debian 12.5)',
      },
      remediation: 'Upgrade xz-utils to 5.6.1+really5.4.5-1 or later.',
    });
    expect(xz!.references).toHaveLength(3);
    expect(zlib).toMatchObject({ severity: 'info', cvss: { score: 9.8 } });
    expect(zlib!.remediation).toMatch(/No fixed version.*will_not_fix/);
    expect(micromatch).toMatchObject({
      ruleId: 'GHSA-952p-6rrq-rcjv',
      severity: 'medium',
      location: { package: 'micromatch', file: 'app/node_modules/micromatch/package.json' },
    });
    expect(micromatch!.cve).toBeUndefined();
    expect(root).toMatchObject({
      ruleId: 'AVD-DS-0002',
      severity: 'high',
      location: { file: 'Dockerfile' },
      remediation: "Add 'USER <non root user name>' line to the Dockerfile",
    });
    expect(secret).toMatchObject({
      ruleId: 'aws-access-key-id',
      severity: 'critical',
      location: { file: '/app/config/.env', line: 3 },
    });
    expect(secret!.evidence?.snippet).toBe('AWS_ACCESS_KEY_ID=********************');
  });

  it('refuses other schema versions', async () => {
    expect(
      ((await parseError('trivy', textStream('{"SchemaVersion":1,"Results":[]}'))) as ImportError).message,
    ).toMatch(/SchemaVersion 1/);
  });
});

describe('SARIF 2.1.0', () => {
  it('maps results with rules, levels and security-severity', async () => {
    const { findings, meta } = await collect('sarif', fixtureStream('semgrep.sarif'));
    // The passed check is neither a finding nor skipped; the result without a location is a
    // finding about the asset itself (dropping it would lose a problem).
    expect(meta).toMatchObject({ scanner: 'template', tool: 'Semgrep OSS 1.95.0', findings: 4, skipped: 0, passed: 1 });
    const [xss, shell, key, unplaced] = findings;
    expect(unplaced).toMatchObject({
      location: {},
      ruleId: 'generic.secrets.gitleaks.generic-api-key',
      evidence: { summary: 'Result without a location.' },
    });
    expect(findings.every((f) => f.tool === 'semgrep oss')).toBe(true);
    expect(xss).toMatchObject({
      ruleId: 'javascript.express.security.audit.xss.direct-response-write.direct-response-write',
      title: 'Semgrep Finding: direct-response-write',
      severity: 'medium',
      cwe: [79],
      location: { file: 'src/routes/search.js', line: 42 },
      // All fingerprints, hashed; primaryLocationLineHash counts occurrences, so no line is needed.
      discriminator: expect.stringMatching(/^fp:[0-9a-f]{24}$/),
      references: [
        'https://semgrep.dev/r/javascript.express.security.audit.xss.direct-response-write.direct-response-write',
      ],
    });
    expect(xss!.evidence?.snippet).toBe('res.send(req.query.q);'.padStart(26));
    expect(xss!.evidence?.data).toMatchObject({ securitySeverity: 6.1, level: 'warning' });
    expect(shell).toMatchObject({
      ruleId: 'python.lang.security.audit.subprocess-shell-true.subprocess-shell-true',
      severity: 'high',
      cwe: [78],
      location: { file: '/repo/tools/deploy.py', line: 17 },
    });
    expect(key).toMatchObject({ severity: 'low', location: { file: 'config/settings.yml', line: 9 } });
  });

  it('takes the scanner kind from the tool name', async () => {
    const log = (name: string) =>
      JSON.stringify({
        version: '2.1.0',
        runs: [
          {
            tool: { driver: { name } },
            results: [
              {
                ruleId: 'r',
                level: 'bogus',
                message: { text: 'm' },
                locations: [{ physicalLocation: { artifactLocation: { uri: 'https://a.example/x' } } }],
              },
            ],
          },
        ],
      });
    const zap = await collect('sarif', textStream(log('OWASP ZAP')));
    expect(zap.meta.scanner).toBe('webapp');
    expect(zap.findings[0]).toMatchObject({ severity: 'info', location: { url: 'https://a.example/x' } });
    expect((await collect('sarif', textStream(log('Trivy')))).meta.scanner).toBe('container');
    expect(((await parseError('sarif', textStream('{"version":"2.0.0","runs":[]}'))) as ImportError).message).toMatch(
      /2\.1\.0/,
    );
  });
});

describe('native JSON Lines', () => {
  it('reads the header, findings and the end line', async () => {
    const { findings, meta } = await collect('native', fixtureStream('native-report.jsonl'));
    expect(meta).toMatchObject({ scanner: 'edge', tool: 'rampart-edge 0.3.0', findings: 2, skipped: 0 });
    expect(findings[0]).toMatchObject({
      ruleId: 'tls.deprecated-protocol.tls1_0',
      severity: 'medium',
      cwe: [327],
      location: { host: 'shop.example.com', port: 443 },
    });
    expect(findings[1]!.evidence?.request).toContain('Authorization: [redacted]');
  });

  it('is strict: bad lines stop the import with their line number', async () => {
    const header = '{"type":"report","version":1,"scanner":"port"}\n';
    const finding = '{"type":"finding","ruleId":"r","title":"t","severity":"low","location":{"host":"h"}}\n';
    const cases: [string, RegExp, number | undefined][] = [
      [finding, /first line must be/, 1],
      ['{"type":"report","version":2,"scanner":"port"}\n', /version 2/, 1],
      [`${header}${finding}{"type":"end","findings":3}\n`, /announces 3 findings but 1/, 3],
      [`${header}{"type":"mystery"}\n`, /Unknown line type/, 2],
      ['', /empty/, undefined],
    ];
    for (const [input, message, line] of cases) {
      const err = (await parseError('native', textStream(input))) as ImportError;
      expect(err).toBeInstanceOf(ImportError);
      expect(err.message).toMatch(message);
      expect(err.line).toBe(line);
    }
  });
});

describe('detectFormat', () => {
  it('recognises every fixture from its first bytes', () => {
    expect(detectFormat(fixtureHead('nmap-scan.xml'))).toBe('nmap');
    expect(detectFormat(fixtureHead('nuclei-results.jsonl'))).toBe('nuclei');
    expect(detectFormat(fixtureHead('zap-report.json'))).toBe('zap');
    expect(detectFormat(fixtureHead('trivy-image.json'))).toBe('trivy');
    expect(detectFormat(fixtureHead('semgrep.sarif'))).toBe('sarif');
    expect(detectFormat(fixtureHead('native-report.jsonl'))).toBe('native');
    // A short head cut mid-line still works through the key checks.
    expect(detectFormat(fixtureHead('nuclei-results.jsonl', 400))).toBe('nuclei');
  });

  it('returns null for what it does not know', () => {
    expect(detectFormat('<?xml version="1.0"?><inventory/>')).toBeNull();
    expect(detectFormat('just text')).toBeNull();
    expect(detectFormat('{"hello":"world"}\n')).toBeNull();
    expect(detectFormat(Buffer.from([0xff, 0xfe, 0x00, 0x01]))).toBeNull();
    expect(detectFormat('{"runs":[', 'scan.sarif')).toBe('sarif');
  });
});

describe('reports that find nothing, or leave out their markers, as the tools write them', () => {
  // Grype with no matches: an empty list first, then the source it scanned (descriptor at the end).
  const grypeEmpty = JSON.stringify(
    {
      matches: [],
      source: {
        type: 'image',
        target: { userInput: 'busybox:latest', imageID: `sha256:${'2'.repeat(64)}`, tags: ['busybox:latest'] },
      },
      distro: { name: 'busybox', version: '1.36.1', idLike: null },
      descriptor: { name: 'grype', version: '0.74.0' },
    },
    null,
    2,
  );
  // mobsfscan writes SARIF without `version` and `$schema`.
  const sarifNoVersion = JSON.stringify(
    {
      runs: [
        {
          tool: {
            driver: { name: 'mobsfscan', version: '0.0.8', rules: [{ id: 'android_logging', name: 'AndroidLogging' }] },
          },
          results: [
            {
              ruleId: 'android_logging',
              level: 'note',
              message: { text: 'The App logs information.' },
              locations: [
                {
                  physicalLocation: {
                    artifactLocation: { uri: 'app/src/main/java/Log.java' },
                    region: { startLine: 7 },
                  },
                },
                {
                  physicalLocation: {
                    artifactLocation: { uri: 'app/src/main/java/Net.java' },
                    region: { startLine: 40 },
                  },
                },
              ],
            },
          ],
        },
      ],
    },
    null,
    2,
  );

  it('recognises a Grype report without matches and SARIF without version or $schema', () => {
    expect(detectFormat(grypeEmpty)).toBe('grype');
    expect(detectFormat(sarifNoVersion)).toBe('sarif');
    // Not every object with a runs list is SARIF.
    expect(detectFormat('{"runs":[{"name":"nightly","status":"ok"}]}')).toBeNull();
  });

  it('imports them: no findings from Grype, one finding per location from the SARIF', async () => {
    const grype = await collect('grype', textStream(grypeEmpty));
    expect(grype.findings).toHaveLength(0);
    expect(grype.meta.skipped).toBe(0);
    const sarif = await collect('sarif', textStream(sarifNoVersion));
    expect(sarif.findings.map((f) => f.location)).toEqual([
      { file: 'app/src/main/java/Log.java', line: 7 },
      { file: 'app/src/main/java/Net.java', line: 40 },
    ]);
  });

  it("reads Trivy's pre-0.20 `null` (nothing found) as an empty report when the user names Trivy", async () => {
    expect(detectFormat('null\n')).toBeNull();
    expect(plausibleFormat('trivy', 'null\n')).toBe(true);
    const { findings, meta } = await collect('trivy', textStream('null\n'));
    expect(findings).toHaveLength(0);
    expect(meta.records).toBe(0);
    // Anything else that is not a report still is refused.
    expect(await parseError('trivy', textStream('{"hello":"world"}'))).toBeInstanceOf(ImportError);
  });
});

describe('docs/report-format.schema.json', () => {
  it('describes the same finding fields as the findings schema', async () => {
    const { readFileSync } = await import('node:fs');
    const { normalizedFindingObjectSchema } = await import('../../findings/index.ts');
    const doc = JSON.parse(
      readFileSync(new URL('../../../docs/report-format.schema.json', import.meta.url), 'utf8'),
    ) as {
      $defs: { finding: { properties: Record<string, { properties?: Record<string, unknown> }> } };
    };
    const props = doc.$defs.finding.properties;
    const shape = normalizedFindingObjectSchema.shape;
    expect(Object.keys(props).sort()).toEqual(['type', ...Object.keys(shape)].sort());
    expect(Object.keys(props.location!.properties!).sort()).toEqual(Object.keys(shape.location.shape).sort());
    expect(Object.keys(props.evidence!.properties!).sort()).toEqual(Object.keys(shape.evidence.unwrap().shape).sort());
  });

  it('describes the same coverage fields as the coverage schema', async () => {
    const { readFileSync } = await import('node:fs');
    const { reportCoverageSchema } = await import('../../findings/index.ts');
    const doc = JSON.parse(
      readFileSync(new URL('../../../docs/report-format.schema.json', import.meta.url), 'utf8'),
    ) as {
      $defs: {
        header: { properties: Record<string, unknown> };
        coverage: { properties: Record<string, { properties?: Record<string, unknown> }> };
      };
    };
    expect(doc.$defs.header.properties.coverage).toEqual({ $ref: '#/$defs/coverage' });
    expect(Object.keys(doc.$defs.coverage.properties).sort()).toEqual(Object.keys(reportCoverageSchema.shape).sort());
    expect(Object.keys(doc.$defs.coverage.properties.image!.properties!).sort()).toEqual(
      Object.keys(reportCoverageSchema.shape.image.unwrap().shape).sort(),
    );
  });
});

describe('batchFindings', () => {
  it('groups a report into batches of the given size', async () => {
    const sizes: number[] = [];
    for await (const b of batchFindings(parseReport('nmap', fixtureStream('nmap-scan.xml')), 5)) sizes.push(b.length);
    expect(sizes).toEqual([5, 5, 2]);
  });
});
