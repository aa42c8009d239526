// Queries and mutations of the staff area (/api/v1/staff/...).
import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { api } from './api.ts';
import { AUDIT_PAGE_SIZE } from './tenant-api.ts';
import type { AuditFilters, AuditPage, GrantRoleBody, PlatformRoleResponse, PlatformRolesResponse, StaffTenantsResponse } from './types.ts';

export const staffKeys = {
  tenants: ['staff', 'tenants'] as const,
  roles: ['staff', 'platform-roles'] as const,
  audit: (filters: AuditFilters) => ['staff', 'audit-log', filters] as const,
};

export const staffTenantsQuery = queryOptions({
  queryKey: staffKeys.tenants,
  queryFn: () => api<StaffTenantsResponse>('/api/v1/staff/tenants'),
});

export const platformRolesQuery = queryOptions({
  queryKey: staffKeys.roles,
  queryFn: () => api<PlatformRolesResponse>('/api/v1/staff/platform-roles'),
});

export function grantPlatformRole(body: GrantRoleBody) {
  return api<PlatformRoleResponse>('/api/v1/staff/platform-roles', { method: 'PUT', body });
}

export function revokePlatformRole(userId: string) {
  return api<void>(`/api/v1/staff/platform-roles/${encodeURIComponent(userId)}`, { method: 'DELETE' });
}

export const staffAuditQuery = (filters: AuditFilters) =>
  infiniteQueryOptions({
    queryKey: staffKeys.audit(filters),
    queryFn: ({ pageParam, signal }) =>
      api<AuditPage>('/api/v1/staff/audit-log', {
        query: {
          tenantId: filters.tenantId,
          action: filters.action,
          actor: filters.actor,
          from: filters.from,
          to: filters.to,
          before: pageParam,
          limit: AUDIT_PAGE_SIZE,
        },
        signal,
      }),
    initialPageParam: undefined as number | undefined,
    getNextPageParam: (last) => last.nextBefore ?? undefined,
  });
