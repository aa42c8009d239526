// Queries and mutations for the active tenant (/api/v1/tenants/:tenantId/...).
import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { api } from './api.ts';
import type { AuditFilters, AuditPage, MembersResponse, TenantSettings, TenantSettingsBody } from './types.ts';

export const AUDIT_PAGE_SIZE = 50;

export const tenantKeys = {
  all: (tenantId: string) => ['tenant', tenantId] as const,
  members: (tenantId: string) => ['tenant', tenantId, 'members'] as const,
  settings: (tenantId: string) => ['tenant', tenantId, 'settings'] as const,
  audit: (tenantId: string, filters: AuditFilters) => ['tenant', tenantId, 'audit-log', filters] as const,
};

const base = (tenantId: string) => `/api/v1/tenants/${encodeURIComponent(tenantId)}`;

export const membersQuery = (tenantId: string) =>
  queryOptions({
    queryKey: tenantKeys.members(tenantId),
    queryFn: () => api<MembersResponse>(`${base(tenantId)}/members`),
  });

export const settingsQuery = (tenantId: string) =>
  queryOptions({
    queryKey: tenantKeys.settings(tenantId),
    queryFn: () => api<TenantSettings>(`${base(tenantId)}/settings`),
  });

export function saveSettings(tenantId: string, body: TenantSettingsBody) {
  return api<TenantSettings>(`${base(tenantId)}/settings`, { method: 'PUT', body });
}

export const tenantAuditQuery = (tenantId: string, filters: AuditFilters) =>
  infiniteQueryOptions({
    queryKey: tenantKeys.audit(tenantId, filters),
    queryFn: ({ pageParam, signal }) =>
      api<AuditPage>(`${base(tenantId)}/audit-log`, {
        query: {
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
