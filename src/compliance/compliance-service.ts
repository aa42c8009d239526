// Framework controls for a tenant: the catalogue, the open findings that map to each control, and
// the evidence uploaded for it. Evidence bytes stream to the tenant's object store (never buffered
// whole); the row is written only after the bytes are safely stored, and a refused upload leaves
// nothing behind. Tenant reads and writes run inside withTenantMember (RLS).
// Over 500 lines on purpose: controls, mapped findings and evidence of a framework are one service with one tenant
// transaction per call.
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import type { z } from 'zod';
import type { AuditService } from '../audit/index.ts';
import type { DB } from '../db/schema.ts';
import { type Caller, isTenantAdmin, type Tx, tenantAccess } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { AppError, appError, isAppError } from '../lib/errors.ts';
import type { StorageService } from '../storage/index.ts';
import {
  CATALOGUE_LIST,
  CATALOGUES,
  findControl,
  isFrameworkId,
  type Catalogue,
  type CatalogueGroup,
  type FrameworkId,
} from './catalogues.ts';
import type {
  ControlRowDto,
  ControlStatus,
  EvidenceDto,
  evidenceFieldsSchema,
  listControlsQuerySchema,
} from './compliance-schemas.ts';
import { createSniffer, evidenceKindFor, extensionOf, safeFileName } from './evidence-files.ts';
import { mapFindingToControls } from './mapping.ts';

type Severity = 'critical' | 'high' | 'medium' | 'low' | 'info';
type SeverityCounts = Record<Severity, number>;
const zeroSeverities = (): SeverityCounts => ({ critical: 0, high: 0, medium: 0, low: 0, info: 0 });
/**
 * A finding's instance count: the places its scanner folded into it (evidence.data.instances of a
 * web finding seen on several URLs), else one. Evidence is scanner- or import-written JSON: only a
 * positive number counts, capped to an integer column's range.
 */
const INSTANCES = sql<number>`case when jsonb_typeof(f.evidence->'data'->'instances') = 'number'
    and (f.evidence->'data'->>'instances')::numeric >= 1
  then least(floor((f.evidence->'data'->>'instances')::numeric), 2147483647)::int else 1 end`;

/** Mapped findings listed on a control's page; the counts always cover all of them. */
const FINDINGS_SHOWN = 100;

export interface ComplianceDeps {
  db: Kysely<DB>;
  storage: StorageService;
  audit: AuditService;
  clock: Clock;
  /** Largest evidence file accepted (EVIDENCE_MAX_BYTES). */
  evidenceMaxBytes: number;
}

export interface EvidenceUpload {
  fileName: string;
  stream: Readable;
  /** True when the multipart parser cut the file at its own limit (never stored). */
  truncated?: () => boolean;
}

interface EvidenceRow {
  id: string;
  framework: FrameworkId;
  control_id: string;
  title: string;
  description: string | null;
  file_name: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  effective_date: string;
  expires_at: string | null;
  uploaded_by: string | null;
  uploaded_by_email: string | null;
  created_at: Date | string;
}

/** Evidence counts from its effective date through its expiry date, both inclusive (UTC days). */
export function evidenceState(
  e: { effective_date: string; expires_at: string | null },
  today: string,
): 'current' | 'expired' | 'upcoming' {
  if (e.effective_date > today) return 'upcoming';
  if (e.expires_at !== null && e.expires_at < today) return 'expired';
  return 'current';
}

/** The status rule (documented in docs/frameworks.md): findings first, then evidence; never "passing". */
export function controlStatus(openFindings: number, evidence: { current: number; expired: number }): ControlStatus {
  if (openFindings > 0) return 'failing';
  if (evidence.current > 0) return 'evidenced';
  if (evidence.expired > 0) return 'evidence_expired';
  return 'no_evidence';
}

const utcDay = (d: Date) => d.toISOString().slice(0, 10);
const iso = (d: Date | string) => new Date(d).toISOString();

function catalogueOf(framework: string): Catalogue {
  if (!isFrameworkId(framework))
    throw appError(
      'framework_not_found',
      `No framework "${framework}". Known frameworks: ${CATALOGUE_LIST.map((c) => c.id).join(', ')}.`,
    );
  return CATALOGUES[framework];
}

function controlOf(catalogue: Catalogue, controlId: string) {
  const control = findControl(catalogue.id, controlId);
  if (!control)
    throw appError('control_not_found', `${catalogue.shortName} has no ${catalogue.controlNoun} "${controlId}".`);
  return control;
}

const meta = (c: Catalogue) => ({
  id: c.id,
  name: c.name,
  shortName: c.shortName,
  edition: c.edition,
  catalogueVersion: c.catalogueVersion,
  publisher: c.publisher,
  licence: c.licence,
  controlNoun: c.controlNoun,
});
const groupDto = (g: CatalogueGroup) => ({
  id: g.id,
  title: g.title,
  parentId: g.parentId,
  kind: g.kind,
  description: g.description ?? null,
});

interface FindingGroup {
  scanner: string;
  rule_id: string;
  cwe_text: string;
  cwe_ids: number[];
  severity: Severity;
  n: number;
}

export function createComplianceService(deps: ComplianceDeps) {
  const { db, storage, audit, clock, evidenceMaxBytes } = deps;

  const { asMember } = tenantAccess(db);

  /** Open findings grouped by what the mapping looks at, so each distinct class is mapped once. */
  async function openFindingGroups(tx: Tx, tenantId: string): Promise<FindingGroup[]> {
    const { rows } = await sql<FindingGroup>`
      select scanner, rule_id, cwe_ids::text as cwe_text, cwe_ids, severity, count(*)::int as n
      from findings where tenant_id = ${tenantId} and status = 'open'
      group by scanner, rule_id, cwe_ids, severity`.execute(tx);
    return rows;
  }

  /** Per control of every framework: open mapped findings by severity, and the group keys behind them. */
  function aggregateFindings(groups: FindingGroup[], only?: FrameworkId) {
    const perControl = new Map<string, { total: number; bySeverity: SeverityCounts; keys: Set<string> }>();
    const mapped = new Map<string, ReturnType<typeof mapFindingToControls>>();
    for (const g of groups) {
      const classKey = `${g.scanner}\u0000${g.rule_id}\u0000${g.cwe_text}`;
      let refs = mapped.get(classKey);
      if (!refs) {
        refs = mapFindingToControls({ cwe: g.cwe_ids, ruleId: g.rule_id, scanner: g.scanner });
        mapped.set(classKey, refs);
      }
      for (const r of refs) {
        if (only && r.framework !== only) continue;
        const k = `${r.framework}\u0000${r.controlId}`;
        let agg = perControl.get(k);
        if (!agg) perControl.set(k, (agg = { total: 0, bySeverity: zeroSeverities(), keys: new Set() }));
        agg.total += g.n;
        agg.bySeverity[g.severity] += g.n;
        agg.keys.add(classKey);
      }
    }
    return perControl;
  }

  async function evidenceCounts(tx: Tx, tenantId: string, today: string, framework?: FrameworkId) {
    let q = tx
      .selectFrom('control_evidence')
      .select([
        'framework',
        'control_id',
        sql<string>`effective_date::text`.as('effective_date'),
        sql<string | null>`expires_at::text`.as('expires_at'),
      ])
      .where('tenant_id', '=', tenantId)
      .where('deleted_at', 'is', null);
    if (framework) q = q.where('framework', '=', framework);
    const counts = new Map<string, { current: number; expired: number; upcoming: number; nextExpiry: string | null }>();
    for (const r of await q.execute()) {
      const k = `${r.framework}\u0000${r.control_id}`;
      let c = counts.get(k);
      if (!c) counts.set(k, (c = { current: 0, expired: 0, upcoming: 0, nextExpiry: null }));
      const state = evidenceState(r, today);
      c[state] += 1;
      if (state === 'current' && r.expires_at && (c.nextExpiry === null || r.expires_at < c.nextExpiry))
        c.nextExpiry = r.expires_at;
    }
    return counts;
  }

  function rowsFor(
    catalogue: Catalogue,
    findings: ReturnType<typeof aggregateFindings>,
    evidence: Awaited<ReturnType<typeof evidenceCounts>>,
  ): ControlRowDto[] {
    return catalogue.controls.map((c) => {
      const k = `${catalogue.id}\u0000${c.id}`;
      const f = findings.get(k);
      const e = evidence.get(k) ?? { current: 0, expired: 0, upcoming: 0, nextExpiry: null };
      return {
        id: c.id,
        title: c.title,
        groupId: c.groupId,
        implementationGroup: c.implementationGroup ?? null,
        status: controlStatus(f?.total ?? 0, e),
        openFindings: f?.total ?? 0,
        openBySeverity: f?.bySeverity ?? zeroSeverities(),
        evidence: e,
      };
    });
  }

  function summarise(rows: ControlRowDto[]) {
    const byStatus = { failing: 0, evidenced: 0, evidence_expired: 0, no_evidence: 0 };
    for (const r of rows) byStatus[r.status] += 1;
    return {
      controls: rows.length,
      withOpenFindings: rows.filter((r) => r.openFindings > 0).length,
      withCurrentEvidence: rows.filter((r) => r.evidence.current > 0).length,
      withExpiredEvidence: rows.filter((r) => r.evidence.current === 0 && r.evidence.expired > 0).length,
      byStatus,
    };
  }

  const evidenceSelect = (tx: Tx) =>
    tx
      .selectFrom('control_evidence')
      .select([
        'id',
        'framework',
        'control_id',
        'title',
        'description',
        'file_name',
        'content_type',
        'size_bytes',
        'sha256',
        sql<string>`effective_date::text`.as('effective_date'),
        sql<string | null>`expires_at::text`.as('expires_at'),
        'uploaded_by',
        'uploaded_by_email',
        'created_at',
      ])
      .where('deleted_at', 'is', null);

  function evidenceDto(r: EvidenceRow, today: string, caller: Caller, role: string): EvidenceDto {
    return {
      id: r.id,
      framework: r.framework,
      controlId: r.control_id,
      title: r.title,
      description: r.description,
      fileName: r.file_name,
      contentType: r.content_type,
      size: Number(r.size_bytes),
      sha256: r.sha256,
      effectiveDate: r.effective_date,
      expiresAt: r.expires_at,
      state: evidenceState(r, today),
      uploadedBy: { userId: r.uploaded_by, email: r.uploaded_by_email },
      createdAt: iso(r.created_at),
      canDelete: isTenantAdmin(role) || r.uploaded_by === caller.userId,
    };
  }

  async function listEvidenceRows(
    tx: Tx,
    tenantId: string,
    framework: FrameworkId,
    controlId: string,
  ): Promise<EvidenceRow[]> {
    return (await evidenceSelect(tx)
      .where('tenant_id', '=', tenantId)
      .where('framework', '=', framework)
      .where('control_id', '=', controlId)
      .orderBy('effective_date', 'desc')
      .orderBy('created_at', 'desc')
      .execute()) as EvidenceRow[];
  }

  return {
    async listFrameworks(tenantId: string, caller: Caller) {
      const today = utcDay(clock.now());
      return asMember(tenantId, caller, async (tx) => {
        const findings = aggregateFindings(await openFindingGroups(tx, tenantId));
        const evidence = await evidenceCounts(tx, tenantId, today);
        return {
          frameworks: CATALOGUE_LIST.map((c) => ({ ...meta(c), summary: summarise(rowsFor(c, findings, evidence)) })),
          asOf: today,
        };
      });
    },

    async getFramework(
      tenantId: string,
      caller: Caller,
      framework: string,
      q: z.output<typeof listControlsQuerySchema>,
    ) {
      const catalogue = catalogueOf(framework);
      const today = utcDay(clock.now());
      return asMember(tenantId, caller, async (tx) => {
        const findings = aggregateFindings(await openFindingGroups(tx, tenantId), catalogue.id);
        const rows = rowsFor(catalogue, findings, await evidenceCounts(tx, tenantId, today, catalogue.id));
        const needle = q.q?.toLowerCase();
        // A group filter matches the group and everything under it (a NIST function and its categories).
        const inGroup = (groupId: string): boolean => {
          if (!q.group) return true;
          for (
            let g: CatalogueGroup | undefined = catalogue.groups.find((x) => x.id === groupId);
            g;
            g = catalogue.groups.find((x) => x.id === g!.parentId)
          )
            if (g.id === q.group) return true;
          return false;
        };
        const controls = rows.filter(
          (r) =>
            (!q.status || r.status === q.status) &&
            inGroup(r.groupId) &&
            (!needle || r.id.toLowerCase().includes(needle) || r.title.toLowerCase().includes(needle)),
        );
        return {
          framework: { ...meta(catalogue), groups: catalogue.groups.map(groupDto) },
          summary: summarise(rows),
          controls,
          asOf: today,
        };
      });
    },

    async getControl(tenantId: string, caller: Caller, framework: string, controlId: string) {
      const catalogue = catalogueOf(framework);
      const control = controlOf(catalogue, controlId);
      const group = catalogue.groups.find((g) => g.id === control.groupId)!;
      const parent = group.parentId ? (catalogue.groups.find((g) => g.id === group.parentId) ?? null) : null;
      const today = utcDay(clock.now());
      return asMember(tenantId, caller, async (tx, role) => {
        const agg = aggregateFindings(await openFindingGroups(tx, tenantId), catalogue.id).get(
          `${catalogue.id}\u0000${control.id}`,
        );
        let items: {
          id: string;
          title: string;
          severity: Severity;
          rule_id: string;
          scanner: string;
          asset_id: string;
          asset_name: string;
          asset_target: string;
          location_text: string;
          instances: number;
          last_seen_at: Date | string;
        }[] = [];
        if (agg) {
          // The finding classes behind this control, as (scanner, rule, cwe list) keys in one JSON parameter.
          const keys = JSON.stringify([...agg.keys].map((k) => k.split('\u0000')));
          ({ rows: items } = await sql<(typeof items)[number]>`
            select f.id, f.title, f.severity, f.rule_id, f.scanner, f.asset_id, a.name as asset_name, a.target as asset_target, f.location_text,
              ${INSTANCES} as instances, f.last_seen_at
            from findings f join assets a on a.id = f.asset_id
            where f.tenant_id = ${tenantId} and f.status = 'open'
              and (f.scanner, f.rule_id, f.cwe_ids::text) in (select k->>0, k->>1, k->>2 from jsonb_array_elements(${keys}::jsonb) k)
            order by f.severity_rank desc, f.last_seen_at desc, f.id
            limit ${FINDINGS_SHOWN}`.execute(tx));
        }
        const evidenceRows = await listEvidenceRows(tx, tenantId, catalogue.id, control.id);
        const evidence = evidenceRows.map((r) => evidenceDto(r, today, caller, role));
        const counts = {
          current: evidence.filter((e) => e.state === 'current').length,
          expired: evidence.filter((e) => e.state === 'expired').length,
        };
        return {
          framework: meta(catalogue),
          control: {
            id: control.id,
            title: control.title,
            description: control.description ?? null,
            implementationGroup: control.implementationGroup ?? null,
            group: groupDto(group),
            parentGroup: parent ? groupDto(parent) : null,
          },
          status: controlStatus(agg?.total ?? 0, counts),
          findings: {
            open: agg?.total ?? 0,
            bySeverity: agg?.bySeverity ?? zeroSeverities(),
            items: items.map((f) => ({
              id: f.id,
              title: f.title,
              severity: f.severity,
              ruleId: f.rule_id,
              scanner: f.scanner,
              asset: { id: f.asset_id, name: f.asset_name, target: f.asset_target },
              location: f.location_text,
              instances: f.instances,
              lastSeenAt: iso(f.last_seen_at),
            })),
            truncated: (agg?.total ?? 0) > items.length,
          },
          evidence,
          asOf: today,
        };
      });
    },

    async listEvidence(tenantId: string, caller: Caller, framework: string, controlId: string) {
      const catalogue = catalogueOf(framework);
      const control = controlOf(catalogue, controlId);
      const today = utcDay(clock.now());
      return asMember(tenantId, caller, async (tx, role) => ({
        evidence: (await listEvidenceRows(tx, tenantId, catalogue.id, control.id)).map((r) =>
          evidenceDto(r, today, caller, role),
        ),
      }));
    },

    /**
     * Checks everything that can be checked before the body is read (membership, framework,
     * control, fields, file type), then streams the file to `evidence/<id>` and records it.
     */
    async uploadEvidence(
      tenantId: string,
      caller: Caller,
      framework: string,
      controlId: string,
      fields: z.output<typeof evidenceFieldsSchema>,
      file: EvidenceUpload,
    ) {
      const catalogue = catalogueOf(framework);
      const control = controlOf(catalogue, controlId);
      await asMember(tenantId, caller, async () => undefined);
      const fileName = safeFileName(file.fileName);
      const kind = evidenceKindFor(fileName);
      const id = randomUUID();
      const key = `evidence/${id}`;
      const store = await storage.forTenant(tenantId);
      let put;
      try {
        // The sniffer sits between the upload and the store; its failure (or the upload's) aborts the put.
        const sniffer = createSniffer(kind, extensionOf(fileName));
        file.stream.once('error', (e) => sniffer.destroy(e));
        // A small file can fail the check before the store attaches its pipeline; the store's
        // pipeline still sees the stored error (finished() reports an already-errored stream).
        sniffer.on('error', () => undefined);
        put = await store.put(key, file.stream.pipe(sniffer), {
          maxBytes: evidenceMaxBytes,
          contentType: kind.contentType,
        });
        if (file.truncated?.()) throw appError('payload_too_large', 'The file is too large.');
      } catch (e) {
        file.stream.resume();
        await store.delete(key).catch(() => undefined);
        throw uploadError(e, evidenceMaxBytes);
      }
      const today = utcDay(clock.now());
      try {
        return await asMember(tenantId, caller, async (tx, role) => {
          const row = (await tx
            .insertInto('control_evidence')
            .values({
              id,
              tenant_id: tenantId,
              framework: catalogue.id,
              control_id: control.id,
              title: fields.title,
              description: fields.description ?? null,
              file_name: fileName,
              content_type: kind.contentType,
              size_bytes: put.size,
              sha256: put.sha256,
              storage_kind: store.kind,
              storage_key: key,
              effective_date: fields.effectiveDate,
              expires_at: fields.expiresAt ?? null,
              uploaded_by: caller.userId,
              uploaded_by_email: caller.email,
            })
            .returning(['id'])
            .executeTakeFirstOrThrow()) as { id: string };
          await audit.record(
            {
              tenantId,
              actorUserId: caller.userId,
              actorEmail: caller.email,
              action: 'compliance.evidence_uploaded',
              targetType: 'control_evidence',
              targetId: row.id,
              details: {
                framework: catalogue.id,
                controlId: control.id,
                title: fields.title,
                fileName,
                size: put.size,
                sha256: put.sha256,
                effectiveDate: fields.effectiveDate,
                expiresAt: fields.expiresAt ?? null,
              },
            },
            tx,
          );
          const saved = (await evidenceSelect(tx).where('id', '=', row.id).executeTakeFirstOrThrow()) as EvidenceRow;
          return { evidence: evidenceDto(saved, today, caller, role) };
        });
      } catch (e) {
        await store.delete(key).catch(() => undefined);
        throw e;
      }
    },

    /** The stored object, for streaming back; rows of other tenants are invisible (RLS), so 404. */
    async openEvidence(tenantId: string, caller: Caller, evidenceId: string) {
      const row = await asMember(tenantId, caller, (tx) =>
        tx
          .selectFrom('control_evidence')
          .select(['id', 'file_name', 'content_type', 'size_bytes', 'sha256', 'storage_key'])
          .where('tenant_id', '=', tenantId)
          .where('id', '=', evidenceId)
          .where('deleted_at', 'is', null)
          .executeTakeFirst(),
      );
      if (!row) throw appError('evidence_not_found', 'No such evidence in this tenant.');
      const store = await storage.forTenant(tenantId);
      try {
        const { body } = await store.get(row.storage_key);
        return {
          fileName: row.file_name,
          contentType: row.content_type,
          size: Number(row.size_bytes),
          sha256: row.sha256,
          body,
        };
      } catch (e) {
        if (isAppError(e) && e.code === 'object_not_found')
          throw appError('evidence_not_found', 'The evidence file is no longer in storage.');
        throw e;
      }
    },

    /** The uploader, or a tenant owner or admin, may delete; the row stays (marked deleted) for the audit trail, the bytes go. */
    async deleteEvidence(tenantId: string, caller: Caller, evidenceId: string) {
      const key = await asMember(tenantId, caller, async (tx, role) => {
        const row = await tx
          .selectFrom('control_evidence')
          .select(['id', 'framework', 'control_id', 'title', 'file_name', 'sha256', 'storage_key', 'uploaded_by'])
          .where('tenant_id', '=', tenantId)
          .where('id', '=', evidenceId)
          .where('deleted_at', 'is', null)
          .forUpdate()
          .executeTakeFirst();
        if (!row) throw appError('evidence_not_found', 'No such evidence in this tenant.');
        if (!isTenantAdmin(role) && row.uploaded_by !== caller.userId)
          throw appError(
            'tenant_forbidden',
            'Only the person who uploaded this evidence, or a tenant owner or admin, may delete it.',
          );
        await tx
          .updateTable('control_evidence')
          .set({ deleted_at: clock.now(), deleted_by: caller.userId })
          .where('id', '=', row.id)
          .execute();
        await audit.record(
          {
            tenantId,
            actorUserId: caller.userId,
            actorEmail: caller.email,
            action: 'compliance.evidence_deleted',
            targetType: 'control_evidence',
            targetId: row.id,
            details: {
              framework: row.framework,
              controlId: row.control_id,
              title: row.title,
              fileName: row.file_name,
              sha256: row.sha256,
            },
          },
          tx,
        );
        return row.storage_key;
      });
      // After the commit: a failed object delete leaves an unreachable object, never a dangling row.
      const store = await storage.forTenant(tenantId);
      await store.delete(key);
    },
  };
}

/** Upload failures as client errors: too large (from storage or the multipart limit), content checks. */
function uploadError(e: unknown, maxBytes: number): unknown {
  const tooLarge = () => appError('payload_too_large', `Evidence files may be at most ${formatBytes(maxBytes)}.`);
  if (isAppError(e)) return e.code === 'payload_too_large' ? tooLarge() : e;
  const code = (e as { code?: string }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge();
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT')
    return new AppError('validation_failed', 'Send one file with the title and dates.');
  if (code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ECONNRESET')
    return appError('validation_failed', 'The upload ended before the whole file arrived.');
  return e;
}

export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

export type ComplianceService = ReturnType<typeof createComplianceService>;
