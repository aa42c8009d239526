// Each quirk real tools write, reproduced in a small report of our own: results must not merge
// away, be dropped silently, or be read as open when the tool says otherwise.
import { describe, expect, it } from 'vitest';
import { collect, fixtureStream, textStream } from './test-helpers.ts';

const sarif = (run: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ version: '2.1.0', $schema: 'https://json.schemastore.org/sarif-2.1.0.json', runs: [run], ...extra });
const at = (uri: string, startLine?: number, startColumn?: number) => ({
  physicalLocation: {
    artifactLocation: { uri, uriBaseId: 'SRCROOT' },
    ...(startLine ? { region: { startLine, ...(startColumn ? { startColumn } : {}) } } : {}),
  },
});

describe('SARIF identity and locations', () => {
  it('keeps results apart that share a content fingerprint (flawfinder) or a per-commit one (gitleaks)', async () => {
    const hash = { 'contextHash/v1': 'e6c1ad2b1d96ffc4035ed8df070600566ad240b8ded025dac30620f3fd4aa9fd' };
    const log = sarif({
      tool: {
        driver: {
          name: 'Flawfinder',
          version: '2.0.19',
          rules: [
            {
              id: 'FF1048',
              name: 'random/setstate',
              defaultConfiguration: { level: 'error' },
              relationships: [{ target: { id: 'CWE-327', toolComponent: { name: 'CWE' } }, kinds: ['relevant'] }],
            },
          ],
        },
      },
      results: [
        {
          ruleId: 'FF1048',
          kind: 'fail',
          message: { text: 'random/setstate' },
          locations: [at('src/tree/param.cc', 29, 10)],
          fingerprints: hash,
        },
        {
          ruleId: 'FF1048',
          level: 'warning',
          message: { text: 'random/setstate' },
          locations: [at('src/tree/param.cc', 75, 10)],
          fingerprints: hash,
        },
        // A true duplicate (same place, same fingerprint) merges later in ingestion, by fingerprint.
        {
          ruleId: 'FF1048',
          message: { text: 'random/setstate' },
          locations: [at('src/tree/param.cc', 75, 10)],
          fingerprints: hash,
        },
      ],
    });
    const { findings } = await collect('sarif', textStream(log));
    expect(findings).toHaveLength(3);
    expect(findings[0]!.discriminator).not.toBe(findings[1]!.discriminator);
    expect(findings[1]!.discriminator).toBe(findings[2]!.discriminator);
    expect(findings[0]).toMatchObject({
      severity: 'high',
      cwe: [327],
      tool: 'flawfinder',
      location: { file: 'src/tree/param.cc', line: 29 },
    });
  });

  it('makes one finding per location and reads every location form', async () => {
    const log = sarif({
      tool: {
        driver: {
          name: 'CodeQL',
          rules: [
            {
              id: 'js/sql-injection',
              shortDescription: { text: 'Database query built from user-controlled sources' },
              properties: { tags: ['security', 'external/cwe/cwe-089'], 'security-severity': '8.8' },
            },
          ],
        },
      },
      originalUriBaseIds: { SRCROOT: { uri: 'file:///home/runner/work/shop/' } },
      artifacts: [{ location: { uri: 'server/db.js' } }],
      results: [
        {
          ruleId: 'js/sql-injection',
          ruleIndex: 0,
          message: { text: 'This query depends on a [user-provided value](1).' },
          locations: [
            { physicalLocation: { artifactLocation: { index: 0 }, region: { startLine: 12 } } },
            at('file:////srv/app/server/db.js', 40),
            at('server/my%20file.js', 3),
          ],
          partialFingerprints: {
            primaryLocationLineHash: '39fa2ee980eb94b0:1',
            primaryLocationStartColumnFingerprint: '4',
          },
        },
      ],
    });
    const { findings } = await collect('sarif', textStream(log));
    expect(findings.map((f) => f.location)).toEqual([
      { file: 'server/db.js', line: 12 },
      { file: '/srv/app/server/db.js', line: 40 },
      { file: 'server/my file.js', line: 3 },
    ]);
    expect(findings[0]).toMatchObject({
      severity: 'high',
      cwe: [89],
      title: 'Database query built from user-controlled sources',
    });
    // An occurrence-counting fingerprint needs no line for the first location.
    expect(findings[0]!.discriminator).toMatch(/^fp:[0-9a-f]{24}$/);
    expect(findings[1]!.discriminator).toMatch(/^fp:[0-9a-f]{24} L40$/);
  });

  it('skips suppressed and absent results with their reason, keeps those under review', async () => {
    const loc = [at('app.py', 3)];
    const log = sarif({
      tool: { driver: { name: 'Bandit', rules: [{ id: 'B105' }] } },
      results: [
        {
          ruleId: 'B105',
          message: { text: 'a' },
          locations: loc,
          suppressions: [{ kind: 'inSource', justification: 'test fixture' }],
        },
        {
          ruleId: 'B105',
          message: { text: 'b' },
          locations: [at('app.py', 4)],
          suppressions: [{ kind: 'external', status: 'underReview' }],
        },
        {
          ruleId: 'B105',
          message: { text: 'c' },
          locations: [at('app.py', 5)],
          suppressions: [{ kind: 'external', status: 'rejected' }],
        },
        { ruleId: 'B105', message: { text: 'd' }, locations: [at('app.py', 6)], baselineState: 'absent' },
        { ruleId: 'B105', kind: 'notApplicable', message: { text: 'e' } },
      ],
    });
    const { findings, meta } = await collect('sarif', textStream(log));
    expect(findings.map((f) => f.location.line)).toEqual([4, 5]);
    expect(meta).toMatchObject({ records: 5, passed: 1, skipped: 2 });
    expect(meta.skipReasons.map((r) => r.reason)).toEqual([
      'suppressed (inSource: test fixture)',
      'baselineState absent (no longer present)',
    ]);
  });

  it('reads results without a ruleId (gitleaks 7) and without a location (dockle)', async () => {
    const gitleaks = sarif({
      tool: {
        driver: {
          name: 'Gitleaks',
          semanticVersion: 'v7.4.0',
          rules: [
            { id: 'AWS Access Key', name: 'AWS Access Key' },
            { id: 'AWS', name: 'AWS' },
          ],
        },
      },
      results: [
        {
          message: { text: 'AWS Access Key secret detected' },
          properties: { commit: '6d12798', offender: 'AKIAIOSFODNN7EXAMPLE' },
          locations: [at('deploy/env.json', 13)],
        },
        {
          message: { text: 'AWS Access Key secret detected' },
          properties: { commit: '8bbcdfd', offender: 'AKIAIOSFODNN7EXAMPLE' },
          locations: [at('deploy/env.json', 13)],
        },
      ],
    });
    const g = await collect('sarif', textStream(gitleaks));
    expect(g.findings.map((f) => f.ruleId)).toEqual(['AWS Access Key', 'AWS Access Key']);
    // The same line in two commits: two problems.
    expect(g.findings[0]!.discriminator).not.toBe(g.findings[1]!.discriminator);
    expect(g.meta.coverage.toJSON().tools).toEqual([
      { name: 'Gitleaks', version: 'v7.4.0', scanner: 'template', key: 'gitleaks' },
    ]);

    const dockle = sarif({
      tool: {
        driver: {
          name: 'Dockle',
          rules: [
            { id: 'CIS-DI-0010', shortDescription: { text: 'Do not store credential in ENVIRONMENT vars/files' } },
          ],
        },
      },
      results: [{ ruleId: 'CIS-DI-0010', level: 'error', message: { text: 'Suspicious ENV key found : DB_PASSWORD' } }],
    });
    const d = await collect('sarif', textStream(dockle));
    expect(d.meta.scanner).toBe('container');
    expect(d.findings).toEqual([expect.objectContaining({ ruleId: 'CIS-DI-0010', location: {}, severity: 'high' })]);
  });

  it('fills message templates, reads CWE from taxa and CVE ids from rule ids and properties', async () => {
    const log = sarif({
      tool: {
        driver: {
          name: 'Trivy',
          rules: [
            {
              id: 'CVE-2024-3094',
              messageStrings: { default: { text: 'Package: {0}\nInstalled Version: {1}' } },
              properties: { 'security-severity': '10.0', tags: ['vulnerability', 'CRITICAL'] },
            },
          ],
          globalMessageStrings: { note: { text: 'see {0}' } },
        },
      },
      taxonomies: [{ name: 'CWE', taxa: [{ id: '506' }] }],
      results: [
        {
          ruleId: 'CVE-2024-3094',
          message: { id: 'default', arguments: ['xz-utils', '5.6.0-0.2'] },
          taxa: [{ index: 0, toolComponent: { index: 0 } }],
          locations: [at('library/debian')],
        },
        {
          ruleId: 'CVE-2024-3094',
          message: { id: 'note', arguments: ['https://a.example/'] },
          taxa: [{ id: '1321', toolComponent: { name: 'CWE' } }],
          properties: { cve: ['CVE-2024-0001'] },
          locations: [at('other')],
        },
      ],
    });
    const { findings } = await collect('sarif', textStream(log));
    expect(findings[0]).toMatchObject({
      severity: 'critical',
      cwe: [506],
      cve: ['CVE-2024-3094'],
      evidence: { summary: 'Package: xz-utils\nInstalled Version: 5.6.0-0.2' },
    });
    expect(findings[1]).toMatchObject({
      cwe: [1321],
      cve: ['CVE-2024-0001', 'CVE-2024-3094'],
      evidence: { summary: 'see https://a.example/' },
    });
  });

  it('reads a run whose results come before its tool, an empty log, and a failed run as partial', async () => {
    const late = JSON.stringify({
      version: '2.1.0',
      runs: [
        {
          results: [{ ruleId: 'R1', message: { text: 'm' }, locations: [at('a.js', 1)] }],
          tool: { driver: { name: 'ESLint', rules: [{ id: 'R1', shortDescription: { text: 'Rule one' } }] } },
        },
      ],
    });
    const l = await collect('sarif', textStream(late, 7));
    expect(l.findings).toEqual([expect.objectContaining({ title: 'Rule one', tool: 'eslint' })]);
    const none = await collect('sarif', textStream('{"version":"2.1.0","runs":[]}'));
    expect(none.findings).toEqual([]);
    const failed = await collect(
      'sarif',
      textStream(
        sarif({ tool: { driver: { name: 'CodeQL' } }, invocations: [{ executionSuccessful: false }], results: [] }),
      ),
    );
    expect(failed.meta.partial).toMatch(/did not complete/);
  });
});

describe('Trivy variants', () => {
  const vuln = (id: string, extra: Record<string, unknown> = {}) => ({
    VulnerabilityID: id,
    PkgName: 'openssl',
    InstalledVersion: '3.0.11-1',
    Severity: 'HIGH',
    ...extra,
  });

  it('reads licenses, skips not_affected and VEX-suppressed findings, keeps "fixed" (a fix exists) open', async () => {
    const doc = {
      SchemaVersion: 2,
      ArtifactName: 'registry.example.com/shop/api:1.4.2',
      ArtifactType: 'container_image',
      Results: [
        {
          Target: 'registry.example.com/shop/api:1.4.2 (debian 12.5)',
          Class: 'os-pkgs',
          Type: 'debian',
          Vulnerabilities: [
            vuln('CVE-2024-0727', { Status: 'fixed', FixedVersion: '3.0.13-1~deb12u1' }),
            vuln('CVE-2023-5678', { Status: 'not_affected' }),
            vuln('CVE-2023-6129', { Status: 'will_not_fix' }),
          ],
          ExperimentalModifiedFindings: [
            {
              Type: 'vulnerability',
              Status: 'not_affected',
              Statement: 'vulnerable_code_not_in_execute_path',
              Source: 'OpenVEX',
              Finding: vuln('CVE-2023-6237'),
            },
          ],
        },
        {
          Target: 'OS Packages',
          Class: 'license',
          Licenses: [
            {
              Severity: 'HIGH',
              Category: 'restricted',
              PkgName: 'libgcrypt20',
              FilePath: '',
              Name: 'GPL-3.0-only',
              Confidence: 1,
              Link: '',
            },
          ],
        },
      ],
    };
    const { findings, meta } = await collect('trivy', textStream(JSON.stringify(doc)));
    expect(findings.map((f) => f.ruleId)).toEqual(['CVE-2024-0727', 'CVE-2023-6129', 'license:GPL-3.0-only']);
    expect(findings[0]!.remediation).toBe('Upgrade openssl to 3.0.13-1~deb12u1 or later.');
    expect(findings[2]).toMatchObject({
      severity: 'high',
      tool: 'trivy',
      location: { package: 'libgcrypt20', file: 'OS Packages' },
      title: 'GPL-3.0-only license (restricted) in libgcrypt20',
    });
    expect(meta.skipReasons.map((r) => r.reason)).toEqual([
      'status not_affected (the vendor says this package is not affected)',
      'suppressed in Trivy (not_affected, OpenVEX)',
    ]);
    expect(meta.coverage.toJSON().classes).toEqual([
      'artifact:container_image',
      'license',
      'os-pkgs',
      'scanner:license',
      'scanner:vuln',
    ]);
  });

  it('reads trivy k8s reports and the array Trivy wrote before 0.20', async () => {
    const k8s = {
      ClusterName: 'prod',
      Resources: [
        {
          Namespace: 'shop',
          Kind: 'Deployment',
          Name: 'api',
          Results: [
            { Target: 'ghcr.io/acme/api:1.2 (alpine 3.19)', Class: 'os-pkgs', Vulnerabilities: [vuln('CVE-2024-1')] },
          ],
        },
      ],
    };
    const a = await collect('trivy', textStream(JSON.stringify(k8s)));
    expect(a.findings[0]!.location.file).toBe('shop/Deployment/api: ghcr.io/acme/api:1.2 (alpine 3.19)');
    expect(a.meta.coverage.toJSON().targets).toContain('cluster:prod');
    const legacy = [
      {
        Target: 'alpine:3.10 (alpine 3.10.2)',
        Type: 'alpine',
        Vulnerabilities: [vuln('CVE-2019-1549'), vuln('CVE-2019-1563')],
      },
      { Target: 'app/package-lock.json', Type: 'npm', Vulnerabilities: null },
    ];
    const b = await collect('trivy', textStream(JSON.stringify(legacy)));
    expect(b.findings.map((f) => `${f.ruleId} ${f.location.file}`)).toEqual([
      'CVE-2019-1549 alpine:3.10 (alpine 3.10.2)',
      'CVE-2019-1563 alpine:3.10 (alpine 3.10.2)',
    ]);
  });
});

describe('nuclei variants', () => {
  it('reads nuclei 2.x keys, the -je array export and an empty file', async () => {
    const old = {
      templateID: 'git-config',
      info: { name: 'Git Config File', severity: 'medium', tags: 'config,git' },
      type: 'http',
      host: 'https://shop.example.com',
      matched: 'https://shop.example.com/.git/config',
      matcher_name: 'core',
      extracted_results: ['[core]'],
      curl_command: 'curl https://shop.example.com/.git/config',
      timestamp: '2021-03-01T10:00:00Z',
    };
    const a = await collect('nuclei', textStream(`${JSON.stringify(old)}\n`));
    expect(a.findings[0]).toMatchObject({
      ruleId: 'git-config',
      location: { url: 'https://shop.example.com/.git/config' },
      discriminator: 'core',
      evidence: {
        extracted: ['[core]'],
        curl: 'curl https://shop.example.com/.git/config',
        data: { tags: ['config', 'git'] },
      },
    });
    const arr = `[\n  ${JSON.stringify({ ...old, templateID: undefined, 'template-id': 'a', 'matched-at': 'https://x.example/a' })},\n  ${JSON.stringify({ 'template-id': 'b', info: { severity: 'low' }, 'matched-at': 'x.example:22', type: 'network' })}\n]\n`;
    const b = await collect('nuclei', textStream(arr, 5));
    expect(b.findings.map((f) => [f.ruleId, f.location])).toEqual([
      ['a', { url: 'https://x.example/a' }],
      ['b', { host: 'x.example', port: 22, protocol: 'tcp' }],
    ]);
    const empty = await collect('nuclei', textStream(''));
    expect(empty).toMatchObject({ findings: [], meta: { records: 0, skipped: 0 } });
  });
});

describe('ZAP classic XML', () => {
  it('reads 2.9+ reports with instances and request/response bodies, and 2.7 alert items', async () => {
    const { findings, meta } = await collect('zap', fixtureStream('zap-report.xml'));
    expect(meta).toMatchObject({ tool: 'ZAP 2.14.0', records: 2, findings: 2, skipped: 1 });
    expect(findings.map((f) => f.location.url)).toEqual([
      'https://shop.example.com/',
      'https://shop.example.com/search?q=1',
    ]);
    expect(findings[0]).toMatchObject({
      ruleId: '10038-1',
      tool: 'zap',
      severity: 'medium',
      cwe: [693],
      references: ['https://developer.mozilla.org/en-US/docs/Web/Security/CSP'],
    });
    expect(findings[0]!.description).toBe('Content Security Policy (CSP) is an added layer of security.');
    expect(findings[0]!.evidence?.request).toContain('Cookie: [redacted]');
    expect(findings[0]!.evidence?.response).toContain('<html>hello</html>');
    const old = await collect('zap', fixtureStream('zap-report-2.7.xml'));
    expect(old.findings).toEqual([
      expect.objectContaining({
        ruleId: '10016',
        severity: 'low',
        location: { url: 'http://legacy.example.com:8080/index.php', param: 'X-XSS-Protection' },
      }),
    ]);
  });
});

describe('nmap hosts', () => {
  it('reads every host of a report with its names, and localhost as written', async () => {
    const xml = `<?xml version="1.0"?><nmaprun scanner="nmap" args="nmap -p 1-1000,3306 -oX - localhost 192.0.2.7" version="7.94">
<scaninfo type="syn" protocol="tcp" numservices="1001" services="1-1000,3306"/>
<host><status state="up" reason="localhost-response"/><address addr="127.0.0.1" addrtype="ipv4"/><hostnames><hostname name="localhost" type="user"/><hostname name="localhost" type="PTR"/></hostnames>
<ports><port protocol="tcp" portid="3306"><state state="open" reason="syn-ack"/><service name="mysql" product="MySQL" version="8.0.36"/></port></ports></host>
<host><status state="up"/><address addr="192.0.2.7" addrtype="ipv4"/><address addr="00:11:22:33:44:55" addrtype="mac"/><hostnames/>
<ports><port protocol="tcp" portid="22"><state state="open" reason="syn-ack"/><service name="ssh"/></port></ports></host>
<host><status state="down"/><address addr="192.0.2.8" addrtype="ipv4"/></host>
</nmaprun>`;
    const { findings, meta } = await collect('nmap', textStream(xml, 11));
    expect(findings.map((f) => `${f.ruleId}@${f.location.host}`)).toEqual([
      'port.open.tcp.3306@127.0.0.1',
      'service.exposed.mysql@127.0.0.1',
      'port.open.tcp.22@192.0.2.7',
    ]);
    expect(findings[0]!.aliases).toEqual(['localhost']);
    expect(meta.coverage.toJSON()).toMatchObject({
      ports: [
        {
          protocol: 'tcp',
          ranges: [
            [1, 1000],
            [3306, 3306],
          ],
        },
      ],
      hosts: [
        { name: '127.0.0.1', up: true },
        { name: 'localhost', up: true },
        { name: '192.0.2.7', up: true },
        { name: '192.0.2.8', up: false },
      ],
      classes: ['syn/tcp'],
    });
  });
});
