// "Import results": a tenant member uploads a scanner's report for one of the tenant's assets. The
// file streams to the tenant's storage (at most REPORT_MAX_BYTES; nothing is kept otherwise), its
// first bytes decide the format (unless the uploader named it) and the scanner kind, and one
// transaction creates the scan (source 'import', status 'ingesting', no quota day) and queues its
// ingestion. The ingestion runner does the rest, exactly as for a worker's upload.
//
// The asset must be one the tenant may scan (not archived, ownership verified or bypassed), and
// the report's kind must fit the asset (a Trivy report does not describe a web application):
// findings are keyed and closed per asset and scanner kind, so a misfiled import would close or
// duplicate findings of the wrong kind. The uploader imports such a report for the right asset.
// Over 500 lines on purpose: the import service and its streaming format detection belong together: the detection runs
// on the bytes the service stores.
import { cleanFileName } from '../lib/file-names.ts';
import { isScanKind } from '../lib/scan-kinds.ts';
import { randomUUID } from 'node:crypto';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import type { AuditService } from '../audit/index.ts';
import type { DB } from '../db/schema.ts';
import { type Caller, type Tx, tenantAccess } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { AppError, appError, isAppError } from '../lib/errors.ts';
import { assertAssetScannable, KINDS_FOR_ASSET, type ScanKind } from '../scans/index.ts';
import type { StorageService } from '../storage/index.ts';
import {
  CLEAN_LABELS,
  DETECT_BYTES,
  describeContent,
  type CleanKind,
  detectFormat,
  plausibleFormat,
  SCANNER_OF_FORMAT,
  scannerForTool,
  type ReportFormat,
  type Scanner,
} from './importers/index.ts';
import {
  FORMAT_LABELS,
  IMPORT_FORMATS,
  type IngestionSummaryDto,
  type ImportFields,
  type IngestionDto,
  type importListQuerySchema,
  type ReportUploadDto,
} from './ingestion-schemas.ts';
import type { IngestionSummary } from './ingestion-service.ts';
import type { IngestionQueue } from './ingestion-types.ts';
import type { z } from 'zod';

export interface ImportFile {
  fileName: string;
  stream: Readable;
  /** True when the multipart parser cut the file at its own limit. */
  truncated?: () => boolean;
}

export interface ImportsServiceDeps {
  db: Kysely<DB>;
  storage: StorageService;
  ingestion: IngestionQueue;
  audit: AuditService;
  clock: Clock;
  reportMaxBytes: number;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** Keeps the first `max` bytes that pass through, for format detection. */
class HeadCapture extends Transform {
  readonly parts: Buffer[] = [];
  length = 0;
  readonly #max: number;
  constructor(max: number) {
    super();
    this.#max = max;
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (this.length < this.#max) {
      const take = chunk.subarray(0, this.#max - this.length);
      this.parts.push(Buffer.from(take));
      this.length += take.length;
    }
    done(null, chunk);
  }
  head(): Buffer {
    return Buffer.concat(this.parts);
  }
}

const SUPPORTED_TEXT = `Supported: ${Object.values(FORMAT_LABELS).join(', ')}.`;

/**
 * The format of an upload, checked against its first bytes before anything is queued: a named
 * format must be what the file looks like (or carry its signature), an unnamed one must be
 * recognised. Refusals say what the file looks like and which formats are read. An empty file is
 * a report only in nuclei's case (nuclei writes one when it finds nothing).
 */
export function checkFormat(
  chosen: ReportFormat | null,
  head: Buffer,
  size: number,
  fileName: string | null,
): ReportFormat {
  if (size === 0) {
    if (chosen === 'nuclei') return 'nuclei';
    throw appError(
      'report_format_unknown',
      `The file is empty. nuclei writes an empty file when it finds nothing: choose nuclei as the format to import it as no findings. ${SUPPORTED_TEXT}`,
      {
        details: { looksLike: 'an empty file', supported: IMPORT_FORMATS },
      },
    );
  }
  const detected = detectFormat(head, fileName ?? undefined);
  const looksLike = detected ? FORMAT_LABELS[detected] : describeContent(head);
  if (chosen && !plausibleFormat(chosen, head, fileName ?? undefined)) {
    throw appError(
      'report_format_mismatch',
      `The file looks like ${looksLike}, not ${FORMAT_LABELS[chosen]}. Choose the right format, or let Rampart detect it. ${SUPPORTED_TEXT}`,
      {
        details: { chosen, detected, looksLike, supported: IMPORT_FORMATS },
      },
    );
  }
  const format = chosen ?? detected;
  if (!format) {
    throw appError(
      'report_format_unknown',
      `The report format could not be recognised: the file looks like ${looksLike}. ${SUPPORTED_TEXT}`,
      {
        details: { looksLike, supported: IMPORT_FORMATS },
      },
    );
  }
  return format;
}

/** The scanner kind a report's first bytes announce (native and SARIF name it; the rest imply it). */
export function scannerOfHead(format: ReportFormat, head: Buffer): Scanner {
  const text = head.toString('utf8').replace(/^\uFEFF/, '');
  if (format === 'native') {
    const first = text.split('\n', 1)[0] ?? '';
    try {
      const rec = JSON.parse(first) as { scanner?: unknown };
      if (isScanKind(rec.scanner)) return rec.scanner;
    } catch {
      /* a header over several lines: the default */
    }
  }
  if (format === 'sarif') {
    const m = /"driver"\s*:\s*\{[^{}]*?"name"\s*:\s*"([^"]{1,200})"/.exec(text);
    if (m) return scannerForTool(m[1]!);
  }
  return SCANNER_OF_FORMAT[format];
}

type DtoRow = {
  id: string;
  scan_id: string;
  upload_id: string | null;
  source: 'worker' | 'import';
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  format: ReportFormat | null;
  file_name: string | null;
  size: string | number;
  sha256: string;
  bytes_read: string | number;
  findings_read: number;
  skipped: number;
  summary: unknown;
  error: string | null;
  attempts: number;
  created_by: string | null;
  created_by_email: string | null;
  created_at: Date | string;
  started_at: Date | string | null;
  finished_at: Date | string | null;
  updated_at: Date | string;
  scan_kind: string;
  scan_status: string;
  asset_id: string;
  asset_name: string;
  asset_target: string;
  cursor_at?: string;
};

/** A stored summary as the API shows it (summaries written by earlier versions lack the newer fields). */
function summaryDto(s: IngestionSummary): IngestionSummaryDto {
  const cleaned = s.cleaned
    ? (Object.entries(s.cleaned.counts) as [CleanKind, number][])
        .filter(([, n]) => n > 0)
        .map(([kind, count]) => ({
          kind,
          label: CLEAN_LABELS[kind],
          count,
          where: s
            .cleaned!.samples.filter((x) => x.kind === kind)
            .map((x) => x.where)
            .slice(0, 5),
        }))
    : [];
  return {
    received: s.received,
    distinct: s.distinct,
    created: s.created,
    seen: s.seen,
    reopened: s.reopened,
    fixed: s.fixed,
    tool: s.tool ?? null,
    skipped: s.skipped ?? 0,
    skipSamples: s.skipSamples ?? [],
    records: s.records ?? s.received + (s.skipped ?? 0),
    passed: s.passed ?? 0,
    skipReasons: s.skipReasons ?? [],
    cleaned,
    coverage: s.coverage ?? null,
    partial: s.partial ?? null,
    closedNothing: s.closedNothing ?? false,
    splits: s.splits ?? [],
    unmatchedHosts: s.unmatchedHosts ?? [],
    ...(s.outcome ? { outcome: s.outcome } : {}),
    ...(s.outcomeReason ? { outcomeReason: s.outcomeReason } : {}),
  };
}

export function toIngestionDto(r: DtoRow): IngestionDto {
  const size = Number(r.size);
  const bytesRead = Number(r.bytes_read);
  const s = (r.summary ?? null) as IngestionSummary | null;
  return {
    id: r.id,
    scanId: r.scan_id,
    uploadId: r.upload_id,
    source: r.source,
    status: r.status,
    format: r.format,
    fileName: r.file_name,
    size,
    sha256: r.sha256,
    bytesRead,
    findingsRead: r.findings_read,
    skipped: r.skipped,
    percent: r.status === 'succeeded' ? 100 : size > 0 ? Math.min(99, Math.floor((bytesRead / size) * 100)) : 0,
    summary: s ? summaryDto(s) : null,
    error: r.error,
    attempts: r.attempts,
    scan: { id: r.scan_id, kind: r.scan_kind, status: r.scan_status },
    asset: { id: r.asset_id, name: r.asset_name, target: r.asset_target },
    createdBy: r.created_by_email ? { id: r.created_by, email: r.created_by_email } : null,
    createdAt: iso(r.created_at)!,
    startedAt: iso(r.started_at),
    finishedAt: iso(r.finished_at),
    updatedAt: iso(r.updated_at)!,
  };
}

const selectIngestions = (tx: Tx) =>
  tx
    .selectFrom('report_ingestions as j')
    .innerJoin('scans as s', 's.id', 'j.scan_id')
    .innerJoin('assets as a', 'a.id', 's.asset_id')
    .select([
      'j.id',
      'j.scan_id',
      'j.upload_id',
      'j.source',
      'j.status',
      'j.format',
      'j.file_name',
      'j.size',
      'j.sha256',
      'j.bytes_read',
      'j.findings_read',
      'j.skipped',
      'j.summary',
      'j.error',
      'j.attempts',
      'j.created_by',
      'j.created_by_email',
      'j.created_at',
      'j.started_at',
      'j.finished_at',
      'j.updated_at',
      's.kind as scan_kind',
      's.status as scan_status',
      'a.id as asset_id',
      'a.name as asset_name',
      'a.target as asset_target',
    ]);

export function createImportsService(deps: ImportsServiceDeps) {
  const { db, storage, ingestion, audit, clock, reportMaxBytes } = deps;

  const { asMember } = tenantAccess(db);

  async function load(tx: Tx, tenantId: string, id: string): Promise<IngestionDto> {
    const row = await selectIngestions(tx)
      .where('j.tenant_id', '=', tenantId)
      .where('j.id', '=', id)
      .executeTakeFirst();
    if (!row) throw appError('import_not_found', 'No such import in this tenant.');
    return toIngestionDto(row as DtoRow);
  }

  function tooLarge() {
    return appError('payload_too_large', `Reports may be at most ${reportMaxBytes.toLocaleString('en-US')} bytes.`, {
      details: { maxBytes: reportMaxBytes },
    });
  }

  return {
    /** Checks what can be checked before a byte is stored: membership and the asset. */
    async precheck(tenantId: string, caller: Caller, assetId: string): Promise<void> {
      await asMember(tenantId, caller, async (tx) => {
        // Any kind the asset takes: the report's own kind is known once its first bytes are in.
        const asset = await tx
          .selectFrom('assets')
          .select('kind')
          .where('id', '=', assetId)
          .where('tenant_id', '=', tenantId)
          .executeTakeFirst();
        if (!asset) throw appError('asset_not_found', 'No such asset in this tenant.');
        const kinds = KINDS_FOR_ASSET[asset.kind as keyof typeof KINDS_FOR_ASSET] as readonly ScanKind[] | undefined;
        await assertAssetScannable(tx, tenantId, assetId, kinds?.[0] ?? 'template');
      });
    },

    async importReport(
      tenantId: string,
      caller: Caller,
      fields: ImportFields,
      file: ImportFile,
    ): Promise<IngestionDto> {
      const scanId = randomUUID();
      const objectKey = `imports/${scanId}`;
      const fileName = cleanFileName(file.fileName) || null;
      const store = await storage.forTenant(tenantId);
      const head = new HeadCapture(DETECT_BYTES);
      file.stream.once('error', (e) => head.destroy(e));
      let put;
      try {
        put = await store.put(objectKey, file.stream.pipe(head), {
          maxBytes: reportMaxBytes,
          contentType: 'application/octet-stream',
        });
        if (file.truncated?.()) throw tooLarge();
      } catch (e) {
        file.stream.resume();
        await store.delete(objectKey).catch(() => undefined);
        const code = (e as { code?: string }).code;
        if ((isAppError(e) && e.code === 'payload_too_large') || code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge();
        if (code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ECONNRESET')
          throw appError('validation_failed', 'The upload ended before the whole file arrived.');
        throw e;
      }
      try {
        const format = checkFormat(fields.format, head.head(), put.size, fileName);
        const kind = scannerOfHead(format, head.head());
        const now = clock.now();
        const id = await asMember(tenantId, caller, async (tx) => {
          try {
            await assertAssetScannable(tx, tenantId, fields.assetId, kind);
          } catch (e) {
            if (isAppError(e) && e.code === 'scan_kind_mismatch') {
              const asset = await tx
                .selectFrom('assets')
                .select('kind')
                .where('tenant_id', '=', tenantId)
                .where('id', '=', fields.assetId)
                .executeTakeFirst();
              const fits = asset
                ? (KINDS_FOR_ASSET[asset.kind as keyof typeof KINDS_FOR_ASSET] as readonly string[])
                : [];
              throw new AppError(
                'scan_kind_mismatch',
                `This ${FORMAT_LABELS[format]} report holds ${kind} findings, which do not apply to a ${(asset?.kind ?? 'unknown').replace('_', ' ')} asset (it takes ${fits.join(', ')}). Import it for an asset it describes.`,
                { details: { reportKind: kind, assetKind: asset?.kind ?? null } },
              );
            }
            throw e;
          }
          await tx
            .insertInto('scans')
            .values({
              id: scanId,
              tenant_id: tenantId,
              asset_id: fields.assetId,
              kind,
              options: JSON.stringify({}),
              status: 'ingesting',
              percent: 0,
              source: 'import',
              requested_by: caller.userId,
              quota_day: null,
              started_at: now,
              created_at: now,
              updated_at: now,
            })
            .execute();
          const { ingestionId } = await ingestion.enqueue(tx, {
            tenantId,
            scanId,
            uploadId: null,
            source: 'import',
            storage: store.kind,
            objectKey,
            size: put.size,
            sha256: put.sha256,
            format,
            fileName,
            createdBy: { userId: caller.userId, email: caller.email },
          });
          await audit.record(
            {
              tenantId,
              actorUserId: caller.userId,
              actorEmail: caller.email,
              action: 'scan.imported',
              targetType: 'scan',
              targetId: scanId,
              details: {
                assetId: fields.assetId,
                kind,
                format,
                formatDetected: fields.format === null,
                fileName,
                size: put.size,
                sha256: put.sha256,
                ingestionId,
              },
            },
            tx,
          );
          return ingestionId;
        });
        return await asMember(tenantId, caller, (tx) => load(tx, tenantId, id));
      } catch (e) {
        // Refused after storing (format, asset): nothing is kept.
        await store.delete(objectKey).catch(() => undefined);
        throw e;
      }
    },

    tooLarge,

    async list(tenantId: string, caller: Caller, q: z.output<typeof importListQuerySchema>) {
      return asMember(tenantId, caller, async (tx) => {
        let query = selectIngestions(tx)
          .select(
            sql<string>`to_char(j.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('cursor_at'),
          )
          .where('j.tenant_id', '=', tenantId)
          .where('j.source', '=', 'import')
          .orderBy('j.created_at', 'desc')
          .orderBy('j.id', 'desc')
          .limit(q.limit + 1);
        if (q.before) {
          const [at, id] = q.before.split('_') as [string, string];
          if (Number.isNaN(Date.parse(at)))
            throw appError('validation_failed', 'Pass nextBefore from the previous page unchanged.');
          query = query.where(sql<boolean>`(j.created_at, j.id) < (${at}::timestamptz, ${id}::uuid)`);
        }
        const rows = (await query.execute()) as DtoRow[];
        const page = rows.slice(0, q.limit);
        const last = page.at(-1);
        return {
          imports: page.map(toIngestionDto),
          nextBefore: rows.length > q.limit && last ? `${last.cursor_at}_${last.id}` : null,
        };
      });
    },

    async get(tenantId: string, caller: Caller, id: string) {
      return asMember(tenantId, caller, (tx) => load(tx, tenantId, id));
    },

    /** The scan page's "Report and ingestion": its uploads and ingestion jobs. */
    async forScan(
      tenantId: string,
      caller: Caller,
      scanId: string,
    ): Promise<{ uploads: ReportUploadDto[]; ingestions: IngestionDto[] }> {
      return asMember(tenantId, caller, async (tx) => {
        const scan = await tx
          .selectFrom('scans')
          .select('id')
          .where('id', '=', scanId)
          .where('tenant_id', '=', tenantId)
          .executeTakeFirst();
        if (!scan) throw appError('scan_not_found', 'No such scan in this tenant.');
        const uploads = await tx
          .selectFrom('report_uploads')
          .selectAll()
          .where('tenant_id', '=', tenantId)
          .where('scan_id', '=', scanId)
          .orderBy('created_at', 'desc')
          .limit(20)
          .execute();
        const jobs = (await selectIngestions(tx)
          .where('j.tenant_id', '=', tenantId)
          .where('j.scan_id', '=', scanId)
          .orderBy('j.created_at', 'desc')
          .limit(20)
          .execute()) as DtoRow[];
        return {
          uploads: uploads.map((u) => ({
            id: u.id,
            status: u.status,
            storage: u.storage,
            size: Number(u.size),
            sha256: u.sha256,
            format: u.format,
            fileName: u.file_name,
            createdAt: iso(u.created_at)!,
            finalizedAt: iso(u.finalized_at),
            ingestionId: u.ingestion_id,
          })),
          ingestions: jobs.map(toIngestionDto),
        };
      });
    },
  };
}

export type ImportsService = ReturnType<typeof createImportsService>;
