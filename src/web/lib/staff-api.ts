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
  mesh: (records: 'received-events' | 'inbound' | 'outbound' | 'outbox', filters: object) =>
    ['staff', 'mesh', records, filters] as const,
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

/**
 * A list read page by page, newest first: "Load more" passes the previous page's nextBefore as
 * `before`, until it is null.
 */
function newestFirstQuery<TPage extends { nextBefore: string | number | null }, TKey extends readonly unknown[]>(
  queryKey: TKey,
  path: string,
  query: Record<string, string | number | boolean | undefined>,
  limit: number,
) {
  return infiniteQueryOptions({
    queryKey,
    queryFn: ({ pageParam, signal }) => api<TPage>(path, { query: { ...query, before: pageParam, limit }, signal }),
    initialPageParam: undefined as NonNullable<TPage['nextBefore']> | undefined,
    getNextPageParam: (last: TPage) => last.nextBefore ?? undefined,
  });
}

export const staffAuditQuery = (filters: AuditFilters) =>
  newestFirstQuery<AuditPage, ReturnType<typeof staffKeys.audit>>(
    staffKeys.audit(filters),
    '/api/v1/staff/audit-log',
    { tenantId: filters.tenantId, action: filters.action, actor: filters.actor, from: filters.from, to: filters.to },
    AUDIT_PAGE_SIZE,
  );

// Mesh records. Received events page with an opaque keyset cursor (a string); the others with an id.

export const meshReceivedQuery = (filters: MeshReceivedFilters) =>
  newestFirstQuery<MeshReceivedPage, ReturnType<typeof staffKeys.mesh>>(
    staffKeys.mesh('received-events', filters),
    '/api/v1/staff/mesh/received-events',
    { caller: filters.caller, kind: filters.kind, severity: filters.severity, from: filters.from, to: filters.to },
    MESH_PAGE_SIZE,
  );

export const meshInboundQuery = (filters: MeshInboundFilters) =>
  newestFirstQuery<MeshInboundPage, ReturnType<typeof staffKeys.mesh>>(
    staffKeys.mesh('inbound', filters),
    '/api/v1/staff/mesh/inbound',
    {
      caller: filters.caller,
      flow: filters.flow,
      status: filters.status,
      errorCode: filters.errorCode,
      from: filters.from,
      to: filters.to,
    },
    MESH_PAGE_SIZE,
  );

export const meshOutboundQuery = (filters: MeshOutboundFilters) =>
  newestFirstQuery<MeshOutboundPage, ReturnType<typeof staffKeys.mesh>>(
    staffKeys.mesh('outbound', filters),
    '/api/v1/staff/mesh/outbound',
    {
      peer: filters.peer,
      flow: filters.flow,
      ok: filters.ok,
      requestId: filters.requestId,
      from: filters.from,
      to: filters.to,
    },
    MESH_PAGE_SIZE,
  );

export const meshOutboxQuery = (filters: MeshOutboxFilters) =>
  newestFirstQuery<MeshOutboxPage, ReturnType<typeof staffKeys.mesh>>(
    staffKeys.mesh('outbox', filters),
    '/api/v1/staff/mesh/outbox',
    { status: filters.status, peer: filters.peer },
    MESH_PAGE_SIZE,
  );
