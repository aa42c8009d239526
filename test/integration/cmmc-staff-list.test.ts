// CMMC program, the staff list (listCmmcProfilesStaff): device fields, the six tiles, filters,
// search and order; staff only. Runs on PGlite and, with DATABASE_URL, on PostgreSQL.
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { checkIdsFor } from '../../src/cmmc/index.ts';
import { withService } from '../../src/db/tenant.ts';
import { STAFF_DOMAIN } from '../helpers/app.ts';
import { DAY, setupCmmcProgramApp } from '../helpers/cmmc-program.ts';
import { bootstrapStaff } from '../helpers/staff.ts';

const { t, clock, tenantWithProfile, postRun, run: RUN } = setupCmmcProgramApp();

describe('staff list', () => {
  it('lists profiles with device fields and the six tiles, filters, searches and sorts by CAGE code; staff only', async () => {
    clock.reset();
    const a = await tenantWithProfile('staff-a', { companyName: `Staffa ${RUN} Alpha` });
    await postRun(a.owner, a.base, 'windows', 'PC-1', {
      ...Object.fromEntries(checkIdsFor('windows').map((id) => [id, 'pass'])),
      'win.rdp_disabled': 'fail',
    });
    const b = await tenantWithProfile('staff-b', { companyName: `Staffa ${RUN} Beta` });
    const staff = await bootstrapStaff(t, `h7-staff-${RUN}@${STAFF_DOMAIN}`, 'staff');
    const res = await staff.get(`/api/v1/staff/cmmc/profiles?q=${encodeURIComponent(`Staffa ${RUN}`)}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as {
      tiles: Record<string, number>;
      total: number;
      profiles: {
        cageCode: string;
        companyName: string;
        device_link_issued: boolean;
        device_count: number;
        failing_devices: number;
      }[];
    };
    expect(Object.keys(body.tiles).sort()).toEqual([
      'compliant',
      'customers',
      'devicesPending',
      'expired',
      'inProgress',
      'renewingSoon',
    ]);
    expect(body.total).toBe(2);
    expect(body.profiles.map((p) => p.cageCode)).toEqual([a.cageCode, b.cageCode].sort());
    const pa = body.profiles.find((p) => p.cageCode === a.cageCode)!;
    expect(pa).toMatchObject({ device_link_issued: true, device_count: 1, failing_devices: 1 });
    expect(body.profiles.find((p) => p.cageCode === b.cageCode)).toMatchObject({
      device_link_issued: false,
      device_count: 0,
      failing_devices: 0,
    });
    const byCage = (await staff.get(`/api/v1/staff/cmmc/profiles?q=${b.cageCode.toLowerCase()}`)).json() as {
      profiles: { cageCode: string }[];
    };
    expect(byCage.profiles.map((p) => p.cageCode)).toContain(b.cageCode);
    const pending = (
      await staff.get(`/api/v1/staff/cmmc/profiles?filter=devices_pending&q=${encodeURIComponent(`Staffa ${RUN}`)}`)
    ).json() as { profiles: { cageCode: string }[] };
    expect(pending.profiles.map((p) => p.cageCode)).toEqual([b.cageCode]);
    const compliant = (
      await staff.get(`/api/v1/staff/cmmc/profiles?filter=compliant&q=${encodeURIComponent(`Staffa ${RUN}`)}`)
    ).json() as { profiles: unknown[] };
    expect(compliant.profiles).toEqual([]);
    expect((await staff.get('/api/v1/staff/cmmc/profiles?filter=bogus')).statusCode).toBe(400);
    expect((await a.owner.get('/api/v1/staff/cmmc/profiles')).statusCode).toBe(403);
  });

  it('counts a computer whose latest run is stale as failing, even when that run passed', async () => {
    const tag = `Stalea ${RUN}`;
    const a = await tenantWithProfile('staff-stale', { companyName: `${tag} Alpha` });
    const allPass = Object.fromEntries(checkIdsFor('windows').map((id) => [id, 'pass']));
    clock.set(new Date(Date.now() - 40 * DAY));
    await postRun(a.owner, a.base, 'windows', 'OLD-PASS', allPass);
    await postRun(a.owner, a.base, 'windows', 'OLD-FAIL', { ...allPass, 'win.rdp_disabled': 'fail' });
    clock.reset();
    await postRun(a.owner, a.base, 'windows', 'NEW-PASS', allPass);
    await postRun(a.owner, a.base, 'windows', 'NEW-FAIL', { ...allPass, 'win.rdp_disabled': 'fail' });
    const staff = await bootstrapStaff(t, `h7-staff-stale-${RUN}@${STAFF_DOMAIN}`, 'staff');
    const res = await staff.get(`/api/v1/staff/cmmc/profiles?q=${encodeURIComponent(tag)}`);
    expect(res.statusCode, res.body).toBe(200);
    const [p] = (res.json() as { profiles: Record<string, unknown>[] }).profiles;
    // OLD-PASS and OLD-FAIL are stale, NEW-FAIL fails: three of four; NEW-PASS alone is fine.
    expect(p).toMatchObject({ device_count: 4, failing_devices: 3, pendingDevices: 2 });
  });

  it('filters expired and renewing-soon profiles (status date 340 days ago) and counts them in the tiles', async () => {
    clock.reset();
    const tag = `Renewa ${RUN}`;
    const expired = await tenantWithProfile('staff-expired', { companyName: `${tag} Expired` });
    const renewing = await tenantWithProfile('staff-renewing', { companyName: `${tag} Renewing` });
    const recent = await tenantWithProfile('staff-recent', { companyName: `${tag} Recent` });
    const progress = await tenantWithProfile('staff-progress', { companyName: `${tag} Progress` });
    const ago = (days: number) => new Date(clock.at.getTime() - days * DAY).toISOString().slice(0, 10);
    const seed = (tenant: string, status: string, statusDate: string) =>
      withService(t.database.db, (tx) =>
        sql`update compliance_profiles set status = ${status}, status_date = ${statusDate}::date where tenant_id = ${tenant}::uuid`.execute(
          tx,
        ),
      );
    const staff = await bootstrapStaff(t, `h7-staff-renew-${RUN}@${STAFF_DOMAIN}`, 'staff');
    const tilesBefore = ((await staff.get('/api/v1/staff/cmmc/profiles')).json() as { tiles: Record<string, number> })
      .tiles;
    await seed(expired.tenant, 'expired', ago(400));
    await seed(renewing.tenant, 'compliant', ago(340));
    await seed(recent.tenant, 'compliant', ago(10));
    const list = async (filter: string) => {
      const res = await staff.get(`/api/v1/staff/cmmc/profiles?filter=${filter}&q=${encodeURIComponent(tag)}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as {
        total: number;
        tiles: Record<string, number>;
        profiles: { cageCode: string; status: string; statusDate: string | null; renewalDueAt: string | null }[];
      };
    };
    const exp = await list('expired');
    expect(exp.profiles.map((p) => p.cageCode)).toEqual([expired.cageCode]);
    expect(exp.profiles[0]).toMatchObject({ status: 'expired', statusDate: ago(400) });
    const soon = await list('renewing_soon');
    expect(soon.total).toBe(1);
    expect(soon.profiles[0]).toMatchObject({
      cageCode: renewing.cageCode,
      // Day 340 of the cycle: renewal due as of today, though the sweep never ran.
      status: 'renewal_due',
      statusDate: ago(340),
      renewalDueAt: new Date(Date.parse(`${ago(340)}T00:00:00Z`) + 365 * DAY).toISOString().slice(0, 10),
    });
    expect((await list('compliant')).profiles.map((p) => p.cageCode)).toEqual([recent.cageCode]);
    expect((await list('in_progress')).profiles.map((p) => p.cageCode)).toEqual([progress.cageCode]);
    expect((await list('all')).total).toBe(4);
    // The tiles count every profile (not only the search), so the seeded ones moved them (at least
    // by one: test files running in parallel on one PostgreSQL database add profiles too).
    const tiles = exp.tiles;
    expect(tiles.expired! - tilesBefore.expired!).toBeGreaterThanOrEqual(1);
    expect(tiles.renewingSoon! - tilesBefore.renewingSoon!).toBeGreaterThanOrEqual(1);
    expect(tiles.compliant! - tilesBefore.compliant!).toBeGreaterThanOrEqual(1);
  });
});
