// The state every section of the CMMC program reads: the program's dependencies, the date rules
// of the 365-day cycle, the profile's scoring state (devices, answers, policies, evidence, score)
// read in one transaction, its score view, and who the Affirming Official is. The sections
// (attestations, policy documents, SPRS, exports, renewals, handoff and status, staff list) each
// take this state and add their own operations; cmmc-program.ts puts them together.
import type { Kysely } from 'kysely';
import type { AuditService } from '../audit/index.ts';
import type { Mailer } from '../auth/mailer.ts';
import type { DB, DeviceAttestation } from '../db/schema.ts';
import type { Caller, Tx } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { appError } from '../lib/errors.ts';
import type { Outbox } from '../mesh/mesh-outbox.ts';
import type { StorageService } from '../storage/index.ts';
import { REQUIREMENTS } from './cmmc-catalogue.ts';
import { createCmmcAccess } from './cmmc-access.ts';
import { cmmcRepo, parseJson, type ProfileRow } from './cmmc-repo.ts';
import type { ScoreResponse } from './cmmc-program-schemas.ts';
import { attestationCurrent, DEVICE_STALE_DAYS } from './cmmc-schemas.ts';
import { scoreAll, type Answer, type PolicyKind, type ScoringDevice } from './cmmc-scoring.ts';

/** The signed-in user (the one tenant-wide Caller type). */
export type { Caller };

export interface ProgramDeps {
  db: Kysely<DB>;
  audit: AuditService;
  clock: Clock;
  storage: StorageService;
  outbox: Outbox;
  mailer: Mailer;
  publicBaseUrl: string;
  bidPeer: string | undefined;
  managementPeer: string | undefined;
  evidenceMaxBytes: number;
  log: { warn(obj: unknown, msg?: string): void };
}

export const DAY_MS = 86_400_000;
export const HANDOFF_TTL_MS = 30 * 60_000;
export const RENEWAL_DUE_DAY = 335;
export const EXPIRY_DAY = 365;
/** The affirmation text the officer accepts; its version is stored with each confirmation. */
export const AFFIRMATION_TEXT_VERSION = 'rampart-l1-affirmation-2025-01';
export const AFFIRMATION_TEXT =
  'I, the Affirming Official, confirm that I entered this CMMC Level 1 self-assessment in SPRS myself, that the ' +
  'information systems within the scope are compliant with the 15 requirements of FAR 52.204-21(b)(1), and that ' +
  'the entry is true. Misrepresentation may be subject to 18 U.S.C. 1001 and the False Claims Act.';

export const iso = (d: Date | string) => new Date(d).toISOString();
export function dayOf(d: Date | string): string;
export function dayOf(d: Date | string | null): string | null;
export function dayOf(d: Date | string | null): string | null {
  if (d === null) return null;
  return typeof d === 'string' ? d.slice(0, 10) : d.toISOString().slice(0, 10);
}
export const addDays = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
export const daysBetween = (from: string, to: string) =>
  Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);

/**
 * The status as of `today`, from the stored one and the cycle's dates: day 365 or later is expired
 * and day 335 or later of a compliant profile is renewal due, whether or not the sweep has run.
 * Every read (pages, exports, cmmc_status, staff list) shows this; the sweep only records it and
 * sends the notices.
 */
export function effectiveStatus(p: Pick<ProfileRow, 'status' | 'status_date'>, today: string): ProfileRow['status'] {
  if (p.status_date === null || p.status === 'in_progress' || p.status === 'expired') return p.status;
  const day = daysBetween(dayOf(p.status_date), today);
  if (day >= EXPIRY_DAY) return 'expired';
  return p.status === 'compliant' && day >= RENEWAL_DUE_DAY ? 'renewal_due' : p.status;
}

/** The profile with its status as of today (effectiveStatus). */
export const asOf = <T extends Pick<ProfileRow, 'status' | 'status_date'>>(p: T, today: string): T => ({
  ...p,
  status: effectiveStatus(p, today),
});

/** The SPRS status the bid peer and the exports show for a profile status (as of today: see asOf). */
export function sprsStatus(p: Pick<ProfileRow, 'status'>): string {
  return p.status === 'in_progress' ? 'not_filed' : p.status === 'expired' ? 'expired' : 'filed';
}

/** Approved with an effective date on or before `today` (whether or not its review is overdue). */
export const isInForce = (d: { status: string; effective_date: string | null }, today: string) =>
  d.status === 'approved' && d.effective_date !== null && dayOf(d.effective_date) <= today;

/** The review date of an approved policy when `today` is past it (it then counts no more), else null. */
export const reviewOverdueSince = (d: { next_review_date: string | null }, today: string) =>
  d.next_review_date !== null && dayOf(d.next_review_date) < today ? dayOf(d.next_review_date) : null;

/** The default review date of a policy approved on `day`: one calendar year later (29 Feb → 1 Mar). */
export function oneYearAfter(day: string): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCFullYear(d.getUTCFullYear() + 1);
  return d.toISOString().slice(0, 10);
}

/** The latest SPRS confirmation's columns the score view shows. */
export interface LatestConfirmation {
  status_date: string;
  next_due: string;
  confirmed_at: Date;
  affirmed_in_sprs_on: string;
  sprs_proof_file_name: string | null;
}

/** The score as every member sees it (the score route adds who may confirm). */
export type ScoreView = Omit<ScoreResponse, 'affirmingOfficial' | 'canConfirm'>;

export function createProgramState(deps: ProgramDeps) {
  const { clock } = deps;
  const today = () => dayOf(clock.now());
  const access = createCmmcAccess(deps.db);
  const { asMember } = access;
  /** The tenant's profile, its status as of today (asOf). */
  const requireProfile = async (tx: Tx, tenantId: string) => asOf(await access.requireProfile(tx, tenantId), today());

  /**
   * Everything scoring needs, read in the caller's transaction (tenant or service role). Retired
   * computers are left out of the score and listed apart (`retired`).
   */
  async function loadState(tx: Tx, p: ProfileRow) {
    const now = clock.now();
    const all = await cmmcRepo.latestRunsPerHost(tx, p.id, { includeRetired: true });
    const runs = all.filter((r) => r.retired_at === null);
    /** Computers out of scope, with why and when (the SPRS snapshot keeps them). */
    const retired = all
      .filter((r) => r.retired_at !== null)
      .map((r) => ({
        hostname: r.hostname,
        os: r.os,
        lastRunAt: iso(r.received_at),
        retiredAt: iso(r.retired_at!),
        retiredByEmail: r.retired_by_email,
        reason: r.retired_note,
      }));
    const devices: (ScoringDevice & { receivedAt: string })[] = runs.map((r) => ({
      hostname: r.hostname,
      os: r.os,
      results: parseJson(r.results, {}),
      reasons: parseJson<Record<string, string>>(r.reasons, {}),
      pending: now.getTime() - new Date(r.received_at).getTime() > DEVICE_STALE_DAYS * DAY_MS,
      receivedAt: iso(r.received_at),
    }));
    const attestations = parseJson<DeviceAttestation[]>(p.device_attestations, []).map((a) => ({
      ...a,
      current: attestationCurrent(a, now),
    }));
    const answerRows = await tx
      .selectFrom('compliance_control_attestations')
      .selectAll()
      .where('tenant_id', '=', p.tenant_id)
      .where('profile_id', '=', p.id)
      .execute();
    const answers = new Map(answerRows.map((a) => [a.item_id, { answer: a.answer as Answer, note: a.note }]));
    const docs = await tx
      .selectFrom('cmmc_policy_documents')
      .select([
        'id',
        'kind',
        'version',
        'title',
        'status',
        'effective_date',
        'approved_at',
        'approved_by_email',
        'next_review_date',
        'created_at',
        'updated_at',
      ])
      .where('tenant_id', '=', p.tenant_id)
      .where('profile_id', '=', p.id)
      .orderBy('kind')
      .orderBy('version', 'desc')
      .execute();
    const t = today();
    // Per kind, the version in force (the newest approved one effective today) counts until its
    // review date; from the day after, it is overdue and counts no more.
    const approvedPolicies = new Set<PolicyKind>();
    const overduePolicies = new Map<PolicyKind, string>();
    for (const d of docs) {
      const kind = d.kind as PolicyKind;
      if (approvedPolicies.has(kind) || overduePolicies.has(kind)) continue;
      if (!isInForce(d, t)) continue;
      const review = reviewOverdueSince(d, t);
      if (review) overduePolicies.set(kind, review);
      else approvedPolicies.add(kind);
    }
    const evidence = await tx
      .selectFrom('compliance_attestation_evidence')
      .select([
        'id',
        'requirement_id',
        'item_id',
        'file_name',
        'content_type',
        'size_bytes',
        'sha256',
        'storage_key',
        'uploaded_by_email',
        'created_at',
      ])
      .where('tenant_id', '=', p.tenant_id)
      .where('profile_id', '=', p.id)
      .where('deleted_at', 'is', null)
      .orderBy('created_at', 'desc')
      .execute();
    const score = scoreAll({
      devices,
      attestations,
      declaredDevices: p.declared_device_count,
      answers,
      approvedPolicies,
      overduePolicies,
    });
    return { devices, retired, attestations, answerRows, answers, docs, evidence, score };
  }

  const latestDevice = (devices: { receivedAt: string }[]) =>
    devices.reduce<string | null>((m, d) => (m === null || d.receivedAt > m ? d.receivedAt : m), null);

  function scoreDto(
    p: ProfileRow,
    st: Awaited<ReturnType<typeof loadState>>,
    handoff: LatestConfirmation | undefined,
  ): ScoreView {
    return {
      profileStatus: p.status,
      statusDate: dayOf(p.status_date),
      renewalDueAt: p.status_date ? addDays(dayOf(p.status_date), EXPIRY_DAY) : null,
      met: st.score.met,
      total: st.score.total,
      allMet: st.score.allMet,
      requirements: st.score.requirements.map((r) => {
        const req = REQUIREMENTS.find((x) => x.id === r.requirementId)!;
        return { ...r, title: req.title, aliases: [...req.aliases], far: req.far };
      }),
      devices: {
        count: st.devices.length,
        pending: st.devices.filter((d) => d.pending).length,
        latestRunAt: latestDevice(st.devices),
        coverage: st.score.coverage,
      },
      lastConfirmation: handoff
        ? {
            statusDate: dayOf(handoff.status_date),
            nextDue: dayOf(handoff.next_due),
            confirmedAt: iso(handoff.confirmed_at),
            affirmedInSprsOn: dayOf(handoff.affirmed_in_sprs_on),
            proofFileName: handoff.sprs_proof_file_name,
          }
        : null,
      affirmationText: AFFIRMATION_TEXT,
      affirmationTextVersion: AFFIRMATION_TEXT_VERSION,
      regression: p.status === 'not_compliant' ? parseJson(p.status_reason, null) : null,
    };
  }

  const latestHandoff = (tx: Tx, tenantId: string, profileId: string): Promise<LatestConfirmation | undefined> =>
    tx
      .selectFrom('compliance_handoffs')
      .select(['status_date', 'next_due', 'confirmed_at', 'affirmed_in_sprs_on', 'sprs_proof_file_name'])
      .where('tenant_id', '=', tenantId)
      .where('profile_id', '=', profileId)
      .orderBy('confirmed_at', 'desc')
      .limit(1)
      .executeTakeFirst();

  /** The profile, its scoring state and score view, and the caller's role, in one tenant transaction. */
  function controlsRows(tenantId: string, caller: Caller) {
    return asMember(tenantId, caller, async (tx, role) => {
      const p = await requireProfile(tx, tenantId);
      const st = await loadState(tx, p);
      const handoff = await latestHandoff(tx, tenantId, p.id);
      return { p, st, role, dto: scoreDto(p, st, handoff) };
    });
  }

  /**
   * The Affirming Official approves the policies and confirms the SPRS entry (the affirmation is
   * theirs, under 18 U.S.C. 1001); no delegation is provided for. The signed-in account's e-mail
   * must be the official's e-mail in Scope. Changing the official in Scope is an owner or admin
   * action and is audited.
   */
  const isAffirmingOfficial = (p: Pick<ProfileRow, 'affirming_official_email'>, caller: Caller) =>
    caller.email.trim().toLowerCase() === p.affirming_official_email.trim().toLowerCase();
  function requireAffirmingOfficial(
    p: Pick<ProfileRow, 'affirming_official_email' | 'affirming_official_name'>,
    caller: Caller,
    action: string,
  ): void {
    if (!isAffirmingOfficial(p, caller))
      throw appError(
        'cmmc_not_affirming_official',
        `Only the Affirming Official, ${p.affirming_official_name} (${p.affirming_official_email}), can ${action}. ` +
          'Sign in with that account, or change the Affirming Official in Scope.',
        {
          details: {
            affirmingOfficialName: p.affirming_official_name,
            affirmingOfficialEmail: p.affirming_official_email,
            signedInAs: caller.email,
          },
        },
      );
  }
  const officialDto = (p: ProfileRow, caller: Caller) => ({
    name: p.affirming_official_name,
    title: p.affirming_official_title,
    email: p.affirming_official_email,
    isCaller: isAffirmingOfficial(p, caller),
  });

  /** The audit record of a signed-in caller's action, written in the action's transaction. */
  const audited = (
    tx: Tx,
    tenantId: string,
    caller: Caller,
    action: string,
    [targetType, targetId]: [string, string],
    details: Record<string, unknown>,
  ) =>
    deps.audit.record(
      { tenantId, actorUserId: caller.userId, actorEmail: caller.email, action, targetType, targetId, details },
      tx,
    );

  return {
    today,
    audited,
    asMember: access.asMember,
    asManager: access.asManager,
    requireProfile,
    loadState,
    scoreDto,
    latestHandoff,
    controlsRows,
    isAffirmingOfficial,
    requireAffirmingOfficial,
    officialDto,
  };
}

export type ProgramState = ReturnType<typeof createProgramState>;
export type ScoringState = Awaited<ReturnType<ProgramState['loadState']>>;
