// CMMC program, policy review dates on a controllable clock: the default review date one year after
// approval, the reminders of the built-in daily sweep 30 days before and on the day (each once,
// whether the sweep or the cron hook runs), a policy past its review date no longer counting (the
// requirement says why, the confirmed status regresses), and a recorded review making it count
// again. Runs on PGlite and, with DATABASE_URL, on PostgreSQL.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import { CRON, DAY, setupCmmcProgramApp } from '../helpers/cmmc-program.ts';

const { t, clock, tenantWithProfile, postRun, answerAll, approveAll, confirmBody, addUser } = setupCmmcProgramApp();

type PolicyDoc = {
  id: string;
  status: string;
  nextReviewDate: string | null;
  inForce: boolean;
  reviewOverdueSince: string | null;
  countsForScoring: boolean;
};
type Requirement = {
  requirementId: string;
  status: string;
  missingPolicy: string | null;
  policyReviewOverdueSince: string | null;
};

const dayAfter = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY).toISOString().slice(0, 10);

describe('policy review dates', () => {
  it('reminds 30 days before and on the day, once each, and a policy past its date stops counting', async () => {
    // About four years back: on PostgreSQL the sweep sees every suite's policies, whose review
    // dates are all later than this cycle's.
    const start = new Date(Date.now() - 1500 * DAY);
    start.setUTCHours(12, 0, 0, 0);
    clock.set(start);
    const startDay = clock.today();
    const { owner, base, tenant, cageCode, email } = await tenantWithProfile('review');
    await postRun(owner, base, 'windows', 'PC-1');
    await answerAll(owner, base);
    await approveAll(owner, base);
    const policies = async () =>
      ((await owner.get(`${base}/policies`)).json() as { documents: { kind: string; inForce: PolicyDoc | null }[] })
        .documents;
    const ac = (await policies()).find((d) => d.kind === 'access_control')!.inForce!;
    // By default, one calendar year after the approval day.
    const nextYear = new Date(`${startDay}T00:00:00Z`);
    nextYear.setUTCFullYear(nextYear.getUTCFullYear() + 1);
    expect(ac).toMatchObject({ nextReviewDate: nextYear.toISOString().slice(0, 10), countsForScoring: true });
    expect((await owner.post(`${base}/sprs-confirmation`, confirmBody(cageCode))).statusCode).toBe(201);

    // The review date is editable by the Affirming Official only, within its bounds.
    const review = dayAfter(startDay, 100);
    const setReview = (c = owner, reviewDate = review) =>
      c.put(`${base}/policies/${ac.id}/review-date`, { reviewDate });
    const past = await setReview(owner, dayAfter(startDay, -1));
    expect(past.statusCode, past.body).toBe(400);
    expect(past.json()).toMatchObject({ error: 'validation_failed', details: [{ path: 'body.reviewDate' }] });
    expect((await setReview(owner, dayAfter(startDay, 4 * 366))).statusCode).toBe(400);
    expect((await setReview(owner, 'soon')).statusCode).toBe(400);
    const admin = await addUser(tenant, 'review-admin', 'admin');
    expect((await setReview(admin.c)).json()).toMatchObject({ error: 'cmmc_not_affirming_official' });
    const set = await setReview();
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ nextReviewDate: review, countsForScoring: true, reviewOverdueSince: null });

    const at = (d: number) => clock.set(new Date(Date.parse(`${review}T12:00:00Z`) + d * DAY));
    const days = [-31, -30, 0, 1].map((d) => dayAfter(review, d));
    await withService(t.database.db, (tx) =>
      sql`delete from daily_job_runs where job = 'cmmc_renewals' and day = any(${days}::date[])`.execute(tx),
    );
    const reminders = () =>
      t.mailer.sent.filter((m) => m.to === email && m.subject.includes('policy review') && m.text.includes(cageCode));
    const hook = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/public/hooks/cmmc-renewals',
        headers: { authorization: `Bearer ${CRON}` },
      });
    /** The built-in daily sweep (twice: the second finds the day claimed) and the cron hook on the same day. */
    const sweepDay = async () => {
      expect(await t.app.services.cmmcProgram.dailyRenewalSweep()).not.toBeNull();
      expect(await t.app.services.cmmcProgram.dailyRenewalSweep()).toBeNull();
      const h = await hook();
      expect(h.statusCode, h.body).toBe(200);
    };
    const requirements = async () =>
      ((await owner.get(`${base}/score`)).json() as { requirements: Requirement[] }).requirements;
    const acRequirements = async () => (await requirements()).filter((r) => r.requirementId.startsWith('AC.'));
    const storedStatus = async () =>
      (
        await withService(t.database.db, (tx) =>
          sql<{ status: string }>`select status from compliance_profiles where cage_code = ${cageCode}`.execute(tx),
        )
      ).rows[0]!.status;

    // Day -31: nothing yet.
    at(-31);
    await postRun(owner, base, 'windows', 'PC-1');
    await sweepDay();
    expect(reminders()).toHaveLength(0);

    // Day -30: the first reminder, once, naming the policy and its review date.
    at(-30);
    await postRun(owner, base, 'windows', 'PC-1');
    await sweepDay();
    expect(reminders()).toHaveLength(1);
    expect(reminders()[0]!.subject).toBe(`CMMC Level 1 policy review due by ${review}`);
    expect(reminders()[0]!.text).toContain(`Access Control Policy v1: review by ${review}`);
    expect(reminders()[0]!.text).not.toContain('Media Protection');

    // Day 0: the second reminder; the policy still counts on its review date.
    at(0);
    await postRun(owner, base, 'windows', 'PC-1');
    await sweepDay();
    expect(reminders()).toHaveLength(2);
    expect(reminders()[1]!.subject).toBe('CMMC Level 1 policy review due today');
    expect((await acRequirements()).every((r) => r.status === 'MET' && r.missingPolicy === null)).toBe(true);
    expect(await storedStatus()).toBe('compliant');

    // Day +1: no further reminder; the policy no longer counts and the requirements say why.
    at(1);
    await postRun(owner, base, 'windows', 'PC-1');
    await sweepDay();
    expect(reminders()).toHaveLength(2);
    const overdue = await acRequirements();
    expect(overdue.length).toBeGreaterThan(0);
    for (const r of overdue)
      expect(r).toMatchObject({ status: 'NOT_MET', missingPolicy: 'access_control', policyReviewOverdueSince: review });
    expect((await policies()).find((d) => d.kind === 'access_control')!.inForce).toMatchObject({
      reviewOverdueSince: review,
      countsForScoring: false,
    });
    // The confirmed status regressed with the reason, found by the daily sweep alone.
    expect(await storedStatus()).toBe('not_compliant');
    const score = (await owner.get(`${base}/score`)).json() as {
      regression: { requirements: { reasons: string[] }[] } | null;
    };
    expect(score.regression?.requirements.flatMap((r) => r.reasons)).toContain(
      `policy access_control review overdue since ${review}`,
    );
    const csv = (await owner.get(`${base}/export/controls.csv`)).body;
    expect(csv).toContain(`policy:access_control:review_overdue_since_${review}`);

    // A recorded review (a new date) makes it count again; the new date gets its own reminders.
    const reviewed = await setReview(owner, dayAfter(review, 200));
    expect(reviewed.statusCode, reviewed.body).toBe(200);
    expect(reviewed.json()).toMatchObject({ countsForScoring: true, reviewOverdueSince: null });
    expect((await acRequirements()).every((r) => r.status === 'MET')).toBe(true);
    expect(await storedStatus()).toBe('compliant');
    clock.reset();
  });

  it('has no review date to set on a draft', async () => {
    clock.reset();
    const { owner, base } = await tenantWithProfile('review-draft');
    await owner.post(`${base}/policies/generate`, { kinds: ['access_control'] });
    const list = (await owner.get(`${base}/policies`)).json() as {
      documents: { kind: string; latest: { id: string } | null }[];
    };
    const draft = list.documents.find((d) => d.kind === 'access_control')!.latest!;
    const res = await owner.put(`${base}/policies/${draft.id}/review-date`, {
      reviewDate: dayAfter(clock.today(), 30),
    });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error: 'cmmc_policy_not_approved' });
  });
});
