// Queries and mutations of scans (/api/v1/tenants/:tenantId/scans/...) and scan schedules
// (/api/v1/tenants/:tenantId/scan-schedules/...). Types come from the server's zod schemas
// (type-only imports: nothing of zod enters the bundle).
import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import type { z } from 'zod';
import type {
  createScanBodySchema,
  createScheduleBodySchema,
  cronPreviewSchema,
  scanDetailSchema,
  scanKindSchema,
  scanListSchema,
  scanOutcomeSchema,
  scanSchema,
  scanStatusSchema,
  scanUsageSchema,
  scheduleDetailSchema,
  scheduleListSchema,
  scheduleResponseSchema,
  scheduleSchema,
  severitySchema,
  updateScheduleBodySchema,
} from '../../scans/scans-schemas.ts';
import { api } from './api.ts';
import type { Asset, AssetsPage } from './types.ts';

export type ScanKind = z.infer<typeof scanKindSchema>;
export type ScanStatus = z.infer<typeof scanStatusSchema>;
export type ScanOutcome = z.infer<typeof scanOutcomeSchema>;
export type ReportCoverage = NonNullable<ScanDetail['coverage']>;
export type Severity = z.infer<typeof severitySchema>;
export type Scan = z.infer<typeof scanSchema>;
export type ScanDetail = z.infer<typeof scanDetailSchema>;
export type ScansPage = z.infer<typeof scanListSchema>;
export type ScanUsage = z.infer<typeof scanUsageSchema>;
export type CreateScanBody = z.input<typeof createScanBodySchema>;
export type Schedule = z.infer<typeof scheduleSchema>;
export type ScheduleDetail = z.infer<typeof scheduleDetailSchema>;
export type SchedulesPage = z.infer<typeof scheduleListSchema>;
export type ScheduleResponse = z.infer<typeof scheduleResponseSchema>;
export type CreateScheduleBody = z.input<typeof createScheduleBodySchema>;
export type UpdateScheduleBody = z.input<typeof updateScheduleBodySchema>;
export type CronPreview = z.infer<typeof cronPreviewSchema>;

export interface ScanFilters {
  status?: ScanStatus;
  kind?: ScanKind;
  assetId?: string;
  scheduleId?: string;
  active?: 'true' | 'false';
}

export const SCANS_PAGE_SIZE = 50;
/** How often pages refresh while a scan on them is unfinished. */
export const LIVE_REFRESH_MS = 3000;

export const TERMINAL: readonly ScanStatus[] = ['succeeded', 'failed', 'cancelled'];
export const isFinished = (s: Pick<Scan, 'status'>) => TERMINAL.includes(s.status);

export const scanKeys = {
  all: (tenantId: string) => ['tenant', tenantId, 'scans'] as const,
  lists: (tenantId: string) => ['tenant', tenantId, 'scans', 'list'] as const,
  list: (tenantId: string, filters: ScanFilters) => ['tenant', tenantId, 'scans', 'list', filters] as const,
  detail: (tenantId: string, scanId: string) => ['tenant', tenantId, 'scans', 'detail', scanId] as const,
  usage: (tenantId: string) => ['tenant', tenantId, 'scans', 'usage'] as const,
};

export const scheduleKeys = {
  all: (tenantId: string) => ['tenant', tenantId, 'schedules'] as const,
  lists: (tenantId: string) => ['tenant', tenantId, 'schedules', 'list'] as const,
  detail: (tenantId: string, id: string) => ['tenant', tenantId, 'schedules', 'detail', id] as const,
  preview: (tenantId: string, cron: string, timeZone: string) =>
    ['tenant', tenantId, 'schedules', 'preview', cron, timeZone] as const,
};

const t = (tenantId: string) => `/api/v1/tenants/${encodeURIComponent(tenantId)}`;
const scanUrl = (tenantId: string, scanId: string) => `${t(tenantId)}/scans/${encodeURIComponent(scanId)}`;
const scheduleUrl = (tenantId: string, id: string) => `${t(tenantId)}/scan-schedules/${encodeURIComponent(id)}`;

/** The list refreshes itself while any scan shown on it is unfinished. */
export const scansQuery = (tenantId: string, filters: ScanFilters) =>
  infiniteQueryOptions({
    queryKey: scanKeys.list(tenantId, filters),
    queryFn: ({ pageParam, signal }) =>
      api<ScansPage>(`${t(tenantId)}/scans`, {
        query: { ...filters, before: pageParam, limit: SCANS_PAGE_SIZE },
        signal,
      }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextBefore ?? undefined,
    refetchInterval: (q) =>
      q.state.data?.pages.some((p) => p.scans.some((s) => !isFinished(s))) ? LIVE_REFRESH_MS : false,
  });

/** A scan and its chunks; refreshes itself until the scan has finished. */
export const scanQuery = (tenantId: string, scanId: string) =>
  queryOptions({
    queryKey: scanKeys.detail(tenantId, scanId),
    queryFn: ({ signal }) => api<ScanDetail>(scanUrl(tenantId, scanId), { signal }),
    refetchInterval: (q) => (q.state.data && !isFinished(q.state.data.scan) ? LIVE_REFRESH_MS : false),
  });

export const scanUsageQuery = (tenantId: string) =>
  queryOptions({
    queryKey: scanKeys.usage(tenantId),
    queryFn: ({ signal }) => api<ScanUsage>(`${t(tenantId)}/scan-usage`, { signal }),
  });

export function createScan(tenantId: string, body: CreateScanBody) {
  return api<ScanDetail>(`${t(tenantId)}/scans`, { method: 'POST', body });
}

export function cancelScan(tenantId: string, scanId: string) {
  return api<ScanDetail>(`${scanUrl(tenantId, scanId)}/cancel`, { method: 'POST' });
}

export const schedulesQuery = (tenantId: string) =>
  infiniteQueryOptions({
    queryKey: scheduleKeys.lists(tenantId),
    queryFn: ({ pageParam, signal }) =>
      api<SchedulesPage>(`${t(tenantId)}/scan-schedules`, {
        query: { before: pageParam, limit: SCANS_PAGE_SIZE },
        signal,
      }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextBefore ?? undefined,
  });

/** A schedule with upcoming runs and history; refreshes while a scan of its history is unfinished. */
export const scheduleQuery = (tenantId: string, id: string) =>
  queryOptions({
    queryKey: scheduleKeys.detail(tenantId, id),
    queryFn: ({ signal }) => api<ScheduleDetail>(scheduleUrl(tenantId, id), { signal }),
    refetchInterval: (q) => (q.state.data?.history.some((s) => !isFinished(s)) ? LIVE_REFRESH_MS : false),
  });

export const cronPreviewQuery = (tenantId: string, cron: string, timeZone: string) =>
  queryOptions({
    queryKey: scheduleKeys.preview(tenantId, cron, timeZone),
    queryFn: ({ signal }) =>
      api<CronPreview>(`${t(tenantId)}/scan-schedules/preview`, { query: { cron, timeZone }, signal }),
    retry: false,
    staleTime: 60_000,
  });

export function createSchedule(tenantId: string, body: CreateScheduleBody) {
  return api<ScheduleResponse>(`${t(tenantId)}/scan-schedules`, { method: 'POST', body });
}

export function updateSchedule(tenantId: string, id: string, body: UpdateScheduleBody) {
  return api<ScheduleResponse>(scheduleUrl(tenantId, id), { method: 'PATCH', body });
}

export function setScheduleEnabled(tenantId: string, id: string, enabled: boolean) {
  return api<ScheduleResponse>(`${scheduleUrl(tenantId, id)}/${enabled ? 'enable' : 'disable'}`, { method: 'POST' });
}

export function deleteSchedule(tenantId: string, id: string) {
  return api<null>(scheduleUrl(tenantId, id), { method: 'DELETE' });
}

/** The tenant's assets that a scan may target (proven, covered or bypassed; not archived), for the forms. */
export const scannableAssetsQuery = (tenantId: string) =>
  queryOptions({
    queryKey: ['tenant', tenantId, 'assets', 'scannable'] as const,
    queryFn: async ({ signal }) => {
      const page = await api<AssetsPage>(`${t(tenantId)}/assets`, { query: { limit: 200 }, signal });
      return page.assets.filter(
        (a: Asset) => !a.archivedAt && (a.verification.status === 'verified' || a.verification.status === 'bypassed'),
      );
    },
  });
