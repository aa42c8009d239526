export { createEnrollmentService, generateEnrollmentCode, normaliseCode, hashCode, hashWorkerToken, type EnrollmentService } from './enrollment-service.ts';
export { createWebhookService, validSecrets, type WebhookService } from './webhook-service.ts';
export { createWorkerAuth, registerWorkerRoutes, workerOf, signBody, WORKER_BASE, SIGNATURE_HEADER, type WorkerAuth, type WorkerContext } from './worker-auth.ts';
export { registerWorkersRoutes } from './workers-routes.ts';
