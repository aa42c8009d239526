// Ingestion of scan findings: fingerprints, idempotent re-ingest, closing and reopening across
// rescans, scope-limited closing for chunks, accepted-risk expiry, SLA due dates, and the
// finding.critical reports (observed in the outbox they are committed to).
// Over 500 lines on purpose: one feature's cases share a single app, tenants and loopback peers set up once; splitting
// them would repeat that set-up in every file.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService, withTenant } from '../../src/db/tenant.ts';
import type { Clock } from '../../src/lib/clock.ts';
import {
  findingFingerprint,
  normaliseLocation,
  type IngestScope,
  type NormalizedFindingInput,
} from '../../src/findings/index.ts';
import { createTestApp, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { ingestFindings } from '../helpers/findings.ts';
import { Client } from '../helpers/client.ts';

const RUN = Math.random().toString(36).slice(2, 8);
const DAY = 86_400_000;
let offset = 0;
const clock: Clock = { now: () => new Date(Date.now() + offset) };

let t: TestApp;
let owner: Client;
let tenant: string;

beforeAll(async () => {
  t = await createTestApp({ env: { SVC_MANAGEMENT_PEER: `mgmt-${RUN}` }, deps: { clock } });
  owner = new Client(t.app);
  await owner.signUp(uniqueEmail('findings-owner'));
  tenant = await owner.createTenant('Findings Co');
  await owner.me();
});
afterAll(() => t.close());

let assetCounter = 0;
async function addAsset(): Promise<string> {
  assetCounter += 1;
  const res = await owner.post(`/api/v1/tenants/${tenant}/assets`, {
    kind: 'host',
    target: `h${assetCounter}-${RUN}.example.test`,
  });
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { asset: { id: string } }).asset.id;
}

/** A scans row, inserted through the app role like the scans module would (its API is not needed here). */
async function addScan(
  assetId: string,
  kind: string,
  chunk?: { parentId: string; index: number; spec: unknown },
  options?: Record<string, unknown>,
): Promise<string> {
  return withTenant(t.database.db, { tenantId: tenant }, async (tx) => {
    const row = await tx
      .insertInto('scans')
      .values({
        tenant_id: tenant,
        asset_id: assetId,
        kind: kind as 'port',
        status: 'succeeded',
        parent_id: chunk?.parentId ?? null,
        chunk_index: chunk?.index ?? null,
        chunk_spec: chunk ? JSON.stringify(chunk.spec) : null,
        ...(options ? { options: JSON.stringify(options) } : {}),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  });
}

const ingest = (scanId: string, findings: NormalizedFindingInput[], scope?: IngestScope) =>
  ingestFindings(t.app.services.findingsIngest, { scanId, findings, ...(scope ? { scope } : {}) });

const findingsOf = (assetId: string) =>
  withService(t.database.db, (tx) =>
    tx.selectFrom('findings').selectAll().where('asset_id', '=', assetId).orderBy('rule_id').orderBy('port').execute(),
  );
const eventsOf = (findingId: string) =>
  withService(t.database.db, (tx) =>
    tx
      .selectFrom('finding_events')
      .select(['event', 'from_status', 'to_status'])
      .where('finding_id', '=', findingId)
      .orderBy('id')
      .execute(),
  );
const criticalReports = (assetId: string) =>
  withService(t.database.db, (tx) =>
    tx
      .selectFrom('svc_outbox')
      .select(['payload', 'event_type'])
      .where('event_type', '=', 'finding.critical')
      .where(sql<boolean>`payload->'data'->>'assetId' = ${assetId}`)
      .execute(),
  );

const openPort = (port: number, extra: Partial<NormalizedFindingInput> = {}): NormalizedFindingInput => ({
  ruleId: 'open-port',
  title: `Open port ${port}/tcp`,
  severity: 'info',
  location: { host: `h-${RUN}.example.test`, port, protocol: 'tcp' },
  ...extra,
});
const webFinding = (
  ruleId: string,
  url: string,
  extra: Partial<NormalizedFindingInput> = {},
): NormalizedFindingInput => ({
  ruleId,
  title: `${ruleId} at ${url}`,
  severity: 'medium',
  location: { url },
  ...extra,
});

describe('fingerprints', () => {
  const fp = (loc: Parameters<typeof normaliseLocation>[0], ruleId = 'missing-hsts', discriminator?: string) =>
    findingFingerprint({
      assetId: '00000000-0000-4000-8000-000000000001',
      scanner: 'webapp',
      ruleId,
      locationKey: normaliseLocation(loc).key,
      discriminator,
    });

  it('ignores query noise, fragments, host case, default ports, trailing slashes and dot segments', () => {
    const base = fp({ url: 'https://app.example.test/login' });
    for (const url of [
      'https://APP.example.test/login?x=1&cb=123',
      'https://app.example.test:443/login#top',
      'https://app.example.test/login/',
      'https://app.example.test//a/../login',
      'https://app.example.test./login',
    ])
      expect(fp({ url }), url).toBe(base);
    expect(fp({ url: 'https://app.example.test/login' }, 'MISSING-HSTS')).toBe(base);
  });

  it('changes with the location, the parameter, the rule, the scanner, the asset and the discriminator', () => {
    const base = fp({ url: 'https://app.example.test/login' });
    const others = [
      fp({ url: 'https://app.example.test/Login' }),
      fp({ url: 'http://app.example.test/login' }),
      fp({ url: 'https://app.example.test:8443/login' }),
      fp({ url: 'https://app.example.test/login', param: 'next' }),
      fp({ url: 'https://app.example.test/login' }, 'missing-csp'),
      fp({ url: 'https://app.example.test/login' }, 'missing-hsts', 'matcher-a'),
      findingFingerprint({
        assetId: '00000000-0000-4000-8000-000000000001',
        scanner: 'template',
        ruleId: 'missing-hsts',
        locationKey: normaliseLocation({ url: 'https://app.example.test/login' }).key,
      }),
      findingFingerprint({
        assetId: '00000000-0000-4000-8000-000000000002',
        scanner: 'webapp',
        ruleId: 'missing-hsts',
        locationKey: normaliseLocation({ url: 'https://app.example.test/login' }).key,
      }),
    ];
    expect(new Set([base, ...others]).size).toBe(others.length + 1);
    // Container findings: the package and its installed version identify the place.
    const pkg = (version: string) =>
      normaliseLocation({ package: 'openssl', version, file: 'usr/lib/libssl.so.3' }).key;
    expect(pkg('3.0.2')).not.toBe(pkg('3.0.13'));
    expect(normaliseLocation({ host: 'db.example.test', port: 5432 }).key).toBe(
      normaliseLocation({ host: 'DB.example.test', port: 5432, protocol: 'TCP' }).key,
    );
  });

  it('keeps a finding when its title, description, evidence, severity or CVSS change between scans', async () => {
    const asset = await addAsset();
    const s1 = await addScan(asset, 'webapp');
    await ingest(s1, [
      webFinding('missing-hsts', 'https://app.example.test/', { evidence: { summary: 'header absent' } }),
    ]);
    const [before] = await findingsOf(asset);
    const s2 = await addScan(asset, 'webapp');
    const r = await ingest(s2, [
      webFinding('missing-hsts', 'https://app.example.test/?utm=1', {
        title: 'HSTS header missing (reworded)',
        description: 'new text',
        severity: 'high',
        cvss: { score: 7.1 },
        evidence: { summary: 'different evidence' },
      }),
    ]);
    expect(r).toMatchObject({ created: 0, seen: 1, fixed: 0 });
    const [after] = await findingsOf(asset);
    expect(after!.id).toBe(before!.id);
    expect(after).toMatchObject({
      title: 'HSTS header missing (reworded)',
      severity: 'high',
      scan_id: s2,
      first_scan_id: s1,
      status: 'open',
    });
    expect((await eventsOf(after!.id)).map((e) => e.event)).toEqual(['severity_changed']);
    // The history derives the creation from the row, with the severity it was created with.
    const detail = (await owner.get(`/api/v1/tenants/${tenant}/findings/${after!.id}`)).json() as {
      finding: { firstSeenAt: string };
      history: { id: number; at: string; event: string; scanId: string | null; detail: unknown }[];
    };
    expect(detail.history.map((h) => [h.event, h.detail])).toEqual([
      ['severity_changed', { from: 'medium', to: 'high' }],
      ['created', { severity: 'medium' }],
    ]);
    expect(detail.history[1]).toMatchObject({ id: 0, at: detail.finding.firstSeenAt, scanId: s1 });
  });
});

describe('integrity', () => {
  it("refuses a finding that names another tenant's asset", async () => {
    const mine = await addAsset();
    const other = await owner.createTenant('Other Findings Co');
    const res = await owner.post(`/api/v1/tenants/${other}/assets`, {
      kind: 'host',
      target: `other-${RUN}.example.test`,
    });
    expect(res.statusCode, res.body).toBe(201);
    const theirs = (res.json() as { asset: { id: string } }).asset.id;
    const row = (assetId: string) => ({
      tenant_id: tenant,
      asset_id: assetId,
      scanner: 'port' as const,
      rule_id: 'r',
      title: 't',
      severity: 'info' as const,
      location_text: 'x',
      fingerprint: `fp-${assetId}`,
      scope_key: 'full',
      first_seen_at: new Date(),
      last_seen_at: new Date(),
    });
    // The service role sees every tenant: only the (tenant, asset) foreign key stops this.
    await expect(
      withService(t.database.db, (tx) => tx.insertInto('findings').values(row(theirs)).execute()),
    ).rejects.toMatchObject({ code: '23503', constraint: 'findings_asset_fkey' });
    await withService(t.database.db, (tx) => tx.insertInto('findings').values(row(mine)).execute());
  });
});

describe('ingesting a scan', () => {
  it('is idempotent: a second ingest of the same scan replays the summary and changes nothing', async () => {
    const asset = await addAsset();
    const s1 = await addScan(asset, 'port');
    const findings = [
      openPort(22),
      openPort(443),
      openPort(443, { title: 'duplicate in the same report', severity: 'low' }),
    ];
    const first = await ingest(s1, findings);
    expect(first).toMatchObject({ received: 3, distinct: 2, created: 2, fixed: 0, replayed: false });
    const rows = await findingsOf(asset);
    expect(rows.map((r) => [r.port, r.severity])).toEqual([
      [22, 'info'],
      [443, 'low'], // in-report duplicates fold into the worse severity
    ]);
    const again = await ingest(s1, findings);
    expect(again).toEqual({ ...first, replayed: true });
    expect(await findingsOf(asset)).toEqual(rows);
    // Nothing happened twice: no events at all (creation is the row itself).
    for (const r of rows) expect(await eventsOf(r.id)).toEqual([]);
  });

  it('closes what a rescan no longer shows and reopens what comes back', async () => {
    const asset = await addAsset();
    const s1 = await addScan(asset, 'port');
    await ingest(s1, [openPort(22), openPort(80), openPort(443)]);
    offset += 60_000;
    const s2 = await addScan(asset, 'port');
    expect(await ingest(s2, [openPort(22), openPort(443)])).toMatchObject({ created: 0, seen: 2, fixed: 1 });
    let rows = await findingsOf(asset);
    const p80 = rows.find((r) => r.port === 80)!;
    expect(p80).toMatchObject({ status: 'fixed', scan_id: s1 });
    expect(p80.fixed_at).not.toBeNull();
    expect(rows.filter((r) => r.status === 'open').map((r) => r.port)).toEqual([22, 443]);

    offset += 60_000;
    const s3 = await addScan(asset, 'port');
    expect(await ingest(s3, [openPort(22), openPort(80), openPort(443)])).toMatchObject({
      created: 0,
      reopened: 1,
      fixed: 0,
    });
    rows = await findingsOf(asset);
    expect(rows.find((r) => r.port === 80)).toMatchObject({
      id: p80.id,
      status: 'open',
      fixed_at: null,
      reopened_count: 1,
      scan_id: s3,
    });
    expect((await eventsOf(p80.id)).map((e) => `${e.event}:${e.to_status}`)).toEqual(['fixed:fixed', 'reopened:open']);
    expect(rows.every((r) => r.status === 'open')).toBe(true);
  });

  it('leaves false positives and accepted risks as people decided, reported or not', async () => {
    const asset = await addAsset();
    const s1 = await addScan(asset, 'port');
    await ingest(s1, [openPort(21), openPort(23), openPort(25)]);
    const [p21, p23] = await findingsOf(asset);
    const fp = await owner.post(`/api/v1/tenants/${tenant}/findings/status`, {
      ids: [p21!.id],
      status: 'false_positive',
      reason: 'honeypot banner',
    });
    expect(fp.statusCode, fp.body).toBe(200);
    const ar = await owner.post(`/api/v1/tenants/${tenant}/findings/status`, {
      ids: [p23!.id],
      status: 'accepted_risk',
      reason: 'legacy telnet until Q3',
      expiresAt: new Date(clock.now().getTime() + 10 * DAY).toISOString(),
    });
    expect(ar.statusCode, ar.body).toBe(200);
    const s2 = await addScan(asset, 'port');
    await ingest(s2, [openPort(21), openPort(23)]); // 25 gone
    const s3 = await addScan(asset, 'port');
    await ingest(s3, []); // everything gone: only open findings close
    const rows = await findingsOf(asset);
    expect(rows.map((r) => [r.port, r.status])).toEqual([
      [21, 'false_positive'],
      [23, 'accepted_risk'],
      [25, 'fixed'],
    ]);
    expect(rows[0]!.status_reason).toBe('honeypot banner');
  });

  it('reopens an accepted risk once its expiry has passed', async () => {
    const asset = await addAsset();
    const s1 = await addScan(asset, 'port');
    await ingest(s1, [openPort(3389, { severity: 'high' })]);
    const [f] = await findingsOf(asset);
    const res = await owner.post(`/api/v1/tenants/${tenant}/findings/status`, {
      ids: [f!.id],
      status: 'accepted_risk',
      reason: 'jump host, firewalled',
      expiresAt: new Date(clock.now().getTime() + 2 * DAY).toISOString(),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await findingsOf(asset))[0]).toMatchObject({ status: 'accepted_risk' });
    offset += 3 * DAY;
    // Read paths apply the expiry (no scheduler needed); so does the next ingest.
    const detail = (await owner.get(`/api/v1/tenants/${tenant}/findings/${f!.id}`)).json() as {
      finding: { status: string; statusExpiresAt: string | null };
      history: { event: string }[];
    };
    expect(detail.finding).toMatchObject({ status: 'open', statusExpiresAt: null });
    expect(detail.history.map((h) => h.event)).toEqual(['risk_expired', 'status_changed', 'created']);
  });
});

describe('scope of a chunk', () => {
  it('lets a port-slice chunk close only findings inside its slice', async () => {
    const asset = await addAsset();
    const full = await addScan(asset, 'port');
    await ingest(full, [openPort(22), openPort(443), openPort(8080), openPort(40000)]);
    const parent = await addScan(asset, 'port');
    const c0 = await addScan(asset, 'port', {
      parentId: parent,
      index: 0,
      spec: { kind: 'port', range: { from: 1, to: 1024 } },
    });
    const r0 = await ingest(c0, [openPort(22)]);
    expect(r0).toMatchObject({ scopeKey: 'ports:1-1024', fixed: 1 });
    let status = Object.fromEntries((await findingsOf(asset)).map((r) => [r.port, r.status]));
    expect(status).toEqual({ 22: 'open', 443: 'fixed', 8080: 'open', 40000: 'open' });
    const c1 = await addScan(asset, 'port', {
      parentId: parent,
      index: 1,
      spec: { kind: 'port', range: { from: 1025, to: 65535 } },
    });
    expect(await ingest(c1, [openPort(40000)])).toMatchObject({ scopeKey: 'ports:1025-65535', fixed: 1 });
    status = Object.fromEntries((await findingsOf(asset)).map((r) => [r.port, r.status]));
    expect(status).toEqual({ 22: 'open', 443: 'fixed', 8080: 'fixed', 40000: 'open' });
  });

  it('closes by severity bucket for template chunks, and only the same slice with tags', async () => {
    const asset = await addAsset();
    const tpl = (ruleId: string, severity: 'critical' | 'high' | 'medium') =>
      webFinding(ruleId, `https://t-${RUN}.example.test/`, { severity });
    const full = await addScan(asset, 'template');
    await ingest(full, [tpl('cve-a', 'critical'), tpl('exposed-git', 'high'), tpl('weak-cipher', 'medium')]);
    const parent = await addScan(asset, 'template');
    const hi = await addScan(asset, 'template', {
      parentId: parent,
      index: 0,
      spec: { kind: 'template', severities: ['critical', 'high'], tags: [], templateIds: [] },
    });
    expect(await ingest(hi, [tpl('cve-a', 'critical')])).toMatchObject({ fixed: 1 });
    const status = Object.fromEntries((await findingsOf(asset)).map((r) => [r.rule_id, r.status]));
    expect(status).toEqual({ 'cve-a': 'open', 'exposed-git': 'fixed', 'weak-cipher': 'open' });
    // A tag-filtered bucket says nothing about templates outside its tags.
    const tagged = await addScan(asset, 'template', {
      parentId: parent,
      index: 1,
      spec: { kind: 'template', severities: ['medium'], tags: ['tls'], templateIds: [] },
    });
    expect(await ingest(tagged, [])).toMatchObject({ fixed: 0 });
  });

  it('lets a web-app path chunk close only what the same slice reported, and partial results close nothing', async () => {
    const asset = await addAsset();
    const site = `https://w-${RUN}.example.test`;
    const parent = await addScan(asset, 'webapp');
    const spec0 = { kind: 'webapp', paths: ['/', '/api'], profile: 'baseline', passiveBaseline: true };
    const spec1 = { kind: 'webapp', paths: ['/admin'], profile: 'baseline', passiveBaseline: false };
    await ingest(await addScan(asset, 'webapp', { parentId: parent, index: 0, spec: spec0 }), [
      webFinding('cookie-no-httponly', `${site}/admin/login`),
      webFinding('missing-csp', `${site}/`),
    ]);
    await ingest(await addScan(asset, 'webapp', { parentId: parent, index: 1, spec: spec1 }), [
      webFinding('directory-listing', `${site}/admin/files/`),
    ]);
    const parent2 = await addScan(asset, 'webapp');
    // Chunk 1 again, finding nothing: it closes its own finding, not chunk 0's finding under /admin.
    expect(
      await ingest(await addScan(asset, 'webapp', { parentId: parent2, index: 1, spec: spec1 }), []),
    ).toMatchObject({ fixed: 1 });
    const status = Object.fromEntries((await findingsOf(asset)).map((r) => [r.rule_id, r.status]));
    expect(status).toEqual({ 'cookie-no-httponly': 'open', 'directory-listing': 'fixed', 'missing-csp': 'open' });
    // An explicit scope of partial results closes nothing; a full scan closes the rest.
    expect(await ingest(await addScan(asset, 'webapp'), [], { kind: 'none' })).toMatchObject({
      scopeKey: 'none',
      fixed: 0,
    });
    expect(await ingest(await addScan(asset, 'webapp'), [])).toMatchObject({ scopeKey: 'full', fixed: 2 });
  });

  it('lets a filtered whole scan close only what its filters covered', async () => {
    const asset = await addAsset();
    const tpl = (ruleId: string, severity: 'critical' | 'high' | 'medium') =>
      webFinding(ruleId, `https://f-${RUN}.example.test/`, { severity });
    await ingest(await addScan(asset, 'template'), [
      tpl('cve-a', 'critical'),
      tpl('exposed-git', 'high'),
      tpl('weak-cipher', 'medium'),
    ]);
    // Only critical templates this time: the high and medium findings were not looked at.
    expect(
      await ingest(
        await addScan(asset, 'template', undefined, { severities: ['critical'], tags: [], templateIds: [] }),
        [],
      ),
    ).toMatchObject({ scopeKey: 'severities:critical', fixed: 1 });
    const status = Object.fromEntries((await findingsOf(asset)).map((r) => [r.rule_id, r.status]));
    expect(status).toEqual({ 'cve-a': 'fixed', 'exposed-git': 'open', 'weak-cipher': 'open' });

    const img = await addAsset();
    const vuln = (id: string, severity: 'high' | 'low') => ({
      ruleId: id,
      title: id,
      severity,
      location: { package: 'openssl', version: '3.0.1' },
      discriminator: 'Debian:openssl',
    });
    await ingest(await addScan(img, 'container'), [vuln('CVE-2024-0001', 'high'), vuln('CVE-2024-0002', 'low')]);
    // A threshold of high leaves the low finding alone; leaving out unfixed ones closes nothing it did not report before.
    expect(
      await ingest(await addScan(img, 'container', undefined, { severityThreshold: 'high', ignoreUnfixed: false }), [
        vuln('CVE-2024-0001', 'high'),
      ]),
    ).toMatchObject({ fixed: 0 });
    expect(
      await ingest(await addScan(img, 'container', undefined, { severityThreshold: 'low', ignoreUnfixed: true }), []),
    ).toMatchObject({ fixed: 0 });
    expect(
      await ingest(await addScan(img, 'container', undefined, { severityThreshold: 'info', ignoreUnfixed: false }), []),
    ).toMatchObject({ scopeKey: 'full', fixed: 2 });
  });

  it('does not close another scanner’s findings on the same asset', async () => {
    const asset = await addAsset();
    await ingest(await addScan(asset, 'port'), [openPort(22)]);
    await ingest(await addScan(asset, 'edge'), [
      webFinding('tls-expired', `https://e-${RUN}.example.test/`, { severity: 'high' }),
    ]);
    await ingest(await addScan(asset, 'port'), []);
    const status = Object.fromEntries((await findingsOf(asset)).map((r) => [r.scanner, r.status]));
    expect(status).toEqual({ port: 'fixed', edge: 'open' });
  });
});

describe('SLA due dates', () => {
  it('sets due dates from the tenant settings per severity, and follows changes of the policy', async () => {
    const asset = await addAsset();
    const s1 = await addScan(asset, 'template');
    const sev = ['critical', 'high', 'medium', 'low', 'info'] as const;
    await ingest(
      s1,
      sev.map((s) => webFinding(`rule-${s}`, `https://s-${RUN}.example.test/`, { severity: s })),
    );
    const due = async () =>
      Object.fromEntries(
        (await findingsOf(asset)).map((r) => [
          r.severity,
          r.sla_due_at
            ? Math.round((new Date(r.sla_due_at).getTime() - new Date(r.first_seen_at).getTime()) / DAY)
            : null,
        ]),
      );
    expect(await due()).toEqual({ critical: 7, high: 30, medium: 90, low: 120, info: null });

    const settings = (await owner.get(`/api/v1/tenants/${tenant}/settings`)).json() as Record<string, unknown>;
    expect(settings.slaDays).toEqual({ critical: 7, high: 30, medium: 90, low: 120 });
    const put = await owner.put(`/api/v1/tenants/${tenant}/settings`, {
      dailyScanQuota: 200,
      perAssetConcurrentScans: 1,
      slaDays: { critical: 2, high: 14, medium: 60, low: 90 },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({ slaDays: { critical: 2, high: 14, medium: 60, low: 90 } });
    expect(await due()).toEqual({ critical: 2, high: 14, medium: 60, low: 90, info: null });
    // Left out of the body: unchanged.
    expect(
      (
        await owner.put(`/api/v1/tenants/${tenant}/settings`, { dailyScanQuota: 150, perAssetConcurrentScans: 1 })
      ).json(),
    ).toMatchObject({ dailyScanQuota: 150, slaDays: { critical: 2 } });
    for (const bad of [
      { critical: 0, high: 1, medium: 1, low: 1 },
      { critical: 1, high: 1, medium: 1 },
      { critical: 1.5, high: 1, medium: 1, low: 1 },
      { critical: 1, high: 1, medium: 1, low: 4000 },
    ]) {
      const res = await owner.put(`/api/v1/tenants/${tenant}/settings`, {
        dailyScanQuota: 150,
        perAssetConcurrentScans: 1,
        slaDays: bad,
      });
      expect([res.statusCode, res.json().error], JSON.stringify(bad)).toEqual([400, 'validation_failed']);
    }
    // New findings use the current policy.
    const asset2 = await addAsset();
    await ingest(await addScan(asset2, 'template'), [
      webFinding('rule-new', `https://s2-${RUN}.example.test/`, { severity: 'critical' }),
    ]);
    const [fresh] = await findingsOf(asset2);
    expect(new Date(fresh!.sla_due_at!).getTime() - new Date(fresh!.first_seen_at).getTime()).toBe(2 * DAY);
    await owner.put(`/api/v1/tenants/${tenant}/settings`, {
      dailyScanQuota: 200,
      perAssetConcurrentScans: 1,
      slaDays: { critical: 7, high: 30, medium: 90, low: 120 },
    });
  });
});

describe('finding.critical', () => {
  it('is reported once per new critical finding, through the outbox, and again when one comes back later', async () => {
    const asset = await addAsset();
    const crit = (port: number) =>
      openPort(port, { ruleId: 'exposed-redis', title: 'Unauthenticated Redis', severity: 'critical' });
    const s1 = await addScan(asset, 'port');
    const r1 = await ingest(s1, [crit(6379), crit(6380), openPort(22, { severity: 'high' })]);
    expect(r1.criticalReported).toBe(2);
    let reports = await criticalReports(asset);
    expect(reports).toHaveLength(2);
    const ids = (await findingsOf(asset)).filter((r) => r.severity === 'critical').map((r) => r.id);
    expect(reports.map((r) => (r.payload as { data: { findingId: string } }).data.findingId).sort()).toEqual(
      ids.sort(),
    );
    expect(reports[0]!.payload).toMatchObject({
      kind: 'finding.critical',
      severity: 'critical',
      brand: 'rampart',
      title: expect.stringContaining('Unauthenticated Redis on h'),
    });

    await ingest(s1, [crit(6379), crit(6380)]); // replay
    await ingest(await addScan(asset, 'port'), [crit(6379), crit(6380), openPort(22, { severity: 'high' })]); // seen again
    expect(await criticalReports(asset)).toHaveLength(2);

    // Fixed, then back within the 5-minute window: the reporter folds it; later it is reported again.
    await ingest(await addScan(asset, 'port'), [crit(6379)]);
    await ingest(await addScan(asset, 'port'), [crit(6379), crit(6380)]);
    expect(await criticalReports(asset)).toHaveLength(2);
    await ingest(await addScan(asset, 'port'), [crit(6379)]);
    offset += 10 * 60_000;
    await ingest(await addScan(asset, 'port'), [crit(6379), crit(6380)]);
    reports = await criticalReports(asset);
    expect(reports).toHaveLength(3);
    // An existing open finding raised to critical is reported too.
    await ingest(await addScan(asset, 'port'), [crit(6379), crit(6380), openPort(22, { severity: 'critical' })]);
    expect(await criticalReports(asset)).toHaveLength(4);
  });

  it('rolls back with the ingest: a failed ingest leaves neither findings nor reports', async () => {
    const asset = await addAsset();
    const scan = await addScan(asset, 'port');
    // Valid findings but an invalid scope: refused before anything is written.
    await expect(
      ingest(scan, [openPort(1, { severity: 'critical' })], { kind: 'ports', ranges: [] } as unknown as IngestScope),
    ).rejects.toThrow();
    expect(await findingsOf(asset)).toEqual([]);
    expect(await criticalReports(asset)).toEqual([]);
    // The scan can still be ingested afterwards.
    expect(await ingest(scan, [openPort(1, { severity: 'critical' })])).toMatchObject({
      created: 1,
      criticalReported: 1,
    });
  });
});

describe('validation and limits', () => {
  it('refuses malformed findings, caps evidence and redacts credentials in it', async () => {
    const asset = await addAsset();
    const scan = await addScan(asset, 'webapp');
    for (const bad of [
      { ...webFinding('x', 'https://a.example.test/'), severity: 'severe' },
      { ...webFinding('x', 'https://a.example.test/'), cve: ['CVE-24-1'] },
      { ...webFinding('x', 'https://a.example.test/'), ruleId: '' },
      { ...webFinding('x', 'https://a.example.test/'), references: ['javascript:alert(1)'] },
      { ...webFinding('x', 'https://a.example.test/'), location: { port: 70000 } },
      { ...webFinding('x', 'https://a.example.test/'), unknownField: 1 },
    ])
      await expect(ingest(scan, [bad as NormalizedFindingInput]), JSON.stringify(bad)).rejects.toMatchObject({
        name: 'ZodError',
      });
    expect(await findingsOf(asset)).toEqual([]);

    const big = 'A'.repeat(100_000);
    await ingest(scan, [
      webFinding('sqli', 'https://a.example.test/search?q=1', {
        severity: 'high',
        cwe: ['CWE-89', 89],
        cve: ['cve-2024-0001'],
        location: { url: 'https://a.example.test/search?q=1', param: 'q' },
        evidence: {
          request: `GET /search?q=1 HTTP/1.1\r\nHost: a.example.test\r\nAuthorization: Bearer sekret-token-123\r\nCookie: sid=abc\r\n`,
          response: big,
          curl: "curl -H 'X-Api-Key: k-999' https://a.example.test/",
        },
      }),
    ]);
    const [row] = await findingsOf(asset);
    const ev = row!.evidence as { request: string; response: string; curl: string };
    expect(ev.request).not.toContain('sekret-token-123');
    expect(ev.request).toContain('Authorization: [redacted]');
    expect(ev.request).not.toContain('sid=abc');
    expect(ev.curl).not.toContain('k-999');
    expect(ev.response.length).toBeLessThanOrEqual(32_768);
    expect(ev.response).toMatch(/\[truncated by Rampart\]$/);
    expect(row).toMatchObject({
      cwe_ids: [89],
      cve_ids: ['CVE-2024-0001'],
      location_text: 'https://a.example.test/search [q]',
      path: '/search',
      port: 443,
    });
  });

  it('stores raw answers holding NUL characters (a binary body quoted as evidence) with U+FFFD instead', async () => {
    const asset = await addAsset();
    const scan = await addScan(asset, 'template');
    await ingest(scan, [
      webFinding('backup-zip', 'https://a.example.test/backup.zip', {
        title: 'Backup\u0000 archive',
        evidence: { response: 'HTTP/1.1 200 OK\r\n\r\nPK\u0003\u0004\u0014\u0000', extracted: ['a\u0000b'] },
      }),
    ]);
    const [row] = await findingsOf(asset);
    expect(row!.title).toBe('Backup\uFFFD archive');
    expect((row!.evidence as { extracted: string[]; response: string }).extracted).toEqual(['a\uFFFDb']);
    expect((row!.evidence as { response: string }).response).toContain('PK\u0003\u0004\u0014\uFFFD');
  });

  it('ingests large reports in batches', async () => {
    const asset = await addAsset();
    const many = Array.from({ length: 1_234 }, (_, i) => openPort(i + 1));
    const r = await ingest(await addScan(asset, 'port'), many);
    expect(r).toMatchObject({ created: 1_234, distinct: 1_234 });
    const r2 = await ingest(await addScan(asset, 'port'), many.slice(0, 1_000));
    expect(r2).toMatchObject({ created: 0, seen: 1_000, fixed: 234 });
    const count = await withService(t.database.db, (tx) =>
      tx
        .selectFrom('findings')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('asset_id', '=', asset)
        .where('status', '=', 'open')
        .executeTakeFirstOrThrow(),
    );
    expect(Number(count.n)).toBe(1_000);
  });
});
