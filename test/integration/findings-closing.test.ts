// How a finding is closed (docs/findings-lifecycle.md): only by a result whose coverage includes
// its tool, class of check, rule and place, and that no longer reports it. Real-report sequences
// through the ingestion runner (nmap, nuclei, SARIF of two tools, Trivy vulnerabilities then
// licenses) and Rampart's own scan reports (port ranges, edge ports, crawled URLs).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkWritesOf, createBatchedFindingsIngest } from '../../src/findings/index.ts';
import { createIngestionService, type IngestionService } from '../../src/workers/ingestion-service.ts';
import {
  gitleaksSarif,
  nmapXml,
  nucleiJsonl,
  semgrepSarif,
  SEMGREP_RULES,
  trivyLicenses,
  trivyVulnerabilities,
} from '../fixtures/tool-reports.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { importer } from './imports-fixtures.ts';
import { scanTenant, setVerification, type ScanTenant } from './scans-fixtures.ts';

let t: TestApp;
let s: ScanTenant;
let runner: IngestionService;
let n = 0;

beforeAll(async () => {
  t = await createTestApp();
  s = await scanTenant(t);
  runner = createIngestionService({
    db: t.database.db,
    storage: t.app.services.storage,
    findings: createBatchedFindingsIngest({
      db: t.database.db,
      reporter: t.app.services.reporter,
      clock: { now: () => new Date() },
      // As the server: the embedded database writes new findings with COPY.
      ...bulkWritesOf(t.database),
    }),
    clock: { now: () => new Date() },
    log: { warn: () => undefined, error: () => undefined, info: () => undefined },
    resolveHost: async () => [],
  });
});
afterAll(() => t.close());

const { imported, findingsOf } = importer(
  () => t,
  () => s.tenantId,
  () => runner,
);

async function asset(kind: 'host' | 'webapp' | 'container_image', target: string): Promise<string> {
  const res = await s.owner.post(`${s.base}/assets`, { kind, target });
  expect(res.statusCode, res.body).toBe(201);
  const id = (res.json() as { asset: { id: string } }).asset.id;
  await setVerification(t, id, 'verified');
  return id;
}

/** "rule @ place: status" of every finding, sorted, for readable assertions. */
async function states(assetId: string): Promise<string[]> {
  return (await findingsOf(assetId)).map((f) => `${f.rule_id} @ ${f.location_text}: ${f.status}`).sort();
}

const native = (scanner: string, coverage: Record<string, unknown>, findings: Record<string, unknown>[]) =>
  [
    { type: 'report', version: 1, scanner, tool: { name: `rampart-${scanner}`, version: '1.0.0' }, coverage },
    ...findings.map((f) => ({ type: 'finding', ...f })),
  ]
    .map((x) => JSON.stringify(x))
    .join('\n');

describe('a finding closes only inside what a result covered', () => {
  it('real reports in sequence on one host close no finding of another tool or of an unscanned range', async () => {
    const ip = `203.0.113.${++n + 10}`;
    const host = await asset('host', ip);
    // A full port scan: ssh, MySQL and PostgreSQL open.
    await imported(
      host,
      'port',
      nmapXml({
        host: ip,
        args: '-sS -p-',
        services: '1-65535',
        open: [
          { port: 22, service: 'ssh' },
          { port: 3306, service: 'mysql' },
          { port: 5432, service: 'postgresql' },
        ],
      }),
      'nmap',
    );
    await imported(
      host,
      'template',
      nucleiJsonl(ip, [
        { template: 'http-missing-security-headers', matcher: 'x-frame-options', path: '/', severity: 'info' },
        { template: 'exposed-git-config', path: '/.git/config', severity: 'medium' },
      ]),
      'nuclei',
    );
    await imported(
      host,
      'template',
      semgrepSarif([
        { rule: SEMGREP_RULES[0]!, file: 'app/run.py', line: 12 },
        { rule: SEMGREP_RULES[1]!, file: 'web/app.js', line: 40 },
      ]),
      'sarif',
    );
    await imported(
      host,
      'template',
      gitleaksSarif([{ rule: 'aws-access-token', file: 'config/prod.env', line: 3, commit: 'a1b2c3d' }]),
      'sarif',
    );
    const opened = await states(host);
    expect(opened.every((x) => x.endsWith(': open'))).toBe(true);
    expect(opened).toHaveLength(3 + 2 + 2 + 2 + 1); // ports, exposed services, nuclei, semgrep, gitleaks

    // nmap -p 1-1000 finds nothing open: ssh is gone, the database ports were not probed.
    const narrow = await imported(
      host,
      'port',
      nmapXml({ host: ip, args: '-sS -p 1-1000', services: '1-1000', open: [] }),
      'nmap',
    );
    expect(narrow.summary).toMatchObject({ fixed: 1, outcome: 'complete' });
    // gitleaks finds no leak any more: only its own finding closes, not nuclei's or semgrep's.
    const leaks = await imported(host, 'template', gitleaksSarif([]), 'sarif');
    expect(leaks.summary).toMatchObject({ fixed: 1 });
    // semgrep no longer reports the eval: that one closes; nuclei's stay (template findings).
    await imported(
      host,
      'template',
      semgrepSarif([{ rule: SEMGREP_RULES[0]!, file: 'app/run.py', line: 12 }]),
      'sarif',
    );
    // nuclei reports only the headers template: the .git template did not say it ran, so it stays.
    await imported(
      host,
      'template',
      nucleiJsonl(ip, [
        { template: 'http-missing-security-headers', matcher: 'x-frame-options', path: '/', severity: 'info' },
      ]),
      'nuclei',
    );

    expect(await states(host)).toEqual(
      [
        `${SEMGREP_RULES[1]} @ web/app.js:40: fixed`,
        `${SEMGREP_RULES[0]} @ app/run.py:12: open`,
        'aws-access-token @ config/prod.env:3: fixed',
        `exposed-git-config @ http://${ip}/.git/config: open`,
        `http-missing-security-headers @ http://${ip}/: open`,
        `port.open.tcp.22 @ tcp://${ip}:22: fixed`,
        `port.open.tcp.3306 @ tcp://${ip}:3306: open`,
        `port.open.tcp.5432 @ tcp://${ip}:5432: open`,
        `service.exposed.mysql @ tcp://${ip}:3306: open`,
        `service.exposed.postgresql @ tcp://${ip}:5432: open`,
      ].sort(),
    );

    // Trivy on the image: vulnerabilities, then a license-only report, then vulnerabilities again.
    const image = `registry.example.test/shop/api-${n}:1.4.2`;
    const container = await asset('container_image', image);
    await imported(
      container,
      'container',
      trivyVulnerabilities(image, [
        { id: 'CVE-2024-3094', pkg: 'xz-utils', version: '5.6.0-0.2', severity: 'CRITICAL' },
        { id: 'CVE-2023-45853', pkg: 'zlib1g', version: '1:1.2.13.dfsg-1', severity: 'LOW' },
      ]),
      'trivy',
    );
    const licenses = await imported(
      container,
      'container',
      trivyLicenses(image, [{ pkg: 'libc6', name: 'GPL-2.0-only' }]),
      'trivy',
    );
    expect(licenses.summary).toMatchObject({ created: 1, fixed: 0 });
    await imported(
      container,
      'container',
      trivyVulnerabilities(image, [
        { id: 'CVE-2023-45853', pkg: 'zlib1g', version: '1:1.2.13.dfsg-1', severity: 'LOW' },
      ]),
      'trivy',
    );
    const rows = await findingsOf(container);
    expect(rows.map((f) => `${f.rule_id} ${f.check_class} ${f.status}`).sort()).toEqual([
      'CVE-2023-45853 vuln open',
      'CVE-2024-3094 vuln fixed',
      'license:GPL-2.0-only license open',
    ]);
  });

  it('an import whose every result is unreadable is inconclusive and closes nothing', async () => {
    const ip = `203.0.113.${++n + 10}`;
    const host = await asset('host', ip);
    await imported(
      host,
      'template',
      nucleiJsonl(ip, [{ template: 'exposed-git-config', path: '/.git/config', severity: 'medium' }]),
      'nuclei',
    );
    await imported(
      host,
      'template',
      gitleaksSarif([{ rule: 'github-pat', file: '.env', line: 1, commit: 'ffee' }]),
      'sarif',
    );
    // Results with neither a rule id nor a message (what some SARIF converters write).
    const unreadable = JSON.stringify({
      version: '2.1.0',
      runs: [
        {
          tool: { driver: { name: 'gitleaks', semanticVersion: 'v8.18.2' } },
          results: [{ locations: [] }, { level: 'error' }],
        },
      ],
    });
    const { summary, scanId } = await imported(host, 'template', unreadable, 'sarif');
    expect(summary).toMatchObject({ fixed: 0, skipped: 2, outcome: 'inconclusive', closedNothing: true });
    expect(summary!.outcomeReason).toMatch(/all 2 results were skipped \(no ruleId and no message\)/);
    expect((await states(host)).every((x) => x.endsWith(': open'))).toBe(true);
    const scan = await s.owner.get(`${s.base}/scans/${scanId}`);
    expect(scan.json()).toMatchObject({ scan: { outcome: 'inconclusive' } });
  });

  it("Rampart's own scans close only the ports, URLs and rules they covered", async () => {
    const ip = `203.0.113.${++n + 10}`;
    const host = await asset('host', ip);
    const port = (p: number) => ({
      ruleId: `port.open.tcp.${p}`,
      title: `Open port ${p}/tcp`,
      severity: 'info',
      location: { host: ip, port: p, protocol: 'tcp' },
    });
    await imported(
      host,
      'port',
      native('port', { ports: [[1, 65_535]], rules: ['port.open.tcp.*'] }, [port(22), port(3306), port(8443)]),
      'native',
    );
    // The top ports only (here 1–1000 and 8443): 3306 was not probed and stays open.
    const top = await imported(
      host,
      'port',
      native(
        'port',
        {
          ports: [
            [1, 1000],
            [8443, 8443],
          ],
          rules: ['port.open.tcp.*'],
        },
        [port(22)],
      ),
      'native',
    );
    expect(top.summary).toMatchObject({ fixed: 1 });
    // An edge check of port 443 only closes nothing on 8443.
    const edge = (p: number) => ({
      ruleId: 'tls.protocol.tls10',
      title: 'TLS 1.0 offered',
      severity: 'medium',
      location: { host: ip, port: p, protocol: 'tcp' },
    });
    await imported(
      host,
      'edge',
      native(
        'edge',
        {
          ports: [
            [443, 443],
            [8443, 8443],
          ],
          rules: ['tls.protocol.tls10'],
        },
        [edge(443), edge(8443)],
      ),
      'native',
    );
    await imported(host, 'edge', native('edge', { ports: [[443, 443]], rules: ['tls.protocol.tls10'] }, []), 'native');
    expect(await states(host)).toEqual([
      `port.open.tcp.22 @ tcp://${ip}:22: open`,
      `port.open.tcp.3306 @ tcp://${ip}:3306: open`,
      `port.open.tcp.8443 @ tcp://${ip}:8443: fixed`,
      `tls.protocol.tls10 @ tcp://${ip}:443: fixed`,
      `tls.protocol.tls10 @ tcp://${ip}:8443: open`,
    ]);

    // A crawl closes a page's finding only if it fetched that page; a site-wide one by its site.
    const site = `http://w${n}.example.test`;
    const web = await asset('webapp', `${site}/`);
    const page = (path: string) => ({
      ruleId: '10202-form-without-csrf',
      title: 'No CSRF token',
      severity: 'medium',
      location: { url: `${site}${path}`, path },
    });
    const siteWide = {
      ruleId: '10038-csp-missing',
      title: 'CSP missing',
      severity: 'medium',
      location: { url: `${site}/`, param: 'Content-Security-Policy' },
      evidence: { data: { siteWide: true, instances: 2 } },
    };
    const rules = ['10202-form-without-csrf', '10038-csp-missing'];
    await imported(
      web,
      'webapp',
      native('webapp', { urls: [`${site}/`, `${site}/login`, `${site}/admin`], rules }, [
        page('/login'),
        page('/admin'),
        siteWide,
      ]),
      'native',
    );
    await imported(web, 'webapp', native('webapp', { urls: [`${site}/login?next=%2F`], rules }, []), 'native');
    expect(await states(web)).toEqual([
      `10038-csp-missing @ ${site}/ [Content-Security-Policy]: fixed`,
      `10202-form-without-csrf @ ${site}/admin: open`,
      `10202-form-without-csrf @ ${site}/login: fixed`,
    ]);
  });
});
