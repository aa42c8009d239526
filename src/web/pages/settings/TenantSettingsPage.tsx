// Settings → Tenant settings: scan quota and per-asset concurrency, and the days each finding
// severity has before its SLA due date (admins and owners may edit).
import { Alert, Button, Fieldset, Group, NumberInput, Paper, SimpleGrid, Stack, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { ApiError } from '../../lib/api.ts';
import { notifyError, notifySuccess } from '../../lib/errors.ts';
import { formatDateTime } from '../../lib/format.ts';
import { useTenant } from '../../lib/me.ts';
import { saveSettings, settingsQuery, tenantKeys } from '../../lib/tenant-api.ts';
import type { TenantSettings, TenantSettingsBody } from '../../lib/types.ts';
import { useForm } from '../../lib/use-form.ts';

const QUOTA_MAX = 100_000;
const CONCURRENCY_MAX = 64;
const SLA_MAX = 3650;
const SLA_SEVERITIES = [
  ['slaCritical', 'critical', 'Critical'],
  ['slaHigh', 'high', 'High'],
  ['slaMedium', 'medium', 'Medium'],
  ['slaLow', 'low', 'Low'],
] as const;
type SlaField = (typeof SLA_SEVERITIES)[number][0];
type FormValues = { dailyScanQuota: number | string; perAssetConcurrentScans: number | string } & Record<
  SlaField,
  number | string
>;

function formValues(s: TenantSettings): FormValues {
  return {
    dailyScanQuota: s.dailyScanQuota,
    perAssetConcurrentScans: s.perAssetConcurrentScans,
    slaCritical: s.slaDays.critical,
    slaHigh: s.slaDays.high,
    slaMedium: s.slaDays.medium,
    slaLow: s.slaDays.low,
  };
}

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
        description={`Limits that apply to every scan of ${tenant.name}, and how long findings may stay open.`}
      />
      {settings.isPending ? (
        <LoadingState label="Loading settings…" />
      ) : settings.isError ? (
        <ErrorState
          error={settings.error}
          title="Could not load the settings"
          onRetry={() => void settings.refetch()}
        />
      ) : (
        <SettingsForm tenantId={tenant.id} settings={settings.data} />
      )}
    </>
  );
}

function SettingsForm({ tenantId, settings }: { tenantId: string; settings: TenantSettings }) {
  const queryClient = useQueryClient();
  const readOnly = !settings.canEdit;
  const form = useForm<FormValues>(formValues(settings), (v) => ({
    dailyScanQuota: intInRange(v.dailyScanQuota, 0, QUOTA_MAX, 'Daily scan quota'),
    perAssetConcurrentScans: intInRange(v.perAssetConcurrentScans, 1, CONCURRENCY_MAX, 'Per-asset concurrent scans'),
    ...Object.fromEntries(
      SLA_SEVERITIES.map(([field, , label]) => [field, intInRange(v[field], 1, SLA_MAX, `${label} SLA days`)]),
    ),
  }));
  const { reset } = form;

  // Follow server changes (another admin saved) while the form is untouched.
  useEffect(() => {
    reset(formValues(settings));
  }, [reset, settings]);

  const save = useMutation({
    mutationFn: (v: TenantSettingsBody) => saveSettings(tenantId, v),
    onSuccess: (data) => {
      queryClient.setQueryData(tenantKeys.settings(tenantId), data);
      notifySuccess('Settings saved.');
    },
    onError: (error) => {
      if (error instanceof ApiError && error.code === 'validation_failed') {
        const issues = error.fieldIssues();
        form.setErrors({
          dailyScanQuota: issues['body.dailyScanQuota'] ?? issues['dailyScanQuota'] ?? null,
          perAssetConcurrentScans: issues['body.perAssetConcurrentScans'] ?? issues['perAssetConcurrentScans'] ?? null,
          ...Object.fromEntries(SLA_SEVERITIES.map(([field, key]) => [field, issues[`body.slaDays.${key}`] ?? null])),
        });
      }
      notifyError(error, 'Settings not saved');
    },
  });

  const initial = formValues(settings);
  const dirty = (Object.keys(initial) as (keyof FormValues)[]).some((k) => Number(form.values[k]) !== initial[k]);

  return (
    <Paper withBorder p="lg" radius="md" maw={640}>
      <form
        ref={form.formRef}
        noValidate
        onSubmit={form.onSubmit((v) =>
          save.mutate({
            dailyScanQuota: Number(v.dailyScanQuota),
            perAssetConcurrentScans: Number(v.perAssetConcurrentScans),
            slaDays: {
              critical: Number(v.slaCritical),
              high: Number(v.slaHigh),
              medium: Number(v.slaMedium),
              low: Number(v.slaLow),
            },
          }),
        )}
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
          <Fieldset legend="Finding SLA (days to fix)" variant="unstyled">
            <Text size="sm" c="dimmed" mb="sm">
              A finding is due this many days after it was first seen; open findings past that date are overdue. Changes
              apply to every finding not yet fixed. Informational findings have no due date.
            </Text>
            <SimpleGrid cols={{ base: 2, sm: 4 }} spacing="sm">
              {SLA_SEVERITIES.map(([field, , label]) => (
                <NumberInput
                  key={field}
                  label={label}
                  suffix=" days"
                  min={1}
                  max={SLA_MAX}
                  allowDecimal={false}
                  allowNegative={false}
                  clampBehavior="none"
                  readOnly={readOnly}
                  required={!readOnly}
                  value={form.values[field]}
                  error={form.errors[field]}
                  onChange={(value) => form.setValue(field, value)}
                />
              ))}
            </SimpleGrid>
          </Fieldset>
          <Group justify="space-between" align="center">
            <Text size="xs" c="dimmed">
              Last changed {formatDateTime(settings.updatedAt)}
            </Text>
            {!readOnly && (
              <Group gap="sm">
                <Button
                  variant="default"
                  disabled={!dirty || save.isPending}
                  onClick={() => reset(formValues(settings))}
                >
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
