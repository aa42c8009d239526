// Queries and mutations of the asset inventory (/api/v1/tenants/:tenantId/assets/...) and the
// super-admin verification bypass (/api/v1/staff/assets/:id/bypass).
import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { api, ApiError, defaultMessageFor, fetchMe } from './api.ts';
import { ME_KEY, queryClient } from './query-client.ts';
import type { Me } from './types.ts';
import type {
  AssetDetail,
  AssetFilters,
  AssetResponse,
  AssetsPage,
  BypassBody,
  CreateAssetBody,
  UpdateAssetBody,
  VerifyAssetResponse,
} from './types.ts';

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
        query: {
          q: filters.q,
          kind: filters.kind,
          status: filters.status,
          tag: filters.tag,
          archived: filters.archived,
          before: pageParam,
          limit: ASSETS_PAGE_SIZE,
        },
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

export interface UploadProgress {
  loaded: number;
  total: number;
}

/**
 * Streams an image archive to the server as the request body (no multipart wrapping), with upload
 * progress. New asset: `assetId` absent; new version of an archive-backed asset: `assetId` given.
 */
export async function uploadImageArchive(
  tenantId: string,
  file: File,
  opts: { assetId?: string; name?: string; onProgress?: (p: UploadProgress) => void; signal?: AbortSignal } = {},
): Promise<AssetResponse> {
  const query = new URLSearchParams({ fileName: file.name });
  if (opts.name && !opts.assetId) query.set('name', opts.name);
  const url = opts.assetId ? `${one(tenantId, opts.assetId)}/archive?${query}` : `${base(tenantId)}/archives?${query}`;
  const me =
    queryClient.getQueryData<Me | null>(ME_KEY) ??
    (await queryClient.fetchQuery({ queryKey: ME_KEY, queryFn: fetchMe, staleTime: 0 }));
  const csrf = me?.csrfToken ?? '';
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(opts.assetId ? 'PUT' : 'POST', url);
    xhr.setRequestHeader('content-type', 'application/octet-stream');
    xhr.setRequestHeader('accept', 'application/json');
    xhr.setRequestHeader('x-csrf-token', csrf);
    xhr.upload.onprogress = (e) =>
      opts.onProgress?.({ loaded: e.loaded, total: e.lengthComputable ? e.total : file.size });
    xhr.onload = () => {
      type Body = { error?: unknown; message?: unknown; details?: unknown };
      const body = ((): Body | null => {
        try {
          return JSON.parse(xhr.responseText) as Body;
        } catch {
          return null; // not JSON: a proxy's page; the status decides
        }
      })();
      if (xhr.status >= 200 && xhr.status < 300 && body) return resolve(body as unknown as AssetResponse);
      const code = typeof body?.error === 'string' ? body.error : `http_${xhr.status}`;
      const message =
        typeof body?.message === 'string'
          ? body.message
          : xhr.status === 413
            ? 'The file is larger than the server accepts.'
            : defaultMessageFor(xhr.status);
      reject(new ApiError(xhr.status, code, message, body?.details));
    };
    xhr.onerror = () =>
      reject(new ApiError(0, 'network_error', 'The upload was interrupted. Check your connection and try again.'));
    xhr.onabort = () => reject(new DOMException('The upload was cancelled.', 'AbortError'));
    opts.signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(file);
  });
}

/** Where the browser downloads the archive from (a plain link: the session cookie authorises it). */
export const imageArchiveUrl = (tenantId: string, assetId: string) => `${one(tenantId, assetId)}/archive`;
