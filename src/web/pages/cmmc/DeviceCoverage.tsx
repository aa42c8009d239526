// CMMC → Device check, the Scope's computers: how many of them are covered by a run, and what
// owners and admins do about the others: retire a computer that was replaced or is gone (for a
// stated reason; it stops counting until it sends a new run), un-retire it, and attest a computer
// that cannot run the script. The tab itself is DeviceCheckTab.tsx.
import { Alert, Button, Group, Paper, Stack, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { ErrorAlert } from '../../components/QueryStates.tsx';
import {
  attestDevice,
  cmmcKeys,
  programKeys,
  retireDevice,
  scoreQuery,
  unretireDevice,
  withdrawDeviceAttestation,
  type DeviceDto,
  type DeviceListDto,
} from '../../lib/cmmc-api.ts';
import { formatDateTime } from '../../lib/format.ts';

export function RetireControls({ tenantId, device }: { tenantId: string; device: DeviceDto }) {
  const queryClient = useQueryClient();
  const [confirm, setConfirm] = useState(false);
  const [reason, setReason] = useState('');
  const done = () => {
    setConfirm(false);
    setReason('');
    void queryClient.invalidateQueries({ queryKey: cmmcKeys.devices(tenantId) });
    void queryClient.invalidateQueries({ queryKey: programKeys.score(tenantId) });
  };
  const retire = useMutation({
    mutationFn: () => retireDevice(tenantId, device.hostname, reason.trim()),
    onSuccess: done,
  });
  const unretire = useMutation({ mutationFn: () => unretireDevice(tenantId, device.hostname), onSuccess: done });
  return (
    <Stack gap="xs">
      <ErrorAlert error={retire.error ?? unretire.error} title="Could not change the computer" />
      {device.retired ? (
        <Group gap="sm">
          <Text size="sm">
            Retired {formatDateTime(device.retired.at)}
            {device.retired.byEmail ? ` by ${device.retired.byEmail}` : ''}
            {device.retired.note ? ` (${device.retired.note})` : ''}. It does not count for the score; a new run from
            this computer brings it back. If it was not replaced, lower the number of computers in Scope.
          </Text>
          <Button
            size="xs"
            variant="default"
            loading={unretire.isPending}
            onClick={() => unretire.mutate()}
            aria-label={`Un-retire ${device.hostname}`}
          >
            Un-retire
          </Button>
        </Group>
      ) : (
        <Group>
          <Button
            size="xs"
            variant="default"
            color="red"
            onClick={() => setConfirm(true)}
            aria-label={`Retire ${device.hostname}`}
          >
            Retire this computer
          </Button>
        </Group>
      )}
      <ConfirmDialog
        opened={confirm}
        title={`Retire ${device.hostname}?`}
        confirmLabel="Retire"
        danger
        loading={retire.isPending}
        confirmDisabled={!reason.trim()}
        onConfirm={() => retire.mutate()}
        onClose={() => setConfirm(false)}
      >
        <Stack gap="sm">
          <Text size="sm">
            Only for a computer that was replaced, sold or disposed of, or no longer handles FCI. It stops counting for
            the score (its results stay in the history). If it sends a new run, it counts again. The reason is kept with
            the computer and in the SPRS confirmation record.
          </Text>
          <Textarea
            label="Reason"
            description="Why this computer leaves scope, e.g. replaced by a new laptop, sold, disposed of."
            required
            value={reason}
            onChange={(e) => setReason(e.currentTarget.value)}
            maxLength={500}
            autosize
            minRows={2}
          />
        </Stack>
      </ConfirmDialog>
    </Stack>
  );
}

/** "5 of 6 computers covered" against the Scope's number, with what is missing. */
export function Coverage({ tenantId }: { tenantId: string }) {
  const score = useQuery(scoreQuery(tenantId));
  if (!score.data) return null;
  const c = score.data.devices.coverage;
  const notCovered = [
    ...new Set(
      score.data.requirements.flatMap((r) => [...r.failingChecks.map((f) => f.hostname), ...r.pendingDevices]),
    ),
  ];
  const missing: string[] = [];
  if (c.unaccounted > 0)
    missing.push(
      `${c.unaccounted} ${c.unaccounted === 1 ? 'computer' : 'computers'} in Scope sent no results and ${c.unaccounted === 1 ? 'has' : 'have'} no attestation`,
    );
  if (notCovered.length) missing.push(`not passing or older than 30 days: ${notCovered.join(', ')}`);
  const complete = c.declared !== null && c.covered >= c.declared && missing.length === 0;
  return (
    <Alert
      color={complete ? 'green' : c.declared === null ? 'yellow' : 'red'}
      variant="light"
      data-testid="device-coverage"
      title={
        c.declared === null
          ? `${c.covered} ${c.covered === 1 ? 'computer' : 'computers'} covered`
          : `${c.covered} of ${c.declared} computers covered`
      }
    >
      <Text size="sm">
        {c.declared === null
          ? 'Scope does not say how many computers handle FCI. Add the number in Scope: a computer that never sends results then counts as missing.'
          : missing.length
            ? `Missing: ${missing.join('; ')}.`
            : 'Every computer in Scope has a current passing device check or an attestation.'}
        {c.attested > 0 ? ` ${c.attested} covered by an attestation.` : ''}
      </Text>
    </Alert>
  );
}

/** Computers that cannot run the script: an owner or admin attests what was checked (30 days). */
export function Attestations({
  tenantId,
  list,
  canManage,
  staleDays,
}: {
  tenantId: string;
  list: DeviceListDto['attestations'];
  canManage: boolean;
  staleDays: number;
}) {
  const queryClient = useQueryClient();
  const [hostname, setHostname] = useState('');
  const [statement, setStatement] = useState('');
  const done = () => {
    void queryClient.invalidateQueries({ queryKey: cmmcKeys.devices(tenantId) });
    void queryClient.invalidateQueries({ queryKey: programKeys.score(tenantId) });
  };
  const attest = useMutation({
    mutationFn: () => attestDevice(tenantId, hostname.trim(), statement.trim()),
    onSuccess: () => {
      setHostname('');
      setStatement('');
      done();
    },
  });
  const withdraw = useMutation({ mutationFn: (h: string) => withdrawDeviceAttestation(tenantId, h), onSuccess: done });
  if (!canManage && list.length === 0) return null;
  return (
    <Paper withBorder p="md" radius="md">
      <Stack gap="sm">
        <Title order={3} size="h5">
          Computers attested instead of checked
        </Title>
        <Text size="sm" c="dimmed">
          For a computer in scope that cannot run the script. An attestation counts for {staleDays} days, like a run; a
          current run from the same computer always decides instead.
        </Text>
        <ErrorAlert error={attest.error ?? withdraw.error} title="Could not change the attestation" />
        {list.map((a) => (
          <Group key={a.hostname} justify="space-between" wrap="nowrap" data-testid={`attestation-${a.hostname}`}>
            <Text size="sm">
              <Text span fw={600}>
                {a.hostname}
              </Text>
              : {a.statement} ({a.byEmail}, {formatDateTime(a.at)}
              {a.current ? '' : `; older than ${staleDays} days, attest again`})
            </Text>
            {canManage && (
              <Button
                size="xs"
                variant="default"
                loading={withdraw.isPending && withdraw.variables === a.hostname}
                onClick={() => withdraw.mutate(a.hostname)}
                aria-label={`Withdraw the attestation of ${a.hostname}`}
              >
                Withdraw
              </Button>
            )}
          </Group>
        ))}
        {canManage && (
          <form
            aria-label="Attest a computer"
            onSubmit={(e) => {
              e.preventDefault();
              attest.mutate();
            }}
          >
            <Stack gap="xs">
              <TextInput
                label="Computer name"
                required
                maxLength={253}
                value={hostname}
                onChange={(e) => setHostname(e.currentTarget.value)}
              />
              <Textarea
                label="What was checked, how and by whom"
                required
                minLength={20}
                maxLength={2000}
                autosize
                minRows={2}
                value={statement}
                onChange={(e) => setStatement(e.currentTarget.value)}
              />
              <Group>
                <Button
                  type="submit"
                  size="xs"
                  loading={attest.isPending}
                  disabled={!hostname.trim() || statement.trim().length < 20}
                >
                  Attest this computer
                </Button>
              </Group>
            </Stack>
          </form>
        )}
      </Stack>
    </Paper>
  );
}
