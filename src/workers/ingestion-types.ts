// The seam between report uploads (lease and upload routes) and report ingestion (the job queue
// that streams a stored report into findings). Uploads call enqueue() inside the transaction that
// finalizes the upload, so a finalized upload always has its ingestion job, on every replica.
import type { Tx } from '../db/tenant.ts';
import type { ReportFormat } from './importers/index.ts';

export interface EnqueueReport {
  tenantId: string;
  scanId: string;
  /** report_uploads.id for a worker upload; null for other sources. */
  uploadId: string | null;
  source: 'worker' | 'import';
  /** Where the bytes are: built-in storage or the tenant's bucket, under this key. */
  storage: 'builtin' | 's3';
  objectKey: string;
  size: number;
  sha256: string;
  /** null: detect from the first bytes. */
  format: ReportFormat | null;
  fileName: string | null;
  /** The user who imported it (imports only). */
  createdBy?: { userId: string; email: string } | null;
}

export interface IngestionQueue {
  /** Queues the report for ingestion in the caller's (service-role) transaction. */
  enqueue(tx: Tx, input: EnqueueReport): Promise<{ ingestionId: string }>;
}
