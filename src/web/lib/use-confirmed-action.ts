// A destructive row action (remove, cancel, revoke) that runs only after a confirm dialog:
// remembers which row asked, runs the mutation, reports the outcome and refreshes the list.
import { useMutation, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { useState } from 'react';
import { notifyError, notifySuccess } from './errors.ts';

interface ConfirmedActionOptions<T> {
  action: (item: T) => Promise<unknown>;
  successMessage: (item: T) => string;
  errorTitle: string;
  /** The list query to refresh after the action. */
  queryKey: QueryKey;
  /** Refresh after a failure too (the list may be out of date). */
  refreshOnError?: boolean;
}

export function useConfirmedAction<T>({
  action,
  successMessage,
  errorTitle,
  queryKey,
  refreshOnError,
}: ConfirmedActionOptions<T>) {
  const queryClient = useQueryClient();
  const [target, setTarget] = useState<T | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey });
  const mutation = useMutation({
    mutationFn: action,
    onSuccess: async (_d, item) => {
      notifySuccess(successMessage(item));
      setTarget(null);
      if (!refreshOnError) await refresh();
    },
    onError: (error) => notifyError(error, errorTitle),
    onSettled: refreshOnError ? refresh : undefined,
  });
  return {
    /** The row waiting for confirmation, or null. */
    target,
    /** Opens the dialog for a row. */
    ask: (item: T) => setTarget(item),
    /** Spread onto <ConfirmDialog>. */
    dialogProps: {
      opened: target !== null,
      loading: mutation.isPending,
      onClose: () => setTarget(null),
      onConfirm: () => {
        if (target !== null) mutation.mutate(target);
      },
    },
  };
}
