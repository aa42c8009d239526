export {
  createEnrollmentService,
  generateEnrollmentCode,
  normaliseCode,
  hashCode,
  hashWorkerToken,
  type EnrollmentService,
} from './enrollment-service.ts';
export { createWebhookService, validSecrets, type WebhookService } from './webhook-service.ts';
export {
  createWorkerAuth,
  registerWorkerRoutes,
  workerOf,
  SIGNATURE_HEADER,
  type WorkerAuth,
  type WorkerContext,
} from './worker-auth.ts';
export { registerWorkersRoutes } from './workers-routes.ts';
export { createLeaseService, LEASE_SECONDS, HEARTBEAT_SECONDS, type LeaseService } from './lease-service.ts';
export { createUploadService, type UploadService } from './upload-service.ts';
export { createArchiveService, type ArchiveService } from './archive-service.ts';
export { registerLeaseRoutes } from './lease-routes.ts';
export type { IngestionQueue, EnqueueReport } from './ingestion-types.ts';
export {
  createIngestionService,
  DEFAULT_INGEST_BATCH,
  type IngestionService,
  type IngestionSummary,
} from './ingestion-service.ts';
export { createImportsService, type ImportsService } from './ingestion-imports.ts';
export { registerIngestionRoutes } from './ingestion-routes.ts';
export { createHostedWorkers, selfUrl, type HostedWorkers } from './hosted-service.ts';
export { registerHostedWorkerRoutes } from './hosted-routes.ts';
