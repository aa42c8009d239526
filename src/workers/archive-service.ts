// The image archive behind a container scan, for the worker that holds its lease. An uploaded
// archive asset (docs/decisions.md §16) has no registry to pull from; the worker fetches the bytes
// from Rampart with a signed request fenced by its lease token, from whichever store the tenant
// uses (built-in or its bucket), and checks them against the digest the asset is named by.
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { withService } from '../db/tenant.ts';
import { appError } from '../lib/errors.ts';
import type { StorageService } from '../storage/index.ts';
import type { LeaseService, LeaseWorker } from './lease-service.ts';

export interface ArchiveDownload {
  body: Readable;
  size: number;
  sha256: string;
  format: 'tar' | 'tar+gzip';
  fileName: string;
}

export function createArchiveService(deps: { db: Kysely<DB>; storage: StorageService; leases: LeaseService }) {
  return {
    async open(w: LeaseWorker, scanId: string, leaseToken: string): Promise<ArchiveDownload> {
      const asset = await withService(deps.db, async (tx) => {
        const held = await deps.leases.assertHolds(tx, w, scanId, leaseToken);
        return tx
          .selectFrom('assets')
          .select([
            'source',
            'archive_storage_key',
            'archive_size',
            'archive_sha256',
            'archive_format',
            'archive_file_name',
          ])
          .where('id', '=', held.assetId)
          .where('tenant_id', '=', w.tenantId)
          .executeTakeFirst();
      });
      if (
        !asset ||
        asset.source !== 'archive' ||
        !asset.archive_storage_key ||
        !asset.archive_sha256 ||
        !asset.archive_format
      ) {
        throw appError(
          'object_not_found',
          "This scan's asset has no uploaded image archive; scan its registry reference instead.",
        );
      }
      const { body } = await (await deps.storage.forTenant(w.tenantId)).get(asset.archive_storage_key);
      return {
        body,
        size: Number(asset.archive_size),
        sha256: asset.archive_sha256,
        format: asset.archive_format,
        fileName: asset.archive_file_name ?? 'image.tar',
      };
    },
  };
}

export type ArchiveService = ReturnType<typeof createArchiveService>;
