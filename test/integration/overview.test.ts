// The tenant overview (home page): open findings by severity and their 30-day trend, unfinished
// scans with their wait reasons, assets awaiting proof, the CMMC status as of today, and that
// another tenant's rows never count.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService, withTenant } from '../../src/db/tenant.ts';
import type { NormalizedFindingInput } from '../../src/findings/index.ts';
import type { Clock } from '../../src/lib/clock.ts';
import type { Overview } from '../../src/overview/overview-schemas.ts';
import { createTestApp, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { cage } from '../helpers/cmmc-program.ts';
import { ingestFindings } from '../helpers/findings.ts';
import { scanTenant, type ScanTenant } from './scans-fixtures.ts';

const DAY = 86_400_000;
let offset = 0;
const clock: Clock = { now: () => new Date(Date.now() + offset) };
let t: TestApp;
let a: ScanTenant;
let b: ScanTenant;

const finding = (i: number, severity: NormalizedFindingInput['severity']): NormalizedFindingInput => ({
  ruleId: `overview-${i}`,
  title: `Overview finding ${i}`,
  severity,
  location: { host: 'h.example.test', port: 1000 + i },
  evidence: { summary: 'seen' },
});

async function scanAndIngest(tenantId: string, assetId: string, findings: NormalizedFindingInput[]) {
  const scanId = await withTenant(
    t.database.db,
    { tenantId },
    async (tx) =>
      (
        await tx
          .insertInto('scans')
          .values({ tenant_id: tenantId, asset_id: assetId, kind: 'port', status: 'succeeded' })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id,
  );
  await ingestFindings(t.app.services.findingsIngest, { scanId, findings });
}

async function overview(s: ScanTenant): Promise<Overview> {
  const res = await s.owner.get(`${s.base}/overview`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Overview;
}

beforeAll(async () => {
  t = await createTestApp({ deps: { clock } });
  a = await scanTenant(t);
  const other = new Client(t.app);
  await other.signUp(uniqueEmail('overview-b'));
  b = await scanTenant(t, other);
}, 60_000);
afterAll(() => t?.close());

describe('tenant overview', () => {
  it('tells a new tenant it has nothing yet', async () => {
    const o = await overview(a);
    expect(o.findings).toMatchObject({ openTotal: 0, overdue: 0, open: { critical: 0, info: 0 } });
    expect(o.findings.trend).toHaveLength(30);
    expect(o.findings.trend.at(-1)!.day).toBe(clock.now().toISOString().slice(0, 10));
    expect(o.scans).toEqual({ running: 0, queued: 0, active: [] });
    expect(o.assets).toEqual({ total: 0, awaitingProof: 0, pending: [] });
    expect(o.cmmc).toBeNull();
  });

  it("counts the tenant's own findings, scans and assets, never another tenant's", async () => {
    const verified = await a.asset('host', 'verified');
    const pending = await a.asset('host', 'pending');
    // Eight days ago: one finding first seen; today: three more.
    offset = -8 * DAY;
    await scanAndIngest(a.tenantId, verified, [finding(1, 'critical')]);
    offset = 0;
    await scanAndIngest(a.tenantId, verified, [
      finding(1, 'critical'),
      finding(2, 'critical'),
      finding(3, 'high'),
      finding(4, 'low'),
    ]);
    const ids = (await a.owner.get(`${a.base}/findings?severity=critical`))
      .json()
      .findings.map((f: { id: string }) => f.id);
    const fixed = await a.owner.post(`${a.base}/findings/status`, { ids: [ids[0]], status: 'fixed' });
    expect(fixed.statusCode, fixed.body).toBe(200);
    await a.settings(100, 5);
    const queued = (await a.queue({ assetId: verified, kind: 'port' })).scan;
    const running = (await a.queue({ assetId: verified, kind: 'port' })).scan;
    await withService(t.database.db, (tx) =>
      sql`update scans set status = 'running', attempts = 1 where id = ${running.id}`.execute(tx),
    );

    // The other tenant: more of everything, none of which may show in the first one's numbers.
    const bAsset = await b.asset('host', 'verified');
    await b.asset('domain', 'pending');
    await b.asset('domain', 'pending');
    await scanAndIngest(b.tenantId, bAsset, [finding(1, 'critical'), finding(2, 'medium'), finding(3, 'medium')]);
    await b.queue({ assetId: bAsset, kind: 'port' });

    const o = await overview(a);
    expect(o.findings.open).toEqual({ critical: 1, high: 1, medium: 0, low: 1, info: 0 });
    expect(o.findings.openTotal).toBe(3);
    const today = o.findings.trend.at(-1)!;
    expect(today).toMatchObject({ opened: 3, fixed: 1 });
    expect(o.findings.trend.at(-9)).toMatchObject({ opened: 1, fixed: 0 });
    expect(o.findings.trend.reduce((n, d) => n + d.opened, 0)).toBe(4);
    expect(o.scans).toMatchObject({ running: 1, queued: 1 });
    expect(o.scans.active.map((s) => s.id).sort()).toEqual([queued.id, running.id].sort());
    // The queued one says why it waits, as the scans list does; the running one does not.
    expect(o.scans.active.find((s) => s.id === queued.id)!.waitReason?.code).toBe('no_signing_secret');
    expect(o.scans.active.find((s) => s.id === running.id)!.waitReason).toBeNull();
    expect(o.assets).toMatchObject({ total: 2, awaitingProof: 1, pending: [{ id: pending }] });

    const ob = await overview(b);
    expect(ob.findings.open).toEqual({ critical: 1, high: 0, medium: 2, low: 0, info: 0 });
    expect(ob.findings.trend.at(-1)).toMatchObject({ opened: 3, fixed: 0 });
    expect(ob.scans).toMatchObject({ running: 0, queued: 1 });
    expect(ob.assets).toMatchObject({ total: 3, awaitingProof: 2 });

    // Archiving an asset takes its open findings and pending state out of the numbers.
    const archived = await a.owner.post(`${a.base}/assets/${pending}/archive`, {});
    expect(archived.statusCode, archived.body).toBe(200);
    expect((await overview(a)).assets).toMatchObject({ total: 1, awaitingProof: 0, pending: [] });
  });

  it('is for members only, and checks its input', async () => {
    const res = await b.owner.get(`${a.base}/overview`);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: 'tenant_forbidden' });
    const bad = await a.owner.get('/api/v1/tenants/not-a-uuid/overview');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'validation_failed' });
    const anon = await new Client(t.app).get(`${a.base}/overview`);
    expect(anon.statusCode).toBe(401);
  });

  it('shows the CMMC status as of today and the next due date', async () => {
    const put = await a.owner.put(`${a.base}/cmmc/profile`, {
      cageCode: cage(),
      companyName: 'Overview Machining LLC',
      biddingUsers: [{ name: 'Alice Able', email: 'alice@acme.test' }],
      mailPlatform: 'm365',
      affirmingOfficial: { name: 'Alice Able', title: 'President', email: 'alice@acme.test' },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect((await overview(a)).cmmc).toEqual({
      status: 'in_progress',
      statusDate: null,
      nextDue: null,
      daysUntilDue: null,
    });
    // Compliant 340 days ago: renewal is due (computed at read time; no sweep ran), 25 days left.
    const statusDate = new Date(clock.now().getTime() - 340 * DAY).toISOString().slice(0, 10);
    await withService(t.database.db, (tx) =>
      sql`update compliance_profiles set status = 'compliant', status_date = ${statusDate} where tenant_id = ${a.tenantId}::uuid`.execute(
        tx,
      ),
    );
    const cmmc = (await overview(a)).cmmc!;
    expect(cmmc).toMatchObject({ status: 'renewal_due', statusDate, daysUntilDue: 25 });
    expect(cmmc.nextDue).toBe(new Date(Date.parse(`${statusDate}T00:00:00Z`) + 365 * DAY).toISOString().slice(0, 10));
    expect((await overview(b)).cmmc).toBeNull();
  });

  it('is described in the OpenAPI document', async () => {
    const spec = (await t.app.inject('/docs/json')).json() as { paths: Record<string, Record<string, unknown>> };
    const op = spec.paths['/api/v1/tenants/{tenantId}/overview']?.['get'] as { responses: Record<string, unknown> };
    expect(op.responses['200']).toBeDefined();
  });
});
