// Workers (/api/v1/tenants/:tenantId/workers, worker-enrollments, webhook-secret). Enrollment codes
// and signing secrets are shown once, in the answer that creates them; nothing reads them back.
import { queryOptions } from '@tanstack/react-query';
import type {
  EnrollmentCreatedDto,
  WebhookSecretCreatedDto,
  WebhookSecretStatusDto,
  WorkerDto,
  WorkerListDto,
} from '../../workers/workers-schemas.ts';
import { api } from './api.ts';

export type Worker = WorkerDto;
export type WorkerList = WorkerListDto;
export type Enrollment = EnrollmentCreatedDto;
export type WebhookSecretStatus = WebhookSecretStatusDto;
export type WebhookSecretCreated = WebhookSecretCreatedDto;

const base = (tenantId: string) => `/api/v1/tenants/${encodeURIComponent(tenantId)}`;

export const workersKeys = {
  list: (tenantId: string) => ['tenant', tenantId, 'workers'] as const,
  secret: (tenantId: string) => ['tenant', tenantId, 'webhook-secret'] as const,
};

export const workersQuery = (tenantId: string) =>
  // Last seen moves with every heartbeat: refresh while the page is open.
  queryOptions({
    queryKey: workersKeys.list(tenantId),
    queryFn: ({ signal }) => api<WorkerList>(`${base(tenantId)}/workers`, { signal }),
    refetchInterval: 30_000,
  });

export const webhookSecretQuery = (tenantId: string) =>
  queryOptions({
    queryKey: workersKeys.secret(tenantId),
    queryFn: ({ signal }) => api<WebhookSecretStatus>(`${base(tenantId)}/webhook-secret`, { signal }),
  });

export const createEnrollment = (tenantId: string) =>
  api<Enrollment>(`${base(tenantId)}/worker-enrollments`, { method: 'POST' });

export const revokeWorker = (tenantId: string, workerId: string) =>
  api<Worker>(`${base(tenantId)}/workers/${encodeURIComponent(workerId)}/revoke`, { method: 'POST' });

export const rotateWebhookSecret = (tenantId: string, graceHours: number) =>
  api<WebhookSecretCreated>(`${base(tenantId)}/webhook-secret`, { method: 'POST', body: { graceHours } });
