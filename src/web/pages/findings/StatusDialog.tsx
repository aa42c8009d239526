// Change the status of one or more findings: a reason for accepted risk and false positive, and an
// expiry for accepted risk (owners and admins only). The server checks the same rules.
import { Button, Group, Modal, NativeSelect, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ErrorAlert } from '../../components/QueryStates.tsx';
import { ApiError } from '../../lib/api.ts';
import { notifySuccess } from '../../lib/errors.ts';
import { findingKeys, setFindingStatus, type FindingStatus } from '../../lib/findings-api.ts';
import { localDateToIso, pluralize } from '../../lib/format.ts';
import { useForm } from '../../lib/use-form.ts';
import { STATUS_LABELS, STATUSES } from './finding-ui.tsx';

const REASON_MAX = 1_000;
const MAX_ACCEPT_DAYS = 365;

const dateInputValue = (d: Date) =>
  `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
const daysFromToday = (n: number) => dateInputValue(new Date(Date.now() + n * 86_400_000));

interface StatusDialogProps {
  opened: boolean;
  tenantId: string;
  ids: string[];
  canAcceptRisk: boolean;
  /** The status to preselect (e.g. the current one of a single finding is excluded by the caller). */
  initialStatus?: FindingStatus;
  onClose: () => void;
  onDone?: () => void;
}

export function StatusDialog(props: StatusDialogProps) {
  const count = props.ids.length;
  return (
    <Modal
      opened={props.opened}
      onClose={props.onClose}
      title={count === 1 ? 'Change status' : `Change status of ${pluralize(count, 'finding')}`}
      size="lg"
      closeButtonProps={{ 'aria-label': 'Close dialog' }}
    >
      {props.opened && <StatusForm {...props} />}
    </Modal>
  );
}

function StatusForm({
  tenantId,
  ids,
  canAcceptRisk,
  initialStatus = 'false_positive',
  onClose,
  onDone,
}: StatusDialogProps) {
  const queryClient = useQueryClient();
  const [failure, setFailure] = useState<unknown>(null);
  const form = useForm({ status: initialStatus as FindingStatus, reason: '', expires: daysFromToday(90) }, (v) => {
    const reason = v.reason.trim();
    const needsReason = v.status === 'accepted_risk' || v.status === 'false_positive';
    const errors: Partial<Record<'status' | 'reason' | 'expires', string | null>> = {};
    if (needsReason && reason.length < 3) errors.reason = reason ? 'Use at least 3 characters' : 'Reason is required';
    if (v.status === 'accepted_risk') {
      if (!canAcceptRisk) errors.status = 'Only owners and admins can accept a risk';
      if (!v.expires) errors.expires = 'Expiry date is required';
      else if (v.expires <= dateInputValue(new Date())) errors.expires = 'Pick a date after today';
      else if (v.expires > daysFromToday(MAX_ACCEPT_DAYS))
        errors.expires = `Pick a date within ${MAX_ACCEPT_DAYS} days`;
    }
    return errors;
  });
  const save = useMutation({
    mutationFn: (v: typeof form.values) =>
      setFindingStatus(tenantId, {
        ids,
        status: v.status,
        ...(v.reason.trim() ? { reason: v.reason.trim() } : {}),
        ...(v.status === 'accepted_risk' ? { expiresAt: localDateToIso(v.expires, 'end') } : {}),
      }),
    onMutate: () => setFailure(null),
    onSuccess: async (r) => {
      notifySuccess(`${pluralize(r.updated, 'finding')} marked ${STATUS_LABELS[r.status].toLowerCase()}.`);
      onDone?.();
      onClose();
      await queryClient.invalidateQueries({ queryKey: findingKeys.all(tenantId) });
    },
    onError: (error) => {
      if (error instanceof ApiError && error.code === 'validation_failed') {
        const issues = error.fieldIssues();
        const reason = issues['body.reason'];
        const expires = issues['body.expiresAt'];
        if (reason || expires) {
          form.setErrors({ reason: reason ?? null, expires: expires ?? null });
          return;
        }
      }
      setFailure(error);
    },
  });
  const { status } = form.values;
  const needsReason = status === 'accepted_risk' || status === 'false_positive';

  return (
    <form ref={form.formRef} noValidate onSubmit={form.onSubmit((v) => save.mutate(v))}>
      <Stack gap="md">
        <NativeSelect
          label="New status"
          data={STATUSES.map((s) => ({
            value: s,
            label: STATUS_LABELS[s],
            disabled: s === 'accepted_risk' && !canAcceptRisk,
          }))}
          value={status}
          error={form.errors.status}
          onChange={(e) => form.setValue('status', e.currentTarget.value as FindingStatus)}
          description={
            status === 'fixed'
              ? 'The next scan that still finds it reopens it.'
              : status === 'open'
                ? 'Back on the list of work to do; its SLA due date is unchanged.'
                : status === 'false_positive'
                  ? 'Rescans keep it marked as a false positive.'
                  : 'Rescans keep it accepted until the expiry date; then it is open again.'
          }
        />
        {!canAcceptRisk && (
          <Text size="xs" c="dimmed">
            Accepting a risk needs the owner or admin role in this tenant.
          </Text>
        )}
        <Textarea
          label="Reason"
          description={
            needsReason
              ? 'Required: why this is accepted or not a real issue. Kept in the finding’s history and the audit log.'
              : 'Optional note kept in the finding’s history.'
          }
          required={needsReason}
          withAsterisk={needsReason}
          autosize
          minRows={3}
          maxRows={8}
          maxLength={REASON_MAX}
          data-autofocus
          value={form.values.reason}
          error={form.errors.reason}
          onChange={(e) => form.setValue('reason', e.currentTarget.value)}
        />
        {status === 'accepted_risk' && (
          <TextInput
            type="date"
            label="Accepted until"
            description={`The finding opens again after this day (at most ${MAX_ACCEPT_DAYS} days ahead).`}
            required
            min={daysFromToday(1)}
            max={daysFromToday(MAX_ACCEPT_DAYS)}
            value={form.values.expires}
            error={form.errors.expires}
            onChange={(e) => form.setValue('expires', e.currentTarget.value)}
          />
        )}
        <ErrorAlert error={failure} title="The status was not changed" withIcon={false} />
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            Save status
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
