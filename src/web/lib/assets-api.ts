// Queries and mutations of the asset inventory (/api/v1/tenants/:tenantId/assets/...) and the
// super-admin verification bypass (/api/v1/staff/assets/:id/bypass).
import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { api } from './api.ts';
import type { AssetDetail, AssetFilters, AssetResponse, AssetsPage, BypassBody, CreateAssetBody, UpdateAssetBody, VerifyAssetResponse } from './types.ts';

/** Assets per page of the list ("Load more" fetches the next). */
export const ASSETS_PAGE_SIZE = 50;

export const assetKeys = {
  all: (tenantId: string) => ['tenant', tenantId, 'assets'] as const,
  lists: (tenantId: string) => ['tenant', tenantId, 'assets', 'list'] as const,
  list: (tenantId: string, filters: AssetFilters) => ['tenant', tenantId, 'assets', 'list', filters] as const,
  detail: (tenantId: string, assetId: string) => ['tenant', tenantId, 'assets', 'detail', assetId] as const,
};

const base = (tenantId: string) => `/api/v1/tenants/${encodeURIComponent(tenantId)}/assets`;
const one = (tenantId: string, assetId: string) => `${base(tenantId)}/${encodeURIComponent(assetId)}`;

export const assetsQuery = (tenantId: string, filters: AssetFilters) =>
  infiniteQueryOptions({
    queryKey: assetKeys.list(tenantId, filters),
    queryFn: ({ pageParam, signal }) =>
      api<AssetsPage>(base(tenantId), {
        query: { q: filters.q, kind: filters.kind, status: filters.status, tag: filters.tag, archived: filters.archived, before: pageParam, limit: ASSETS_PAGE_SIZE },
        signal,
      }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextBefore ?? undefined,
  });

export const assetQuery = (tenantId: string, assetId: string) =>
  queryOptions({
    queryKey: assetKeys.detail(tenantId, assetId),
    queryFn: ({ signal }) => api<AssetDetail>(one(tenantId, assetId), { signal }),
  });

export function createAsset(tenantId: string, body: CreateAssetBody) {
  return api<AssetResponse>(base(tenantId), { method: 'POST', body });
}

export function updateAsset(tenantId: string, assetId: string, body: UpdateAssetBody) {
  return api<AssetResponse>(one(tenantId, assetId), { method: 'PATCH', body });
}

/** Runs the DNS check now. */
export function verifyAsset(tenantId: string, assetId: string) {
  return api<VerifyAssetResponse>(`${one(tenantId, assetId)}/verify`, { method: 'POST' });
}

export function archiveAsset(tenantId: string, assetId: string) {
  return api<AssetResponse>(`${one(tenantId, assetId)}/archive`, { method: 'POST' });
}

export function restoreAsset(tenantId: string, assetId: string) {
  return api<AssetResponse>(`${one(tenantId, assetId)}/restore`, { method: 'POST' });
}

const staffOne = (assetId: string) => `/api/v1/staff/assets/${encodeURIComponent(assetId)}`;

/** Super-admins only: allow scanning without proof of ownership. */
export function bypassVerification(assetId: string, body: BypassBody) {
  return api<AssetResponse>(`${staffOne(assetId)}/bypass`, { method: 'POST', body });
}

export function revokeBypass(assetId: string, body: BypassBody) {
  return api<AssetResponse>(`${staffOne(assetId)}/bypass/revoke`, { method: 'POST', body });
}
