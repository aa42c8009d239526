// Imports end to end through the ingestion runner: locations written as Rampart's own scanners
// write them (localhost, the asset's address and names), multi-host reports split per asset or
// refused naming the hosts, the result summary (read, merged, skipped, cleaned, coverage), a
// report that exhausts the parse thread's memory failing for good, and hostile input kept.
// The chosen asset's name is resolved through an injected resolver (the test DNS server answers
// TXT records only); everything else is the real runner, storage and database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import { bulkWritesOf, createBatchedFindingsIngest, type BatchedFindingsIngest } from '../../src/findings/index.ts';
import { createIngestionService, type IngestionService } from '../../src/workers/ingestion-service.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { importer } from './imports-fixtures.ts';
import { scanTenant, setVerification, type ScanTenant } from './scans-fixtures.ts';

let t: TestApp;
let s: ScanTenant;
let runner: IngestionService;
let batched: BatchedFindingsIngest;
const RUN = Math.random().toString(36).slice(2, 8);
const ADDRESSES: Record<string, string[]> = { [`db-${RUN}.example.test`]: ['203.0.113.50'] };

beforeAll(async () => {
  t = await createTestApp();
  s = await scanTenant(t);
  batched = createBatchedFindingsIngest({
    db: t.database.db,
    reporter: t.app.services.reporter,
    clock: { now: () => new Date() },
    // As the server: the embedded database writes new findings with COPY.
    ...bulkWritesOf(t.database),
  });
  const findings = batched;
  runner = createIngestionService({
    db: t.database.db,
    storage: t.app.services.storage,
    findings,
    clock: { now: () => new Date() },
    log: { warn: () => undefined, error: () => undefined, info: () => undefined },
    resolveHost: async (name) => ADDRESSES[name] ?? [],
    parseHeapMb: 64,
  });
});
afterAll(() => t.close());

async function asset(kind: 'host' | 'webapp' | 'domain', target: string): Promise<string> {
  const res = await s.owner.post(`${s.base}/assets`, { kind, target });
  expect(res.statusCode, res.body).toBe(201);
  const id = (res.json() as { asset: { id: string } }).asset.id;
  await setVerification(t, id, 'verified');
  return id;
}

const { imported, findingsOf } = importer(
  () => t,
  () => s.tenantId,
  () => runner,
);

const nmap = (hosts: { addr: string; names?: string[]; ports: number[] }[], services = '1-1000,3306') =>
  `<?xml version="1.0"?><nmaprun scanner="nmap" version="7.94"><scaninfo type="syn" protocol="tcp" numservices="1" services="${services}"/>${hosts
    .map(
      (h) =>
        `<host><status state="up"/><address addr="${h.addr}" addrtype="ipv4"/><hostnames>${(h.names ?? []).map((n) => `<hostname name="${n}" type="user"/>`).join('')}</hostnames><ports>${h.ports
          .map(
            (p) =>
              `<port protocol="tcp" portid="${p}"><state state="open" reason="syn-ack"/><service name="${p === 3306 ? 'mysql' : 'unknown'}"/></port>`,
          )
          .join('')}</ports></host>`,
    )
    .join('')}</nmaprun>`;

describe('imports routed by host', () => {
  it('an nmap report naming localhost lands on the finding Rampart’s port scan made', async () => {
    const local = await asset('host', '127.0.0.1');
    // What Rampart's port scanner reports for this asset (src/agent/scanners/port/findings.ts).
    const native = `${JSON.stringify({ type: 'report', version: 1, scanner: 'port' })}\n${JSON.stringify({ type: 'finding', ruleId: 'port.open.tcp.3306', title: 'Open port 3306/tcp (mysql)', severity: 'info', location: { host: '127.0.0.1', port: 3306, protocol: 'tcp' } })}\n`;
    await imported(local, 'port', native, 'native');
    const before = await findingsOf(local);
    expect(before.map((f) => f.location_text)).toEqual(['tcp://127.0.0.1:3306']);
    const { summary } = await imported(
      local,
      'port',
      nmap([{ addr: '127.0.0.1', names: ['localhost'], ports: [3306] }])
        .replace('addr="127.0.0.1"', 'addr="::1"')
        .replace('ipv4', 'ipv6'),
      'nmap',
    );
    const after = await findingsOf(local);
    // One exposure, one finding: seen again, not a second one at tcp://localhost.
    expect(after.filter((f) => f.rule_id === 'port.open.tcp.3306')).toEqual([
      expect.objectContaining({ location_text: 'tcp://127.0.0.1:3306', status: 'open' }),
    ]);
    expect(after.find((f) => f.rule_id === 'port.open.tcp.3306')!.evidence).toMatchObject({
      data: { reportedHost: '::1' },
    });
    expect(summary).toMatchObject({ seen: 1, fixed: 0, splits: [], unmatchedHosts: [] });
  });

  it('recognises the asset by its resolved address and names', async () => {
    const db = await asset('host', `db-${RUN}.example.test`);
    const { summary } = await imported(db, 'port', nmap([{ addr: '203.0.113.50', ports: [3306] }]), 'nmap');
    expect((await findingsOf(db)).map((f) => f.location_text)).toEqual([
      `tcp://db-${RUN}.example.test:3306`,
      `tcp://db-${RUN}.example.test:3306`,
    ]);
    expect(summary).toMatchObject({ created: 2, closedNothing: false });
    expect(summary!.coverage).toMatchObject({
      ports: [
        {
          protocol: 'tcp',
          ranges: [
            [1, 1000],
            [3306, 3306],
          ],
        },
      ],
      tools: [{ name: 'nmap', version: '7.94' }],
    });
  });

  it('splits a multi-host report per asset and names the hosts that are no asset', async () => {
    const web = await asset('host', `web-${RUN}.example.test`);
    const mail = await asset('host', `mail-${RUN}.example.test`);
    const report = nmap([
      { addr: '192.0.2.10', names: [`web-${RUN}.example.test`], ports: [22] },
      { addr: '192.0.2.11', names: [`mail-${RUN}.example.test`], ports: [25, 3306] },
      { addr: '192.0.2.12', ports: [80] },
    ]);
    const { summary, scanId } = await imported(web, 'port', report, 'nmap');
    expect((await findingsOf(web)).map((f) => f.location_text)).toEqual([`tcp://web-${RUN}.example.test:22`]);
    const mailFindings = await findingsOf(mail);
    expect(mailFindings.map((f) => `${f.rule_id} ${f.location_text}`)).toEqual([
      `port.open.tcp.25 tcp://mail-${RUN}.example.test:25`,
      `port.open.tcp.3306 tcp://mail-${RUN}.example.test:3306`,
      `service.exposed.mysql tcp://mail-${RUN}.example.test:3306`,
    ]);
    expect(mailFindings.every((f) => f.scan_id !== scanId)).toBe(true);
    expect(summary!.splits).toEqual([expect.objectContaining({ assetId: mail, findings: 3, created: 3 })]);
    expect(summary!.unmatchedHosts).toEqual(['192.0.2.12']);
    expect(summary!.skipReasons).toEqual([
      { reason: 'host matches no asset of this tenant (not imported)', count: 1, where: ['192.0.2.12'] },
    ]);
    const split = await withService(t.database.db, (tx) =>
      tx
        .selectFrom('scans')
        .select(['status', 'source', 'asset_id'])
        .where('id', '=', summary!.splits![0]!.scanId)
        .executeTakeFirstOrThrow(),
    );
    expect(split).toEqual({ status: 'succeeded', source: 'import', asset_id: mail });
  });

  it('refuses a report of several hosts none of which is an asset, naming them', async () => {
    const other = await asset('host', `other-${RUN}.example.test`);
    const { job } = await imported(
      other,
      'port',
      nmap([
        { addr: '198.51.100.1', ports: [22] },
        { addr: '198.51.100.2', ports: [22] },
      ]),
      'nmap',
    );
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/covers 2 hosts and none is an asset.*198\.51\.100\.1, 198\.51\.100\.2/);
    expect(await findingsOf(other)).toEqual([]);
    // One host the tenant does not know: the asset the user chose.
    const single = await imported(other, 'port', nmap([{ addr: '198.51.100.3', ports: [8080] }]), 'nmap');
    expect(single.job.status).toBe('succeeded');
    expect((await findingsOf(other)).map((f) => f.location_text)).toEqual([`tcp://other-${RUN}.example.test:8080`]);
  });

  it('closes nothing on the chosen asset when the report was only about other assets', async () => {
    const a = await asset('host', `a-${RUN}.example.test`);
    const b = await asset('host', `b-${RUN}.example.test`);
    await imported(a, 'port', nmap([{ addr: '192.0.2.20', names: [`a-${RUN}.example.test`], ports: [22] }]), 'nmap');
    const { summary } = await imported(
      a,
      'port',
      nmap([{ addr: '192.0.2.21', names: [`b-${RUN}.example.test`], ports: [443] }]),
      'nmap',
    );
    expect(summary).toMatchObject({ fixed: 0, closedNothing: true });
    expect((await findingsOf(a)).map((f) => f.status)).toEqual(['open']);
    expect((await findingsOf(b)).map((f) => f.location_text)).toEqual([`tcp://b-${RUN}.example.test:443`]);
  });

  it('keys findings of a tool’s own rules by tool: two SARIF tools never merge', async () => {
    const repo = await asset('webapp', `https://repo-${RUN}.example.test/`);
    const log = (tool: string) =>
      JSON.stringify({
        version: '2.1.0',
        runs: [
          {
            tool: { driver: { name: tool } },
            results: [
              {
                ruleId: 'no-eval',
                message: { text: 'eval' },
                locations: [{ physicalLocation: { artifactLocation: { uri: 'src/a.js' }, region: { startLine: 3 } } }],
              },
            ],
          },
        ],
      });
    await imported(repo, 'template', log('ESLint'), 'sarif');
    await imported(repo, 'template', log('Semgrep'), 'sarif');
    // Same rule id, same place: two findings, one per tool (what closes what is coverage's business).
    expect((await findingsOf(repo)).map((f) => f.tool).sort()).toEqual(['eslint', 'semgrep']);
  });
});

describe('the import result summary and hostile reports', () => {
  it('says what was read, passed, skipped by reason and cleaned', async () => {
    const app = await asset('webapp', `https://app-${RUN}.example.test/`);
    const lines = [
      {
        'template-id': 'a',
        info: { name: 'A\u0000', severity: 'low' },
        'matched-at': `https://app-${RUN}.example.test/a`,
      },
      { 'template-id': 'a', info: { name: 'A', severity: 'low' }, 'matched-at': `https://app-${RUN}.example.test/a` },
      { info: { name: 'no id' }, 'matched-at': `https://app-${RUN}.example.test/b` },
      { 'template-id': 'c', 'matcher-status': false, 'matched-at': `https://app-${RUN}.example.test/c` },
    ];
    const { summary, job } = await imported(
      app,
      'template',
      `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`,
      'nuclei',
    );
    expect(job.status).toBe('succeeded');
    expect(summary).toMatchObject({
      records: 4,
      received: 2,
      distinct: 1,
      skipped: 2,
      cleaned: { counts: { nul: 1 } },
    });
    expect(summary!.skipReasons!.map((r) => r.reason)).toEqual([
      'no template-id',
      'not a match (matcher-status false)',
    ]);
    expect(summary!.coverage!.rules).toEqual({ declared: false, ids: ['a'] });
  });

  it('fails a report that exhausts the parse thread’s memory for good, without retrying it', async () => {
    const small = createIngestionService({
      db: t.database.db,
      storage: t.app.services.storage,
      findings: batched,
      clock: { now: () => new Date() },
      log: { warn: () => undefined, error: () => undefined, info: () => undefined },
      parseHeapMb: 8,
    });
    const host = await asset('webapp', `https://huge-${RUN}.example.test/`);
    // One 30-million-character message: under the reader's limit for a single value, far over an 8 MB heap.
    const huge = `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"ruleId":"r","message":{"text":"${'x'.repeat(30_000_000)}"}}]}]}`;
    const { job } = await imported(host, 'template', huge, 'sarif', small);
    expect(job).toMatchObject({ status: 'failed', attempts: 1 });
    expect(job.error).toMatch(/more than the 8 MB a report may use/);
    await small.drain();
    const again = await withService(t.database.db, (tx) =>
      tx
        .selectFrom('report_ingestions')
        .select(['status', 'attempts'])
        .where('id', '=', job.id)
        .executeTakeFirstOrThrow(),
    );
    expect(again).toEqual({ status: 'failed', attempts: 1 });
  });

  it('fails a binary file sent as native promptly, with a stored message', async () => {
    const host = await asset('host', `bin-${RUN}.example.test`);
    const bytes = Buffer.alloc(256 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 131) % 256;
    const { job } = await imported(host, 'template', bytes, 'native');
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/^The report could not be read: /);
    // eslint-disable-next-line no-control-regex
    expect(job.error).not.toMatch(/[\u0000-\u0008]/);
  });
});
