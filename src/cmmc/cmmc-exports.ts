// Exports of the CMMC program: the controls CSV of docs/cmmc.md (one row per requirement, the company
// columns repeated, through csv-stringify), the controls JSON, and the evidence pack (a zip of the
// controls, attestations, device results, policies, SPRS confirmations and evidence files). No
// secret in any of them: no device token or its hash, no storage keys, no client addresses.
import { stringify } from 'csv-stringify/sync';
import type { Readable } from 'node:stream';
import { renderPolicyPdf } from './cmmc-policies.ts';
import { dayOf, iso, sprsStatus, type Caller, type ProgramDeps, type ProgramState } from './cmmc-program-state.ts';
import type { ControlsJson } from './cmmc-program-schemas.ts';
import { parseJson, type ProfileRow } from './cmmc-repo.ts';
import { buildZip, type ZipEntry } from './zip-writer.ts';

/** `cmmc-controls-<YYYYMMDD>-<HHMMSS>.csv` (UTC). */
export function controlsFileName(now: Date, ext: 'csv' | 'json' | 'zip', stem = 'cmmc-controls'): string {
  const s = now.toISOString();
  return `${stem}-${s.slice(0, 10).replace(/-/g, '')}-${s.slice(11, 19).replace(/:/g, '')}.${ext}`;
}

/**
 * A cell a spreadsheet would run as a formula gets a leading apostrophe: csv-stringify's
 * escape_formulas does so when the first character is = + - @ tab or CR, this cast when blanks
 * come first (" =cmd"). Cells with a line break are quoted (the record delimiter is CRLF).
 */
const CSV_OPTIONS = {
  bom: true,
  record_delimiter: 'windows',
  escape_formulas: true,
  quoted_match: /[\r\n]/,
  cast: { string: (v: string) => (/^[\s\u00a0\ufeff]+[=+\-@\t\r]/.test(v) ? `'${v}` : v) },
} as const;

// The documented columns (docs/cmmc.md) in their order; the CMMC 2.0 alias is an extra column at the end.
const CSV_HEADER = [
  'control_code',
  'title',
  'status',
  'missing_attestation_items',
  'failing_device_checks',
  'company',
  'cage_code',
  'sprs_status',
  'renewal_due_date',
  'latest_device_check',
  'v2_alias',
];

type Controls = Awaited<ReturnType<ProgramState['controlsRows']>>;
type ControlRow = Controls['dto']['requirements'][number];

/**
 * The two reason cells of a row. Every cause of NOT MET is named, so a `not_implemented` row never
 * has both empty: a policy not approved and in force as `policy:<kind>` (with
 * `:review_overdue_since_<date>` when past its review date) with the items, a computer
 * whose latest run is older than 30 days as `<hostname>:pending`, no current run at all as
 * `no_current_device_run`, fewer computers known than Scope declares as
 * `computers_unaccounted:<n>_of_<declared>`, next to the failing checks.
 */
export function reasonCells(r: ControlRow): [string, string] {
  const items = [...r.missingItems, ...r.noItems, ...r.unjustifiedNa];
  if (r.missingPolicy)
    items.push(
      r.policyReviewOverdueSince
        ? `policy:${r.missingPolicy}:review_overdue_since_${r.policyReviewOverdueSince}`
        : `policy:${r.missingPolicy}`,
    );
  const devices = r.failingChecks.map((f) => `${f.hostname}:${f.checkId}=${f.result}`);
  for (const h of r.pendingDevices) devices.push(`${h}:pending`);
  if (r.needsDeviceRun) devices.push('no_current_device_run');
  if (r.coverage && r.coverage.unaccounted > 0)
    devices.push(`computers_unaccounted:${r.coverage.unaccounted}_of_${r.coverage.declared}`);
  return [items.join(' '), devices.join(' ')];
}

function controlsCsv(p: ProfileRow, dto: Controls['dto']): string {
  const rows = dto.requirements.map((r) => [
    r.requirementId,
    r.title,
    r.implemented ? 'implemented' : 'not_implemented',
    ...reasonCells(r),
    p.company_name,
    p.cage_code,
    sprsStatus(p),
    dto.renewalDueAt,
    dto.devices.latestRunAt,
    r.aliases.join(' '),
  ]);
  return stringify([CSV_HEADER, ...rows], CSV_OPTIONS);
}

function controlsJson(p: ProfileRow, dto: Controls['dto']): ControlsJson {
  return {
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
    controls: dto.requirements.map((r) => ({
      controlCode: r.requirementId,
      aliases: r.aliases,
      title: r.title,
      status: r.implemented ? 'implemented' : 'not_implemented',
      result: r.status,
      missingAttestationItems: [...r.missingItems, ...r.noItems, ...r.unjustifiedNa],
      failingDeviceChecks: r.failingChecks,
      attestedDeviceChecks: r.attestedChecks,
      pendingDevices: r.pendingDevices,
      deviceCoverage: r.coverage,
      missingPolicy: r.missingPolicy,
      policyReviewOverdueSince: r.policyReviewOverdueSince,
    })),
  };
}

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const ch of body) chunks.push(ch as Buffer);
  return Buffer.concat(chunks);
}

const asJson = (v: unknown) => Buffer.from(JSON.stringify(v, null, 2));

export function createCmmcExports(deps: ProgramDeps, state: ProgramState) {
  const { clock, storage } = deps;

  return {
    /** The controls CSV (docs/cmmc.md): one row per requirement, company columns repeated. */
    async controlsCsv(tenantId: string, caller: Caller) {
      const { p, dto } = await state.controlsRows(tenantId, caller);
      return { fileName: controlsFileName(clock.now(), 'csv'), csv: controlsCsv(p, dto) };
    },

    async controlsJson(tenantId: string, caller: Caller) {
      const { p, dto } = await state.controlsRows(tenantId, caller);
      return { fileName: controlsFileName(clock.now(), 'json'), body: controlsJson(p, dto) };
    },

    /**
     * The evidence pack: the controls (CSV and JSON), attestations, device results, policies
     * (Markdown and PDF), SPRS confirmations and the evidence files.
     */
    async evidencePack(tenantId: string, caller: Caller) {
      const { p, st, dto } = await state.controlsRows(tenantId, caller);
      const now = clock.now();
      const { docs, confirmations } = await state.asMember(tenantId, caller, async (tx) => ({
        docs: await tx
          .selectFrom('cmmc_policy_documents')
          .select(['kind', 'version', 'title', 'status', 'body_markdown', 'effective_date'])
          .where('tenant_id', '=', tenantId)
          .where('profile_id', '=', p.id)
          .orderBy('kind')
          .orderBy('version')
          .execute(),
        confirmations: await tx
          .selectFrom('compliance_handoffs')
          .select([
            'status_date',
            'scope_description',
            'cage_codes',
            'overall_result',
            'requirement_results',
            'na_justifications',
            'affirming_official_name',
            'affirming_official_title',
            'affirming_official_email',
            'affirmation_text_version',
            'affirmed_in_sprs_on',
            'confirmed_by_email',
            'confirmed_at',
            'assessment_snapshot_sha256',
            'assessment_snapshot',
            'next_due',
            'sprs_proof_file_name',
            'sprs_proof_sha256',
            'sprs_proof_storage_key',
          ])
          .where('tenant_id', '=', tenantId)
          .where('profile_id', '=', p.id)
          .orderBy('confirmed_at')
          .execute(),
      }));
      const attestations = st.answerRows.map((a) => ({
        requirementId: a.requirement_id,
        itemId: a.item_id,
        answer: a.answer,
        note: a.note,
        answeredByEmail: a.answered_by_email,
        answeredAt: iso(a.answered_at),
      }));
      const sprsConfirmations = confirmations.map(({ sprs_proof_storage_key: _key, assessment_snapshot, ...h }) => ({
        ...h,
        // Computers out of scope at the confirmation, with their reasons and dates (from the frozen snapshot).
        retired_computers:
          parseJson<{ retiredComputers?: unknown[] } | null>(assessment_snapshot, null)?.retiredComputers ?? [],
        status_date: dayOf(h.status_date),
        affirmed_in_sprs_on: dayOf(h.affirmed_in_sprs_on),
        next_due: dayOf(h.next_due),
        confirmed_at: iso(h.confirmed_at),
        requirement_results: parseJson(h.requirement_results, {}),
        na_justifications: parseJson(h.na_justifications, {}),
      }));
      const entries: ZipEntry[] = [
        { name: controlsFileName(now, 'csv'), data: Buffer.from(controlsCsv(p, dto), 'utf8'), date: now },
        { name: 'controls.json', data: asJson(controlsJson(p, dto)), date: now },
        { name: 'attestations.json', data: asJson(attestations), date: now },
        { name: 'devices.json', data: asJson(st.devices), date: now },
        { name: 'sprs-confirmations.json', data: asJson(sprsConfirmations), date: now },
      ];
      for (const d of docs) {
        const stem = `policies/${d.kind.replace(/_/g, '-')}-v${d.version}-${d.status}`;
        const approved = `approved, effective ${dayOf(d.effective_date)}`;
        const footer = `${d.title} v${d.version} - ${d.status === 'approved' ? approved : 'DRAFT'}`;
        entries.push({ name: `${stem}.md`, data: Buffer.from(d.body_markdown, 'utf8'), date: now });
        entries.push({
          name: `${stem}.pdf`,
          data: Buffer.from(await renderPolicyPdf({ title: d.title, body: d.body_markdown, footer })),
          date: now,
        });
      }
      const store =
        st.evidence.length || confirmations.some((h) => h.sprs_proof_storage_key)
          ? await storage.forTenant(tenantId)
          : null;
      const manifest: { itemId: string; fileName: string; path: string; sha256: string }[] = [];
      for (const e of st.evidence) {
        const path = `evidence/${e.item_id}/${e.id.slice(0, 8)}-${e.file_name}`;
        entries.push({
          name: path,
          data: await readAll((await store!.get(e.storage_key)).body),
          date: new Date(e.created_at),
        });
        manifest.push({ itemId: e.item_id, fileName: e.file_name, path, sha256: e.sha256 });
      }
      for (const [i, h] of confirmations.entries()) {
        if (!h.sprs_proof_storage_key || !h.sprs_proof_file_name) continue;
        const data = await readAll((await store!.get(h.sprs_proof_storage_key)).body);
        entries.push({ name: `sprs-proof/${i + 1}-${h.sprs_proof_file_name}`, data, date: new Date(h.confirmed_at) });
      }
      const summary = {
        generatedAt: now.toISOString(),
        company: p.company_name,
        cageCode: p.cage_code,
        met: dto.met,
        total: dto.total,
        evidence: manifest,
      };
      entries.push({ name: 'manifest.json', data: asJson(summary), date: now });
      return { fileName: controlsFileName(now, 'zip', 'cmmc-evidence-pack'), zip: buildZip(entries) };
    },
  };
}
