// Queries and mutations of the staff area (/api/v1/staff/...).
import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { api } from './api.ts';
import { AUDIT_PAGE_SIZE } from './tenant-api.ts';
import type {
  AuditFilters,
  AuditPage,
  GrantRoleBody,
  MeshInboundFilters,
  MeshInboundPage,
  MeshOutboundFilters,
  MeshOutboundPage,
  MeshOutboxFilters,
  MeshOutboxPage,
  MeshReceivedFilters,
  MeshReceivedPage,
  PlatformRoleResponse,
  PlatformRolesResponse,
  StaffTenantsResponse,
} from './types.ts';

export const staffKeys = {
  tenants: ['staff', 'tenants'] as const,
  roles: ['staff', 'platform-roles'] as const,
  audit: (filters: AuditFilters) => ['staff', 'audit-log', filters] as const,
  mesh: (records: 'received-events' | 'inbound' | 'outbound' | 'outbox', filters: object) => ['staff', 'mesh', records, filters] as const,
};

/** Entries per page of the mesh records. */
export const MESH_PAGE_SIZE = 50;

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

// Mesh records: newest first, "Load more" passes the previous page's nextBefore as `before`.
// Received events page with an opaque keyset cursor (a string); the others with an id.

export const meshReceivedQuery = (filters: MeshReceivedFilters) =>
  infiniteQueryOptions({
    queryKey: staffKeys.mesh('received-events', filters),
    queryFn: ({ pageParam, signal }) =>
      api<MeshReceivedPage>('/api/v1/staff/mesh/received-events', {
        query: { caller: filters.caller, kind: filters.kind, severity: filters.severity, from: filters.from, to: filters.to, before: pageParam, limit: MESH_PAGE_SIZE },
        signal,
      }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextBefore ?? undefined,
  });

export const meshInboundQuery = (filters: MeshInboundFilters) =>
  infiniteQueryOptions({
    queryKey: staffKeys.mesh('inbound', filters),
    queryFn: ({ pageParam, signal }) =>
      api<MeshInboundPage>('/api/v1/staff/mesh/inbound', {
        query: { caller: filters.caller, flow: filters.flow, status: filters.status, errorCode: filters.errorCode, from: filters.from, to: filters.to, before: pageParam, limit: MESH_PAGE_SIZE },
        signal,
      }),
    initialPageParam: undefined as number | undefined,
    getNextPageParam: (last) => last.nextBefore ?? undefined,
  });

export const meshOutboundQuery = (filters: MeshOutboundFilters) =>
  infiniteQueryOptions({
    queryKey: staffKeys.mesh('outbound', filters),
    queryFn: ({ pageParam, signal }) =>
      api<MeshOutboundPage>('/api/v1/staff/mesh/outbound', {
        query: { peer: filters.peer, flow: filters.flow, ok: filters.ok, requestId: filters.requestId, from: filters.from, to: filters.to, before: pageParam, limit: MESH_PAGE_SIZE },
        signal,
      }),
    initialPageParam: undefined as number | undefined,
    getNextPageParam: (last) => last.nextBefore ?? undefined,
  });

export const meshOutboxQuery = (filters: MeshOutboxFilters) =>
  infiniteQueryOptions({
    queryKey: staffKeys.mesh('outbox', filters),
    queryFn: ({ pageParam, signal }) =>
      api<MeshOutboxPage>('/api/v1/staff/mesh/outbox', { query: { status: filters.status, peer: filters.peer, before: pageParam, limit: MESH_PAGE_SIZE }, signal }),
    initialPageParam: undefined as number | undefined,
    getNextPageParam: (last) => last.nextBefore ?? undefined,
  });
