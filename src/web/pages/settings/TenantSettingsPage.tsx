// Settings → Tenant settings: scan quota and per-asset concurrency (admins and owners may edit).
import { Alert, Button, Group, NumberInput, Paper, Stack, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { ApiError } from '../../lib/api.ts';
import { notifyError, notifySuccess } from '../../lib/errors.ts';
import { formatDateTime } from '../../lib/format.ts';
import { useTenant } from '../../lib/me.ts';
import { saveSettings, settingsQuery, tenantKeys } from '../../lib/tenant-api.ts';
import type { TenantSettings } from '../../lib/types.ts';
import { useForm } from '../../lib/use-form.ts';

const QUOTA_MAX = 100_000;
const CONCURRENCY_MAX = 64;

function intInRange(value: number | string, min: number, max: number, label: string): string | null {
  if (value === '' || value === null) return `${label} is required`;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(n)) return 'Use a whole number';
  if (n < min || n > max) return `Use a number from ${min.toLocaleString()} to ${max.toLocaleString()}`;
  return null;
}

export function TenantSettingsPage() {
  const tenant = useTenant();
  const settings = useQuery(settingsQuery(tenant.id));
  return (
    <>
      <PageHeader
        title="Tenant settings"
        titleContext={tenant.name}
        description={`Limits that apply to every scan of ${tenant.name}.`}
      />
      {settings.isPending ? (
        <LoadingState label="Loading settings…" />
      ) : settings.isError ? (
        <ErrorState error={settings.error} title="Could not load the settings" onRetry={() => void settings.refetch()} />
      ) : (
        <SettingsForm tenantId={tenant.id} settings={settings.data} />
      )}
    </>
  );
}

function SettingsForm({ tenantId, settings }: { tenantId: string; settings: TenantSettings }) {
  const queryClient = useQueryClient();
  const readOnly = !settings.canEdit;
  const form = useForm(
    { dailyScanQuota: settings.dailyScanQuota as number | string, perAssetConcurrentScans: settings.perAssetConcurrentScans as number | string },
    (v) => ({
      dailyScanQuota: intInRange(v.dailyScanQuota, 0, QUOTA_MAX, 'Daily scan quota'),
      perAssetConcurrentScans: intInRange(v.perAssetConcurrentScans, 1, CONCURRENCY_MAX, 'Per-asset concurrent scans'),
    }),
  );
  const { reset } = form;

  // Follow server changes (another admin saved) while the form is untouched.
  useEffect(() => {
    reset({ dailyScanQuota: settings.dailyScanQuota, perAssetConcurrentScans: settings.perAssetConcurrentScans });
  }, [reset, settings.dailyScanQuota, settings.perAssetConcurrentScans, settings.updatedAt]);

  const save = useMutation({
    mutationFn: (v: { dailyScanQuota: number; perAssetConcurrentScans: number }) => saveSettings(tenantId, v),
    onSuccess: (data) => {
      queryClient.setQueryData(tenantKeys.settings(tenantId), data);
      notifySuccess('Settings saved.');
    },
    onError: (error) => {
      if (error instanceof ApiError && error.code === 'validation_failed') {
        const issues = error.fieldIssues();
        form.setErrors({ dailyScanQuota: issues['dailyScanQuota'] ?? null, perAssetConcurrentScans: issues['perAssetConcurrentScans'] ?? null });
      }
      notifyError(error, 'Settings not saved');
    },
  });

  const dirty =
    Number(form.values.dailyScanQuota) !== settings.dailyScanQuota || Number(form.values.perAssetConcurrentScans) !== settings.perAssetConcurrentScans;

  return (
    <Paper withBorder p="lg" radius="md" maw={640}>
      <form
        ref={form.formRef}
        noValidate
        onSubmit={form.onSubmit((v) => save.mutate({ dailyScanQuota: Number(v.dailyScanQuota), perAssetConcurrentScans: Number(v.perAssetConcurrentScans) }))}
      >
        <Stack gap="lg">
          {readOnly && (
            <Alert color="gray" variant="light" role="note">
              Only admins and owners can change these settings.
            </Alert>
          )}
          <NumberInput
            label="Daily scan quota"
            description="Scans this tenant may queue per UTC day. Checked when a scan is queued, when it is split into chunks, and when a worker leases it. 0 pauses new scans."
            min={0}
            max={QUOTA_MAX}
            step={10}
            allowDecimal={false}
            allowNegative={false}
            clampBehavior="none"
            readOnly={readOnly}
            required={!readOnly}
            value={form.values.dailyScanQuota}
            error={form.errors.dailyScanQuota}
            onChange={(value) => form.setValue('dailyScanQuota', value)}
          />
          <NumberInput
            label="Per-asset concurrent scans"
            description={`Scans that may run at the same time on one asset (1 to ${CONCURRENCY_MAX}). Keep it low for fragile targets.`}
            min={1}
            max={CONCURRENCY_MAX}
            allowDecimal={false}
            allowNegative={false}
            clampBehavior="none"
            readOnly={readOnly}
            required={!readOnly}
            value={form.values.perAssetConcurrentScans}
            error={form.errors.perAssetConcurrentScans}
            onChange={(value) => form.setValue('perAssetConcurrentScans', value)}
          />
          <Group justify="space-between" align="center">
            <Text size="xs" c="dimmed">
              Last changed {formatDateTime(settings.updatedAt)}
            </Text>
            {!readOnly && (
              <Group gap="sm">
                <Button variant="default" disabled={!dirty || save.isPending} onClick={() => reset({ dailyScanQuota: settings.dailyScanQuota, perAssetConcurrentScans: settings.perAssetConcurrentScans })}>
                  Discard changes
                </Button>
                <Button type="submit" loading={save.isPending}>
                  Save settings
                </Button>
              </Group>
            )}
          </Group>
        </Stack>
      </form>
    </Paper>
  );
}
