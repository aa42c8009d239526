// Score and SPRS of the CMMC program: the 15 requirements scored MET / NOT MET, the Affirming
// Official's confirmation of the SPRS entry they made (the service never files) with its frozen
// assessment snapshot and cmmc.compliant to the bid and management peers, and the optional proof
// file of the entry.
import { randomUUID } from 'node:crypto';
import { attachmentDisposition, evidenceKindFor, safeFileName } from '../compliance/evidence-files.ts';
import { withService } from '../db/tenant.ts';
import { sha256Hex } from '../lib/crypto.ts';
import { appError, AppError } from '../lib/errors.ts';
import { FAR_CLAUSE } from './cmmc-catalogue.ts';
import { CMMC_ADMIN_ROLES } from './cmmc-access.ts';
import { cmmcErrors } from './cmmc-errors.ts';
import type { CmmcEvents } from './cmmc-events.ts';
import {
  addDays,
  AFFIRMATION_TEXT_VERSION,
  dayOf,
  daysBetween,
  EXPIRY_DAY,
  iso,
  RENEWAL_DUE_DAY,
  type Caller,
  type ProgramDeps,
  type ProgramState,
} from './cmmc-program-state.ts';
import type { ScoreResponse, SprsConfirmationResponse, SprsProofResponse } from './cmmc-program-schemas.ts';
import { cageCodeProblem } from './cage-code.ts';
import { putChecked, type EvidenceUpload } from './cmmc-uploads.ts';

export interface SprsConfirmInput {
  statusDate: string;
  affirmedInSprsOn: string;
  scopeDescription: string;
  cageCodes: string[];
  affirm: true;
  affirmationTextVersion: string;
}

export function createCmmcSprs(deps: ProgramDeps, state: ProgramState, events: CmmcEvents) {
  const { db, clock, storage, outbox } = deps;
  const { asMember, asManager, requireProfile, loadState, today } = state;

  /** A profile saved before CAGE codes with I or O were refused: SPRS would not know the code. */
  function refuseInvalidCageCodes(p: { cage_code: string; additional_cage_codes: string[] }) {
    const invalid = [p.cage_code, ...p.additional_cage_codes].filter((x) => cageCodeProblem(x) !== null);
    if (!invalid.length) return;
    const many = invalid.length > 1;
    throw appError(
      'cmmc_cage_code_invalid',
      `The CAGE code${many ? 's' : ''} ${invalid.join(', ')} saved in Scope ${many ? 'are' : 'is'} not valid: ` +
        `${invalid.map((x) => cageCodeProblem(x)).join(' ')} ` +
        `Correct ${many ? 'them' : 'it'} in Scope and save, then confirm the SPRS entry.`,
      {
        details: {
          invalidCageCodes: invalid,
          fields: invalid.map((x) => (x === p.cage_code ? 'cageCode' : 'additionalCageCodes')),
        },
      },
    );
  }

  return {
    async score(tenantId: string, caller: Caller): Promise<ScoreResponse> {
      const { p, dto, role } = await state.controlsRows(tenantId, caller);
      /** Who may confirm the SPRS entry: the Affirming Official (an owner or admin). */
      return {
        ...dto,
        affirmingOfficial: state.officialDto(p, caller),
        canConfirm: CMMC_ADMIN_ROLES.includes(role) && state.isAffirmingOfficial(p, caller),
      };
    },

    /**
     * The officer confirms the SPRS entry they made (the service never files). Only at 15/15. The
     * profile becomes compliant with the status date as the cycle start, and cmmc.compliant goes
     * to the bid and management peers in the same transaction.
     */
    async confirmSprs(
      tenantId: string,
      caller: Caller,
      body: SprsConfirmInput,
      client: { address: string | null; userAgent: string | null },
    ): Promise<SprsConfirmationResponse> {
      await asManager(tenantId, caller, async () => undefined);
      const t = today();
      if (body.statusDate > t || body.affirmedInSprsOn > t)
        throw new AppError('validation_failed', 'Dates cannot be in the future.', {
          details: [
            { path: body.statusDate > t ? 'body.statusDate' : 'body.affirmedInSprsOn', message: 'Not after today.' },
          ],
        });
      if (daysBetween(body.statusDate, t) >= EXPIRY_DAY)
        throw new AppError(
          'validation_failed',
          'This status date is a year old or more: the assessment would already be expired.',
          {
            details: [{ path: 'body.statusDate', message: 'Less than 365 days ago.' }],
          },
        );
      if (body.affirmationTextVersion !== AFFIRMATION_TEXT_VERSION)
        throw appError('conflict', 'The affirmation text changed; reload the page and read it again.');
      return withService(db, async (tx) => {
        const p = await tx
          .selectFrom('compliance_profiles')
          .selectAll()
          .where('tenant_id', '=', tenantId)
          .forUpdate()
          .executeTakeFirst();
        if (!p) throw cmmcErrors.profileNotFound();
        state.requireAffirmingOfficial(p, caller, 'confirm the SPRS entry');
        refuseInvalidCageCodes(p);
        const st = await loadState(tx, p);
        if (!st.score.allMet)
          throw appError(
            'cmmc_not_all_met',
            `Only ${st.score.met} of 15 requirements are MET; the SPRS confirmation is possible at 15 of 15.`,
            {
              details: { met: st.score.met, total: st.score.total },
            },
          );
        const own = new Set([p.cage_code, ...p.additional_cage_codes]);
        const unknown = body.cageCodes.filter((x) => !own.has(x));
        if (!body.cageCodes.includes(p.cage_code) || unknown.length)
          throw new AppError(
            'validation_failed',
            'The CAGE codes must include the primary CAGE code and only codes of this profile.',
            {
              details: [
                {
                  path: 'body.cageCodes',
                  message: unknown.length ? `Not in the profile: ${unknown.join(', ')}` : `Include ${p.cage_code}.`,
                },
              ],
            },
          );
        const results = Object.fromEntries(st.score.requirements.map((r) => [r.requirementId, r.status]));
        const naJustifications = Object.fromEntries(
          st.score.requirements.filter((r) => r.status === 'NA').map((r) => [r.requirementId, r.naJustification ?? '']),
        );
        const snapshot = {
          farClause: FAR_CLAUSE,
          requirements: st.score.requirements,
          devices: st.devices,
          // The denominator and how it was met, and every computer taken out of scope with why and when.
          deviceCoverage: st.score.coverage,
          computerAttestations: st.attestations.map(({ hostname, statement, at, byEmail, current }) => ({
            hostname,
            statement,
            at,
            byEmail,
            current,
          })),
          retiredComputers: st.retired,
          attestations: st.answerRows.map((a) => ({
            itemId: a.item_id,
            answer: a.answer,
            note: a.note,
            answeredByEmail: a.answered_by_email,
            answeredAt: iso(a.answered_at),
          })),
          policies: st.docs
            .filter((d) => d.status === 'approved')
            .map((d) => ({ kind: d.kind, version: d.version, effectiveDate: dayOf(d.effective_date) })),
          evidence: st.evidence.map((e) => ({ itemId: e.item_id, fileName: e.file_name, sha256: e.sha256 })),
        };
        const snapshotJson = JSON.stringify(snapshot);
        const nextDue = addDays(body.statusDate, EXPIRY_DAY);
        const reminderAt = addDays(body.statusDate, RENEWAL_DUE_DAY);
        const now = clock.now();
        const row = await tx
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
        await tx
          .updateTable('compliance_profiles')
          .set({
            status: 'compliant',
            status_date: body.statusDate,
            status_changed_at: now,
            scope_description: body.scopeDescription,
            updated_at: now,
          })
          .where('id', '=', p.id)
          .execute();
        const sent = await events.emit(tx, p, 'cmmc.compliant', {
          status: 'compliant',
          statusDate: body.statusDate,
          renewalDueAt: nextDue,
        });
        await tx
          .insertInto('cmmc_renewal_notices')
          .values({ tenant_id: tenantId, profile_id: p.id, kind: 'compliant', day: t, event_id: sent[0] ?? null })
          .onConflict((oc) => oc.doNothing())
          .execute();
        await state.audited(tx, tenantId, caller, 'cmmc.sprs_confirmed', ['compliance_handoff', row.id], {
          statusDate: body.statusDate,
          affirmedInSprsOn: body.affirmedInSprsOn,
          cageCodes: body.cageCodes,
          nextDue,
          snapshotSha256: sha256Hex(snapshotJson),
        });
        outbox.nudge();
        return {
          confirmationId: row.id,
          status: 'compliant' as const,
          statusDate: body.statusDate,
          nextDue,
          reminderAt,
          assessmentSnapshotSha256: sha256Hex(snapshotJson),
          events: sent.length,
        };
      });
    },

    /**
     * The optional proof of the SPRS entry (a screenshot or PDF), attached to the latest
     * confirmation; a new file replaces the previous one.
     */
    async attachSprsProof(tenantId: string, caller: Caller, file: EvidenceUpload): Promise<SprsProofResponse> {
      const fileName = safeFileName(file.fileName);
      const kind = evidenceKindFor(fileName);
      if (!['application/pdf', 'image/png', 'image/jpeg'].includes(kind.contentType)) {
        file.stream.resume();
        throw appError('evidence_type_not_allowed', 'The SPRS proof must be a PDF, PNG or JPEG file.');
      }
      const handoff = await asManager(tenantId, caller, async (tx) => {
        const p = await requireProfile(tx, tenantId);
        return tx
          .selectFrom('compliance_handoffs')
          .select(['id', 'sprs_proof_storage_key'])
          .where('tenant_id', '=', tenantId)
          .where('profile_id', '=', p.id)
          .orderBy('confirmed_at', 'desc')
          .limit(1)
          .executeTakeFirst();
      });
      if (!handoff) {
        file.stream.resume();
        throw appError('cmmc_confirmation_not_found', 'Record the SPRS confirmation first, then attach its proof.');
      }
      const key = `cmmc-sprs-proof/${randomUUID()}`;
      const store = await storage.forTenant(tenantId);
      const put = await putChecked(store, key, file, fileName, kind, deps.evidenceMaxBytes);
      await withService(db, async (tx) => {
        await tx
          .updateTable('compliance_handoffs')
          .set({
            sprs_proof_storage_kind: store.kind,
            sprs_proof_storage_key: key,
            sprs_proof_file_name: fileName,
            sprs_proof_sha256: put.sha256,
          })
          .where('id', '=', handoff.id)
          .where('tenant_id', '=', tenantId)
          .execute();
        await state.audited(tx, tenantId, caller, 'cmmc.sprs_proof_attached', ['compliance_handoff', handoff.id], {
          fileName,
          size: put.size,
          sha256: put.sha256,
        });
      });
      if (handoff.sprs_proof_storage_key) await store.delete(handoff.sprs_proof_storage_key).catch(() => undefined);
      return { confirmationId: handoff.id, fileName, sha256: put.sha256 };
    },

    async openSprsProof(tenantId: string, caller: Caller) {
      const row = await asMember(tenantId, caller, (tx) =>
        tx
          .selectFrom('compliance_handoffs')
          .select(['sprs_proof_storage_key', 'sprs_proof_file_name', 'sprs_proof_sha256'])
          .where('tenant_id', '=', tenantId)
          .orderBy('confirmed_at', 'desc')
          .limit(1)
          .executeTakeFirst(),
      );
      if (!row?.sprs_proof_storage_key || !row.sprs_proof_file_name)
        throw appError('cmmc_evidence_not_found', 'No SPRS proof file is attached to the latest confirmation.');
      const store = await storage.forTenant(tenantId);
      const { body, info } = await store.get(row.sprs_proof_storage_key);
      return {
        fileName: row.sprs_proof_file_name,
        contentType: info.contentType ?? 'application/octet-stream',
        sha256: row.sprs_proof_sha256 ?? '',
        body,
        disposition: attachmentDisposition(row.sprs_proof_file_name),
      };
    },
  };
}
