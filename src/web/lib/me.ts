// The signed-in user (GET /api/v1/me) and derived state: active tenant, staff flags, sign-out.
import { queryOptions, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useCallback } from 'react';
import { api, fetchMe } from './api.ts';
import { authClient } from './auth-client.ts';
import { ME_KEY } from './query-client.ts';
import type { Me, MeTenant, PublicConfig } from './types.ts';

export const meQueryOptions = queryOptions({ queryKey: ME_KEY, queryFn: fetchMe, staleTime: 60_000 });

export const publicConfigQueryOptions = queryOptions({
  queryKey: ['public-config'] as const,
  queryFn: () => api<PublicConfig>('/api/v1/public/config'),
  staleTime: 5 * 60_000,
});

export function useMeQuery() {
  return useQuery(meQueryOptions);
}

/** The signed-in user; only for components under the authenticated layout, which guarantees it. */
export function useMe(): Me {
  const { data } = useQuery(meQueryOptions);
  if (!data) throw new Error('useMe() used outside the authenticated layout');
  return data;
}

export function activeTenantOf(me: Me): MeTenant | null {
  return me.tenants.find((t) => t.id === me.activeTenantId) ?? null;
}

/** The active tenant; only for pages rendered inside the tenant shell, which guarantees it. */
export function useTenant(): MeTenant {
  const tenant = activeTenantOf(useMe());
  if (!tenant) throw new Error('useTenant() used without an active tenant');
  return tenant;
}

export function isTenantAdmin(tenant: Pick<MeTenant, 'role'>): boolean {
  return tenant.role === 'owner' || tenant.role === 'admin';
}

export function useSignOut(): () => Promise<void> {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  return useCallback(async () => {
    try {
      await authClient.signOut();
    } catch {
      // even if the server call fails, forget the session locally
    }
    queryClient.setQueryData(ME_KEY, null);
    await navigate({ to: '/sign-in', replace: true });
    queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== ME_KEY[0] });
  }, [queryClient, navigate]);
}

/** Refetch /me after a change to the session (sign-in, tenant switch, profile edit). */
export function useRefreshMe(): () => Promise<Me | null> {
  const queryClient = useQueryClient();
  return useCallback(() => queryClient.fetchQuery({ ...meQueryOptions, staleTime: 0 }), [queryClient]);
}
