// Policy documents of the CMMC program: the generated Level 1 policy set per profile, kept as
// versions (draft → approved with an effective date and a review date), shown as Markdown and PDF.
// Only an approved version effective today and not past its review date counts for scoring. The
// Affirming Official approves (one draft or several at once) and sets the review date.
import type { Tx } from '../db/tenant.ts';
import { AppError, appError } from '../lib/errors.ts';
import { CMMC_ADMIN_ROLES } from './cmmc-access.ts';
import { generatePolicy, POLICY_TITLES, renderPolicyPdf, type PolicyCompany } from './cmmc-policies.ts';
import {
  dayOf,
  iso,
  isInForce,
  oneYearAfter,
  reviewOverdueSince,
  type Caller,
  type ProgramDeps,
  type ProgramState,
} from './cmmc-program-state.ts';
import type { PoliciesResponse, PolicyDocDto, PolicyDocWithBody } from './cmmc-program-schemas.ts';
import { parseJson, type ProfileRow } from './cmmc-repo.ts';

/** The latest review date that may be set: three years ahead (the annual affirmation asks for less). */
const MAX_REVIEW_YEARS = 3;
import { POLICY_KINDS, type PolicyKind } from './cmmc-scoring.ts';

function companyOf(p: ProfileRow): PolicyCompany {
  return {
    companyName: p.company_name,
    cageCode: p.cage_code,
    additionalCageCodes: p.additional_cage_codes,
    companyAddress: p.company_address,
    scopeDescription: p.scope_description,
    mailPlatform: p.mail_platform,
    biddingUsers: parseJson(p.bidding_users, []),
    affirmingOfficial: {
      name: p.affirming_official_name,
      title: p.affirming_official_title,
      email: p.affirming_official_email,
    },
  };
}

interface PolicyRow {
  id: string;
  kind: string;
  version: number;
  title: string;
  status: string;
  effective_date: string | null;
  approved_at: Date | null;
  approved_by_email: string | null;
  next_review_date: string | null;
  created_at: Date;
  updated_at: Date;
}

export function createCmmcPolicyDocuments(deps: ProgramDeps, state: ProgramState) {
  const { clock } = deps;
  const { asMember, asManager, requireProfile, loadState, today } = state;

  const policyDto = (d: PolicyRow): PolicyDocDto => {
    const t = today();
    const inForce = isInForce(d, t);
    const overdue = inForce ? reviewOverdueSince(d, t) : null;
    return {
      id: d.id,
      kind: d.kind as PolicyKind,
      version: d.version,
      title: d.title,
      status: d.status as 'draft' | 'approved',
      effectiveDate: dayOf(d.effective_date),
      inForce,
      reviewOverdueSince: overdue,
      countsForScoring: inForce && overdue === null,
      approvedAt: d.approved_at ? iso(d.approved_at) : null,
      approvedByEmail: d.approved_by_email,
      nextReviewDate: dayOf(d.next_review_date),
      createdAt: iso(d.created_at),
      updatedAt: iso(d.updated_at),
    };
  };

  /**
   * A review date must be after the effective date, not before today and at most three years
   * ahead; path names the field in the error details.
   */
  function checkReviewDate(reviewDate: string, effectiveDate: string, path: string): void {
    const t = today();
    const max = oneYearAfter(oneYearAfter(oneYearAfter(t)));
    const problem =
      reviewDate <= effectiveDate
        ? `The review date must be after the effective date (${effectiveDate}).`
        : reviewDate < t
          ? `The review date must not be in the past (today is ${t}).`
          : reviewDate > max
            ? `The review date must be at most ${MAX_REVIEW_YEARS} years ahead (${max}).`
            : null;
    if (problem) throw new AppError('validation_failed', problem, { details: [{ path, message: problem }] });
  }

  /** Approves one locked draft in the caller's transaction (the checks are the caller's). */
  async function approveDraft(
    tx: Tx,
    tenantId: string,
    caller: Caller,
    profile: ProfileRow,
    d: PolicyRow,
    effectiveDate: string,
    reviewDate: string,
  ): Promise<PolicyDocDto> {
    const now = clock.now();
    const row = await tx
      .updateTable('cmmc_policy_documents')
      .set({
        status: 'approved',
        approved_by: caller.userId,
        approved_by_email: caller.email,
        approved_at: now,
        effective_date: effectiveDate,
        next_review_date: reviewDate,
        updated_at: now,
      })
      .where('id', '=', d.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await state.audited(tx, tenantId, caller, 'cmmc.policy_approved', ['cmmc_policy_document', d.id], {
      kind: d.kind,
      version: d.version,
      effectiveDate,
      reviewDate,
      affirmingOfficial: { name: profile.affirming_official_name, email: profile.affirming_official_email },
    });
    return policyDto(row);
  }

  function getPolicy(tenantId: string, caller: Caller, docId: string): Promise<PolicyDocWithBody> {
    return asMember(tenantId, caller, async (tx) => {
      const d = await tx
        .selectFrom('cmmc_policy_documents')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('id', '=', docId)
        .executeTakeFirst();
      if (!d) throw appError('cmmc_policy_not_found', 'No such policy document in this tenant.');
      return { ...policyDto(d), body: d.body_markdown };
    });
  }

  return {
    policies(tenantId: string, caller: Caller): Promise<PoliciesResponse> {
      return asMember(tenantId, caller, async (tx, role) => {
        const p = await requireProfile(tx, tenantId);
        const st = await loadState(tx, p);
        // The newest version per kind, plus the version in force when that one is a newer draft.
        return {
          canManage: CMMC_ADMIN_ROLES.includes(role),
          /** Who may approve: the Affirming Official (isCaller: the signed-in user is them). */
          affirmingOfficial: state.officialDto(p, caller),
          canApprove: CMMC_ADMIN_ROLES.includes(role) && state.isAffirmingOfficial(p, caller),
          documents: POLICY_KINDS.map((kind) => {
            const versions = st.docs.filter((d) => d.kind === kind);
            const latest = versions[0];
            const inForce = versions.find((d) => isInForce(d, today()));
            return {
              kind,
              title: POLICY_TITLES[kind],
              latest: latest ? policyDto(latest) : null,
              inForce: inForce ? policyDto(inForce) : null,
            };
          }),
        };
      });
    },

    /**
     * (Re)generates the draft of every kind (or one) from the current Scope data; an existing
     * draft is rewritten, an approved one gets a new draft version.
     */
    generatePolicies(tenantId: string, caller: Caller, kinds: PolicyKind[] | null): Promise<{ generated: number }> {
      const now = clock.now();
      return asManager(tenantId, caller, async (tx) => {
        const p = await requireProfile(tx, tenantId);
        const company = companyOf(p);
        const generated: string[] = [];
        for (const kind of kinds ?? POLICY_KINDS) {
          const body = generatePolicy(kind, company);
          const latest = await tx
            .selectFrom('cmmc_policy_documents')
            .select(['id', 'version', 'status'])
            .where('tenant_id', '=', tenantId)
            .where('profile_id', '=', p.id)
            .where('kind', '=', kind)
            .orderBy('version', 'desc')
            .limit(1)
            .executeTakeFirst();
          if (latest?.status === 'draft') {
            await tx
              .updateTable('cmmc_policy_documents')
              .set({ body_markdown: body, updated_at: now })
              .where('id', '=', latest.id)
              .execute();
            generated.push(latest.id);
          } else {
            const row = await tx
              .insertInto('cmmc_policy_documents')
              .values({
                tenant_id: tenantId,
                profile_id: p.id,
                kind,
                version: (latest?.version ?? 0) + 1,
                title: POLICY_TITLES[kind],
                body_markdown: body,
                created_by: caller.userId,
                created_at: now,
                updated_at: now,
              })
              .returning('id')
              .executeTakeFirstOrThrow();
            generated.push(row.id);
          }
        }
        await state.audited(tx, tenantId, caller, 'cmmc.policies_generated', ['compliance_profile', p.id], {
          kinds: kinds ?? POLICY_KINDS,
        });
        return { generated: generated.length };
      });
    },

    getPolicy,

    async policyPdf(tenantId: string, caller: Caller, docId: string) {
      const d = await getPolicy(tenantId, caller, docId);
      const stage = d.status === 'approved' ? `approved, effective ${d.effectiveDate}` : 'DRAFT (not in force)';
      const footer = `${d.title} v${d.version} - ${stage}`;
      const pdf = await renderPolicyPdf({ title: d.title, body: d.body, footer });
      return { fileName: `${d.kind.replace(/_/g, '-')}-v${d.version}.pdf`, pdf: Buffer.from(pdf) };
    },

    /**
     * Approves a draft (the Affirming Official, who must be an owner or admin; recorded as the
     * approver) with its effective date; it counts from that date until its review date (by
     * default one year after the approval day).
     */
    approvePolicy(
      tenantId: string,
      caller: Caller,
      docId: string,
      effectiveDate: string,
      reviewDate?: string | null,
    ): Promise<PolicyDocDto> {
      return asManager(tenantId, caller, async (tx) => {
        const d = await tx
          .selectFrom('cmmc_policy_documents')
          .selectAll()
          .where('tenant_id', '=', tenantId)
          .where('id', '=', docId)
          .forUpdate()
          .executeTakeFirst();
        if (!d) throw appError('cmmc_policy_not_found', 'No such policy document in this tenant.');
        if (d.status !== 'draft')
          throw appError(
            'cmmc_policy_not_draft',
            'This version is already approved; generate a new draft to change it.',
          );
        const profile = await requireProfile(tx, tenantId);
        state.requireAffirmingOfficial(profile, caller, 'approve policies');
        const review = reviewDate ?? oneYearAfter(today());
        checkReviewDate(review, effectiveDate, 'body.reviewDate');
        return approveDraft(tx, tenantId, caller, profile, d, effectiveDate, review);
      });
    },

    /**
     * Approves several drafts in one transaction (the confirmation that lists them all): every
     * one is approved, or none is; the error names each document that could not be.
     */
    approvePolicies(
      tenantId: string,
      caller: Caller,
      body: { documentIds: string[]; effectiveDate: string; reviewDate?: string | null },
    ): Promise<{ documents: PolicyDocDto[] }> {
      return asManager(tenantId, caller, async (tx) => {
        const profile = await requireProfile(tx, tenantId);
        state.requireAffirmingOfficial(profile, caller, 'approve policies');
        const review = body.reviewDate ?? oneYearAfter(today());
        checkReviewDate(review, body.effectiveDate, 'body.reviewDate');
        const ids = [...new Set(body.documentIds)];
        const rows = await tx
          .selectFrom('cmmc_policy_documents')
          .selectAll()
          .where('tenant_id', '=', tenantId)
          .where('id', 'in', ids)
          .orderBy('kind')
          .forUpdate()
          .execute();
        const byId = new Map(rows.map((r) => [r.id, r]));
        const problems: { path: string; code: string; message: string }[] = [];
        body.documentIds.forEach((id, i) => {
          const d = byId.get(id);
          if (!d)
            problems.push({
              path: `body.documentIds.${i}`,
              code: 'cmmc_policy_not_found',
              message: 'No such policy document in this tenant.',
            });
          else if (d.status !== 'draft')
            problems.push({
              path: `body.documentIds.${i}`,
              code: 'cmmc_policy_not_draft',
              message: `${d.title} v${d.version} is already approved.`,
            });
        });
        if (problems.length)
          throw new AppError(
            'cmmc_policies_not_approvable',
            `${problems.length} of the ${body.documentIds.length} documents cannot be approved; nothing was approved.`,
            { details: problems },
          );
        const kinds = rows.map((r) => r.kind);
        if (new Set(kinds).size !== kinds.length)
          throw new AppError('validation_failed', 'Approve at most one draft of each policy at a time.', {
            details: [{ path: 'body.documentIds', message: 'Two drafts of the same policy.' }],
          });
        const documents: PolicyDocDto[] = [];
        for (const d of rows)
          documents.push(await approveDraft(tx, tenantId, caller, profile, d, body.effectiveDate, review));
        return { documents };
      });
    },

    /**
     * Records a review of the approved version in force: its new review date (the Affirming
     * Official). A policy past its review date counts again from here.
     */
    setReviewDate(tenantId: string, caller: Caller, docId: string, reviewDate: string): Promise<PolicyDocDto> {
      const now = clock.now();
      return asManager(tenantId, caller, async (tx) => {
        const d = await tx
          .selectFrom('cmmc_policy_documents')
          .selectAll()
          .where('tenant_id', '=', tenantId)
          .where('id', '=', docId)
          .forUpdate()
          .executeTakeFirst();
        if (!d) throw appError('cmmc_policy_not_found', 'No such policy document in this tenant.');
        if (d.status !== 'approved')
          throw appError('cmmc_policy_not_approved', 'Only an approved version has a review date; approve it first.');
        const profile = await requireProfile(tx, tenantId);
        state.requireAffirmingOfficial(profile, caller, 'review policies');
        checkReviewDate(reviewDate, dayOf(d.effective_date)!, 'body.reviewDate');
        const row = await tx
          .updateTable('cmmc_policy_documents')
          .set({ next_review_date: reviewDate, updated_at: now })
          .where('id', '=', d.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await state.audited(tx, tenantId, caller, 'cmmc.policy_review_date_set', ['cmmc_policy_document', d.id], {
          kind: d.kind,
          version: d.version,
          previousReviewDate: dayOf(d.next_review_date),
          reviewDate,
        });
        return policyDto(row);
      });
    },
  };
}
