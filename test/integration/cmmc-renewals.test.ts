// CMMC program, renewals: the daily sweep on a controllable clock (day 335 renewal due with a
// reminder, day 365 expired), once per day, with the events to both peers. Runs on PGlite and,
// with DATABASE_URL, on PostgreSQL.
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { withService } from '../../src/db/tenant.ts';
import { CRON, DAY, setupCmmcProgramApp } from '../helpers/cmmc-program.ts';

const { t, clock, tenantWithProfile, postRun, answerAll, approveAll, confirmBody, outboxFor } = setupCmmcProgramApp();

describe('renewal sweep', () => {
  const hook = () =>
    t.app.inject({
      method: 'POST',
      url: '/api/public/hooks/cmmc-renewals',
      headers: { authorization: `Bearer ${CRON}` },
    });

  it('is shut without the cron secret', async () => {
    expect((await t.app.inject({ method: 'POST', url: '/api/public/hooks/cmmc-renewals' })).statusCode).toBe(401);
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/public/hooks/cmmc-renewals',
          headers: { 'x-cron-secret': 'wrong' },
        })
      ).statusCode,
    ).toBe(401);
  });

  it('marks renewal due on day 335 and expired on day 365, once per day, and sends the events to both peers', async () => {
    // The cycle runs about two years in the past: the sweep looks at every profile of the database,
    // and with PostgreSQL shared between suites, moving the clock a year ahead would renew the
    // profiles other suites confirm today.
    const start = new Date(Date.now() - 800 * DAY);
    start.setUTCHours(12, 0, 0, 0);
    clock.set(start);
    const { owner, base, cageCode, email } = await tenantWithProfile('renew');
    await postRun(owner, base, 'windows', 'PC-1');
    await answerAll(owner, base);
    await approveAll(owner, base);
    expect((await owner.post(`${base}/sprs-confirmation`, confirmBody(cageCode))).statusCode).toBe(201);
    const status = async () =>
      (
        await withService(t.database.db, (tx) =>
          sql<{ status: string }>`select status from compliance_profiles where cage_code = ${cageCode}`.execute(tx),
        )
      ).rows[0]!.status;
    const events = async () =>
      (await outboxFor(cageCode)).map((e) => e.event_type).filter((e) => e !== 'cmmc.compliant');
    const mine = (r: { json(): unknown }) =>
      (r.json() as { events: { cageCode: string; event: string }[] }).events
        .filter((e) => e.cageCode === cageCode)
        .map((e) => e.event);

    const at = (d: number) => clock.set(new Date(start.getTime() + d * DAY));
    // Runs kept current (a computer without a run in 30 days makes the live status not compliant).
    at(334);
    await postRun(owner, base, 'windows', 'PC-1');
    expect(mine(await hook())).toEqual([]);
    expect(await status()).toBe('compliant');
    at(335);
    await postRun(owner, base, 'windows', 'PC-1');
    const first = await hook();
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ ok: true });
    expect(mine(first)).toEqual(['cmmc.renewal_due']);
    expect(mine(await hook())).toEqual([]);
    expect(await status()).toBe('renewal_due');
    expect(await events()).toEqual(['cmmc.renewal_due', 'cmmc.renewal_due']);
    // One renewal reminder to the Affirming Official, though the sweep ran twice (the policies approved
    // with the confirmation get their own review reminder the same day).
    const mails = t.mailer.sent.filter(
      (m) => m.to === email && m.subject.includes('renewal due') && m.text.includes(`(CAGE ${cageCode})`),
    );
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toMatch(/renewal due/);
    at(364);
    await postRun(owner, base, 'windows', 'PC-1');
    expect(mine(await hook())).toEqual([]);
    expect(await status()).toBe('renewal_due');
    at(365);
    expect(mine(await hook())).toEqual(['cmmc.expired']);
    expect(mine(await hook())).toEqual([]);
    expect(await status()).toBe('expired');
    expect((await events()).sort()).toEqual(['cmmc.expired', 'cmmc.expired', 'cmmc.renewal_due', 'cmmc.renewal_due']);
    at(366);
    expect(mine(await hook())).toEqual([]);
    clock.reset();
  });
});
