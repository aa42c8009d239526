// Attestations of the CMMC program: the items of the 15 requirements with their answers (yes, no,
// not applicable with a note) and the evidence files attached to them, stored in the tenant's
// object store. Members read; owners and admins answer and attach.
import { randomUUID } from 'node:crypto';
import { attachmentDisposition, evidenceKindFor, safeFileName } from '../compliance/evidence-files.ts';
import { appError, AppError, isAppError } from '../lib/errors.ts';
import { ATTESTATION_ITEMS, REQUIREMENTS } from './cmmc-catalogue.ts';
import { CMMC_ADMIN_ROLES } from './cmmc-access.ts';
import { iso, type Caller, type ProgramDeps, type ProgramState } from './cmmc-program-state.ts';
import type { Tx } from '../db/tenant.ts';
import type {
  AnswerResponse,
  AnswersResponse,
  AttestationsResponse,
  EvidenceFileDto,
  EvidenceUploadResponse,
} from './cmmc-program-schemas.ts';
import type { Answer } from './cmmc-scoring.ts';
import { putChecked, type EvidenceUpload } from './cmmc-uploads.ts';

function itemOf(itemId: string) {
  const item = ATTESTATION_ITEMS.find((i) => i.id === itemId);
  if (!item) throw appError('cmmc_item_not_found', `No attestation item ${itemId} in the Level 1 catalogue.`);
  return item;
}

interface EvidenceRow {
  id: string;
  requirement_id: string;
  item_id: string;
  file_name: string;
  content_type: string;
  size_bytes: string | number;
  sha256: string;
  uploaded_by_email: string | null;
  created_at: Date;
}

const evidenceDto = (e: EvidenceRow): EvidenceFileDto => ({
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

type AnswerBody = { answer: Answer; note: string | null };

const NOTE_REQUIRED = 'A note is required for not applicable.';

export function createCmmcAttestations(deps: ProgramDeps, state: ProgramState) {
  const { clock, storage } = deps;
  const { asMember, asManager, requireProfile, loadState } = state;

  /** Stores one answer in the caller's transaction: the row, its pending evidence files, the audit record. */
  async function store(tx: Tx, tenantId: string, caller: Caller, profileId: string, itemId: string, body: AnswerBody) {
    const item = itemOf(itemId);
    const now = clock.now();
    const answered = {
      answer: body.answer,
      note: body.note,
      answered_by: caller.userId,
      answered_by_email: caller.email,
      answered_at: now,
    };
    const row = await tx
      .insertInto('compliance_control_attestations')
      .values({
        tenant_id: tenantId,
        profile_id: profileId,
        requirement_id: item.requirementId,
        item_id: item.id,
        ...answered,
      })
      .onConflict((oc) => oc.columns(['profile_id', 'item_id']).doUpdateSet(answered))
      .returning(['id'])
      .executeTakeFirstOrThrow();
    await tx
      .updateTable('compliance_attestation_evidence')
      .set({ attestation_id: row.id })
      .where('profile_id', '=', profileId)
      .where('item_id', '=', item.id)
      .where('attestation_id', 'is', null)
      .execute();
    await state.audited(tx, tenantId, caller, 'cmmc.attestation_answered', ['compliance_control_attestation', row.id], {
      itemId: item.id,
      requirementId: item.requirementId,
      answer: body.answer,
    });
    return {
      itemId: item.id,
      answer: body.answer,
      note: body.note,
      answeredByEmail: caller.email,
      answeredAt: iso(now),
    };
  }

  return {
    attestations(tenantId: string, caller: Caller): Promise<AttestationsResponse> {
      return asMember(tenantId, caller, async (tx, role) => {
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

    answer(tenantId: string, caller: Caller, itemId: string, body: AnswerBody): Promise<AnswerResponse> {
      itemOf(itemId);
      if (body.answer === 'not_applicable' && !body.note?.trim())
        throw new AppError('validation_failed', 'Say why this item does not apply.', {
          details: [{ path: 'body.note', message: NOTE_REQUIRED }],
        });
      return asManager(tenantId, caller, async (tx) => {
        const p = await requireProfile(tx, tenantId);
        return store(tx, tenantId, caller, p.id, itemId, body);
      });
    },

    /**
     * Several answers in one transaction ("Save section", "Save all"): every one is checked first
     * and the error lists each bad one by its index and item id, so nothing is stored unless all
     * are valid. An item sent with the answer and note it already has is left as it was (its
     * "answered by" stays true).
     */
    answerMany(
      tenantId: string,
      caller: Caller,
      body: { answers: (AnswerBody & { itemId: string })[] },
    ): Promise<AnswersResponse> {
      const problems: { path: string; itemId: string; message: string }[] = [];
      const seen = new Set<string>();
      body.answers.forEach((a, i) => {
        const path = `body.answers.${i}`;
        if (!ATTESTATION_ITEMS.some((x) => x.id === a.itemId))
          problems.push({
            path: `${path}.itemId`,
            itemId: a.itemId,
            message: 'No such item in the Level 1 catalogue.',
          });
        else if (seen.has(a.itemId))
          problems.push({ path: `${path}.itemId`, itemId: a.itemId, message: 'This item is answered twice.' });
        else if (a.answer === 'not_applicable' && !a.note?.trim())
          problems.push({ path: `${path}.note`, itemId: a.itemId, message: NOTE_REQUIRED });
        seen.add(a.itemId);
      });
      if (problems.length)
        throw new AppError(
          'validation_failed',
          `${problems.length} of the ${body.answers.length} answers cannot be saved; nothing was saved.`,
          { details: problems },
        );
      return asManager(tenantId, caller, async (tx) => {
        const p = await requireProfile(tx, tenantId);
        const current = await tx
          .selectFrom('compliance_control_attestations')
          .select(['item_id', 'answer', 'note', 'answered_by_email', 'answered_at'])
          .where('tenant_id', '=', tenantId)
          .where('profile_id', '=', p.id)
          .forUpdate()
          .execute();
        const byItem = new Map(current.map((r) => [r.item_id, r]));
        const answers: AnswerResponse[] = [];
        let saved = 0;
        for (const a of body.answers) {
          const was = byItem.get(a.itemId);
          if (was && was.answer === a.answer && (was.note ?? null) === a.note) {
            answers.push({
              itemId: a.itemId,
              answer: a.answer,
              note: a.note,
              answeredByEmail: was.answered_by_email ?? '',
              answeredAt: iso(was.answered_at),
            });
            continue;
          }
          answers.push(await store(tx, tenantId, caller, p.id, a.itemId, { answer: a.answer, note: a.note }));
          saved += 1;
        }
        return { saved, unchanged: answers.length - saved, answers };
      });
    },

    /**
     * Streams a file to `cmmc-evidence/<id>` in the tenant's store, then records it (as the
     * compliance module does).
     */
    async uploadEvidence(
      tenantId: string,
      caller: Caller,
      itemId: string,
      file: EvidenceUpload,
    ): Promise<EvidenceUploadResponse> {
      const item = itemOf(itemId);
      const profileId = await asManager(tenantId, caller, async (tx) => (await requireProfile(tx, tenantId)).id);
      const fileName = safeFileName(file.fileName);
      const kind = evidenceKindFor(fileName);
      const id = randomUUID();
      const key = `cmmc-evidence/${id}`;
      const store = await storage.forTenant(tenantId);
      const put = await putChecked(store, key, file, fileName, kind, deps.evidenceMaxBytes);
      try {
        return await asManager(tenantId, caller, async (tx) => {
          const att = await tx
            .selectFrom('compliance_control_attestations')
            .select('id')
            .where('tenant_id', '=', tenantId)
            .where('profile_id', '=', profileId)
            .where('item_id', '=', item.id)
            .executeTakeFirst();
          const row = await tx
            .insertInto('compliance_attestation_evidence')
            .values({
              id,
              tenant_id: tenantId,
              profile_id: profileId,
              attestation_id: att?.id ?? null,
              requirement_id: item.requirementId,
              item_id: item.id,
              file_name: fileName,
              content_type: kind.contentType,
              size_bytes: put.size,
              sha256: put.sha256,
              storage_kind: store.kind,
              storage_key: key,
              uploaded_by: caller.userId,
              uploaded_by_email: caller.email,
              created_at: clock.now(),
            })
            .returningAll()
            .executeTakeFirstOrThrow();
          await state.audited(tx, tenantId, caller, 'cmmc.evidence_uploaded', ['compliance_attestation_evidence', id], {
            itemId: item.id,
            fileName,
            size: put.size,
            sha256: put.sha256,
          });
          return { evidence: evidenceDto(row) };
        });
      } catch (e) {
        await store.delete(key).catch(() => undefined);
        throw e;
      }
    },

    async openEvidence(tenantId: string, caller: Caller, evidenceId: string) {
      const row = await asMember(tenantId, caller, (tx) =>
        tx
          .selectFrom('compliance_attestation_evidence')
          .select(['file_name', 'content_type', 'sha256', 'storage_key'])
          .where('tenant_id', '=', tenantId)
          .where('id', '=', evidenceId)
          .where('deleted_at', 'is', null)
          .executeTakeFirst(),
      );
      if (!row) throw appError('cmmc_evidence_not_found', 'No such CMMC evidence file in this tenant.');
      const store = await storage.forTenant(tenantId);
      try {
        const { body } = await store.get(row.storage_key);
        return {
          fileName: row.file_name,
          contentType: row.content_type,
          sha256: row.sha256,
          body,
          disposition: attachmentDisposition(row.file_name),
        };
      } catch (e) {
        if (isAppError(e) && e.code === 'object_not_found')
          throw appError('cmmc_evidence_not_found', 'The evidence file is no longer in storage.');
        throw e;
      }
    },

    async deleteEvidence(tenantId: string, caller: Caller, evidenceId: string) {
      const key = await asManager(tenantId, caller, async (tx) => {
        const row = await tx
          .selectFrom('compliance_attestation_evidence')
          .select(['id', 'item_id', 'file_name', 'sha256', 'storage_key'])
          .where('tenant_id', '=', tenantId)
          .where('id', '=', evidenceId)
          .where('deleted_at', 'is', null)
          .forUpdate()
          .executeTakeFirst();
        if (!row) throw appError('cmmc_evidence_not_found', 'No such CMMC evidence file in this tenant.');
        await tx
          .updateTable('compliance_attestation_evidence')
          .set({ deleted_at: clock.now(), deleted_by: caller.userId })
          .where('id', '=', row.id)
          .execute();
        await state.audited(
          tx,
          tenantId,
          caller,
          'cmmc.evidence_deleted',
          ['compliance_attestation_evidence', row.id],
          { itemId: row.item_id, fileName: row.file_name, sha256: row.sha256 },
        );
        return row.storage_key;
      });
      await (await storage.forTenant(tenantId)).delete(key);
    },
  };
}
