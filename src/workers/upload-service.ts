// Report uploads (docs/worker-protocol.md): init → PUT → finalize, and the legacy
// single shot.
//
// - init checks the lease and the declared size, records a pending upload, and answers a URL
//   valid for 15 minutes: our own HMAC-signed PUT URL for built-in storage (any replica can verify
//   it: the key is derived from APP_ENCRYPTION_KEY), or a presigned S3 PUT signing the length and
//   checksum for a tenant bucket.
// - The built-in PUT streams into storage, refusing a byte beyond the declared size and keeping
//   nothing when the hash differs.
// - finalize re-reads the stored object and verifies size and SHA-256 itself (some S3-compatible
//   stores ignore the checksum header), then, in one transaction under the lease, marks the
//   upload finalized, ends the lease (scan `ingesting`) and queues the ingestion. A repeat
//   answers the same result, even after the lease ended.
// - Pending uploads whose URL expired more than an hour ago are reaped, object and row.
import { createHash, createHmac, hkdfSync, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { withService } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { safeEqual } from '../lib/crypto.ts';
import { AppError, appError } from '../lib/errors.ts';
import type { ObjectStore, StorageService } from '../storage/index.ts';
import type { ReportFormat } from './importers/index.ts';
import type { IngestionQueue } from './ingestion-types.ts';
import type { LeaseService, LeaseWorker } from './lease-service.ts';
import { WORKER_API_PREFIX, type FinalizeResult, type InitUploadResult } from '../lib/worker-wire.ts';

export const UPLOAD_URL_SECONDS = 15 * 60;
/** A pending upload is reaped this long after its URL expired. */
export const ORPHAN_GRACE_MS = 60 * 60 * 1000;

export interface InitInput {
  scanId: string;
  leaseToken: string;
  size: number;
  sha256: string;
  contentType?: string | undefined;
  format?: ReportFormat | undefined;
  fileName?: string | undefined;
}

export interface UploadServiceDeps {
  db: Kysely<DB>;
  clock: Clock;
  storage: StorageService;
  leases: LeaseService;
  ingestion: IngestionQueue;
  /** Derives the URL-signing key (APP_ENCRYPTION_KEY). */
  encryptionKey: Buffer;
  /** APP_ENCRYPTION_KEY_PREVIOUS: URLs signed before a key rotation still verify. */
  previousEncryptionKeys?: readonly Buffer[];
  publicBaseUrl: string;
  reportMaxBytes: number;
}

const objectKeyOf = (scanId: string, uploadId: string) => `reports/${scanId}/${uploadId}`;

export function createUploadService(deps: UploadServiceDeps) {
  const { db, clock, storage, leases } = deps;
  const urlKeyOf = (k: Buffer) =>
    Buffer.from(hkdfSync('sha256', k, Buffer.alloc(0), 'rampart worker upload url v1', 32));
  const urlKey = urlKeyOf(deps.encryptionKey);
  const previousUrlKeys = (deps.previousEncryptionKeys ?? []).map(urlKeyOf);
  const urlSignatureWith = (k: Buffer, uploadId: string, expires: number) =>
    createHmac('sha256', k).update(`PUT\n${uploadId}\n${expires}`).digest('hex');
  const urlSignature = (uploadId: string, expires: number) => urlSignatureWith(urlKey, uploadId, expires);
  const urlSignatureValid = (uploadId: string, expires: number, signature: string) =>
    [urlKey, ...previousUrlKeys].some((k) => safeEqual(urlSignatureWith(k, uploadId, expires), signature));

  // Where an upload's bytes are: the tenant's part of built-in storage, or its bucket (forTenant,
  // whose reads fall back to built-in storage if the bucket was switched off meanwhile).
  const storeFor = async (tenantId: string, kind: 'builtin' | 's3'): Promise<ObjectStore> =>
    kind === 'builtin' ? storage.builtinFor(tenantId) : storage.forTenant(tenantId);

  function checkSize(size: number): void {
    if (size > deps.reportMaxBytes)
      throw appError(
        'payload_too_large',
        `Reports are limited to ${deps.reportMaxBytes} bytes; this one declares ${size}.`,
        { details: { maxBytes: deps.reportMaxBytes } },
      );
  }

  /** The finalized answer for an upload already finalized by this worker (idempotent repeats). */
  async function priorFinal(w: LeaseWorker, uploadId: string): Promise<FinalizeResult | null> {
    const row = await withService(db, (tx) =>
      tx
        .selectFrom('report_uploads')
        .select(['id', 'scan_id', 'status', 'ingestion_id', 'worker_id'])
        .where('id', '=', uploadId)
        .where('tenant_id', '=', w.tenantId)
        .executeTakeFirst(),
    );
    if (!row) throw appError('upload_not_found', "No such upload for this worker's tenant.");
    if (row.status === 'finalized' && row.worker_id === w.workerId && row.ingestion_id)
      return { uploadId: row.id, scanId: row.scan_id, status: 'finalized', ingestionId: row.ingestion_id };
    return null;
  }

  /** Marks the upload final, ends the lease and queues the ingestion: one transaction. */
  async function complete(
    w: LeaseWorker,
    u: {
      id: string;
      scanId: string;
      leaseToken: string;
      storage: 'builtin' | 's3';
      objectKey: string;
      size: number;
      sha256: string;
      format: ReportFormat | null;
      fileName: string | null;
    },
    insert: boolean,
  ): Promise<FinalizeResult> {
    const now = clock.now();
    return withService(db, async (tx) => {
      await leases.assertHolds(tx, w, u.scanId, u.leaseToken);
      if (insert) {
        await tx
          .insertInto('report_uploads')
          .values({
            id: u.id,
            tenant_id: w.tenantId,
            scan_id: u.scanId,
            worker_id: w.workerId,
            lease_token: u.leaseToken,
            storage: u.storage,
            object_key: u.objectKey,
            size: u.size,
            sha256: u.sha256,
            content_type: 'application/octet-stream',
            format: u.format,
            file_name: u.fileName,
            status: 'pending',
            expires_at: now,
          })
          .execute();
      }
      const updated = await tx
        .updateTable('report_uploads')
        .set({ status: 'finalized', finalized_at: now })
        .where('id', '=', u.id)
        .where('status', '=', 'pending')
        .returning('id')
        .executeTakeFirst();
      if (!updated) throw appError('conflict', 'This upload was finalized concurrently.');
      const { ingestionId } = await deps.ingestion.enqueue(tx, {
        tenantId: w.tenantId,
        scanId: u.scanId,
        uploadId: u.id,
        source: 'worker',
        storage: u.storage,
        objectKey: u.objectKey,
        size: u.size,
        sha256: u.sha256,
        format: u.format,
        fileName: u.fileName,
      });
      await tx.updateTable('report_uploads').set({ ingestion_id: ingestionId }).where('id', '=', u.id).execute();
      await leases.endForIngestion(tx, u.scanId, now);
      return { uploadId: u.id, scanId: u.scanId, status: 'finalized' as const, ingestionId };
    });
  }

  return {
    async init(w: LeaseWorker, input: InitInput): Promise<InitUploadResult> {
      checkSize(input.size);
      const now = clock.now();
      await withService(db, (tx) => leases.assertHolds(tx, w, input.scanId, input.leaseToken));
      const store = await storage.forTenant(w.tenantId);
      const uploadId = randomUUID();
      const objectKey = objectKeyOf(input.scanId, uploadId);
      const expiresAt = new Date(now.getTime() + UPLOAD_URL_SECONDS * 1000);
      let target: { url: string; headers: Record<string, string>; storage: 'builtin' | 's3' };
      if (store.kind === 's3' && store.presignPut) {
        const p = await store.presignPut(objectKey, {
          size: input.size,
          sha256: input.sha256,
          expiresInSeconds: UPLOAD_URL_SECONDS,
          ...(input.contentType ? { contentType: input.contentType } : {}),
        });
        target = { url: p.url, headers: p.headers, storage: 's3' };
      } else {
        const expires = Math.floor(expiresAt.getTime() / 1000);
        const url = new URL(`${WORKER_API_PREFIX}/uploads/${uploadId}`, deps.publicBaseUrl);
        url.searchParams.set('expires', String(expires));
        url.searchParams.set('signature', urlSignature(uploadId, expires));
        target = {
          url: url.toString(),
          headers: { 'content-length': String(input.size), 'content-type': 'application/octet-stream' },
          storage: 'builtin',
        };
      }
      await withService(db, (tx) =>
        tx
          .insertInto('report_uploads')
          .values({
            id: uploadId,
            tenant_id: w.tenantId,
            scan_id: input.scanId,
            worker_id: w.workerId,
            lease_token: input.leaseToken,
            storage: target.storage,
            object_key: objectKey,
            size: input.size,
            sha256: input.sha256.toLowerCase(),
            content_type: input.contentType ?? null,
            format: input.format ?? null,
            file_name: input.fileName ?? null,
            status: 'pending',
            expires_at: expiresAt,
          })
          .execute(),
      );
      return {
        uploadId,
        method: 'PUT',
        url: target.url,
        headers: target.headers,
        expiresAt: expiresAt.toISOString(),
        storage: target.storage,
      };
    },

    /** The built-in storage PUT: signature and expiry from the URL, bytes streamed with limits. */
    async put(input: {
      uploadId: string;
      expires: number;
      signature: string;
      contentLength: number | null;
      body: Readable;
    }): Promise<{ uploadId: string; size: number; sha256: string }> {
      const nowSec = Math.floor(clock.now().getTime() / 1000);
      if (!urlSignatureValid(input.uploadId, input.expires, input.signature.toLowerCase()))
        throw appError('upload_url_invalid', 'This upload URL is not valid; ask for a new one with report/init.');
      if (input.expires < nowSec)
        throw appError('upload_url_expired', 'This upload URL has expired; ask for a new one with report/init.');
      const row = await withService(db, (tx) =>
        tx
          .selectFrom('report_uploads')
          .select(['tenant_id', 'object_key', 'size', 'sha256', 'status', 'storage'])
          .where('id', '=', input.uploadId)
          .executeTakeFirst(),
      );
      if (!row || row.storage !== 'builtin') throw appError('upload_not_found', 'No such pending upload.');
      if (row.status !== 'pending') throw appError('conflict', 'This upload was already finalized.');
      const size = Number(row.size);
      if (input.contentLength !== null && input.contentLength > size) {
        input.body.resume();
        throw appError(
          'payload_too_large',
          `This upload was declared as ${size} bytes; the request carries ${input.contentLength}.`,
          { details: { maxBytes: size } },
        );
      }
      const store = await storeFor(row.tenant_id, 'builtin');
      const put = await store.put(row.object_key, input.body, {
        maxBytes: size,
        contentType: 'application/octet-stream',
        expected: { size, sha256: row.sha256 },
      });
      return { uploadId: input.uploadId, size: put.size, sha256: put.sha256 };
    },

    async finalize(w: LeaseWorker, input: { uploadId: string; leaseToken: string }): Promise<FinalizeResult> {
      const prior = await priorFinal(w, input.uploadId);
      if (prior) return prior;
      const row = await withService(db, (tx) =>
        tx
          .selectFrom('report_uploads')
          .selectAll()
          .where('id', '=', input.uploadId)
          .where('tenant_id', '=', w.tenantId)
          .executeTakeFirstOrThrow(),
      );
      if (row.lease_token !== input.leaseToken || row.worker_id !== w.workerId)
        throw appError('lease_lost', 'This upload belongs to another lease.');
      const store = await storeFor(w.tenantId, row.storage);
      const size = Number(row.size);
      const info = await store.head(row.object_key);
      if (!info)
        throw appError(
          'upload_incomplete',
          "Nothing has been uploaded to this upload's URL yet; PUT the report first.",
        );
      const actual = await hashObject(store, row.object_key);
      if (actual.size !== size || actual.sha256 !== row.sha256) {
        await store.delete(row.object_key);
        throw appError(
          'upload_mismatch',
          `The stored report (${actual.size} bytes) does not match the declared size ${size} and SHA-256; upload it again.`,
          {
            details: { declared: { size, sha256: row.sha256 }, stored: actual },
          },
        );
      }
      try {
        return await complete(
          w,
          {
            id: row.id,
            scanId: row.scan_id,
            leaseToken: input.leaseToken,
            storage: row.storage,
            objectKey: row.object_key,
            size,
            sha256: row.sha256,
            format: row.format,
            fileName: row.file_name,
          },
          false,
        );
      } catch (e) {
        // A concurrent finalize of the same upload won: answer what it answered.
        if (e instanceof AppError && e.code === 'conflict') {
          const again = await priorFinal(w, input.uploadId);
          if (again) return again;
        }
        throw e;
      }
    },

    /** Legacy single shot: the report travels inside the signed body. */
    async legacy(
      w: LeaseWorker,
      input: { scanId: string; leaseToken: string; format?: ReportFormat | undefined; report: string },
    ): Promise<FinalizeResult> {
      const bytes = Buffer.from(input.report, 'utf8');
      checkSize(bytes.length);
      await withService(db, (tx) => leases.assertHolds(tx, w, input.scanId, input.leaseToken));
      const store = await storage.forTenant(w.tenantId);
      const id = randomUUID();
      const objectKey = objectKeyOf(input.scanId, id);
      const put = await store.put(objectKey, Readable.from([bytes]), {
        maxBytes: deps.reportMaxBytes,
        contentType: 'application/octet-stream',
      });
      try {
        return await complete(
          w,
          {
            id,
            scanId: input.scanId,
            leaseToken: input.leaseToken,
            storage: store.kind,
            objectKey,
            size: put.size,
            sha256: put.sha256,
            format: input.format ?? null,
            fileName: null,
          },
          true,
        );
      } catch (e) {
        await store.delete(objectKey).catch(() => undefined);
        throw e;
      }
    },

    /** Deletes pending uploads (object and row) whose URL expired more than an hour ago. */
    async reapOrphans(limit = 100): Promise<number> {
      // The database's clock, like the lease reaper's: one clock for every replica.
      const rows = await withService(db, (tx) =>
        tx
          .selectFrom('report_uploads')
          .select(['id', 'tenant_id', 'object_key', 'storage'])
          .where('status', '=', 'pending')
          .where('expires_at', '<', sql<Date>`now() - make_interval(secs => ${ORPHAN_GRACE_MS / 1000})`)
          .orderBy('expires_at')
          .limit(limit)
          .execute(),
      );
      let reaped = 0;
      for (const r of rows) {
        const store = await storeFor(r.tenant_id, r.storage);
        await store.delete(r.object_key);
        const gone = await withService(db, (tx) =>
          tx
            .deleteFrom('report_uploads')
            .where('id', '=', r.id)
            .where('status', '=', 'pending')
            .returning('id')
            .executeTakeFirst(),
        );
        if (gone) reaped += 1;
      }
      return reaped;
    },
  };
}

async function hashObject(store: ObjectStore, key: string): Promise<{ size: number; sha256: string }> {
  const { body } = await store.get(key);
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    hash.update(chunk);
  }
  return { size, sha256: hash.digest('hex') };
}

export type UploadService = ReturnType<typeof createUploadService>;
