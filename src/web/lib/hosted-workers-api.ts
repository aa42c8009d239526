// Staff → Hosted workers (/api/v1/staff/hosted-workers) and hosted enrollment codes
// (/api/v1/staff/worker-enrollments). A code is shown once, in the answer that creates it.
import { queryOptions } from '@tanstack/react-query';
import type { HostedWorkerDto, HostedWorkerListDto } from '../../workers/hosted-schemas.ts';
import type { EnrollmentCreatedDto } from '../../workers/workers-schemas.ts';
import { api } from './api.ts';

export type HostedWorker = HostedWorkerDto;
export type HostedWorkerList = HostedWorkerListDto;
export type HostedEnrollment = EnrollmentCreatedDto;

export const hostedWorkersKeys = { list: ['staff', 'hosted-workers'] as const };

export const hostedWorkersQuery = queryOptions({
  queryKey: hostedWorkersKeys.list,
  queryFn: ({ signal }) => api<HostedWorkerList>('/api/v1/staff/hosted-workers', { signal }),
  // Last seen and "running here" move on their own: refresh while the page is open.
  refetchInterval: 30_000,
});

export const createHostedWorker = (tenantId: string) =>
  api<HostedWorker>('/api/v1/staff/hosted-workers', { method: 'POST', body: { tenantId } });

export const createHostedEnrollment = (tenantId: string) =>
  api<HostedEnrollment>('/api/v1/staff/worker-enrollments', { method: 'POST', body: { tenantId } });
