// The egress policy with the allow-list EMPTY (every other test app allows loopback): a real DNS
// server answers loopback, private and metadata addresses for tenant-chosen names, and real loopback
// services (S3, a language model, a mesh peer, TCP and HTTP listeners) stand in for what lives on
// an internal network. None of them may receive a byte from the server or its in-process hosted
// worker; a super-admin's bypass of a literal IP asset is the one operator decision that is scanned.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import { createEgressPolicy, dnsServerResolver, EgressRefusedError } from '../../src/lib/egress.ts';
import { AppError } from '../../src/lib/errors.ts';
import { toStorageError, UNREACHABLE_MESSAGE } from '../../src/storage/s3-store.ts';
import { createTestApp, STAFF_DOMAIN, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';
import { multipart, parseSse } from '../helpers/llm-http.ts';
import { startLlmServer, type LlmServer } from '../helpers/llm-server.ts';
import { closeAllPeers, startPeer, type TestPeer } from '../helpers/loopback-peer.ts';
import { startS3Server, type TestS3Server } from '../helpers/s3-server.ts';
import { bootstrapStaff } from '../helpers/staff.ts';
import { listenTcp, type TcpServer } from '../helpers/tcp-server.ts';
import { signingSecret } from '../helpers/workers.ts';
import { scanRow, scanTenant, setVerification, type ScanTenant } from './scans-fixtures.ts';

const RUN = Math.random().toString(36).slice(2, 8);
const ZONE = `corp-${RUN}.test`;
const MGMT = `mgmt-${RUN}`;
const sfx = (n: string) => n.toUpperCase().replace(/[^A-Z0-9]/g, '_');

let dnsServer: TestDnsServer;
let s3: TestS3Server;
let llm: LlmServer;
let peer: TestPeer;
let tcp: TcpServer;
let tcpConnections = 0;
let web: http.Server;
let webRequests = 0;
let webPort = 0;
let t: TestApp;
let st: ScanTenant;

beforeAll(async () => {
  dnsServer = await startDnsServer();
  dnsServer.zone.set(`s3.${ZONE}`, { a: ['127.0.0.1'] });
  dnsServer.zone.set(`intranet.${ZONE}`, { a: ['127.0.0.1'] });
  dnsServer.zone.set(`metadata.${ZONE}`, { a: ['169.254.169.254'], aaaa: ['fd00:ec2::254'] });
  dnsServer.zone.set(`private.${ZONE}`, { a: ['10.0.0.5', '192.168.1.5'] });
  s3 = await startS3Server();
  llm = await startLlmServer();
  peer = await startPeer((_req, res) => res.end('{}'));
  tcp = await listenTcp((sock) => {
    tcpConnections += 1;
    sock.end('SSH-2.0-OpenSSH_9.6 internal\r\n');
  });
  web = http.createServer((_req, res) => {
    webRequests += 1;
    res.end('<html><title>internal admin</title></html>');
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  webPort = (web.address() as AddressInfo).port;
  t = await createTestApp({
    env: {
      EGRESS_ALLOW: '',
      DNS_RESOLVERS: dnsServer.address,
      LLM_BASE_URL: llm.url,
      LLM_API_KEY: 'sk-egress-test',
      LLM_MODEL: 'egress-model',
      SVC_SELF_NAME: `rampart-${RUN}`,
      SVC_MANAGEMENT_PEER: MGMT,
      [`SVC_PEER_URL_${sfx(MGMT)}`]: peer.origin,
      [`SVC_SECRET_TO_${sfx(MGMT)}`]: `secret-${RUN}`,
    },
    deps: { egressResolver: dnsServerResolver([dnsServer.address]), llmOptions: { busyRetries: 0 } },
  });
  st = await scanTenant(t);
});

afterAll(async () => {
  await t.app.services.hostedWorkers.stop(1_000);
  await t.close();
  await closeAllPeers();
  await Promise.all([dnsServer.close(), s3.close(), llm.close(), tcp.close()]);
  web.closeAllConnections();
  await new Promise((r) => web.close(r));
});

// At most 25 s: under the test's 30 s timeout, so a wait that runs out says what it saw last.
async function waitFor<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, tries = 250): Promise<T> {
  let v = await read();
  for (let i = 0; i < tries && !done(v); i += 1) {
    await new Promise((r) => setTimeout(r, 100));
    v = await read();
  }
  if (!done(v)) throw new Error(`Timed out waiting for ${what}: ${JSON.stringify(v)}`);
  return v;
}

describe('tenant S3 endpoints', () => {
  const storageUrl = () => `${st.base}/storage`;
  const settings = (endpoint: string) => ({
    endpoint,
    region: s3.region,
    bucket: s3.bucket,
    pathStyle: true,
    prefix: 'egress',
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
  });
  const port = () => new URL(s3.endpoint).port;

  it('refuses every spelling of a loopback endpoint and names resolving to it, with one message', async () => {
    const endpoints = [
      s3.endpoint,
      `http://127.1:${port()}`,
      `http://0x7f000001:${port()}`,
      `http://2130706433:${port()}`,
      `http://0177.0.0.1:${port()}`,
      `http://[::ffff:127.0.0.1]:${port()}`,
      `http://s3.${ZONE}:${port()}`,
      `http://metadata.${ZONE}/`,
      `http://private.${ZONE}:${port()}`,
    ];
    for (const endpoint of endpoints) {
      const res = await st.owner.post(`${storageUrl()}/test`, settings(endpoint));
      expect(res.statusCode, `${endpoint}: ${res.body}`).toBe(502);
      expect(res.json(), endpoint).toEqual({ error: 'storage_unreachable', message: UNREACHABLE_MESSAGE });
    }
    expect(s3.objectKeys()).toEqual([]);
  });

  it('evidence uploads and downloads through a saved internal bucket never reach it', async () => {
    const saved = await st.owner.put(storageUrl(), settings(`http://0x7f000001:${port()}`));
    expect(saved.statusCode, saved.body).toBe(200);
    const store = await t.app.services.storage.forTenant(st.tenantId);
    expect(store.kind).toBe('s3');
    const code = async (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (e: unknown) => (e instanceof AppError ? e.code : String(e)),
      );
    expect(await code(store.put('evidence/x.txt', Readable.from([Buffer.from('x')]), { maxBytes: 1 }))).toBe(
      'storage_unreachable',
    );
    expect(await code(store.get('evidence/x.txt'))).toBe('storage_unreachable');
    expect(s3.objectKeys()).toEqual([]);
    expect((await st.owner.delete(storageUrl())).statusCode).toBe(200);
  });

  it('answers a refused address, a closed port and a silent one alike (no port-scan oracle)', () => {
    const refused = toStorageError(new EgressRefusedError('10.0.0.1', 'private')) as AppError;
    const closed = toStorageError(
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    ) as AppError;
    const silent = toStorageError(Object.assign(new Error('timed out'), { name: 'TimeoutError' })) as AppError;
    const reset = toStorageError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })) as AppError;
    for (const e of [refused, closed, silent, reset])
      expect({ code: e.code, message: e.message }).toEqual({
        code: 'storage_unreachable',
        message: UNREACHABLE_MESSAGE,
      });
  });
});

describe('the language-model gateway and mesh peers', () => {
  it('a loopback language model is not called: the explainer answers offline', async () => {
    const m = multipart([{ name: 'file', value: Buffer.from('{"SchemaVersion":2,"Results":[]}'), fileName: 'r.json' }]);
    const res = await st.owner.post(`${st.base}/llm/explain`, m.payload, m.headers);
    expect(res.statusCode, res.body).toBe(200);
    const meta = parseSse(res.body)[0]!.data as { source: string; fallbackReason?: string };
    expect(meta.source).toBe('offline');
    expect(llm.requests).toHaveLength(0);
  });

  it('a loopback mesh peer receives nothing from the outbox', async () => {
    const outcome = await t.app.services.reporter.report({
      kind: 'finding.critical',
      severity: 'critical',
      title: 'Egress test',
      fingerprint: `egress-${RUN}`,
      data: {},
    });
    expect(outcome.sent).toBe(true);
    await t.app.services.mesh.outbox.deliverDue();
    const tries = await withService(t.database.db, (tx) =>
      tx
        .selectFrom('svc_outbound_events')
        .select(['ok'])
        .where('request_id', '=', (outcome as { requestId: string }).requestId)
        .execute(),
    );
    expect(tries.length).toBeGreaterThan(0);
    expect(tries.every((r) => !r.ok)).toBe(true);
    expect(peer.received).toHaveLength(0);
  });
});

describe('the in-process hosted worker', () => {
  beforeAll(async () => {
    const admin = await bootstrapStaff(t, uniqueEmail('egress-sa', STAFF_DOMAIN), 'super_admin');
    expect((await admin.post('/api/v1/staff/hosted-workers', { tenantId: st.tenantId })).statusCode).toBe(201);
    await signingSecret(st.owner, st.tenantId);
    await st.settings(100, 5);
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    await t.app.services.hostedWorkers.run({
      serverUrl: url,
      syncEveryMs: 200,
      graceMs: 2_000,
      port: { bannerWaitMs: 300, probeTimeoutMs: 1_000 },
    });
  });

  const add = async (kind: string, target: string) => {
    const a = await st.owner.post(`${st.base}/assets`, { kind, target });
    expect(a.statusCode, a.body).toBe(201);
    return a.json().asset.id as string;
  };
  /** An asset under the tenant's domain, proven by a TXT record: covered, so verified. */
  let proven = false;
  const covered = async (kind: string, target: string) => {
    if (!proven) {
      const root = await add('domain', ZONE);
      const d = (await st.owner.get(`${st.base}/assets/${root}`)).json();
      dnsServer.zone.set(d.instructions.recordName, { txt: [d.instructions.recordValue] });
      const v = await st.owner.post(`${st.base}/assets/${root}/verify`);
      expect(v.json().asset.verification.status, v.body).toBe('verified');
      proven = true;
    }
    const id = await add(kind, target);
    const d = (await st.owner.get(`${st.base}/assets/${id}`)).json();
    expect(d.asset.verification).toMatchObject({ status: 'verified', via: 'covered' });
    return id;
  };
  const finished = (scanId: string) =>
    waitFor(
      'the scan to finish',
      () => scanRow(t, scanId),
      (r) => ['succeeded', 'failed', 'ingesting'].includes(r.status),
    );
  const findingsOf = (assetId: string) =>
    withService(t.database.db, (tx) =>
      tx.selectFrom('findings').select(['rule_id']).where('asset_id', '=', assetId).execute(),
    );
  const ports = () => ({ range: { from: tcp.port, to: tcp.port }, timeoutMs: 500 });

  it("does not scan a verified domain's subdomain that resolves to 127.0.0.1, nor one at the metadata address", async () => {
    for (const name of [`intranet.${ZONE}`, `metadata.${ZONE}`, `private.${ZONE}`]) {
      const assetId = await covered('host', name);
      const { scan } = await st.queue({ assetId, kind: 'port', options: ports() });
      const row = await finished(scan.id);
      expect(row.status, JSON.stringify(row)).toBe('failed');
      expect(String((row as { error?: unknown }).error)).toMatch(/may not reach/);
      expect(await findingsOf(assetId)).toEqual([]);
    }
    expect(tcpConnections).toBe(0);
  });

  it('sends no HTTP request to a web app whose name resolves to loopback', async () => {
    const assetId = await covered('webapp', `http://intranet.${ZONE}:${webPort}/`);
    const { scan } = await st.queue({ assetId, kind: 'webapp' });
    const row = await finished(scan.id);
    // Leased and run (not refused for its proof): the crawl fetched nothing.
    expect(row.started_at, JSON.stringify(row)).not.toBeNull();
    await t.app.services.ingestion.drain();
    await waitFor(
      'ingestion',
      () => scanRow(t, scan.id),
      (r) => r.status !== 'ingesting',
    );
    expect(webRequests).toBe(0);
    expect((await findingsOf(assetId)).filter((f) => !f.rule_id.startsWith('scan.'))).toEqual([]);
  });

  it("scans a super-admin's bypassed literal 127.0.0.1 asset (the first run), and only that address", async () => {
    const assetId = await add('host', '127.0.0.1');
    await setVerification(t, assetId, 'bypassed');
    const { scan } = await st.queue({ assetId, kind: 'port', options: ports() });
    const row = await finished(scan.id);
    expect(row.status, JSON.stringify(row)).not.toBe('failed');
    await t.app.services.ingestion.drain();
    await waitFor(
      'ingestion',
      () => scanRow(t, scan.id),
      (r) => r.status !== 'ingesting',
    );
    expect((await findingsOf(assetId)).map((f) => f.rule_id)).toContain(`port.open.tcp.${tcp.port}`);
    expect(tcpConnections).toBeGreaterThan(0);
    // The bypass is about that one address: the policy of another scan is unchanged.
    const policy = createEgressPolicy({ resolver: dnsServerResolver([dnsServer.address]) });
    await expect(policy.resolve(`intranet.${ZONE}`)).rejects.toBeInstanceOf(EgressRefusedError);
  });

  it('crawls a web app on the bypassed literal 127.0.0.1 host: the bypass covers the apps on that host', async () => {
    const listed = (await st.owner.get(`${st.base}/assets?q=127.0.0.1&kind=host`)).json() as {
      assets: { id: string; target: string }[];
    };
    let hostId = listed.assets.find((a) => a.target === '127.0.0.1')?.id;
    if (!hostId) {
      hostId = await add('host', '127.0.0.1');
      await setVerification(t, hostId, 'bypassed');
    }
    const assetId = await add('webapp', `http://127.0.0.1:${webPort}/`);
    const d = (await st.owner.get(`${st.base}/assets/${assetId}`)).json();
    expect(d.asset.verification).toMatchObject({ status: 'bypassed', via: 'covered', coveredBy: { assetId: hostId } });
    const seen = webRequests;
    const { scan } = await st.queue({ assetId, kind: 'webapp' });
    const row = await finished(scan.id);
    expect(row.status, JSON.stringify(row)).not.toBe('failed');
    expect(webRequests).toBeGreaterThan(seen);
  });
});
