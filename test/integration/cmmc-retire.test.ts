// CMMC program, retiring a computer: out of the score, exports and staff counts until it sends a
// new run, only with a reason; un-retire; owners and admins only; audited. Device coverage against
// the Scope's number of computers (runs and computer attestations), and retired computers with
// their reasons in the frozen SPRS snapshot. Runs on PGlite and, with DATABASE_URL, on PostgreSQL.
import { describe, expect, it } from 'vitest';
import { checkIdsFor } from '../../src/cmmc/index.ts';
import { withService } from '../../src/db/tenant.ts';
import { STAFF_DOMAIN } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { DAY, setupCmmcProgramApp } from '../helpers/cmmc-program.ts';
import { bootstrapStaff } from '../helpers/staff.ts';

const {
  t,
  clock,
  tenantWithProfile,
  postRun,
  answerAll,
  approveAll,
  score,
  addUser,
  confirmBody,
  run: RUN,
} = setupCmmcProgramApp();

type Coverage = { declared: number | null; covered: number; attested: number; known: number; unaccounted: number };
type CoverageScore = Omit<Awaited<ReturnType<typeof score>>, 'requirements'> & {
  devices: { coverage: Coverage };
  requirements: { requirementId: string; status: string; coverage: Coverage | null }[];
};

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
    expect((await retire(owner, 'NO-SUCH-PC', 'Gone')).json()).toMatchObject({ error: 'cmmc_device_not_found' });
    // No reason, a blank one: refused with its own code, nothing changes.
    const noReason = await retire(owner, 'Old MacBook (2)');
    expect(noReason.statusCode).toBe(400);
    expect(noReason.json()).toMatchObject({ error: 'cmmc_retire_reason_required' });
    expect(
      (await owner.post(`${base}/devices/retire`, { hostname: 'Old MacBook (2)', reason: '   ' })).json(),
    ).toMatchObject({ error: 'cmmc_retire_reason_required' });
    expect((await score(owner, base)).met).toBeLessThan(15);
    expect((await owner.post(`${base}/devices/retire`, { hostname: '' })).statusCode).toBe(400);
    const done = await retire(owner, 'old macbook (2)', 'Replaced by PC-NEW');
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({
      hostname: 'Old MacBook (2)',
      retired: { byEmail: expect.any(String), note: 'Replaced by PC-NEW' },
    });
    expect((await retire(owner, 'Old MacBook (2)', 'Again')).json()).toMatchObject({
      error: 'cmmc_device_retire_conflict',
    });

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
    expect(
      (await owner.post(`${base}/devices/retire`, { hostname: 'Old MacBook (2)', reason: 'Back in the drawer' }))
        .statusCode,
    ).toBe(200);
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

describe('device coverage against Scope', () => {
  it('counts every in-scope computer: 5 of 6 is NOT MET, an attestation covers one, 6 of 6 is MET; a drop after the confirmation makes the profile not compliant, and the SPRS snapshot lists retired computers with their reasons', async () => {
    clock.reset();
    const { owner, tenant, base, cageCode } = await tenantWithProfile('cover', { deviceCount: 6 });
    const member = await addUser(tenant, 'cover-member', 'member');
    expect(
      ((await owner.get(`${base}/profile`)).json() as { profile: { deviceCount: number } }).profile.deviceCount,
    ).toBe(6);
    await approveAll(owner, base);
    await answerAll(owner, base);
    for (const h of ['PC-1', 'PC-2', 'PC-3']) await postRun(owner, base, 'windows', h);
    for (const h of ['Mac 4', 'Mac 5']) await postRun(owner, base, 'macos', h);

    // 5 passing computers of the 6 Scope declares: every requirement with device checks is NOT MET.
    let s = (await score(owner, base)) as unknown as CoverageScore;
    const deviceReqs = s.requirements.filter((r) => r.coverage !== null);
    expect(deviceReqs.length).toBeGreaterThan(0);
    expect(s.met).toBe(15 - deviceReqs.length);
    for (const r of deviceReqs)
      expect(r).toMatchObject({
        status: 'NOT_MET',
        coverage: { declared: 6, covered: 5, attested: 0, known: 5, unaccounted: 1 },
      });
    expect(s.devices.coverage).toMatchObject({ declared: 6, covered: 5, unaccounted: 1 });
    expect((await owner.get(`${base}/export/controls.csv`)).body).toContain('computers_unaccounted:1_of_6');
    expect(((await member.c.get(`${base}/devices`)).json() as { declaredDevices: number }).declaredDevices).toBe(6);

    // An attestation for the computer that cannot run the script covers it; members cannot attest.
    const statement = 'Checked by hand on 2026-11-20 by Alice: Defender on, firewall on, updates current.';
    expect((await member.c.post(`${base}/devices/attest`, { hostname: 'Shop floor PC', statement })).statusCode).toBe(
      403,
    );
    expect(
      (await owner.post(`${base}/devices/attest`, { hostname: 'Shop floor PC', statement: 'ok' })).json(),
    ).toMatchObject({ error: 'validation_failed' });
    const attested = await owner.post(`${base}/devices/attest`, { hostname: 'Shop floor PC', statement });
    expect(attested.statusCode, attested.body).toBe(200);
    expect(attested.json()).toMatchObject({ hostname: 'Shop floor PC', statement, current: true });
    s = (await score(owner, base)) as unknown as CoverageScore;
    expect(s.met, JSON.stringify(s.requirements.filter((r) => r.status === 'NOT_MET'))).toBe(15);
    expect(s.devices.coverage).toMatchObject({ declared: 6, covered: 6, attested: 1, unaccounted: 0 });
    expect(((await member.c.get(`${base}/devices`)).json() as { attestations: unknown[] }).attestations).toMatchObject([
      { hostname: 'Shop floor PC', current: true },
    ]);

    // An attestation never covers a computer whose current run fails.
    clock.set(new Date(clock.at.getTime() + 60_000)); // a later run than PC-1's first
    await postRun(owner, base, 'windows', 'PC-1', {
      ...Object.fromEntries(checkIdsFor('windows').map((id) => [id, 'pass'])),
      'win.firewall_enabled': 'fail',
    });
    expect((await owner.post(`${base}/devices/attest`, { hostname: 'pc-1', statement })).statusCode).toBe(200);
    expect((await score(owner, base)).met).toBeLessThan(15);
    expect((await owner.post(`${base}/devices/attest/withdraw`, { hostname: 'PC-1' })).statusCode).toBe(200);
    clock.set(new Date(clock.at.getTime() + 60_000)); // the fixed run is the later one
    await postRun(owner, base, 'windows', 'PC-1');

    // Withdrawn: 5 of 6 again; a sixth passing run makes it 6 of 6.
    expect((await owner.post(`${base}/devices/attest/withdraw`, { hostname: 'shop floor pc' })).json()).toEqual({
      withdrawn: true,
    });
    expect((await owner.post(`${base}/devices/attest/withdraw`, { hostname: 'Shop floor PC' })).json()).toMatchObject({
      error: 'cmmc_device_not_found',
    });
    expect(((await score(owner, base)) as unknown as CoverageScore).devices.coverage).toMatchObject({
      covered: 5,
      unaccounted: 1,
    });
    await postRun(owner, base, 'windows', 'PC-6');
    s = (await score(owner, base)) as unknown as CoverageScore;
    expect(s.met).toBe(15);
    expect(s.devices.coverage).toMatchObject({ declared: 6, covered: 6, attested: 0, known: 6, unaccounted: 0 });

    // A failing old computer blocks MET until it is retired, with its reason.
    await postRun(owner, base, 'macos', 'Old iMac', {
      ...Object.fromEntries(checkIdsFor('macos').map((id) => [id, 'pass'])),
      'mac.firewall': 'fail',
    });
    expect((await score(owner, base)).met).toBe(14);
    expect((await owner.post(`${base}/devices/retire`, { hostname: 'Old iMac' })).json()).toMatchObject({
      error: 'cmmc_retire_reason_required',
    });
    const reason = 'Sold to an employee on 2026-11-01, disk wiped';
    expect((await owner.post(`${base}/devices/retire`, { hostname: 'Old iMac', reason })).statusCode).toBe(200);
    expect((await score(owner, base)).met).toBe(15);

    const confirmed = await owner.post(`${base}/sprs-confirmation`, confirmBody(cageCode));
    expect(confirmed.statusCode, confirmed.body).toBe(201);
    const snapshot = (await withService(t.database.db, (tx) =>
      tx
        .selectFrom('compliance_handoffs' as never)
        .select('assessment_snapshot' as never)
        .where('tenant_id' as never, '=', tenant as never)
        .executeTakeFirstOrThrow(),
    )) as { assessment_snapshot: unknown };
    const snap = (
      typeof snapshot.assessment_snapshot === 'string'
        ? JSON.parse(snapshot.assessment_snapshot)
        : snapshot.assessment_snapshot
    ) as { retiredComputers: unknown[]; deviceCoverage: Coverage };
    expect(snap.deviceCoverage).toMatchObject({ declared: 6, covered: 6 });
    expect(snap.retiredComputers).toEqual([
      {
        hostname: 'Old iMac',
        os: 'macos',
        lastRunAt: expect.any(String),
        retiredAt: expect.any(String),
        retiredByEmail: expect.any(String),
        reason,
      },
    ]);

    // Retiring one of the six after the confirmation: 5 of 6, and the live status says not compliant.
    expect(
      (await owner.post(`${base}/devices/retire`, { hostname: 'Mac 5', reason: 'Stolen, reported 2026-11-27' }))
        .statusCode,
    ).toBe(200);
    s = (await score(owner, base)) as unknown as CoverageScore & {
      regression: { requirements: { reasons: string[] }[] } | null;
    };
    expect(s.profileStatus).toBe('not_compliant');
    expect(s.devices.coverage).toMatchObject({ declared: 6, covered: 5, unaccounted: 1 });
    expect(JSON.stringify((s as unknown as { regression: unknown }).regression)).toContain('5 of 6 computers covered');
  });
});
