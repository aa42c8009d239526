// After a change that answered with the asset: show it at once, then refetch the detail (log and
// instructions change too) and the lists it appears in.
import { useQueryClient } from '@tanstack/react-query';
import { useCallback } from 'react';
import { assetKeys } from '../../lib/assets-api.ts';
import type { Asset, AssetDetail } from '../../lib/types.ts';

export function useAssetUpdater(tenantId: string, assetId: string): (asset: Asset) => Promise<void> {
  const queryClient = useQueryClient();
  return useCallback(
    async (asset: Asset) => {
      queryClient.setQueryData<AssetDetail>(assetKeys.detail(tenantId, assetId), (old) =>
        old ? { ...old, asset } : old,
      );
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: assetKeys.detail(tenantId, assetId) }),
        queryClient.invalidateQueries({ queryKey: assetKeys.lists(tenantId) }),
      ]);
    },
    [queryClient, tenantId, assetId],
  );
}
