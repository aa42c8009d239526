// Renewals of the CMMC program (docs/cmmc.md, Renewals): day 335 of the 365-day cycle → renewal_due,
// a reminder mail to the Affirming Official and cmmc.renewal_due; day 365 → expired and
// cmmc.expired. The notice row (one per profile, kind and day) is the claim, so a second run the
// same day does nothing. The same sweep reminds the Affirming Official of policy reviews: 30 days
// before a policy's review date and on the day (docs/cmmc.md, Policy reviews), once per policy,
// threshold and review date.
import { sql } from 'kysely';
import { withService } from '../db/tenant.ts';
import type { CmmcEvents } from './cmmc-events.ts';
import type { CmmcLiveStatus } from './cmmc-live-status.ts';
import {
  addDays,
  DAY_MS,
  dayOf,
  daysBetween,
  EXPIRY_DAY,
  RENEWAL_DUE_DAY,
  type ProgramDeps,
  type ProgramState,
} from './cmmc-program-state.ts';
import type { RenewalSweepResponse } from './cmmc-program-schemas.ts';
import type { PolicyReviewNoticesTable } from '../db/schema.ts';

/** Days before the review date of the first policy review reminder. */
export const POLICY_REVIEW_REMINDER_DAYS = 30;

type Threshold = PolicyReviewNoticesTable['threshold'];
interface ReviewMail {
  to: string;
  company: string;
  threshold: Threshold;
  policies: { title: string; version: number; reviewDate: string }[];
}

export function createCmmcRenewals(deps: ProgramDeps, state: ProgramState, events: CmmcEvents, live: CmmcLiveStatus) {
  const { db, audit, clock, outbox } = deps;

  /**
   * Claims the policy review reminders due today, one mail per profile and threshold listing its
   * policies. Only the version in force of each kind is looked at (a newer approved version
   * replaces it). The 30-day reminder goes out from 30 days before until the day before the review
   * date (a missed sweep sends it late, not never); the due reminder from the review date on.
   */
  async function claimPolicyReviewReminders(t: string): Promise<ReviewMail[]> {
    const soon = addDays(t, POLICY_REVIEW_REMINDER_DAYS);
    return withService(db, async (tx) => {
      const rows = await tx
        .selectFrom('cmmc_policy_documents as d')
        .innerJoin('compliance_profiles as p', 'p.id', 'd.profile_id')
        .select([
          'd.id',
          'd.tenant_id',
          'd.profile_id',
          'd.title',
          'd.version',
          'd.next_review_date',
          'p.company_name',
          'p.cage_code',
          'p.affirming_official_email',
        ])
        .where('d.status', '=', 'approved')
        .where('d.effective_date', '<=', t)
        .where('d.next_review_date', '<=', soon)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('cmmc_policy_documents as n')
                .select(sql`1`.as('one'))
                .whereRef('n.profile_id', '=', 'd.profile_id')
                .whereRef('n.kind', '=', 'd.kind')
                .where('n.status', '=', 'approved')
                .where('n.effective_date', '<=', t)
                .whereRef('n.version', '>', 'd.version'),
            ),
          ),
        )
        .orderBy('d.profile_id')
        .orderBy('d.kind')
        .execute();
      const mails = new Map<string, ReviewMail>();
      for (const r of rows) {
        const reviewDate = dayOf(r.next_review_date!);
        const threshold: Threshold = reviewDate <= t ? 'due' : 'due_in_30_days';
        const claim = await tx
          .insertInto('cmmc_policy_review_notices')
          .values({
            tenant_id: r.tenant_id,
            profile_id: r.profile_id,
            policy_document_id: r.id,
            threshold,
            review_date: reviewDate,
            sent_day: t,
          })
          .onConflict((oc) => oc.doNothing())
          .returning('id')
          .executeTakeFirst();
        if (!claim) continue;
        await audit.record(
          {
            tenantId: r.tenant_id,
            actorUserId: null,
            actorEmail: null,
            action: 'cmmc.policy_review_reminder',
            targetType: 'cmmc_policy_document',
            targetId: r.id,
            details: { threshold, reviewDate, to: r.affirming_official_email },
          },
          tx,
        );
        const key = `${r.profile_id}/${threshold}`;
        const mail = mails.get(key) ?? {
          to: r.affirming_official_email,
          company: `${r.company_name} (CAGE ${r.cage_code})`,
          threshold,
          policies: [],
        };
        mail.policies.push({ title: r.title, version: r.version, reviewDate });
        mails.set(key, mail);
      }
      return [...mails.values()];
    });
  }

  function reviewMailText(m: ReviewMail, t: string): { subject: string; text: string } {
    const list = m.policies.map((p) => `- ${p.title} v${p.version}: review by ${p.reviewDate}`).join('\n');
    const how =
      'Read each policy on the Policies tab, update it if the company changed, and record the review with a new ' +
      'review date (or approve a new version).';
    if (m.threshold === 'due_in_30_days')
      return {
        subject: `CMMC Level 1 policy review due by ${m.policies[0]!.reviewDate}`,
        text:
          `These CMMC Level 1 policies of ${m.company} are due for review within ${POLICY_REVIEW_REMINDER_DAYS} days:\n` +
          `${list}\n\nA policy past its review date no longer counts as approved, and the requirements it backs ` +
          `become NOT MET. ${how}`,
      };
    const overdue = m.policies.some((p) => p.reviewDate < t);
    return {
      subject: `CMMC Level 1 policy review ${overdue ? 'overdue' : 'due today'}`,
      text:
        `These CMMC Level 1 policies of ${m.company} are due for review:\n${list}\n\n` +
        `From the day after its review date a policy no longer counts as approved, and the requirements it backs ` +
        `become NOT MET. ${how}`,
    };
  }

  /** The sweep; with claimJob, only when this run inserts the day's claim (see dailyRenewalSweep). */
  async function sweep(claimJob: string | null): Promise<RenewalSweepResponse | null> {
    const t = state.today();
    const dueBefore = addDays(t, -RENEWAL_DUE_DAY);
    const sent: { profileId: string; cageCode: string; event: string; requestIds: string[] }[] = [];
    const reminders: { to: string; company: string; due: string; tenantId: string }[] = [];
    let renewalDue = 0;
    let expired = 0;
    const claimed = await withService(db, async (tx) => {
      if (claimJob) {
        // Inserted first: a replica looking at the same time waits on this row, then finds it.
        const claim = await tx
          .insertInto('daily_job_runs')
          .values({ job: claimJob, day: t, ran_at: clock.now() })
          .onConflict((oc) => oc.doNothing())
          .returning('day')
          .executeTakeFirst();
        if (!claim) return false;
      }
      const rows = await tx
        .selectFrom('compliance_profiles')
        .selectAll()
        .where('status', 'in', ['compliant', 'renewal_due', 'not_compliant'])
        .where('status_date', '<=', dueBefore)
        .forUpdate()
        .skipLocked()
        .execute();
      for (const p of rows) {
        const day = daysBetween(dayOf(p.status_date!), t);
        const kind =
          day >= EXPIRY_DAY ? 'expired' : p.status === 'compliant' && day >= RENEWAL_DUE_DAY ? 'renewal_due' : null;
        if (!kind) continue;
        const planned = events.planRequestIds();
        const claim = await tx
          .insertInto('cmmc_renewal_notices')
          .values({ tenant_id: p.tenant_id, profile_id: p.id, kind, day: t, event_id: planned[0] ?? null })
          .onConflict((oc) => oc.doNothing())
          .returning('id')
          .executeTakeFirst();
        if (!claim) continue;
        const due = addDays(dayOf(p.status_date!), EXPIRY_DAY);
        await tx
          .updateTable('compliance_profiles')
          .set({ status: kind, status_changed_at: clock.now(), updated_at: clock.now() })
          .where('id', '=', p.id)
          .execute();
        const event = kind === 'expired' ? 'cmmc.expired' : 'cmmc.renewal_due';
        const data = { status: kind, statusDate: dayOf(p.status_date), renewalDueAt: due, cycleDay: day };
        const requestIds = await events.emit(tx, p, event, data, planned);
        await audit.record(
          {
            tenantId: p.tenant_id,
            actorUserId: null,
            actorEmail: null,
            action: `cmmc.${kind}`,
            targetType: 'compliance_profile',
            targetId: p.id,
            details: { cycleDay: day, renewalDueAt: due },
          },
          tx,
        );
        if (kind === 'renewal_due') {
          renewalDue += 1;
          await tx
            .insertInto('cmmc_renewal_notices')
            .values({ tenant_id: p.tenant_id, profile_id: p.id, kind: 'reminder', day: t })
            .onConflict((oc) => oc.doNothing())
            .execute();
          reminders.push({
            to: p.affirming_official_email,
            company: `${p.company_name} (CAGE ${p.cage_code})`,
            due,
            tenantId: p.tenant_id,
          });
        } else expired += 1;
        sent.push({ profileId: p.id, cageCode: p.cage_code, event, requestIds });
      }
      return true;
    });
    if (!claimed) return null;
    const reviewMails = await claimPolicyReviewReminders(t);
    // Then the live status of every confirmed profile: runs go stale and policies lapse with time.
    await live.recheckAll();
    if (sent.length) outbox.nudge();
    // Handoff links are kept a day past their expiry (for support questions), then removed.
    const linkCutoff = new Date(clock.now().getTime() - DAY_MS);
    await withService(db, (tx) => tx.deleteFrom('cmmc_handoff_links').where('expires_at', '<', linkCutoff).execute());
    // After the commit: a failed mail is logged, the status change stands.
    for (const r of reminders) {
      await deps.mailer
        .send({
          to: r.to,
          subject: `CMMC Level 1 renewal due by ${r.due}`,
          text:
            `The CMMC Level 1 self-assessment of ${r.company} expires on ${r.due}. ` +
            'Re-run the device checks, review the attestations and policies, re-enter the assessment in SPRS ' +
            'and confirm it in Rampart before then.',
          link: `${deps.publicBaseUrl}/cmmc`,
          tenantId: r.tenantId,
        })
        .catch((err: unknown) => deps.log.warn({ err }, 'cmmc renewal reminder mail failed'));
    }
    for (const m of reviewMails) {
      const { subject, text } = reviewMailText(m, t);
      await deps.mailer
        .send({ to: m.to, subject, text, link: `${deps.publicBaseUrl}/cmmc` })
        .catch((err: unknown) => deps.log.warn({ err }, 'cmmc policy review reminder mail failed'));
    }
    return {
      ok: true as const,
      day: t,
      renewalDue,
      expired,
      policyReviewReminders: reviewMails.reduce((n, m) => n + m.policies.length, 0),
      events: sent,
    };
  }

  return {
    /** The sweep as the cron hook runs it: any number of times a day (the notices make it idempotent). */
    async renewalSweep(): Promise<RenewalSweepResponse> {
      return (await sweep(null))!;
    },
    /**
     * The server's own daily run (src/server/background.ts looks every few minutes on every
     * replica): runs the sweep only when it claims today's daily_job_runs row, so exactly once a
     * UTC day across replicas; null when the day was already claimed.
     */
    dailyRenewalSweep(): Promise<RenewalSweepResponse | null> {
      return sweep(RENEWALS_JOB);
    },
  };
}

/** The daily_job_runs name of the built-in renewal sweep. */
export const RENEWALS_JOB = 'cmmc_renewals';
