// The tenant home page's one read (/api/v1/tenants/:tenantId/overview). Types come from the
// server's zod schema (type-only import: nothing of zod enters the bundle).
import { queryOptions } from '@tanstack/react-query';
import type { z } from 'zod';
import type { overviewSchema } from '../../overview/overview-schemas.ts';
import { api } from './api.ts';

export type Overview = z.infer<typeof overviewSchema>;

/** How often the home page refreshes while scans are unfinished. */
export const OVERVIEW_LIVE_MS = 5000;

export const overviewQuery = (tenantId: string) =>
  queryOptions({
    queryKey: ['tenant', tenantId, 'overview'] as const,
    queryFn: () => api<Overview>(`/api/v1/tenants/${encodeURIComponent(tenantId)}/overview`),
    refetchInterval: (q) => {
      const scans = q.state.data?.scans;
      return scans && scans.running + scans.queued > 0 ? OVERVIEW_LIVE_MS : false;
    },
  });
