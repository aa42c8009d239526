// "Import results" (/api/v1/tenants/:tenantId/imports) and a scan's report/ingestion panel
// (/api/v1/tenants/:tenantId/scans/:scanId/ingestions). The upload goes as multipart/form-data
// (fields first, the file last) through XMLHttpRequest, for its upload progress.
import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import type { ImportFormat, ImportList, IngestionDto, ScanIngestions } from '../../workers/ingestion-schemas.ts';
import { api, ApiError, defaultMessageFor, fetchMe } from './api.ts';
import { ME_KEY, queryClient } from './query-client.ts';
import type { Me } from './types.ts';

export type Ingestion = IngestionDto;
export type { ImportFormat, ImportList, ScanIngestions };
export { FORMAT_LABELS, IMPORT_FORMATS } from '../../workers/ingestion-schemas.ts';

const base = (tenantId: string) => `/api/v1/tenants/${encodeURIComponent(tenantId)}`;

export const importKeys = {
  all: (tenantId: string) => ['tenant', tenantId, 'imports'] as const,
  list: (tenantId: string) => ['tenant', tenantId, 'imports', 'list'] as const,
  one: (tenantId: string, id: string) => ['tenant', tenantId, 'imports', 'one', id] as const,
  scan: (tenantId: string, scanId: string) => ['tenant', tenantId, 'imports', 'scan', scanId] as const,
};

export const isActive = (i: Pick<Ingestion, 'status'>) => i.status === 'queued' || i.status === 'running';

export const importsQuery = (tenantId: string) =>
  queryOptions({
    queryKey: importKeys.list(tenantId),
    queryFn: ({ signal }) => api<ImportList>(`${base(tenantId)}/imports`, { query: { limit: 50 }, signal }),
    // Poll while an import is still being read.
    refetchInterval: (q) => (q.state.data?.imports.some(isActive) ? 1_500 : false),
  });

export const importQuery = (tenantId: string, id: string) =>
  queryOptions({
    queryKey: importKeys.one(tenantId, id),
    queryFn: ({ signal }) =>
      api<{ import: Ingestion }>(`${base(tenantId)}/imports/${encodeURIComponent(id)}`, { signal }).then(
        (r) => r.import,
      ),
    refetchInterval: (q) => (!q.state.data || isActive(q.state.data) ? 1_000 : false),
  });

/**
 * A scan's result ingestions. The scan's status is part of the key: a scan that moves from running to
 * succeeded between two polls of its page gets its result summary fetched then, without a reload.
 */
export const scanIngestionsQuery = (tenantId: string, scanId: string, scanStatus: string) =>
  queryOptions({
    queryKey: [...importKeys.scan(tenantId, scanId), scanStatus],
    placeholderData: keepPreviousData,
    queryFn: ({ signal }) =>
      api<ScanIngestions>(`${base(tenantId)}/scans/${encodeURIComponent(scanId)}/ingestions`, { signal }),
    refetchInterval: (q) => (scanStatus === 'ingesting' || q.state.data?.ingestions.some(isActive) ? 2_000 : false),
  });

export interface UploadProgress {
  loaded: number;
  total: number;
}

/** Uploads a report for an asset; resolves with the queued import. */
export async function importReport(
  tenantId: string,
  input: { assetId: string; format: ImportFormat | 'auto'; file: File },
  opts: { onProgress?: (p: UploadProgress) => void; signal?: AbortSignal } = {},
): Promise<Ingestion> {
  const me =
    queryClient.getQueryData<Me | null>(ME_KEY) ??
    (await queryClient.fetchQuery({ queryKey: ME_KEY, queryFn: fetchMe, staleTime: 0 }));
  const form = new FormData();
  form.append('assetId', input.assetId);
  form.append('format', input.format);
  form.append('file', input.file, input.file.name);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${base(tenantId)}/imports`);
    xhr.setRequestHeader('accept', 'application/json');
    xhr.setRequestHeader('x-csrf-token', me?.csrfToken ?? '');
    xhr.upload.onprogress = (e) =>
      opts.onProgress?.({ loaded: e.loaded, total: e.lengthComputable ? e.total : input.file.size });
    xhr.onload = () => {
      type Body = { error?: unknown; message?: unknown; details?: unknown; import?: Ingestion };
      const body = ((): Body | null => {
        try {
          return JSON.parse(xhr.responseText) as Body;
        } catch {
          return null; // not JSON: a proxy's page; the status decides
        }
      })();
      if (xhr.status >= 200 && xhr.status < 300 && body?.import) return resolve(body.import);
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
    xhr.send(form);
  });
}
