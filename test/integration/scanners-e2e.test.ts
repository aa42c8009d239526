// Every scanner kind end to end through the real server: a queued scan is leased by the hosted
// agent with the built-in scanners, run against a real local target, its native report uploaded
// and ingested, and the scan ends succeeded with the scanner's findings on the asset. Targets: the
// deliberately vulnerable web app (webapp), a self-signed HTTPS server (edge), an image archive
// built by the test and uploaded as an asset, matched against the sample OSV database (container),
// the template test target with the built-in templates and one the tenant uploaded (template).
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import { createHostedAgent, type Agent } from '../../src/agent/agent.ts';
import { enrollWorker } from '../../src/agent/client.ts';
import { debianImage, writeDockerArchive, writeOciLayout } from '../fixtures/image-archives.ts';
import { pushLayout, startRegistry } from '../helpers/registry.ts';
import { createTestPki, type TestPki } from '../fixtures/tls-servers.ts';
import { startTestTarget, type TestTarget } from '../fixtures/template-target.ts';
import { startVulnerableWeb, type VulnerableWeb } from '../fixtures/vulnerable-web/index.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { scanRow, scanTenant, setVerification, type ScanTenant } from './scans-fixtures.ts';

const SAMPLE_OSV = join(import.meta.dirname, '../../src/agent/scanners/container/sample-osv');

let t: TestApp;
let st: ScanTenant;
let agent: Agent;
let running: Promise<void>;
let web: VulnerableWeb;
let tplTarget: TestTarget;
let pki: TestPki;
let tlsServer: https.Server;
let tlsPort = 0;
const work = mkdtempSync(join(tmpdir(), 'rampart-scanners-e2e-'));

async function asset(kind: string, target: string): Promise<string> {
  const res = await st.owner.post(`${st.base}/assets`, { kind, target });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json().asset.id as string;
  await setVerification(t, id, 'bypassed');
  return id;
}

async function until<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, tries = 600): Promise<T> {
  let v = await read();
  for (let i = 0; i < tries && !done(v); i += 1) {
    await new Promise((r) => setTimeout(r, 100));
    v = await read();
  }
  if (!done(v)) throw new Error(`Timed out waiting for ${what}: ${JSON.stringify(v)}`);
  return v;
}

/** Queues a scan, waits until the agent's report is ingested, and returns the asset's findings. */
async function scanned(assetId: string, body: Record<string, unknown>) {
  return (await scannedWithScan(assetId, body)).findings;
}

async function scannedWithScan(assetId: string, body: Record<string, unknown>) {
  const { scan } = await st.queue({ assetId, ...body });
  await until(
    'the report',
    () => scanRow(t, scan.id),
    (r) => ['ingesting', 'succeeded', 'failed'].includes(r.status),
  );
  await t.app.services.ingestion.drain();
  const final = await until(
    'ingestion',
    () => scanRow(t, scan.id),
    (r) => r.status !== 'ingesting',
  );
  expect(final.status, JSON.stringify(final)).toBe('succeeded');
  const rows = await withService(t.database.db, (tx) =>
    sql<{
      rule_id: string;
      severity: string;
      status: string;
    }>`select rule_id, severity, status from findings where asset_id = ${assetId}`.execute(tx),
  );
  return { findings: rows.rows, scan: final };
}

beforeAll(async () => {
  t = await createTestApp();
  st = await scanTenant(t);
  await st.settings(100, 5);
  const serverUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const s = await st.owner.post(`${st.base}/webhook-secret`, {});
  const secret = s.json().secret as string;
  const code = (await st.owner.post(`${st.base}/worker-enrollments`)).json().code;
  const { token } = await enrollWorker({
    serverUrl,
    code,
    name: 'scanners-e2e',
    platform: 'linux/x64',
    version: '0.1.0',
  });

  web = await startVulnerableWeb({ mode: 'vulnerable' });
  tplTarget = await startTestTarget('vulnerable');
  pki = createTestPki();
  const self = pki.selfSigned('edge-e2e');
  tlsServer = https.createServer({ key: self.key, cert: self.cert }, (_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<p>edge</p>'),
  );
  tlsServer.on('tlsClientError', () => undefined);
  await new Promise<void>((r) => tlsServer.listen(0, '127.0.0.1', () => r()));
  tlsPort = (tlsServer.address() as AddressInfo).port;

  agent = createHostedAgent({
    client: { serverUrl, token, signingSecret: async () => secret },
    concurrency: 2,
    graceMs: 5_000,
    scannerSettings: {
      webapp: { timeBudgetMs: 60_000, ratePerSecond: 200 },
      edge: { httpPort: null },
      container: { osvDbPath: SAMPLE_OSV },
    },
  });
  running = agent.start();
});

afterAll(async () => {
  await agent?.stop();
  await running;
  await web?.close();
  await tplTarget?.close();
  tlsServer?.closeAllConnections();
  tlsServer?.close();
  pki?.cleanup();
  rmSync(work, { recursive: true, force: true });
  await t.close();
});

describe('scanners end to end', () => {
  it('webapp: crawls the vulnerable app and its passive findings arrive on the asset', async () => {
    const id = await asset('webapp', `${web.url.replace(/\/$/, '')}/`);
    const findings = await scanned(id, { kind: 'webapp', options: { maxPages: 50 } });
    const rules = findings.map((f) => f.rule_id);
    expect(rules).toEqual(expect.arrayContaining(['10020-1', '10038-1', '10010', '10037', '10033']));
    expect(findings.every((f) => f.status === 'open')).toBe(true);
  });

  it('webapp: a site that went down gives an inconclusive scan with its reason, and every finding stays open', async () => {
    const site = await startVulnerableWeb({ mode: 'vulnerable' });
    const id = await asset('webapp', site.url);
    const first = await scannedWithScan(id, { kind: 'webapp', options: { maxPages: 20 } });
    expect(first.scan.outcome).toBe('complete');
    const detail = (await st.owner.get(`${st.base}/scans/${first.scan.id}`)).json();
    expect(detail.scan).toMatchObject({ outcome: 'complete', outcomeReason: null });
    expect(detail.coverage.urls).toContain(site.url);
    expect(detail.coverage.rules).toContain('10038-1');
    const open = first.findings.filter((f) => f.status === 'open').length;
    expect(open).toBeGreaterThan(5);

    await site.close();
    const second = await scannedWithScan(id, { kind: 'webapp', options: { maxPages: 20 } });
    expect(second.scan.outcome).toBe('inconclusive');
    expect(second.scan.outcome_reason).toContain(`no page of ${new URL(site.url).origin} could be fetched: `);
    expect(second.scan.outcome_reason).toMatch(
      /\d+ page requests? got no answer \(http:\/\/127\.0\.0\.1:\d+\/.*(refused|ECONNREFUSED)/,
    );
    expect(second.findings.filter((f) => f.status === 'open')).toHaveLength(open);
    const shown = (await st.owner.get(`${st.base}/scans/${second.scan.id}`)).json();
    expect(shown.scan).toMatchObject({
      status: 'succeeded',
      outcome: 'inconclusive',
      outcomeReason: second.scan.outcome_reason,
    });
    expect(shown.coverage).toMatchObject({ urls: [], urlCount: 0 });
  });

  it('template: runs the built-in templates and the tenant’s own template from the lease', async () => {
    const own = [
      'id: acme-env-probe',
      'info: {name: Acme env probe, author: e2e, severity: high, tags: acme}',
      'http:',
      '  - method: GET',
      '    path: ["{{BaseURL}}/.env"]',
      '    matchers-condition: and',
      '    matchers:',
      '      - {type: status, status: [200]}',
      '      - {type: word, words: ["APP_KEY", "DB_PASSWORD"]}',
      '',
    ].join('\n');
    const up = await st.owner.post(`${st.base}/scan-templates`, { yaml: own });
    expect(up.statusCode, up.body).toBe(201);
    const id = await asset('webapp', `${tplTarget.url.replace(/\/$/, '')}/`);
    const findings = await scanned(id, { kind: 'template' });
    const rules = findings.map((f) => f.rule_id);
    expect(rules).toEqual(expect.arrayContaining(['rampart-git-config', 'rampart-dotenv-file', 'acme-env-probe']));
    expect(findings.find((f) => f.rule_id === 'acme-env-probe')?.severity).toBe('high');
  }, 120_000);

  it('edge: grades a self-signed HTTPS port F with the certificate finding', async () => {
    const id = await asset('host', '127.0.0.1');
    const findings = await scanned(id, { kind: 'edge', options: { ports: [tlsPort] } });
    const rules = findings.map((f) => f.rule_id);
    expect(rules).toEqual(expect.arrayContaining(['edge/grade', 'edge/cert-self-signed', 'edge/hsts-missing']));
  });

  it('container: pulls an asset given as a registry reference and scans it', async () => {
    const registry = await startRegistry({ tokenAuth: true });
    try {
      const layout = join(work, 'debian-layout');
      await writeOciLayout(layout, debianImage());
      const { digest } = await pushLayout(registry, 'team/debian', '12', layout);
      const id = await asset('container_image', `${registry.host}/team/debian:12`);
      const { findings, scan } = await scannedWithScan(id, { kind: 'container' });
      expect(findings.map((f) => f.rule_id)).toContain('container/runs-as-root');
      expect(scan.coverage).toEqual({
        image: { reference: `${registry.host}/team/debian:12`, digest, platform: 'linux/amd64' },
        severities: ['low', 'medium', 'high', 'critical'],
      });
      expect(registry.tokenRequests).toContain('repository:team/debian:pull');
    } finally {
      await registry.close();
    }
  });

  it('container: reads the uploaded archive and reports the sample database’s advisories with fixed versions', async () => {
    const file = join(work, 'debian.tar');
    await writeDockerArchive(file, debianImage());
    const up = await st.owner.request('POST', `${st.base}/assets/archives?fileName=debian.tar`, readFileSync(file), {
      'content-type': 'application/octet-stream',
    });
    expect(up.statusCode, up.body).toBe(201);
    const id = up.json().asset.id as string;
    const findings = await scanned(id, { kind: 'container' });
    const rules = findings.map((f) => f.rule_id);
    expect(rules).toContain('container/runs-as-root');
    expect(rules.some((r) => /^(GHSA|CVE|DSA|DLA)-/.test(r))).toBe(true);
  });
});
