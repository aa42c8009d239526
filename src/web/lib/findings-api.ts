// Queries and mutations of findings (/api/v1/tenants/:tenantId/findings/...), and export links.
// Types come from the server's schemas as type-only imports (erased from the bundle).
import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import type { z } from 'zod';
import type {
  bulkStatusBodySchema,
  bulkStatusResponseSchema,
  findingDetailSchema,
  findingEventSchema,
  findingListSchema,
  findingSummarySchema,
  FindingSort,
  FindingStatus,
  Scanner,
  Severity,
} from '../../findings/findings-schemas.ts';
import { api, buildUrl } from './api.ts';

export type { FindingSort, FindingStatus, Scanner, Severity };
export type FindingSummary = z.infer<typeof findingSummarySchema>;
export type FindingsPage = z.infer<typeof findingListSchema>;
export type FindingDetail = z.infer<typeof findingDetailSchema>;
export type FindingEvent = z.infer<typeof findingEventSchema>;
export type BulkStatusBody = z.input<typeof bulkStatusBodySchema>;
export type BulkStatusResponse = z.infer<typeof bulkStatusResponseSchema>;

/** The filters the page keeps in its URL, as the API takes them. */
export interface FindingFilters {
  severity?: Severity[];
  status?: FindingStatus[];
  assetId?: string;
  scanner?: Scanner;
  scanId?: string;
  q?: string;
  overdue?: boolean;
  sort?: FindingSort;
  dir?: 'asc' | 'desc';
}

export const FINDINGS_PAGE_SIZE = 50;

export const findingKeys = {
  all: (tenantId: string) => ['tenant', tenantId, 'findings'] as const,
  list: (tenantId: string, filters: FindingFilters) => ['tenant', tenantId, 'findings', 'list', filters] as const,
  detail: (tenantId: string, findingId: string) => ['tenant', tenantId, 'findings', 'detail', findingId] as const,
};

const base = (tenantId: string) => `/api/v1/tenants/${encodeURIComponent(tenantId)}/findings`;

function toQuery(f: FindingFilters): Record<string, string | undefined> {
  return {
    severity: f.severity?.length ? f.severity.join(',') : undefined,
    status: f.status?.length ? f.status.join(',') : undefined,
    assetId: f.assetId,
    scanner: f.scanner,
    scanId: f.scanId,
    q: f.q,
    overdue: f.overdue ? 'true' : undefined,
    sort: f.sort,
    dir: f.dir,
  };
}

export const findingsQuery = (tenantId: string, filters: FindingFilters) =>
  infiniteQueryOptions({
    queryKey: findingKeys.list(tenantId, filters),
    queryFn: ({ pageParam, signal }) =>
      api<FindingsPage>(base(tenantId), {
        query: { ...toQuery(filters), cursor: pageParam, limit: FINDINGS_PAGE_SIZE },
        signal,
      }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });

export const findingQuery = (tenantId: string, findingId: string) =>
  queryOptions({
    queryKey: findingKeys.detail(tenantId, findingId),
    queryFn: ({ signal }) => api<FindingDetail>(`${base(tenantId)}/${encodeURIComponent(findingId)}`, { signal }),
  });

export function setFindingStatus(tenantId: string, body: BulkStatusBody) {
  return api<BulkStatusResponse>(`${base(tenantId)}/status`, { method: 'POST', body });
}

/** A download link for an export of the current filters (the session cookie authorises it). */
export function exportUrl(tenantId: string, format: 'csv' | 'json' | 'sarif', filters: FindingFilters): string {
  return buildUrl(`${base(tenantId)}/export`, { format, ...toQuery(filters) });
}
