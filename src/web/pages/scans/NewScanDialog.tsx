// "New scan": asset, scanner kind with its options, chunk count. Server answers land at the field
// they are about (asset not verified, kind mismatch, chunk count); quota and limits as an alert.
import { Alert, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { TextLink } from '../../components/links.tsx';
import { ErrorAlert, LoadingState } from '../../components/QueryStates.tsx';
import { ApiError } from '../../lib/api.ts';
import { notifySuccess } from '../../lib/errors.ts';
import { useTenant } from '../../lib/me.ts';
import {
  createScan,
  scanKeys,
  scannableAssetsQuery,
  scanUsageQuery,
  type CreateScanBody,
} from '../../lib/scans-api.ts';
import { useForm } from '../../lib/use-form.ts';
import {
  checkScanForm,
  EMPTY_SCAN_FORM,
  SCAN_KIND_LABELS,
  scanDefinition,
  ScanDefinitionFields,
  scanFieldErrors,
  type ScanFormValues,
} from './scan-ui.tsx';

export function NewScanDialog({
  opened,
  onClose,
  assetId,
}: {
  opened: boolean;
  onClose: () => void;
  assetId?: string;
}) {
  return (
    <Modal
      opened={opened}
      onClose={onClose}
      title="New scan"
      size="lg"
      closeButtonProps={{ 'aria-label': 'Close new scan' }}
    >
      {opened && <NewScanForm onDone={onClose} assetId={assetId} />}
    </Modal>
  );
}

/** A refused quota reads better with the numbers than as "too many attempts". */
export function quotaMessage(
  error: unknown,
  usage: { used: number; dailyScanQuota: number; resetsAt: string } | undefined,
): string | null {
  if (!(error instanceof ApiError) || error.code !== 'quota_exceeded') return null;
  const resets = usage
    ? new Date(usage.resetsAt).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
    : 'midnight UTC';
  return `The daily scan quota${usage ? ` of ${usage.dailyScanQuota}` : ''} is used up. It refills at ${resets}.`;
}

function NewScanForm({ onDone, assetId }: { onDone: () => void; assetId?: string | undefined }) {
  const tenant = useTenant();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const assets = useQuery(scannableAssetsQuery(tenant.id));
  const usage = useQuery(scanUsageQuery(tenant.id));
  const [formError, setFormError] = useState<unknown>(null);
  const form = useForm<ScanFormValues>({ ...EMPTY_SCAN_FORM, assetId: assetId ?? '' }, checkScanForm);

  const create = useMutation({
    mutationFn: (body: CreateScanBody) => createScan(tenant.id, body),
    onSuccess: async ({ scan }) => {
      notifySuccess(`${SCAN_KIND_LABELS[scan.kind]} of ${scan.asset.name || scan.asset.target} queued.`);
      onDone();
      await queryClient.invalidateQueries({ queryKey: scanKeys.all(tenant.id) });
      await navigate({ to: '/scans/$scanId', params: { scanId: scan.id } });
    },
    onError: (error) => {
      setFormError(null);
      if (error instanceof ApiError) {
        const fields = scanFieldErrors<ScanFormValues>(error);
        if (Object.keys(fields).length > 0) {
          form.setErrors(fields);
          return;
        }
      }
      void queryClient.invalidateQueries({ queryKey: scanKeys.usage(tenant.id) });
      setFormError(error);
    },
  });

  if (assets.isPending) return <LoadingState label="Loading your assets…" />;
  if (assets.isError) return <ErrorAlert error={assets.error} title="Could not load the assets" />;

  const quota = quotaMessage(formError, usage.data);
  return (
    <form
      ref={form.formRef}
      onSubmit={form.onSubmit((v) => (setFormError(null), create.mutate(scanDefinition(v))))}
      noValidate
    >
      <Stack gap="md">
        {usage.data && (
          <Text size="sm" c="dimmed" aria-live="polite">
            {usage.data.used} of {usage.data.dailyScanQuota} scans used today (UTC);{' '}
            {usage.data.perAssetConcurrentScans === 1 ? 'one scan' : `${usage.data.perAssetConcurrentScans} scans`} at a
            time per asset.
          </Text>
        )}
        {assets.data.length === 0 && (
          <Alert color="gray" variant="light" role="note">
            No asset can be scanned yet. <TextLink to="/assets">Add and verify an asset</TextLink> first.
          </Alert>
        )}
        <ScanDefinitionFields form={form} assets={assets.data} />
        <ErrorAlert error={formError} title="The scan was not queued" withIcon={false}>
          {quota ?? undefined}
        </ErrorAlert>
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
          <Button type="submit" loading={create.isPending} disabled={assets.data.length === 0}>
            Queue scan
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
