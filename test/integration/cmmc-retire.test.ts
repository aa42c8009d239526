// CMMC program, retiring a computer: out of the score, exports and staff counts until it sends a
// new run; un-retire; owners and admins only; audited. Runs on PGlite and, with DATABASE_URL, on
// PostgreSQL.
import { describe, expect, it } from 'vitest';
import { checkIdsFor } from '../../src/cmmc/index.ts';
import { withService } from '../../src/db/tenant.ts';
import { STAFF_DOMAIN } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { DAY, setupCmmcProgramApp } from '../helpers/cmmc-program.ts';
import { bootstrapStaff } from '../helpers/staff.ts';

const { t, clock, tenantWithProfile, postRun, answerAll, approveAll, score, addUser, run: RUN } = setupCmmcProgramApp();

describe('retiring a computer', () => {
  it('leaves a retired computer out of the score, exports and staff counts until it sends a new run; un-retire brings it back; owners and admins only, audited', async () => {
    clock.reset();
    const { owner, tenant, base } = await tenantWithProfile('retire', { companyName: `Retire ${RUN} Works` });
    const member = await addUser(tenant, 'retire-member', 'member');
    const stranger = await tenantWithProfile('retire-other');
    await approveAll(owner, base);
    await answerAll(owner, base);
    await postRun(owner, base, 'windows', 'PC-NEW');
    // The old computer's last run is 40 days old: pending, so nothing with device checks is MET.
    clock.set(new Date(Date.now() - 40 * DAY));
    await postRun(owner, base, 'macos', 'Old MacBook (2)');
    clock.reset();
    let s = await score(owner, base);
    expect(s.met).toBeLessThan(15);
    expect(
      s.requirements.some((r) =>
        (r as unknown as { pendingDevices: string[] }).pendingDevices.includes('Old MacBook (2)'),
      ),
    ).toBe(true);

    const retire = (c: Client, hostname: string, note?: string) =>
      c.post(`${base}/devices/retire`, { hostname, ...(note ? { note } : {}) });
    expect((await retire(member.c, 'Old MacBook (2)')).json()).toMatchObject({ error: 'tenant_forbidden' });
    expect((await stranger.owner.post(`${base}/devices/retire`, { hostname: 'Old MacBook (2)' })).statusCode).toBe(403);
    expect((await retire(owner, 'NO-SUCH-PC')).json()).toMatchObject({ error: 'cmmc_device_not_found' });
    expect((await owner.post(`${base}/devices/retire`, { hostname: '' })).statusCode).toBe(400);
    const done = await retire(owner, 'old macbook (2)', 'Replaced by PC-NEW');
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({
      hostname: 'Old MacBook (2)',
      retired: { byEmail: expect.any(String), note: 'Replaced by PC-NEW' },
    });
    expect((await retire(owner, 'Old MacBook (2)')).json()).toMatchObject({ error: 'cmmc_device_retire_conflict' });

    s = await score(owner, base);
    expect(s.met, JSON.stringify(s.requirements.filter((r) => r.status === 'NOT_MET'))).toBe(15);
    const devices = (await member.c.get(`${base}/devices`)).json() as {
      devices: { hostname: string; retired: unknown }[];
    };
    expect(devices.devices.map((d) => [d.hostname, d.retired !== null])).toEqual([
      ['PC-NEW', false],
      ['Old MacBook (2)', true],
    ]);
    const csv = (await owner.get(`${base}/export/controls.csv`)).body;
    expect(csv).not.toContain('Old MacBook');
    const staff = await bootstrapStaff(t, `h7-staff-retire-${RUN}@${STAFF_DOMAIN}`, 'staff');
    const staffRow = async () =>
      (
        (await staff.get(`/api/v1/staff/cmmc/profiles?q=${encodeURIComponent(`Retire ${RUN}`)}`)).json() as {
          profiles: { device_count: number; pendingDevices: number }[];
        }
      ).profiles[0]!;
    expect(await staffRow()).toMatchObject({ device_count: 1, pendingDevices: 0 });

    // Un-retire: it counts again (still pending).
    expect((await owner.post(`${base}/devices/unretire`, { hostname: 'Old MacBook (2)' })).json()).toMatchObject({
      retired: null,
    });
    expect((await owner.post(`${base}/devices/unretire`, { hostname: 'Old MacBook (2)' })).json()).toMatchObject({
      error: 'cmmc_device_retire_conflict',
    });
    expect((await score(owner, base)).met).toBeLessThan(15);
    expect(await staffRow()).toMatchObject({ device_count: 2, pendingDevices: 1 });

    // Retired again, then a new run from that hostname: it is in use, so it counts again (current now).
    expect((await retire(owner, 'Old MacBook (2)')).statusCode).toBe(200);
    await postRun(owner, base, 'macos', 'OLD MACBOOK (2)', {
      ...Object.fromEntries(checkIdsFor('macos').map((id) => [id, 'pass'])),
      'mac.firewall': 'fail',
    });
    const back = (
      (await owner.get(`${base}/devices`)).json() as {
        devices: { hostname: string; retired: unknown; pending: boolean }[];
      }
    ).devices.find((d) => d.hostname === 'OLD MACBOOK (2)')!;
    expect(back).toMatchObject({ retired: null, pending: false });
    s = await score(owner, base);
    expect(s.met).toBe(14);
    expect(s.requirements.find((r) => r.status === 'NOT_MET')!.requirementId).toBe('SC.L1-b.1.x');

    const audit = await withService(t.database.db, (tx) =>
      tx
        .selectFrom('audit_log')
        .select(['action', 'details'])
        .where('tenant_id', '=', tenant)
        .where('action', 'in', ['cmmc.device_retired', 'cmmc.device_unretired'])
        .orderBy('id')
        .execute(),
    );
    expect(audit.map((a) => a.action)).toEqual(['cmmc.device_retired', 'cmmc.device_unretired', 'cmmc.device_retired']);
    expect(JSON.stringify(audit[0]!.details)).toContain('Replaced by PC-NEW');
  });
});
