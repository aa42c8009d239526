// Create or edit a scan schedule: name, the scan definition (fixed once created), a cron
// expression, its time zone, and a live preview of the next runs in that zone.
import { Autocomplete, Button, Group, List, Modal, Stack, Switch, Text, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useMemo, useState } from 'react';
import { ErrorAlert, LoadingState } from '../../components/QueryStates.tsx';
import { ApiError } from '../../lib/api.ts';
import { errorMessage, notifySuccess } from '../../lib/errors.ts';
import { useTenant } from '../../lib/me.ts';
import {
  createSchedule,
  cronPreviewQuery,
  scannableAssetsQuery,
  scheduleKeys,
  updateSchedule,
  type Schedule,
} from '../../lib/scans-api.ts';
import type { FormErrors } from '../../lib/use-form.ts';
import { useForm } from '../../lib/use-form.ts';
import {
  checkScanForm,
  EMPTY_SCAN_FORM,
  formValuesOf,
  scanDefinition,
  ScanDefinitionFields,
  scanFieldErrors,
  type ScanFormValues,
} from '../scans/scan-ui.tsx';

interface ScheduleValues extends ScanFormValues {
  name: string;
  cron: string;
  timeZone: string;
  enabled: boolean;
}

const CRON_EXAMPLES = [
  ['0 3 * * *', 'every day at 03:00'],
  ['0 6 * * 1', 'Mondays at 06:00'],
  ['0 */6 * * *', 'every 6 hours'],
  ['@weekly', 'Sundays at midnight'],
] as const;

function browserZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

function timeZones(): string[] {
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return ['UTC', ...zones.filter((z) => z !== 'UTC')];
}

export function ScheduleDialog({
  opened,
  onClose,
  schedule,
}: {
  opened: boolean;
  onClose: () => void;
  schedule?: Schedule;
}) {
  return (
    <Modal
      opened={opened}
      onClose={onClose}
      title={schedule ? 'Edit schedule' : 'New schedule'}
      size="lg"
      closeButtonProps={{ 'aria-label': schedule ? 'Close edit schedule' : 'Close new schedule' }}
    >
      {opened && <ScheduleForm onDone={onClose} schedule={schedule} />}
    </Modal>
  );
}

function ScheduleForm({ onDone, schedule }: { onDone: () => void; schedule?: Schedule | undefined }) {
  const tenant = useTenant();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const assets = useQuery(scannableAssetsQuery(tenant.id));
  const zones = useMemo(timeZones, []);
  const [formError, setFormError] = useState<unknown>(null);
  const initial: ScheduleValues = schedule
    ? {
        ...formValuesOf(schedule.kind, schedule.asset.id, schedule.options, schedule.chunkCount),
        name: schedule.name,
        cron: schedule.cron,
        timeZone: schedule.timeZone,
        enabled: schedule.enabled,
      }
    : { ...EMPTY_SCAN_FORM, name: '', cron: '0 3 * * *', timeZone: browserZone(), enabled: true };
  const form = useForm<ScheduleValues>(initial, (v) => ({
    ...(schedule ? {} : (checkScanForm(v) as FormErrors<ScheduleValues>)),
    name: !v.name.trim()
      ? 'Give the schedule a name'
      : v.name.trim().length > 200
        ? 'Use at most 200 characters'
        : null,
    cron: !v.cron.trim() ? 'Give a cron expression' : null,
    timeZone: zones.length && !zones.includes(v.timeZone.trim()) ? 'Choose a time zone from the list' : null,
  }));
  const [cron] = useDebouncedValue(form.values.cron.trim(), 400);
  const [zone] = useDebouncedValue(form.values.timeZone.trim(), 400);
  const preview = useQuery({ ...cronPreviewQuery(tenant.id, cron, zone || 'UTC'), enabled: cron.length > 0 });

  const save = useMutation({
    mutationFn: (v: ScheduleValues) =>
      schedule
        ? updateSchedule(tenant.id, schedule.id, {
            name: v.name.trim(),
            cron: v.cron.trim(),
            timeZone: v.timeZone.trim(),
            enabled: v.enabled,
          })
        : createSchedule(tenant.id, {
            ...scanDefinition(v),
            name: v.name.trim(),
            cron: v.cron.trim(),
            timeZone: v.timeZone.trim(),
            enabled: v.enabled,
          }),
    onSuccess: async ({ schedule: saved }) => {
      notifySuccess(schedule ? 'The schedule was saved.' : `Schedule "${saved.name}" created.`);
      onDone();
      await queryClient.invalidateQueries({ queryKey: scheduleKeys.all(tenant.id) });
      if (!schedule) await navigate({ to: '/schedules/$scheduleId', params: { scheduleId: saved.id } });
    },
    onError: (error) => {
      setFormError(null);
      if (error instanceof ApiError) {
        const fields = scanFieldErrors<ScheduleValues>(error, {
          'body.name': 'name',
          'body.cron': 'cron',
          'body.timeZone': 'timeZone',
        });
        if (Object.keys(fields).length > 0) {
          form.setErrors(fields);
          return;
        }
      }
      setFormError(error);
    },
  });

  if (assets.isPending) return <LoadingState label="Loading your assets…" />;
  if (assets.isError) return <ErrorAlert error={assets.error} title="Could not load the assets" />;
  // An edited schedule's asset may no longer be scannable; still show it.
  const assetList =
    schedule && !assets.data.some((a) => a.id === schedule.asset.id)
      ? [
          ...assets.data,
          {
            id: schedule.asset.id,
            name: schedule.asset.name,
            target: schedule.asset.target,
            kind: schedule.asset.kind,
          } as (typeof assets.data)[number],
        ]
      : assets.data;

  return (
    <form ref={form.formRef} onSubmit={form.onSubmit((v) => (setFormError(null), save.mutate(v)))} noValidate>
      <Stack gap="md">
        <TextInput
          label="Name"
          required
          maxLength={200}
          data-autofocus
          placeholder="e.g. Nightly port scan"
          {...form.field('name')}
        />
        <ScanDefinitionFields form={form} assets={assetList} locked={Boolean(schedule)} />
        {schedule && (
          <Text size="xs" c="dimmed" mt={-8}>
            The asset and what is scanned stay as they are; create a new schedule to change them.
          </Text>
        )}
        <TextInput
          label="When (cron expression)"
          description={`Five fields: minute hour day-of-month month day-of-week. For example ${CRON_EXAMPLES.map(([c, d]) => `"${c}" (${d})`).join(', ')}.`}
          required
          spellCheck={false}
          autoCapitalize="off"
          autoComplete="off"
          className="mono"
          {...form.field('cron')}
        />
        <Autocomplete
          label="Time zone"
          description="The cron times are read in this zone, daylight saving included."
          required
          data={zones}
          limit={50}
          value={form.values.timeZone}
          error={form.errors.timeZone}
          onChange={(v) => form.setValue('timeZone', v)}
        />
        <Stack gap={4} aria-live="polite">
          <Text size="sm" fw={600}>
            Next runs
          </Text>
          {preview.isError ? (
            <Text size="sm" c="dimmed">
              {errorMessage(preview.error)}
            </Text>
          ) : preview.data ? (
            <List size="sm" spacing={2}>
              {preview.data.upcoming.map((u) => (
                <List.Item key={u.at}>{u.local}</List.Item>
              ))}
            </List>
          ) : (
            <Text size="sm" c="dimmed">
              …
            </Text>
          )}
        </Stack>
        <Switch
          label="Enabled"
          description="A disabled schedule keeps its settings and history but queues nothing."
          checked={form.values.enabled}
          onChange={(e) => form.setValue('enabled', e.currentTarget.checked)}
        />
        <ErrorAlert error={formError} title="The schedule was not saved" withIcon={false} />
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            {schedule ? 'Save schedule' : 'Create schedule'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
