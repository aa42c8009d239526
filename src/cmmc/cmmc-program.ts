// CMMC Level 1 program, after Scope and device checks: attestations (with evidence files in the
// tenant's object store), the generated policy set (draft → approved), scoring, the officer's
// SPRS confirmation (with cmmc.compliant to the bid and management peers through the outbox), the
// exports, the daily renewal sweep, the bid peer's cmmc_handoff / cmmc_status flows and the staff
// dashboard. Members read; owners and admins write.
import { randomUUID } from 'node:crypto';
import { sha256Hex } from '../lib/crypto.ts';
import type { Readable } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import type { AuditService } from '../audit/index.ts';
import type { Mailer } from '../auth/mailer.ts';
import { attachmentDisposition, createSniffer, evidenceKindFor, extensionOf, safeFileName } from '../compliance/evidence-files.ts';
import type { DB } from '../db/schema.ts';
import { withService, type Tx } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { appError, AppError, isAppError } from '../lib/errors.ts';
import { randomToken } from '../lib/ids.ts';
import type { FlowContext } from '../mesh/mesh-flows.ts';
import type { Outbox } from '../mesh/mesh-outbox.ts';
import type { ObjectStore, StorageService } from '../storage/index.ts';
import { ATTESTATION_ITEMS, FAR_CLAUSE, REQUIREMENTS } from './cmmc-catalogue.ts';
import { CMMC_ADMIN_ROLES, createCmmcAccess } from './cmmc-access.ts';
import { cmmcErrors } from './cmmc-errors.ts';
import { generatePolicy, POLICY_TITLES, renderPolicyPdf, type PolicyCompany } from './cmmc-policies.ts';
import { c, cmmcRepo, parseJson, type ProfileRow } from './cmmc-repo.ts';
import { cageCodeProblem } from './cage-code.ts';
import { DEVICE_STALE_DAYS } from './cmmc-schemas.ts';
import { POLICY_KINDS, scoreAll, type Answer, type PolicyKind, type ScoringDevice } from './cmmc-scoring.ts';
import { buildZip, type ZipEntry } from './zip-writer.ts';

export interface Caller {
  userId: string;
  email: string;
}

const DAY_MS = 86_400_000;
export const HANDOFF_TTL_MS = 30 * 60_000;
export const RENEWAL_DUE_DAY = 335;
export const EXPIRY_DAY = 365;
/** cmmc_status lists at most this many profiles when a CAGE code matches several. */
export const STATUS_MAX_MATCHES = 10;
/** The affirmation text the officer accepts; its version is stored with each confirmation. */
export const AFFIRMATION_TEXT_VERSION = 'rampart-l1-affirmation-2025-01';
export const AFFIRMATION_TEXT =
  'I, the Affirming Official, confirm that I entered this CMMC Level 1 self-assessment in SPRS myself, that the information systems within the scope are compliant with the 15 requirements of FAR 52.204-21(b)(1), and that the entry is true. Misrepresentation may be subject to 18 U.S.C. 1001 and the False Claims Act.';

const iso = (d: Date | string) => new Date(d).toISOString();
const dayOf = (d: Date | string | null): string | null => (d === null ? null : typeof d === 'string' ? d.slice(0, 10) : d.toISOString().slice(0, 10));
const addDays = (day: string, n: number) => new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
const daysBetween = (from: string, to: string) => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);

/** A CSV cell a spreadsheet would run as a formula (= + - @ tab CR, after any blanks) gets a leading apostrophe. */
export function csvCell(v: string | number | null | undefined): string {
  if (v === null || v === undefined) return '';
  let s = typeof v === 'number' ? String(v) : /^[\s\u00a0\ufeff]*[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  if (/[",\r\n]/.test(s)) s = `"${s.replace(/"/g, '""')}"`;
  return s;
}
export const CSV_BOM = '\ufeff';
export const buildCsv = (header: string[], rows: (string | number | null)[][]) => CSV_BOM + [header, ...rows].map((r) => r.map(csvCell).join(',')).join('\r\n') + '\r\n';

/** `cmmc-controls-<YYYYMMDD>-<HHMMSS>.csv` (UTC). */
export function controlsFileName(now: Date, ext: 'csv' | 'json' | 'zip', stem = 'cmmc-controls'): string {
  const s = now.toISOString();
  return `${stem}-${s.slice(0, 10).replace(/-/g, '')}-${s.slice(11, 19).replace(/:/g, '')}.${ext}`;
}

function companyOf(p: ProfileRow): PolicyCompany {
  return {
    companyName: p.company_name,
    cageCode: p.cage_code,
    additionalCageCodes: p.additional_cage_codes,
    companyAddress: p.company_address,
    scopeDescription: p.scope_description,
    mailPlatform: p.mail_platform,
    biddingUsers: parseJson(p.bidding_users, []),
    affirmingOfficial: { name: p.affirming_official_name, title: p.affirming_official_title, email: p.affirming_official_email },
  };
}

export interface EvidenceUpload {
  fileName: string;
  stream: Readable;
  truncated?: () => boolean;
}

export function createCmmcProgram(deps: {
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
}) {
  const { db, audit, clock, storage, outbox } = deps;
  const today = () => dayOf(clock.now())!;

  const { asMember, requireProfile } = createCmmcAccess(db);

  /**
   * Streams an upload into the store while its content is checked against its file type (the
   * compliance module's sniffer); a refused, oversized or broken upload leaves nothing stored.
   */
  async function putChecked(store: ObjectStore, key: string, file: EvidenceUpload, fileName: string, kind: ReturnType<typeof evidenceKindFor>) {
    try {
      const sniffer = createSniffer(kind, extensionOf(fileName));
      file.stream.once('error', (e) => sniffer.destroy(e));
      sniffer.on('error', () => undefined);
      const put = await store.put(key, file.stream.pipe(sniffer), { maxBytes: deps.evidenceMaxBytes, contentType: kind.contentType });
      if (file.truncated?.()) throw appError('payload_too_large', 'The file is too large.');
      return put;
    } catch (e) {
      file.stream.resume();
      await store.delete(key).catch(() => undefined);
      if (isAppError(e)) throw e;
      if ((e as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw appError('payload_too_large', 'The file is too large.');
      throw e;
    }
  }

  /** Everything scoring needs, read in the caller's transaction (tenant or service role). Retired computers are left out. */
  async function loadState(tx: Tx, p: ProfileRow) {
    const now = clock.now();
    const runs = await cmmcRepo.latestRunsPerHost(tx, p.id);
    const devices: (ScoringDevice & { receivedAt: string })[] = runs.map((r) => ({
      hostname: r.hostname,
      os: r.os,
      results: parseJson(r.results, {}),
      reasons: parseJson<Record<string, string>>(r.reasons, {}),
      pending: now.getTime() - new Date(r.received_at).getTime() > DEVICE_STALE_DAYS * DAY_MS,
      receivedAt: iso(r.received_at),
    }));
    const answerRows = await c(tx).selectFrom('compliance_control_attestations').selectAll().where('profile_id', '=', p.id).execute();
    const answers = new Map(answerRows.map((a) => [a.item_id, { answer: a.answer as Answer, note: a.note }]));
    const docs = await c(tx).selectFrom('cmmc_policy_documents').select(['id', 'kind', 'version', 'title', 'status', 'effective_date', 'approved_at', 'approved_by_email', 'next_review_date', 'created_at', 'updated_at']).where('profile_id', '=', p.id).orderBy('kind').orderBy('version', 'desc').execute();
    const t = today();
    const approvedPolicies = new Set<PolicyKind>(docs.filter((d) => d.status === 'approved' && d.effective_date && dayOf(d.effective_date)! <= t).map((d) => d.kind as PolicyKind));
    const evidence = await c(tx)
      .selectFrom('compliance_attestation_evidence')
      .select(['id', 'requirement_id', 'item_id', 'file_name', 'content_type', 'size_bytes', 'sha256', 'storage_key', 'uploaded_by_email', 'created_at'])
      .where('profile_id', '=', p.id)
      .where('deleted_at', 'is', null)
      .orderBy('created_at', 'desc')
      .execute();
    const score = scoreAll({ devices, answers, approvedPolicies });
    return { devices, answerRows, answers, docs, evidence, score };
  }

  const latestDevice = (devices: { receivedAt: string }[]) => devices.reduce<string | null>((m, d) => (m === null || d.receivedAt > m ? d.receivedAt : m), null);

  function scoreDto(p: ProfileRow, st: Awaited<ReturnType<typeof loadState>>, handoff: { status_date: string; next_due: string; confirmed_at: Date; affirmed_in_sprs_on: string; sprs_proof_file_name: string | null } | undefined) {
    return {
      profileStatus: p.status,
      statusDate: dayOf(p.status_date),
      renewalDueAt: p.status_date ? addDays(dayOf(p.status_date)!, EXPIRY_DAY) : null,
      met: st.score.met,
      total: st.score.total,
      allMet: st.score.allMet,
      requirements: st.score.requirements.map((r) => {
        const req = REQUIREMENTS.find((x) => x.id === r.requirementId)!;
        return { ...r, title: req.title, aliases: [...req.aliases], far: req.far };
      }),
      devices: { count: st.devices.length, pending: st.devices.filter((d) => d.pending).length, latestRunAt: latestDevice(st.devices) },
      lastConfirmation: handoff ? { statusDate: dayOf(handoff.status_date)!, nextDue: dayOf(handoff.next_due)!, confirmedAt: iso(handoff.confirmed_at), affirmedInSprsOn: dayOf(handoff.affirmed_in_sprs_on)!, proofFileName: handoff.sprs_proof_file_name } : null,
      affirmationText: AFFIRMATION_TEXT,
      affirmationTextVersion: AFFIRMATION_TEXT_VERSION,
    };
  }

  const latestHandoff = (tx: Tx, profileId: string) =>
    c(tx).selectFrom('compliance_handoffs').select(['status_date', 'next_due', 'confirmed_at', 'affirmed_in_sprs_on', 'sprs_proof_file_name']).where('profile_id', '=', profileId).orderBy('confirmed_at', 'desc').limit(1).executeTakeFirst();

  /** The peers that hear about compliance events (bid and management), each once. */
  const eventPeers = () => [...new Set([deps.bidPeer, deps.managementPeer].filter((x): x is string => !!x))];

  /** Enqueues the event for each peer; request ids are made up front so the notice row can name them before the enqueue. */
  async function emit(tx: Tx, p: Pick<ProfileRow, 'id' | 'tenant_id' | 'cage_code' | 'additional_cage_codes' | 'company_name'>, kind: 'cmmc.compliant' | 'cmmc.renewal_due' | 'cmmc.expired', data: Record<string, unknown>, requestIds: string[] = eventPeers().map(() => randomUUID())): Promise<string[]> {
    const ids: string[] = [];
    let n = 0;
    const titles = { 'cmmc.compliant': 'is CMMC Level 1 compliant', 'cmmc.renewal_due': 'CMMC Level 1 renewal is due', 'cmmc.expired': 'CMMC Level 1 self-assessment expired' };
    for (const peer of eventPeers()) {
      ids.push(
        await outbox.enqueue(tx, {
          peer,
          requestId: requestIds[n++] ?? randomUUID(),
          flow: 'event_report',
          eventType: kind,
          severity: kind === 'cmmc.expired' ? 'warning' : 'info',
          payload: { kind, severity: kind === 'cmmc.expired' ? 'warning' : 'info', title: `${p.company_name} (CAGE ${p.cage_code}) ${titles[kind]}`, occurredAt: clock.now().toISOString(), data: { cageCode: p.cage_code, cageCodes: [p.cage_code, ...p.additional_cage_codes], companyName: p.company_name, profileId: p.id, ...data } },
        }),
      );
    }
    return ids;
  }

  function itemOf(itemId: string) {
    const item = ATTESTATION_ITEMS.find((i) => i.id === itemId);
    if (!item) throw appError('cmmc_item_not_found', `No attestation item ${itemId} in the Level 1 catalogue.`);
    return item;
  }

  const evidenceDto = (e: { id: string; requirement_id: string; item_id: string; file_name: string; content_type: string; size_bytes: string | number; sha256: string; uploaded_by_email: string | null; created_at: Date }) => ({
    id: e.id,
    requirementId: e.requirement_id,
    itemId: e.item_id,
    fileName: e.file_name,
    contentType: e.content_type,
    sizeBytes: Number(e.size_bytes),
    sha256: e.sha256,
    uploadedByEmail: e.uploaded_by_email,
    createdAt: iso(e.created_at),
  });

  const policyDto = (d: { id: string; kind: string; version: number; title: string; status: string; effective_date: string | null; approved_at: Date | null; approved_by_email: string | null; next_review_date: string | null; created_at: Date; updated_at: Date }) => {
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

  async function controlsRows(tenantId: string, caller: Caller) {
    return asMember(tenantId, caller, false, async (tx, role) => {
      const p = await requireProfile(tx, tenantId);
      const st = await loadState(tx, p);
      const handoff = await latestHandoff(tx, p.id);
      return { p, st, role, dto: scoreDto(p, st, handoff) };
    });
  }

  /**
   * The Affirming Official approves the policies and confirms the SPRS entry (research §2: the
   * affirmation is theirs, under 18 U.S.C. 1001); the spec provides no delegation. The signed-in
   * account's e-mail must be the official's e-mail in Scope. Changing the official in Scope is an
   * owner or admin action and is audited.
   */
  const isAffirmingOfficial = (p: Pick<ProfileRow, 'affirming_official_email'>, caller: Caller) => caller.email.trim().toLowerCase() === p.affirming_official_email.trim().toLowerCase();
  function requireAffirmingOfficial(p: Pick<ProfileRow, 'affirming_official_email' | 'affirming_official_name'>, caller: Caller, action: string): void {
    if (!isAffirmingOfficial(p, caller))
      throw appError('cmmc_not_affirming_official', `Only the Affirming Official, ${p.affirming_official_name} (${p.affirming_official_email}), can ${action}. Sign in with that account, or change the Affirming Official in Scope.`, {
        details: { affirmingOfficialName: p.affirming_official_name, affirmingOfficialEmail: p.affirming_official_email, signedInAs: caller.email },
      });
  }
  const officialDto = (p: ProfileRow, caller: Caller) => ({ name: p.affirming_official_name, title: p.affirming_official_title, email: p.affirming_official_email, isCaller: isAffirmingOfficial(p, caller) });

  function sprsStatus(p: Pick<ProfileRow, 'status'>): string {
    return p.status === 'in_progress' ? 'not_filed' : p.status === 'expired' ? 'expired' : 'filed';
  }

  return {
    // ---- attestations ---------------------------------------------------------------------------
    attestations(tenantId: string, caller: Caller) {
      return asMember(tenantId, caller, false, async (tx, role) => {
        const p = await requireProfile(tx, tenantId);
        const st = await loadState(tx, p);
        const byItem = new Map(st.answerRows.map((a) => [a.item_id, a]));
        return {
          canManage: CMMC_ADMIN_ROLES.includes(role),
          requirements: REQUIREMENTS.map((r) => ({
            id: r.id,
            title: r.title,
            statement: r.statement,
            items: r.items.map((i) => {
              const a = byItem.get(i.id);
              return {
                id: i.id,
                text: i.platformText?.[p.mail_platform] ?? i.text,
                answer: a?.answer ?? null,
                note: a?.note ?? null,
                answeredByEmail: a?.answered_by_email ?? null,
                answeredAt: a ? iso(a.answered_at) : null,
                evidence: st.evidence.filter((e) => e.item_id === i.id).map(evidenceDto),
              };
            }),
          })),
        };
      });
    },

    answer(tenantId: string, caller: Caller, itemId: string, body: { answer: Answer; note: string | null }) {
      const item = itemOf(itemId);
      if (body.answer === 'not_applicable' && !body.note?.trim()) throw new AppError('validation_failed', 'Say why this item does not apply.', { details: [{ path: 'body.note', message: 'A note is required for not applicable.' }] });
      const now = clock.now();
      return asMember(tenantId, caller, true, async (tx) => {
        const p = await requireProfile(tx, tenantId);
        const row = await c(tx)
          .insertInto('compliance_control_attestations')
          .values({ tenant_id: tenantId, profile_id: p.id, requirement_id: item.requirementId, item_id: item.id, answer: body.answer, note: body.note, answered_by: caller.userId, answered_by_email: caller.email, answered_at: now })
          .onConflict((oc) => oc.columns(['profile_id', 'item_id']).doUpdateSet({ answer: body.answer, note: body.note, answered_by: caller.userId, answered_by_email: caller.email, answered_at: now }))
          .returning(['id'])
          .executeTakeFirstOrThrow();
        await c(tx).updateTable('compliance_attestation_evidence').set({ attestation_id: row.id }).where('profile_id', '=', p.id).where('item_id', '=', item.id).where('attestation_id', 'is', null).execute();
        await audit.record({ tenantId, actorUserId: caller.userId, actorEmail: caller.email, action: 'cmmc.attestation_answered', targetType: 'compliance_control_attestation', targetId: row.id, details: { itemId: item.id, requirementId: item.requirementId, answer: body.answer } }, tx);
        return { itemId: item.id, answer: body.answer, note: body.note, answeredByEmail: caller.email, answeredAt: iso(now) };
      });
    },

    /** Streams a file to `cmmc-evidence/<id>` in the tenant's store, then records it (as the compliance module does). */
    async uploadEvidence(tenantId: string, caller: Caller, itemId: string, file: EvidenceUpload) {
      const item = itemOf(itemId);
      const profileId = await asMember(tenantId, caller, true, async (tx) => (await requireProfile(tx, tenantId)).id);
      const fileName = safeFileName(file.fileName);
      const kind = evidenceKindFor(fileName);
      const id = randomUUID();
      const key = `cmmc-evidence/${id}`;
      const store = await storage.forTenant(tenantId);
      const put = await putChecked(store, key, file, fileName, kind);
      try {
        return await asMember(tenantId, caller, true, async (tx) => {
          const att = await c(tx).selectFrom('compliance_control_attestations').select('id').where('profile_id', '=', profileId).where('item_id', '=', item.id).executeTakeFirst();
          const row = await c(tx)
            .insertInto('compliance_attestation_evidence')
            .values({ id, tenant_id: tenantId, profile_id: profileId, attestation_id: att?.id ?? null, requirement_id: item.requirementId, item_id: item.id, file_name: fileName, content_type: kind.contentType, size_bytes: put.size, sha256: put.sha256, storage_kind: store.kind, storage_key: key, uploaded_by: caller.userId, uploaded_by_email: caller.email, created_at: clock.now() })
            .returningAll()
            .executeTakeFirstOrThrow();
          await audit.record({ tenantId, actorUserId: caller.userId, actorEmail: caller.email, action: 'cmmc.evidence_uploaded', targetType: 'compliance_attestation_evidence', targetId: id, details: { itemId: item.id, fileName, size: put.size, sha256: put.sha256 } }, tx);
          return { evidence: evidenceDto(row) };
        });
      } catch (e) {
        await store.delete(key).catch(() => undefined);
        throw e;
      }
    },

    async openEvidence(tenantId: string, caller: Caller, evidenceId: string) {
      const row = await asMember(tenantId, caller, false, (tx) => c(tx).selectFrom('compliance_attestation_evidence').select(['file_name', 'content_type', 'sha256', 'storage_key']).where('id', '=', evidenceId).where('deleted_at', 'is', null).executeTakeFirst());
      if (!row) throw appError('cmmc_evidence_not_found', 'No such CMMC evidence file in this tenant.');
      const store = await storage.forTenant(tenantId);
      try {
        const { body } = await store.get(row.storage_key);
        return { fileName: row.file_name, contentType: row.content_type, sha256: row.sha256, body, disposition: attachmentDisposition(row.file_name) };
      } catch (e) {
        if (isAppError(e) && e.code === 'object_not_found') throw appError('cmmc_evidence_not_found', 'The evidence file is no longer in storage.');
        throw e;
      }
    },

    async deleteEvidence(tenantId: string, caller: Caller, evidenceId: string) {
      const key = await asMember(tenantId, caller, true, async (tx) => {
        const row = await c(tx).selectFrom('compliance_attestation_evidence').select(['id', 'item_id', 'file_name', 'sha256', 'storage_key']).where('id', '=', evidenceId).where('deleted_at', 'is', null).forUpdate().executeTakeFirst();
        if (!row) throw appError('cmmc_evidence_not_found', 'No such CMMC evidence file in this tenant.');
        await c(tx).updateTable('compliance_attestation_evidence').set({ deleted_at: clock.now(), deleted_by: caller.userId }).where('id', '=', row.id).execute();
        await audit.record({ tenantId, actorUserId: caller.userId, actorEmail: caller.email, action: 'cmmc.evidence_deleted', targetType: 'compliance_attestation_evidence', targetId: row.id, details: { itemId: row.item_id, fileName: row.file_name, sha256: row.sha256 } }, tx);
        return row.storage_key;
      });
      await (await storage.forTenant(tenantId)).delete(key);
    },

    // ---- policies -------------------------------------------------------------------------------
    policies(tenantId: string, caller: Caller) {
      return asMember(tenantId, caller, false, async (tx, role) => {
        const p = await requireProfile(tx, tenantId);
        const st = await loadState(tx, p);
        // The newest version per kind, plus the version in force when that one is a newer draft.
        return {
          canManage: CMMC_ADMIN_ROLES.includes(role),
          /** Who may approve: the Affirming Official (isCaller: the signed-in user is them). */
          affirmingOfficial: officialDto(p, caller),
          canApprove: CMMC_ADMIN_ROLES.includes(role) && isAffirmingOfficial(p, caller),
          documents: POLICY_KINDS.map((kind) => {
            const versions = st.docs.filter((d) => d.kind === kind);
            const latest = versions[0];
            const inForce = versions.find((d) => d.status === 'approved' && d.effective_date && dayOf(d.effective_date)! <= today());
            return { kind, title: POLICY_TITLES[kind], latest: latest ? policyDto(latest) : null, inForce: inForce ? policyDto(inForce) : null };
          }),
        };
      });
    },

    /** (Re)generates the draft of every kind (or one) from the current Scope data; an existing draft is rewritten, an approved one gets a new draft version. */
    generatePolicies(tenantId: string, caller: Caller, kinds: PolicyKind[] | null) {
      const now = clock.now();
      return asMember(tenantId, caller, true, async (tx) => {
        const p = await requireProfile(tx, tenantId);
        const company = companyOf(p);
        const generated: string[] = [];
        for (const kind of kinds ?? POLICY_KINDS) {
          const body = generatePolicy(kind, company);
          const latest = await c(tx).selectFrom('cmmc_policy_documents').select(['id', 'version', 'status']).where('profile_id', '=', p.id).where('kind', '=', kind).orderBy('version', 'desc').limit(1).executeTakeFirst();
          if (latest?.status === 'draft') {
            await c(tx).updateTable('cmmc_policy_documents').set({ body_markdown: body, updated_at: now }).where('id', '=', latest.id).execute();
            generated.push(latest.id);
          } else {
            const row = await c(tx)
              .insertInto('cmmc_policy_documents')
              .values({ tenant_id: tenantId, profile_id: p.id, kind, version: (latest?.version ?? 0) + 1, title: POLICY_TITLES[kind], body_markdown: body, created_by: caller.userId, created_at: now, updated_at: now })
              .returning('id')
              .executeTakeFirstOrThrow();
            generated.push(row.id);
          }
        }
        await audit.record({ tenantId, actorUserId: caller.userId, actorEmail: caller.email, action: 'cmmc.policies_generated', targetType: 'compliance_profile', targetId: p.id, details: { kinds: kinds ?? POLICY_KINDS } }, tx);
        return { generated: generated.length };
      });
    },

    getPolicy(tenantId: string, caller: Caller, docId: string) {
      return asMember(tenantId, caller, false, async (tx) => {
        const d = await c(tx).selectFrom('cmmc_policy_documents').selectAll().where('id', '=', docId).executeTakeFirst();
        if (!d) throw appError('cmmc_policy_not_found', 'No such policy document in this tenant.');
        return { ...policyDto(d), body: d.body_markdown };
      });
    },

    async policyPdf(tenantId: string, caller: Caller, docId: string) {
      const d = await this.getPolicy(tenantId, caller, docId);
      const footer = `${d.title} v${d.version} - ${d.status === 'approved' ? `approved, effective ${d.effectiveDate}` : 'DRAFT (not in force)'}`;
      const pdf = await renderPolicyPdf({ title: d.title, body: d.body, footer });
      return { fileName: `${d.kind.replace(/_/g, '-')}-v${d.version}.pdf`, pdf: Buffer.from(pdf) };
    },

    /** Approves a draft (the Affirming Official, who must be an owner or admin; recorded as the approver) with its effective date; it counts from that date. */
    approvePolicy(tenantId: string, caller: Caller, docId: string, effectiveDate: string) {
      const now = clock.now();
      return asMember(tenantId, caller, true, async (tx) => {
        const d = await c(tx).selectFrom('cmmc_policy_documents').selectAll().where('id', '=', docId).forUpdate().executeTakeFirst();
        if (!d) throw appError('cmmc_policy_not_found', 'No such policy document in this tenant.');
        if (d.status !== 'draft') throw appError('cmmc_policy_not_draft', 'This version is already approved; generate a new draft to change it.');
        const profile = await requireProfile(tx, tenantId);
        requireAffirmingOfficial(profile, caller, 'approve policies');
        const row = await c(tx)
          .updateTable('cmmc_policy_documents')
          .set({ status: 'approved', approved_by: caller.userId, approved_by_email: caller.email, approved_at: now, effective_date: effectiveDate, next_review_date: addDays(effectiveDate, EXPIRY_DAY), updated_at: now })
          .where('id', '=', d.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await audit.record({ tenantId, actorUserId: caller.userId, actorEmail: caller.email, action: 'cmmc.policy_approved', targetType: 'cmmc_policy_document', targetId: d.id, details: { kind: d.kind, version: d.version, effectiveDate, affirmingOfficial: { name: profile.affirming_official_name, email: profile.affirming_official_email } } }, tx);
        return policyDto(row);
      });
    },

    // ---- score and SPRS ---------------------------------------------------------------------------
    async score(tenantId: string, caller: Caller) {
      const { p, dto, role } = await controlsRows(tenantId, caller);
      /** Who may confirm the SPRS entry: the Affirming Official (an owner or admin). */
      return { ...dto, affirmingOfficial: officialDto(p, caller), canConfirm: CMMC_ADMIN_ROLES.includes(role) && isAffirmingOfficial(p, caller) };
    },

    /**
     * The officer confirms the SPRS entry they made (the service never files). Only at 15/15. The
     * profile becomes compliant with the status date as the cycle start, and cmmc.compliant goes
     * to the bid and management peers in the same transaction.
     */
    async confirmSprs(
      tenantId: string,
      caller: Caller,
      body: { statusDate: string; affirmedInSprsOn: string; scopeDescription: string; cageCodes: string[]; affirm: true; affirmationTextVersion: string },
      client: { address: string | null; userAgent: string | null },
    ) {
      await asMember(tenantId, caller, true, async () => undefined);
      const t = today();
      if (body.statusDate > t || body.affirmedInSprsOn > t) throw new AppError('validation_failed', 'Dates cannot be in the future.', { details: [{ path: body.statusDate > t ? 'body.statusDate' : 'body.affirmedInSprsOn', message: 'Not after today.' }] });
      if (daysBetween(body.statusDate, t) >= EXPIRY_DAY) throw new AppError('validation_failed', 'This status date is a year old or more: the assessment would already be expired.', { details: [{ path: 'body.statusDate', message: 'Less than 365 days ago.' }] });
      if (body.affirmationTextVersion !== AFFIRMATION_TEXT_VERSION) throw appError('conflict', 'The affirmation text changed; reload the page and read it again.');
      return withService(db, async (tx) => {
        const p = await c(tx).selectFrom('compliance_profiles').selectAll().where('tenant_id', '=', tenantId).forUpdate().executeTakeFirst();
        if (!p) throw cmmcErrors.profileNotFound();
        requireAffirmingOfficial(p, caller, 'confirm the SPRS entry');
        // A profile saved before CAGE codes with I or O were refused: SPRS would not know the code.
        const invalid = [p.cage_code, ...p.additional_cage_codes].filter((x) => cageCodeProblem(x) !== null);
        if (invalid.length)
          throw appError('cmmc_cage_code_invalid', `The CAGE code${invalid.length > 1 ? 's' : ''} ${invalid.join(', ')} saved in Scope ${invalid.length > 1 ? 'are' : 'is'} not valid: ${invalid.map((x) => cageCodeProblem(x)).join(' ')} Correct ${invalid.length > 1 ? 'them' : 'it'} in Scope and save, then confirm the SPRS entry.`, {
            details: { invalidCageCodes: invalid, fields: invalid.map((x) => (x === p.cage_code ? 'cageCode' : 'additionalCageCodes')) },
          });
        const st = await loadState(tx, p);
        if (!st.score.allMet) throw appError('cmmc_not_all_met', `Only ${st.score.met} of 15 requirements are MET; the SPRS confirmation is possible at 15 of 15.`, { details: { met: st.score.met, total: st.score.total } });
        const own = new Set([p.cage_code, ...p.additional_cage_codes]);
        const unknown = body.cageCodes.filter((x) => !own.has(x));
        if (!body.cageCodes.includes(p.cage_code) || unknown.length) throw new AppError('validation_failed', 'The CAGE codes must include the primary CAGE code and only codes of this profile.', { details: [{ path: 'body.cageCodes', message: unknown.length ? `Not in the profile: ${unknown.join(', ')}` : `Include ${p.cage_code}.` }] });
        const results = Object.fromEntries(st.score.requirements.map((r) => [r.requirementId, r.status]));
        const naJustifications = Object.fromEntries(st.score.requirements.filter((r) => r.status === 'NA').map((r) => [r.requirementId, r.naJustification ?? '']));
        const snapshot = {
          farClause: FAR_CLAUSE,
          requirements: st.score.requirements,
          devices: st.devices,
          attestations: st.answerRows.map((a) => ({ itemId: a.item_id, answer: a.answer, note: a.note, answeredByEmail: a.answered_by_email, answeredAt: iso(a.answered_at) })),
          policies: st.docs.filter((d) => d.status === 'approved').map((d) => ({ kind: d.kind, version: d.version, effectiveDate: dayOf(d.effective_date) })),
          evidence: st.evidence.map((e) => ({ itemId: e.item_id, fileName: e.file_name, sha256: e.sha256 })),
        };
        const snapshotJson = JSON.stringify(snapshot);
        const nextDue = addDays(body.statusDate, EXPIRY_DAY);
        const reminderAt = addDays(body.statusDate, RENEWAL_DUE_DAY);
        const now = clock.now();
        const row = await c(tx)
          .insertInto('compliance_handoffs')
          .values({
            tenant_id: tenantId,
            profile_id: p.id,
            status_date: body.statusDate,
            scope_description: body.scopeDescription,
            cage_codes: body.cageCodes,
            overall_result: 'MET',
            requirement_results: JSON.stringify(results),
            na_justifications: JSON.stringify(naJustifications),
            affirming_official_name: p.affirming_official_name,
            affirming_official_title: p.affirming_official_title,
            affirming_official_email: p.affirming_official_email,
            affirmation_text_version: body.affirmationTextVersion,
            affirmed_in_sprs_on: body.affirmedInSprsOn,
            confirmed_by: caller.userId,
            confirmed_by_email: caller.email,
            confirmed_at: now,
            client_address: client.address,
            user_agent: client.userAgent?.slice(0, 500) ?? null,
            assessment_snapshot_sha256: sha256Hex(snapshotJson),
            assessment_snapshot: snapshotJson,
            next_due: nextDue,
            reminder_at: reminderAt,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        await c(tx).updateTable('compliance_profiles').set({ status: 'compliant', status_date: body.statusDate, status_changed_at: now, scope_description: body.scopeDescription, updated_at: now }).where('id', '=', p.id).execute();
        const events = await emit(tx, p, 'cmmc.compliant', { status: 'compliant', statusDate: body.statusDate, renewalDueAt: nextDue });
        await c(tx).insertInto('cmmc_renewal_notices').values({ tenant_id: tenantId, profile_id: p.id, kind: 'compliant', day: t, event_id: events[0] ?? null }).onConflict((oc) => oc.doNothing()).execute();
        await audit.record({ tenantId, actorUserId: caller.userId, actorEmail: caller.email, action: 'cmmc.sprs_confirmed', targetType: 'compliance_handoff', targetId: row.id, details: { statusDate: body.statusDate, affirmedInSprsOn: body.affirmedInSprsOn, cageCodes: body.cageCodes, nextDue, snapshotSha256: sha256Hex(snapshotJson) } }, tx);
        outbox.nudge();
        return { confirmationId: row.id, status: 'compliant' as const, statusDate: body.statusDate, nextDue, reminderAt, assessmentSnapshotSha256: sha256Hex(snapshotJson), events: events.length };
      });
    },

    /**
     * The optional proof of the SPRS entry (a screenshot or PDF), attached to the latest
     * confirmation; a new file replaces the previous one.
     */
    async attachSprsProof(tenantId: string, caller: Caller, file: EvidenceUpload) {
      const fileName = safeFileName(file.fileName);
      const kind = evidenceKindFor(fileName);
      if (!['application/pdf', 'image/png', 'image/jpeg'].includes(kind.contentType)) {
        file.stream.resume();
        throw appError('evidence_type_not_allowed', 'The SPRS proof must be a PDF, PNG or JPEG file.');
      }
      const handoff = await asMember(tenantId, caller, true, async (tx) => {
        const p = await requireProfile(tx, tenantId);
        return c(tx).selectFrom('compliance_handoffs').select(['id', 'sprs_proof_storage_key']).where('profile_id', '=', p.id).orderBy('confirmed_at', 'desc').limit(1).executeTakeFirst();
      });
      if (!handoff) {
        file.stream.resume();
        throw appError('cmmc_confirmation_not_found', 'Record the SPRS confirmation first, then attach its proof.');
      }
      const key = `cmmc-sprs-proof/${randomUUID()}`;
      const store = await storage.forTenant(tenantId);
      const put = await putChecked(store, key, file, fileName, kind);
      await withService(db, async (tx) => {
        await c(tx).updateTable('compliance_handoffs').set({ sprs_proof_storage_kind: store.kind, sprs_proof_storage_key: key, sprs_proof_file_name: fileName, sprs_proof_sha256: put.sha256 }).where('id', '=', handoff.id).where('tenant_id', '=', tenantId).execute();
        await audit.record({ tenantId, actorUserId: caller.userId, actorEmail: caller.email, action: 'cmmc.sprs_proof_attached', targetType: 'compliance_handoff', targetId: handoff.id, details: { fileName, size: put.size, sha256: put.sha256 } }, tx);
      });
      if (handoff.sprs_proof_storage_key) await store.delete(handoff.sprs_proof_storage_key).catch(() => undefined);
      return { confirmationId: handoff.id, fileName, sha256: put.sha256 };
    },

    async openSprsProof(tenantId: string, caller: Caller) {
      const row = await asMember(tenantId, caller, false, (tx) =>
        c(tx).selectFrom('compliance_handoffs').select(['sprs_proof_storage_key', 'sprs_proof_file_name', 'sprs_proof_sha256']).where('tenant_id', '=', tenantId).orderBy('confirmed_at', 'desc').limit(1).executeTakeFirst(),
      );
      if (!row?.sprs_proof_storage_key || !row.sprs_proof_file_name) throw appError('cmmc_evidence_not_found', 'No SPRS proof file is attached to the latest confirmation.');
      const store = await storage.forTenant(tenantId);
      const { body, info } = await store.get(row.sprs_proof_storage_key);
      return { fileName: row.sprs_proof_file_name, contentType: info.contentType ?? 'application/octet-stream', sha256: row.sprs_proof_sha256 ?? '', body, disposition: attachmentDisposition(row.sprs_proof_file_name) };
    },

    // ---- exports --------------------------------------------------------------------------------
    /** The spec's controls CSV: one row per requirement, company columns repeated. */
    async controlsCsv(tenantId: string, caller: Caller) {
      const { p, dto } = await controlsRows(tenantId, caller);
      // The spec's columns in the spec's order; the CMMC 2.0 alias is an extra column at the end.
      const header = ['control_code', 'title', 'status', 'missing_attestation_items', 'failing_device_checks', 'company', 'cage_code', 'sprs_status', 'renewal_due_date', 'latest_device_check', 'v2_alias'];
      const rows = dto.requirements.map((r) => [
        r.requirementId,
        r.title,
        r.implemented ? 'implemented' : 'not_implemented',
        [...r.missingItems, ...r.noItems, ...r.unjustifiedNa].join(' '),
        r.failingChecks.map((f) => `${f.hostname}:${f.checkId}=${f.result}`).join(' '),
        p.company_name,
        p.cage_code,
        sprsStatus(p),
        dto.renewalDueAt,
        dto.devices.latestRunAt,
        r.aliases.join(' '),
      ]);
      return { fileName: controlsFileName(clock.now(), 'csv'), csv: buildCsv(header, rows) };
    },

    async controlsJson(tenantId: string, caller: Caller) {
      const { p, dto } = await controlsRows(tenantId, caller);
      return {
        fileName: controlsFileName(clock.now(), 'json'),
        body: {
          company: p.company_name,
          cageCode: p.cage_code,
          cageCodes: [p.cage_code, ...p.additional_cage_codes],
          sprsStatus: sprsStatus(p),
          profileStatus: p.status,
          statusDate: dto.statusDate,
          renewalDueAt: dto.renewalDueAt,
          latestDeviceCheck: dto.devices.latestRunAt,
          met: dto.met,
          total: dto.total,
          controls: dto.requirements.map((r) => ({ controlCode: r.requirementId, aliases: r.aliases, title: r.title, status: r.implemented ? 'implemented' : 'not_implemented', result: r.status, missingAttestationItems: [...r.missingItems, ...r.noItems, ...r.unjustifiedNa], failingDeviceChecks: r.failingChecks, attestedDeviceChecks: r.attestedChecks, pendingDevices: r.pendingDevices, missingPolicy: r.missingPolicy })),
        },
      };
    },

    /**
     * The evidence pack: the controls (CSV and JSON), attestations, device results, policies (Markdown
     * and PDF), SPRS confirmations and the evidence files. No secret: no device token or its hash,
     * no storage keys, no client addresses.
     */
    async evidencePack(tenantId: string, caller: Caller) {
      const { p, st, dto } = await controlsRows(tenantId, caller);
      const now = clock.now();
      const csv = await this.controlsCsv(tenantId, caller);
      const json = await this.controlsJson(tenantId, caller);
      const { docs, confirmations } = await asMember(tenantId, caller, false, async (tx) => ({
        docs: await c(tx).selectFrom('cmmc_policy_documents').select(['kind', 'version', 'title', 'status', 'body_markdown', 'effective_date']).where('profile_id', '=', p.id).orderBy('kind').orderBy('version').execute(),
        confirmations: await c(tx)
          .selectFrom('compliance_handoffs')
          .select(['status_date', 'scope_description', 'cage_codes', 'overall_result', 'requirement_results', 'na_justifications', 'affirming_official_name', 'affirming_official_title', 'affirming_official_email', 'affirmation_text_version', 'affirmed_in_sprs_on', 'confirmed_by_email', 'confirmed_at', 'assessment_snapshot_sha256', 'next_due', 'sprs_proof_file_name', 'sprs_proof_sha256', 'sprs_proof_storage_key'])
          .where('profile_id', '=', p.id)
          .orderBy('confirmed_at')
          .execute(),
      }));
      const entries: ZipEntry[] = [
        { name: csv.fileName, data: Buffer.from(csv.csv, 'utf8'), date: now },
        { name: 'controls.json', data: Buffer.from(JSON.stringify(json.body, null, 2)), date: now },
        { name: 'attestations.json', data: Buffer.from(JSON.stringify(st.answerRows.map((a) => ({ requirementId: a.requirement_id, itemId: a.item_id, answer: a.answer, note: a.note, answeredByEmail: a.answered_by_email, answeredAt: iso(a.answered_at) })), null, 2)), date: now },
        { name: 'devices.json', data: Buffer.from(JSON.stringify(st.devices, null, 2)), date: now },
        {
          name: 'sprs-confirmations.json',
          data: Buffer.from(JSON.stringify(confirmations.map(({ sprs_proof_storage_key: _key, ...h }) => ({ ...h, status_date: dayOf(h.status_date), affirmed_in_sprs_on: dayOf(h.affirmed_in_sprs_on), next_due: dayOf(h.next_due), confirmed_at: iso(h.confirmed_at), requirement_results: parseJson(h.requirement_results, {}), na_justifications: parseJson(h.na_justifications, {}) })), null, 2)),
          date: now,
        },
      ];
      for (const d of docs) {
        const stem = `policies/${d.kind.replace(/_/g, '-')}-v${d.version}-${d.status}`;
        entries.push({ name: `${stem}.md`, data: Buffer.from(d.body_markdown, 'utf8'), date: now });
        entries.push({ name: `${stem}.pdf`, data: Buffer.from(await renderPolicyPdf({ title: d.title, body: d.body_markdown, footer: `${d.title} v${d.version} - ${d.status === 'approved' ? `approved, effective ${dayOf(d.effective_date)}` : 'DRAFT'}` })), date: now });
      }
      const store = st.evidence.length ? await storage.forTenant(tenantId) : null;
      const manifest: { itemId: string; fileName: string; path: string; sha256: string }[] = [];
      for (const e of st.evidence) {
        const { body } = await store!.get(e.storage_key);
        const chunks: Buffer[] = [];
        for await (const ch of body) chunks.push(ch as Buffer);
        const path = `evidence/${e.item_id}/${e.id.slice(0, 8)}-${e.file_name}`;
        entries.push({ name: path, data: Buffer.concat(chunks), date: new Date(e.created_at) });
        manifest.push({ itemId: e.item_id, fileName: e.file_name, path, sha256: e.sha256 });
      }
      for (const [i, h] of confirmations.entries()) {
        if (!h.sprs_proof_storage_key || !h.sprs_proof_file_name) continue;
        const { body } = await (await storage.forTenant(tenantId)).get(h.sprs_proof_storage_key);
        const chunks: Buffer[] = [];
        for await (const ch of body) chunks.push(ch as Buffer);
        entries.push({ name: `sprs-proof/${i + 1}-${h.sprs_proof_file_name}`, data: Buffer.concat(chunks), date: new Date(h.confirmed_at) });
      }
      entries.push({ name: 'manifest.json', data: Buffer.from(JSON.stringify({ generatedAt: now.toISOString(), company: p.company_name, cageCode: p.cage_code, met: dto.met, total: dto.total, evidence: manifest }, null, 2)), date: now });
      return { fileName: controlsFileName(now, 'zip', 'cmmc-evidence-pack'), zip: buildZip(entries) };
    },

    // ---- renewals (cron) ------------------------------------------------------------------------
    /**
     * The daily sweep (spec renewal table): day 335 of the cycle → renewal_due, reminder mail to the
     * Affirming Official, cmmc.renewal_due; day 365 → expired, cmmc.expired. The notice row (one per
     * profile, kind and day) is the claim, so a second run the same day does nothing.
     */
    async renewalSweep() {
      const t = today();
      const dueBefore = addDays(t, -RENEWAL_DUE_DAY);
      const events: { profileId: string; cageCode: string; event: string; requestIds: string[] }[] = [];
      const reminders: { to: string; company: string; due: string }[] = [];
      let renewalDue = 0;
      let expired = 0;
      await withService(db, async (tx) => {
        const rows = await c(tx).selectFrom('compliance_profiles').selectAll().where('status', 'in', ['compliant', 'renewal_due']).where('status_date', '<=', dueBefore).forUpdate().skipLocked().execute();
        for (const p of rows) {
          const day = daysBetween(dayOf(p.status_date)!, t);
          const kind = day >= EXPIRY_DAY ? 'expired' : p.status === 'compliant' && day >= RENEWAL_DUE_DAY ? 'renewal_due' : null;
          if (!kind) continue;
          const planned = eventPeers().map(() => randomUUID());
          const claim = await c(tx).insertInto('cmmc_renewal_notices').values({ tenant_id: p.tenant_id, profile_id: p.id, kind, day: t, event_id: planned[0] ?? null }).onConflict((oc) => oc.doNothing()).returning('id').executeTakeFirst();
          if (!claim) continue;
          const due = addDays(dayOf(p.status_date)!, EXPIRY_DAY);
          await c(tx).updateTable('compliance_profiles').set({ status: kind, status_changed_at: clock.now(), updated_at: clock.now() }).where('id', '=', p.id).execute();
          const event = kind === 'expired' ? 'cmmc.expired' : 'cmmc.renewal_due';
          const requestIds = await emit(tx, p, event, { status: kind, statusDate: dayOf(p.status_date), renewalDueAt: due, cycleDay: day }, planned);
          await audit.record({ tenantId: p.tenant_id, actorUserId: null, actorEmail: null, action: `cmmc.${kind}`, targetType: 'compliance_profile', targetId: p.id, details: { cycleDay: day, renewalDueAt: due } }, tx);
          if (kind === 'renewal_due') {
            renewalDue += 1;
            await c(tx).insertInto('cmmc_renewal_notices').values({ tenant_id: p.tenant_id, profile_id: p.id, kind: 'reminder', day: t }).onConflict((oc) => oc.doNothing()).execute();
            reminders.push({ to: p.affirming_official_email, company: `${p.company_name} (CAGE ${p.cage_code})`, due });
          } else expired += 1;
          events.push({ profileId: p.id, cageCode: p.cage_code, event, requestIds });
        }
      });
      if (events.length) outbox.nudge();
      // Handoff links are kept a day past their expiry (for support questions), then removed.
      await withService(db, (tx) => c(tx).deleteFrom('cmmc_handoff_links').where('expires_at', '<', new Date(clock.now().getTime() - DAY_MS)).execute());
      // After the commit: a failed mail is logged, the status change stands.
      for (const r of reminders) {
        await deps.mailer
          .send({ to: r.to, subject: `CMMC Level 1 renewal due by ${r.due}`, text: `The CMMC Level 1 self-assessment of ${r.company} expires on ${r.due}. Re-run the device checks, review the attestations and policies, re-enter the assessment in SPRS and confirm it in Rampart before then.`, link: `${deps.publicBaseUrl}/cmmc` })
          .catch((err: unknown) => deps.log.warn({ err }, 'cmmc renewal reminder mail failed'));
      }
      return { ok: true as const, day: t, renewalDue, expired, events };
    },

    // ---- mesh flows (bid peer) -----------------------------------------------------------------
    /** cmmc_handoff: a one-time link (30 minutes) to /cmmc/start, prefilled from the payload. Replays come from the dispatcher's idempotency record. */
    async handoffFlow(ctx: FlowContext, tx: Tx, payload: { cageCode: string; companyName: string; contactEmail: string }) {
      const token = randomToken(32);
      const expiresAt = new Date(ctx.now.getTime() + HANDOFF_TTL_MS);
      await c(tx)
        .insertInto('cmmc_handoff_links')
        .values({ token_hash: sha256Hex(token), caller: ctx.caller.name, request_id: ctx.requestId, payload: JSON.stringify(payload), cage_code: payload.cageCode, created_at: ctx.now, expires_at: expiresAt })
        .execute();
      return { url: `${deps.publicBaseUrl}/cmmc/start?token=${encodeURIComponent(token)}`, expiresAt: expiresAt.toISOString() };
    },

    /**
     * cmmc_status: a profile by CAGE code (primary or additional). CAGE codes are not unique across
     * tenants (a tenant types its own, and a parent's code can be another's additional code), so
     * several profiles can match. Then the answer says so instead of picking one: `ambiguous: true`,
     * `matchCount`, and `matches` (primary-code matches first, then oldest profile first; at most
     * 10), with no top-level status, so a caller never reads one company's compliance as another's.
     */
    async statusFlow(cageCode: string) {
      return withService(db, async (tx) => {
        const rows = await c(tx)
          .selectFrom('compliance_profiles')
          .select(['id', 'cage_code', 'company_name', 'status', 'status_date', 'created_at'])
          .where((eb) => eb.or([eb('cage_code', '=', cageCode), eb(sql<string>`${cageCode}`, '=', eb.fn.any('additional_cage_codes'))]))
          .orderBy(sql`cage_code = ${cageCode}`, 'desc')
          .orderBy('created_at')
          .orderBy('id')
          .limit(STATUS_MAX_MATCHES + 1)
          .execute();
        if (!rows.length) return { found: false as const, cageCode };
        const view = (p: (typeof rows)[number]) => {
          const sd = dayOf(p.status_date);
          return { primaryCageCode: p.cage_code, companyName: p.company_name, status: p.status, sprsStatus: sprsStatus(p), statusDate: sd, renewalDueAt: sd ? addDays(sd, EXPIRY_DAY) : null };
        };
        if (rows.length === 1) return { found: true as const, cageCode, ambiguous: false as const, ...view(rows[0]!) };
        const [{ n }] = await sql<{ n: number }>`select count(*)::int as n from compliance_profiles where cage_code = ${cageCode} or ${cageCode} = any(additional_cage_codes)`.execute(tx).then((r) => r.rows as [{ n: number }]);
        return { found: true as const, cageCode, ambiguous: true as const, matchCount: n, matches: rows.slice(0, STATUS_MAX_MATCHES).map(view) };
      });
    },

    /** Shows what a handoff link holds without consuming it (a GET, or a link previewer, must not use it up). */
    async handoffPreview(token: string) {
      const row = await withService(db, (tx) => c(tx).selectFrom('cmmc_handoff_links').select(['payload', 'expires_at', 'consumed_at']).where('token_hash', '=', sha256Hex(token)).executeTakeFirst());
      if (!row) throw appError('cmmc_handoff_invalid', 'This link is not valid.');
      if (row.consumed_at) throw appError('cmmc_handoff_used', 'This link was already used. Ask for a new one from the bid portal.');
      if (new Date(row.expires_at).getTime() <= clock.now().getTime()) throw appError('cmmc_handoff_expired', 'This link expired (links are valid for 30 minutes). Ask for a new one from the bid portal.');
      return { prefill: parseJson<Record<string, unknown>>(row.payload, {}), expiresAt: iso(row.expires_at) };
    },

    /**
     * A signed-in owner or admin claims the link for a tenant: single use, then the prefill goes to
     * Scope. When the tenant already has a profile the link is still used up (it was meant for this
     * company), but nothing is overwritten: profileExists tells the page to show the bid portal's
     * details for comparison instead of filling them in.
     */
    async claimHandoff(tenantId: string, caller: Caller, token: string) {
      const profileExists = await asMember(tenantId, caller, true, async (tx) => (await cmmcRepo.profileByTenant(tx, tenantId)) !== undefined);
      const now = clock.now();
      return withService(db, async (tx) => {
        const row = await c(tx).selectFrom('cmmc_handoff_links').selectAll().where('token_hash', '=', sha256Hex(token)).forUpdate().executeTakeFirst();
        if (!row) throw appError('cmmc_handoff_invalid', 'This link is not valid.');
        if (row.consumed_at) throw appError('cmmc_handoff_used', 'This link was already used. Ask for a new one from the bid portal.');
        if (new Date(row.expires_at).getTime() <= now.getTime()) throw appError('cmmc_handoff_expired', 'This link expired (links are valid for 30 minutes). Ask for a new one from the bid portal.');
        await c(tx).updateTable('cmmc_handoff_links').set({ consumed_at: now, consumed_by: caller.userId, tenant_id: tenantId }).where('id', '=', row.id).execute();
        await audit.record({ tenantId, actorUserId: caller.userId, actorEmail: caller.email, action: 'cmmc.handoff_claimed', targetType: 'cmmc_handoff_link', targetId: row.id, details: { caller: row.caller, cageCode: row.cage_code, profileExists } }, tx);
        return { prefill: parseJson<Record<string, unknown>>(row.payload, {}), profileExists };
      });
    },

    // ---- staff dashboard --------------------------------------------------------------------------
    /** listCmmcProfilesStaff: every profile with its device fields, the six tiles, filtered and searched; sorted by CAGE code. */
    async listStaff(opts: { filter: StaffFilter; q: string | null; limit: number; offset: number }) {
      const t = today();
      const staleBefore = new Date(clock.now().getTime() - DEVICE_STALE_DAYS * DAY_MS);
      const renewBy = addDays(t, 30 - EXPIRY_DAY);
      // One statement: the latest run per hostname (an index-only scan of endpoint_audit_runs_host_idx),
      // device counts per profile (a computer whose latest run is retired is not counted), the tiles over every profile, and the page. The CTEs are
      // materialized so each runs once (inlined, a selective search made the planner repeat the
      // device aggregate per profile).
      const like = opts.q ? `%${opts.q.replace(/[\\%_]/g, (m) => `\\${m}`)}%` : null;
      return withService(db, async (tx) => {
        const { rows } = await sql<StaffRow & { tiles: unknown }>`
          with latest as materialized (
            select distinct on (profile_id, lower(hostname)) profile_id, received_at, failing, retired_at
              from endpoint_audit_runs
             order by profile_id, lower(hostname), received_at desc
          ), dev as materialized (
            select profile_id, count(*)::int as device_count,
                   count(*) filter (where received_at < ${staleBefore})::int as pending_devices,
                   count(*) filter (where failing and received_at >= ${staleBefore})::int as failing_devices,
                   max(received_at) as latest_run_at
              from latest where retired_at is null group by profile_id
          ), base as materialized (
            select p.id, p.tenant_id, p.cage_code, p.company_name, p.status, p.status_date, p.updated_at,
                   p.device_token_hash is not null as device_link_issued,
                   coalesce(d.device_count, 0) as device_count,
                   coalesce(d.failing_devices, 0) as failing_devices,
                   coalesce(d.pending_devices, 0) as pending_devices,
                   d.latest_run_at,
                   (p.status in ('compliant', 'renewal_due') and p.status_date <= ${renewBy}::date) as renewing_soon,
                   (coalesce(d.device_count, 0) = 0 or coalesce(d.pending_devices, 0) > 0) as devices_pending
              from compliance_profiles p left join dev d on d.profile_id = p.id
          ), tiles as (
            select json_build_object('customers', count(*), 'compliant', count(*) filter (where status = 'compliant'),
                   'inProgress', count(*) filter (where status = 'in_progress'), 'expired', count(*) filter (where status = 'expired'),
                   'renewingSoon', count(*) filter (where renewing_soon), 'devicesPending', count(*) filter (where devices_pending)) as tiles
              from base
          )
          select t.tiles, page.* from tiles t left join lateral (
            select b.*, count(*) over () as total from base b
             where (${opts.filter}::text = 'all'
                    or (${opts.filter}::text = 'compliant' and b.status = 'compliant')
                    or (${opts.filter}::text = 'in_progress' and b.status = 'in_progress')
                    or (${opts.filter}::text = 'expired' and b.status = 'expired')
                    or (${opts.filter}::text = 'renewing_soon' and b.renewing_soon)
                    or (${opts.filter}::text = 'devices_pending' and b.devices_pending))
               and (${like}::text is null or b.cage_code ilike ${like}::text or b.company_name ilike ${like}::text)
             order by b.cage_code, b.id
             limit ${opts.limit} offset ${opts.offset}
          ) page on true`.execute(tx);
        const tiles = parseJson<Record<string, number>>(rows[0]!.tiles, {});
        const pageRows = rows.filter((r) => r.id !== null);
        return {
          tiles: { customers: Number(tiles.customers ?? 0), compliant: Number(tiles.compliant ?? 0), inProgress: Number(tiles.inProgress ?? 0), expired: Number(tiles.expired ?? 0), renewingSoon: Number(tiles.renewingSoon ?? 0), devicesPending: Number(tiles.devicesPending ?? 0) },
          total: pageRows[0] ? Number(pageRows[0].total) : 0,
          profiles: pageRows.map((r) => ({
            id: r.id,
            tenantId: r.tenant_id,
            cageCode: r.cage_code,
            companyName: r.company_name,
            status: r.status,
            statusDate: dayOf(r.status_date),
            renewalDueAt: r.status_date ? addDays(dayOf(r.status_date)!, EXPIRY_DAY) : null,
            device_link_issued: r.device_link_issued,
            device_count: Number(r.device_count),
            failing_devices: Number(r.failing_devices),
            pendingDevices: Number(r.pending_devices),
            latestRunAt: r.latest_run_at ? iso(r.latest_run_at) : null,
            updatedAt: iso(r.updated_at),
          })),
        };
      });
    },
  };
}

export type StaffFilter = 'all' | 'compliant' | 'in_progress' | 'expired' | 'renewing_soon' | 'devices_pending';
interface StaffRow {
  id: string;
  tenant_id: string;
  cage_code: string;
  company_name: string;
  status: string;
  status_date: string | Date | null;
  updated_at: Date;
  device_link_issued: boolean;
  device_count: number;
  failing_devices: number;
  pending_devices: number;
  latest_run_at: Date | null;
  total: string | number;
}

export type CmmcProgram = ReturnType<typeof createCmmcProgram>;
