// Policy documents of the CMMC program: the generated Level 1 policy set per profile, kept as
// versions (draft → approved with an effective date), shown as Markdown and PDF. Only an approved
// version effective today counts for scoring. The Affirming Official approves.
import { appError } from '../lib/errors.ts';
import { CMMC_ADMIN_ROLES } from './cmmc-access.ts';
import { generatePolicy, POLICY_TITLES, renderPolicyPdf, type PolicyCompany } from './cmmc-policies.ts';
import {
  addDays,
  dayOf,
  EXPIRY_DAY,
  iso,
  type Caller,
  type ProgramDeps,
  type ProgramState,
} from './cmmc-program-state.ts';
import type { PoliciesResponse, PolicyDocDto, PolicyDocWithBody } from './cmmc-program-schemas.ts';
import { c, parseJson, type ProfileRow } from './cmmc-repo.ts';
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
  const { asMember, requireProfile, loadState, today } = state;

  const policyDto = (d: PolicyRow): PolicyDocDto => {
    const eff = dayOf(d.effective_date);
    return {
      id: d.id,
      kind: d.kind as PolicyKind,
      version: d.version,
      title: d.title,
      status: d.status as 'draft' | 'approved',
      effectiveDate: eff,
      /** Approved and effective today: counts for scoring. */
      inForce: d.status === 'approved' && eff !== null && eff <= today(),
      approvedAt: d.approved_at ? iso(d.approved_at) : null,
      approvedByEmail: d.approved_by_email,
      nextReviewDate: dayOf(d.next_review_date),
      createdAt: iso(d.created_at),
      updatedAt: iso(d.updated_at),
    };
  };

  function getPolicy(tenantId: string, caller: Caller, docId: string): Promise<PolicyDocWithBody> {
    return asMember(tenantId, caller, false, async (tx) => {
      const d = await c(tx).selectFrom('cmmc_policy_documents').selectAll().where('id', '=', docId).executeTakeFirst();
      if (!d) throw appError('cmmc_policy_not_found', 'No such policy document in this tenant.');
      return { ...policyDto(d), body: d.body_markdown };
    });
  }

  return {
    policies(tenantId: string, caller: Caller): Promise<PoliciesResponse> {
      return asMember(tenantId, caller, false, async (tx, role) => {
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
            const inForce = versions.find(
              (d) => d.status === 'approved' && d.effective_date && dayOf(d.effective_date) <= today(),
            );
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
      return asMember(tenantId, caller, true, async (tx) => {
        const p = await requireProfile(tx, tenantId);
        const company = companyOf(p);
        const generated: string[] = [];
        for (const kind of kinds ?? POLICY_KINDS) {
          const body = generatePolicy(kind, company);
          const latest = await c(tx)
            .selectFrom('cmmc_policy_documents')
            .select(['id', 'version', 'status'])
            .where('profile_id', '=', p.id)
            .where('kind', '=', kind)
            .orderBy('version', 'desc')
            .limit(1)
            .executeTakeFirst();
          if (latest?.status === 'draft') {
            await c(tx)
              .updateTable('cmmc_policy_documents')
              .set({ body_markdown: body, updated_at: now })
              .where('id', '=', latest.id)
              .execute();
            generated.push(latest.id);
          } else {
            const row = await c(tx)
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
     * approver) with its effective date; it counts from that date.
     */
    approvePolicy(tenantId: string, caller: Caller, docId: string, effectiveDate: string): Promise<PolicyDocDto> {
      const now = clock.now();
      return asMember(tenantId, caller, true, async (tx) => {
        const d = await c(tx)
          .selectFrom('cmmc_policy_documents')
          .selectAll()
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
        const row = await c(tx)
          .updateTable('cmmc_policy_documents')
          .set({
            status: 'approved',
            approved_by: caller.userId,
            approved_by_email: caller.email,
            approved_at: now,
            effective_date: effectiveDate,
            next_review_date: addDays(effectiveDate, EXPIRY_DAY),
            updated_at: now,
          })
          .where('id', '=', d.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await state.audited(tx, tenantId, caller, 'cmmc.policy_approved', ['cmmc_policy_document', d.id], {
          kind: d.kind,
          version: d.version,
          effectiveDate,
          affirmingOfficial: { name: profile.affirming_official_name, email: profile.affirming_official_email },
        });
        return policyDto(row);
      });
    },
  };
}
