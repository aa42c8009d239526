import { QueryCache, QueryClient } from '@tanstack/react-query';
import type { Me } from './types.ts';

export const ME_KEY = ['me'] as const;

function isUnauthenticated(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && 'status' in error && (error as { status: unknown }).status === 401
  );
}

export const queryClient: QueryClient = new QueryClient({
  queryCache: new QueryCache({
    onError: (error, query) => {
      // A 401 from any API call means the session ended: drop the user so guarded routes redirect.
      if (isUnauthenticated(error) && query.queryKey[0] !== ME_KEY[0]) {
        queryClient.setQueryData<Me | null>(ME_KEY, null);
      }
    },
  }),
  defaultOptions: {
    queries: {
      staleTime: 30_000,
      refetchOnWindowFocus: true,
      retry: (failureCount, error) => {
        const status = (error as { status?: number }).status ?? 0;
        if (status >= 400 && status < 500) return false;
        return failureCount < 2;
      },
    },
    mutations: { retry: false },
  },
});
