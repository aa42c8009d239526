// The live status of a confirmed CMMC profile (docs/cmmc.md, When the status changes): "compliant"
// (or renewal due) holds only while the live score is 15/15. After anything scoring reads changes
// (a device run, a retired computer, an answer, a policy, Scope) and in the daily sweep (runs go
// stale, policies lapse), recheckStatus scores the profile again: below 15/15 it becomes
// not_compliant with what regressed, the Affirming Official is mailed and cmmc.not_compliant goes
// to the bid and management peers; back at 15/15 within the cycle it is compliant again, with a
// mail and cmmc.compliant. Expired profiles are left to renewal.
import { withService } from '../db/tenant.ts';
import { REQUIREMENTS } from './cmmc-catalogue.ts';
import type { CmmcEvents } from './cmmc-events.ts';
import {
  addDays,
  dayOf,
  effectiveStatus,
  EXPIRY_DAY,
  type ProgramDeps,
  type ProgramState,
} from './cmmc-program-state.ts';
import type { StatusReason } from '../db/schema.ts';
import type { RequirementScore } from './cmmc-scoring.ts';

/** What makes a requirement NOT MET, in words the Affirming Official reads in the mail and on the page. */
export function regressionReasons(r: RequirementScore): string[] {
  const out: string[] = [];
  for (const id of r.noItems) out.push(`${id} answered "no"`);
  for (const id of r.missingItems) out.push(`${id} not answered`);
  for (const id of r.unjustifiedNa) out.push(`${id} not applicable without a note`);
  if (r.missingPolicy)
    out.push(
      r.policyReviewOverdueSince
        ? `policy ${r.missingPolicy} review overdue since ${r.policyReviewOverdueSince}`
        : `policy ${r.missingPolicy} not approved and in force`,
    );
  for (const f of r.failingChecks)
    out.push(`${f.hostname}: ${f.checkId} ${f.result}${f.reason ? ` (${f.reason})` : ''}`);
  for (const h of r.pendingDevices) out.push(`${h}: no run or attestation in the last 30 days`);
  if (r.needsDeviceRun) out.push('no computer sent a current run');
  const cov = r.coverage;
  if (cov && cov.unaccounted > 0)
    out.push(
      `${cov.covered} of ${cov.declared} computers covered: ${cov.unaccounted} in Scope sent no run and have no attestation`,
    );
  return out;
}

export function createCmmcLiveStatus(deps: ProgramDeps, state: ProgramState, events: CmmcEvents) {
  const { db, clock, audit, outbox } = deps;

  /**
   * Scores the tenant's profile again and records a regression or a recovery. Runs after the
   * change committed (its own service transaction, the profile row locked); a failure is logged,
   * the change stands and the daily sweep rechecks.
   */
  async function recheck(
    match: { tenantId: string } | { profileId: string },
  ): Promise<'regressed' | 'restored' | null> {
    const t = state.today();
    const out = await withService(db, async (tx) => {
      let q = tx.selectFrom('compliance_profiles').selectAll();
      q = 'tenantId' in match ? q.where('tenant_id', '=', match.tenantId) : q.where('id', '=', match.profileId);
      const p = await q.forUpdate().executeTakeFirst();
      if (!p || !p.status_date) return null;
      const now = effectiveStatus(p, t);
      if (now !== 'compliant' && now !== 'renewal_due' && now !== 'not_compliant') return null;
      const st = await state.loadState(tx, p);
      const statusDate = dayOf(p.status_date);
      const renewalDueAt = addDays(statusDate, EXPIRY_DAY);
      const at = clock.now();
      if (now === 'not_compliant' && st.score.allMet) {
        await tx
          .updateTable('compliance_profiles')
          .set({ status: 'compliant', status_reason: null, status_changed_at: at, updated_at: at })
          .where('id', '=', p.id)
          .execute();
        await events.emit(tx, p, 'cmmc.compliant', { status: 'compliant', statusDate, renewalDueAt, restored: true });
        await audit.record(
          {
            tenantId: p.tenant_id,
            actorUserId: null,
            actorEmail: null,
            action: 'cmmc.status_restored',
            targetType: 'compliance_profile',
            targetId: p.id,
            details: { met: st.score.met },
          },
          tx,
        );
        return { kind: 'restored' as const, p, reason: null };
      }
      if (now === 'not_compliant' || st.score.allMet) return null;
      const reason: StatusReason = {
        at: at.toISOString(),
        requirements: st.score.requirements
          .filter((r) => !r.implemented)
          .map((r) => ({
            requirementId: r.requirementId,
            title: REQUIREMENTS.find((x) => x.id === r.requirementId)!.title,
            reasons: regressionReasons(r),
          })),
      };
      await tx
        .updateTable('compliance_profiles')
        .set({ status: 'not_compliant', status_reason: JSON.stringify(reason), status_changed_at: at, updated_at: at })
        .where('id', '=', p.id)
        .execute();
      await events.emit(tx, p, 'cmmc.not_compliant', {
        status: 'not_compliant',
        statusDate,
        renewalDueAt,
        met: st.score.met,
        notMet: reason.requirements.map((r) => r.requirementId),
      });
      await audit.record(
        {
          tenantId: p.tenant_id,
          actorUserId: null,
          actorEmail: null,
          action: 'cmmc.status_regressed',
          targetType: 'compliance_profile',
          targetId: p.id,
          details: { met: st.score.met, notMet: reason.requirements.map((r) => r.requirementId) },
        },
        tx,
      );
      return { kind: 'regressed' as const, p, reason };
    });
    if (!out) return null;
    outbox.nudge();
    // After the commit: a failed mail is logged, the status change stands.
    const company = `${out.p.company_name} (CAGE ${out.p.cage_code})`;
    const mail =
      out.kind === 'regressed'
        ? {
            subject: `CMMC Level 1: ${company} is no longer compliant`,
            text:
              `The live CMMC Level 1 score of ${company} is below 15 of 15 since the SPRS confirmation, so ` +
              'Rampart now shows it as not compliant, and the bid portal was told. What regressed:\n' +
              out
                .reason!.requirements.map((r) => `- ${r.requirementId} ${r.title}: ${r.reasons.join('; ')}`)
                .join('\n') +
              '\nFix these and the status returns to compliant by itself. If the systems stay non-compliant, ' +
              'the SPRS affirmation no longer holds.',
          }
        : {
            subject: `CMMC Level 1: ${company} is compliant again`,
            text: `The live CMMC Level 1 score of ${company} is 15 of 15 again; Rampart shows it as compliant.`,
          };
    await deps.mailer
      .send({
        to: out.p.affirming_official_email,
        ...mail,
        link: `${deps.publicBaseUrl}/cmmc`,
        tenantId: out.p.tenant_id,
      })
      .catch((err: unknown) => deps.log.warn({ err }, 'cmmc status mail failed'));
    return out.kind;
  }

  return {
    /** After a change to what scoring reads; never throws (logged; the daily sweep rechecks). */
    async recheckStatus(tenantId: string): Promise<void> {
      await recheck({ tenantId }).catch((err: unknown) => deps.log.warn({ err }, 'cmmc status recheck failed'));
    },
    /** The daily sweep's pass over every confirmed profile: runs going stale, policies lapsing. */
    async recheckAll(): Promise<{ regressed: number; restored: number }> {
      const ids = await withService(db, (tx) =>
        tx
          .selectFrom('compliance_profiles')
          .select('id')
          .where('status', 'in', ['compliant', 'renewal_due', 'not_compliant'])
          .where('status_date', '>', addDays(state.today(), -EXPIRY_DAY))
          .where('status_date', '<=', state.today())
          .execute(),
      );
      let regressed = 0;
      let restored = 0;
      for (const { id } of ids) {
        const r = await recheck({ profileId: id }).catch((err: unknown) => {
          deps.log.warn({ err }, 'cmmc status recheck failed');
          return null;
        });
        if (r === 'regressed') regressed += 1;
        if (r === 'restored') restored += 1;
      }
      return { regressed, restored };
    },
  };
}

export type CmmcLiveStatus = ReturnType<typeof createCmmcLiveStatus>;
