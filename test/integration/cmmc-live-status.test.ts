// CMMC program, the status as it is every day: computed from the cycle's dates at read time
// (score page, profile, cmmc_status, staff list) with no sweep at all, and the server's own daily
// sweep, once per UTC day across replicas; the live status after the confirmation (regression and
// recovery, who is told). Runs on PGlite and, with DATABASE_URL, on PostgreSQL.
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { ATTESTATION_ITEMS, checkIdsFor } from '../../src/cmmc/index.ts';
import { withService } from '../../src/db/tenant.ts';
import { startBackgroundJobs } from '../../src/server/background.ts';
import { STAFF_DOMAIN } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { BID_SECRET, DAY, setupCmmcProgramApp } from '../helpers/cmmc-program.ts';
import { dispatch } from '../helpers/mesh.ts';
import { bootstrapStaff } from '../helpers/staff.ts';

const suite = setupCmmcProgramApp();
const { t, clock, tenantWithProfile, postRun, answerAll, approveAll, confirmBody, outboxFor, run: RUN } = suite;

/**
 * A cycle start years in the past, different per run: the sweep looks at every profile of the
 * database, and PostgreSQL is shared between suites (and between runs of this one).
 */
function pastStart(): Date {
  const start = new Date(Date.now() - (1500 + Math.floor(Math.random() * 3000)) * DAY);
  start.setUTCHours(12, 0, 0, 0);
  return start;
}

async function compliantProfile(label: string) {
  const p = await tenantWithProfile(label, { companyName: `${label} ${RUN} LLC` });
  await postRun(p.owner, p.base, 'windows', 'PC-1');
  await answerAll(p.owner, p.base);
  await approveAll(p.owner, p.base);
  const res = await p.owner.post(`${p.base}/sprs-confirmation`, confirmBody(p.cageCode));
  expect(res.statusCode, res.body).toBe(201);
  return p;
}

const storedStatus = async (cageCode: string) =>
  (
    await withService(t.database.db, (tx) =>
      sql<{ status: string }>`select status from compliance_profiles where cage_code = ${cageCode}`.execute(tx),
    )
  ).rows[0]!.status;

describe('status from dates at read time', () => {
  it('shows renewal due on day 335 and expired on day 365 everywhere, with no sweep and no hook call', async () => {
    const start = clock.set(pastStart());
    const { owner, base, cageCode } = await compliantProfile('dates');
    const staff = await bootstrapStaff(t, `live-staff-${RUN}@${STAFF_DOMAIN}`, 'staff');
    const seen = async () => {
      const status = await dispatch(t.app, {
        caller: suite.bid,
        secret: BID_SECRET,
        body: { flow: 'cmmc_status', payload: { cageCode } },
        at: clock.now(),
      });
      expect(status.statusCode, status.body).toBe(200);
      const list = await staff.get(`/api/v1/staff/cmmc/profiles?q=${cageCode}`);
      expect(list.statusCode, list.body).toBe(200);
      const row = (list.json() as { profiles: { cageCode: string; status: string }[] }).profiles.find(
        (p) => p.cageCode === cageCode,
      )!;
      const s = status.json() as { status: string; sprsStatus: string };
      return {
        score: ((await owner.get(`${base}/score`)).json() as { profileStatus: string }).profileStatus,
        profile: ((await owner.get(`${base}/profile`)).json() as { profile: { status: string } }).profile.status,
        csv: (await owner.get(`${base}/export/controls.csv`)).body.split('\r\n')[1]!.includes(',expired,'),
        mesh: s.status,
        sprs: s.sprsStatus,
        staff: row.status,
      };
    };
    const at = (d: number) => clock.set(new Date(start.getTime() + d * DAY));
    const same = (status: string, sprs: string, csv: boolean) => ({
      score: status,
      profile: status,
      csv,
      mesh: status,
      sprs,
      staff: status,
    });
    at(334);
    expect(await seen()).toEqual(same('compliant', 'filed', false));
    at(335);
    expect(await seen()).toEqual(same('renewal_due', 'filed', false));
    at(364);
    expect(await seen()).toEqual(same('renewal_due', 'filed', false));
    at(365);
    expect(await seen()).toEqual(same('expired', 'expired', true));
    at(366);
    expect(await seen()).toEqual(same('expired', 'expired', true));
    // The expired tile and filter count it though nothing was stored.
    const expired = await staff.get(`/api/v1/staff/cmmc/profiles?filter=expired&q=${cageCode}`);
    expect((expired.json() as { total: number }).total).toBe(1);
    // Nothing ran: the stored status and the outbox are as the confirmation left them.
    expect(await storedStatus(cageCode)).toBe('compliant');
    expect((await outboxFor(cageCode)).map((e) => e.event_type)).toEqual(['cmmc.compliant', 'cmmc.compliant']);
    clock.reset();
  });
});

describe('the built-in daily sweep', () => {
  it('runs by itself once per day across replicas: day 335 renewal due with one reminder, day 365 expired', async () => {
    const start = clock.set(pastStart());
    const { owner, base, cageCode, email } = await compliantProfile('daily');
    // A computer whose run is older than 30 days is pending, which the live status counts: the
    // company keeps its runs current, as it must to stay compliant.
    const fresh = () => postRun(owner, base, 'windows', 'PC-1');
    const days = [334, 335, 336, 365, 366].map((d) => new Date(start.getTime() + d * DAY).toISOString().slice(0, 10));
    await withService(t.database.db, (tx) =>
      sql`delete from daily_job_runs where job = 'cmmc_renewals' and day = any(${days}::date[])`.execute(tx),
    );
    const events = async () =>
      (await outboxFor(cageCode)).map((e) => e.event_type).filter((e) => e !== 'cmmc.compliant');
    const at = (d: number) => clock.set(new Date(start.getTime() + d * DAY));
    const sweep = () => t.app.services.cmmcProgram.dailyRenewalSweep();

    at(334);
    await fresh();
    // Two replicas look at once: one runs the day's sweep, the other finds the day claimed.
    const both = await Promise.all([sweep(), sweep()]);
    expect(both.filter((r) => r !== null)).toHaveLength(1);
    expect(await storedStatus(cageCode)).toBe('compliant');

    // Day 335: the server's own timer, no hook and no direct call.
    at(335);
    await fresh();
    const errors: unknown[] = [];
    const stop = startBackgroundJobs(
      t.app,
      t.database,
      { SCHEDULE_TICK_SECONDS: 0, PGLITE_MAINTENANCE_SECONDS: 0 },
      { error: (...a: unknown[]) => errors.push(a), info: () => undefined },
      { renewalLookMs: 50 },
    );
    const reminderMails = () =>
      t.mailer.sent.filter(
        (m) => m.to === email && m.subject.includes('renewal due') && m.text.includes(`(CAGE ${cageCode})`),
      );
    try {
      // The mail goes out after the sweep's transaction commits (and after the policy reminders and
      // the live rechecks): wait for both.
      for (let i = 0; i < 200 && ((await storedStatus(cageCode)) !== 'renewal_due' || !reminderMails().length); i++)
        await new Promise((r) => setTimeout(r, 50));
    } finally {
      await stop();
    }
    expect(errors).toEqual([]);
    expect(await storedStatus(cageCode)).toBe('renewal_due');
    expect(await events()).toEqual(['cmmc.renewal_due', 'cmmc.renewal_due']);
    expect(await sweep()).toBeNull();
    expect(reminderMails()).toHaveLength(1);

    at(365);
    const day365 = await sweep();
    expect(day365?.events.filter((e) => e.cageCode === cageCode).map((e) => e.event)).toEqual(['cmmc.expired']);
    expect(await sweep()).toBeNull();
    at(366);
    expect((await sweep())?.events.filter((e) => e.cageCode === cageCode)).toEqual([]);
    expect(await storedStatus(cageCode)).toBe('expired');
    expect((await events()).sort()).toEqual(['cmmc.expired', 'cmmc.expired', 'cmmc.renewal_due', 'cmmc.renewal_due']);
    clock.reset();
  });
});

describe('live status after the confirmation', () => {
  const pass = Object.fromEntries(checkIdsFor('windows').map((id) => [id, 'pass']));
  const cmmcStatus = async (cageCode: string) =>
    (
      await dispatch(t.app, {
        caller: suite.bid,
        secret: BID_SECRET,
        body: { flow: 'cmmc_status', payload: { cageCode } },
        at: clock.now(),
      })
    ).json() as { status: string; sprsStatus: string };
  type Regression = { requirements: { requirementId: string; reasons: string[] }[] } | null;
  const score = async (c: Client, base: string) =>
    (await c.get(`${base}/score`)).json() as { profileStatus: string; regression: Regression };

  it('a failing computer or an answer changed to "no" makes it not compliant, tells the official and the peers; fixed, compliant again', async () => {
    const start = clock.set(pastStart());
    const { owner, base, cageCode, email } = await compliantProfile('regress');
    const mails = (subject: RegExp) => t.mailer.sent.filter((m) => m.to === email && subject.test(m.subject));
    const events = async () => (await outboxFor(cageCode)).map((e) => e.event_type);

    // A computer fails a required check after the confirmation.
    clock.set(new Date(start.getTime() + 3 * DAY));
    await postRun(owner, base, 'windows', 'PC-1', { ...pass, 'win.local_admins': 'fail' });
    expect(await storedStatus(cageCode)).toBe('not_compliant');
    const s = await score(owner, base);
    expect(s.profileStatus).toBe('not_compliant');
    expect(s.regression!.requirements.map((r) => r.requirementId)).toEqual(['AC.L1-b.1.ii']);
    expect(s.regression!.requirements[0]!.reasons).toEqual(['PC-1: win.local_admins fail']);
    expect(await cmmcStatus(cageCode)).toMatchObject({ status: 'not_compliant', sprsStatus: 'filed' });
    expect(await events()).toEqual(['cmmc.compliant', 'cmmc.compliant', 'cmmc.not_compliant', 'cmmc.not_compliant']);
    const down = mails(/no longer compliant/);
    expect(down).toHaveLength(1);
    expect(down[0]!.text).toContain('AC.L1-b.1.ii');
    expect(down[0]!.text).toContain('PC-1: win.local_admins fail');
    const page = await owner.get(`${base}/profile`);
    expect((page.json() as { profile: { status: string } }).profile.status).toBe('not_compliant');

    // Fixed: compliant again, told too; a second passing run changes nothing more.
    // A day later (the outbox orders by the clock's time, which stands still otherwise).
    clock.set(new Date(start.getTime() + 4 * DAY));
    await postRun(owner, base, 'windows', 'PC-1', pass);
    await postRun(owner, base, 'windows', 'PC-1', pass);
    expect(await storedStatus(cageCode)).toBe('compliant');
    expect((await score(owner, base)).regression).toBeNull();
    expect(mails(/compliant again/)).toHaveLength(1);
    expect((await events()).slice(4)).toEqual(['cmmc.compliant', 'cmmc.compliant']);

    // An answer changed to "no".
    const item = ATTESTATION_ITEMS[0]!;
    expect((await owner.put(`${base}/attestations/${item.id}`, { answer: 'no' })).statusCode).toBe(200);
    expect(await storedStatus(cageCode)).toBe('not_compliant');
    const reasons = (await score(owner, base)).regression!.requirements.flatMap((r) => r.reasons);
    expect(reasons).toContain(`${item.id} answered "no"`);
    expect(await cmmcStatus(cageCode)).toMatchObject({ status: 'not_compliant' });
    expect(mails(/no longer compliant/)).toHaveLength(2);
    expect((await owner.put(`${base}/attestations/${item.id}`, { answer: 'yes' })).statusCode).toBe(200);
    expect(await storedStatus(cageCode)).toBe('compliant');
    clock.reset();
  });

  it('a computer whose run goes stale makes it not compliant at the daily sweep, with no other change', async () => {
    const start = clock.set(pastStart());
    const { cageCode } = await compliantProfile('stale');
    const day = (d: number) => new Date(start.getTime() + d * DAY).toISOString().slice(0, 10);
    await withService(t.database.db, (tx) =>
      sql`delete from daily_job_runs where job = 'cmmc_renewals' and day = any(${[day(30), day(31)]}::date[])`.execute(
        tx,
      ),
    );
    clock.set(new Date(start.getTime() + 30 * DAY));
    await t.app.services.cmmcProgram.dailyRenewalSweep();
    expect(await storedStatus(cageCode)).toBe('compliant');
    clock.set(new Date(start.getTime() + 31 * DAY));
    await t.app.services.cmmcProgram.dailyRenewalSweep();
    expect(await storedStatus(cageCode)).toBe('not_compliant');
    expect(await cmmcStatus(cageCode)).toMatchObject({ status: 'not_compliant' });
    clock.reset();
  });
});
