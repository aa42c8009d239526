// "Enroll a worker": creates a one-time code and shows it once, with the command to run on the
// worker machine and a countdown to its expiry (15 minutes).
import { Alert, Button, Code, CopyButton, Group, Modal, Stack, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { ErrorAlert } from '../../components/QueryStates.tsx';
import { createEnrollment, workersKeys, type Enrollment } from '../../lib/workers-api.ts';

function useSecondsLeft(expiresAt: string | null): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!expiresAt) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [expiresAt]);
  return expiresAt ? Math.max(0, Math.floor((new Date(expiresAt).getTime() - now) / 1000)) : 0;
}

const mmss = (s: number) => `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;

function Copyable({ value, label }: { value: string; label: string }) {
  return (
    <CopyButton value={value}>
      {({ copied, copy }) => (
        <Button size="compact-sm" variant="default" onClick={copy} aria-label={label}>
          {copied ? 'Copied' : 'Copy'}
        </Button>
      )}
    </CopyButton>
  );
}

export function EnrollWorkerDialog({
  tenantId,
  opened,
  onClose,
}: {
  tenantId: string;
  opened: boolean;
  onClose: () => void;
}) {
  const queryClient = useQueryClient();
  const [enrollment, setEnrollment] = useState<Enrollment | null>(null);
  const create = useMutation({ mutationFn: () => createEnrollment(tenantId), onSuccess: setEnrollment });
  const secondsLeft = useSecondsLeft(enrollment?.expiresAt ?? null);
  const expired = !!enrollment && secondsLeft === 0;
  const command = enrollment
    ? `rampart-worker enroll --server ${window.location.origin} --code ${enrollment.code}`
    : '';

  const close = () => {
    // The code is gone for good once the dialog closes; a worker that used it shows up in the list.
    setEnrollment(null);
    create.reset();
    void queryClient.invalidateQueries({ queryKey: workersKeys.list(tenantId) });
    onClose();
  };

  return (
    <Modal opened={opened} onClose={close} title="Enroll a worker" centered size="lg">
      {!enrollment ? (
        <Stack gap="md">
          <Text size="sm">
            A one-time code connects a worker machine to this tenant. It works once and only for 15 minutes, and it is
            shown only now: Rampart keeps just a hash of it.
          </Text>
          <ErrorAlert error={create.error} title="Could not create a code" />
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button onClick={() => create.mutate()} loading={create.isPending}>
              Create code
            </Button>
          </Group>
        </Stack>
      ) : (
        <Stack gap="md">
          <Stack gap={4}>
            <Text size="sm" fw={600} id="enroll-code-label">
              Enrollment code
            </Text>
            <Group gap="sm">
              <Code
                fz="xl"
                fw={700}
                aria-labelledby="enroll-code-label"
                data-testid="enrollment-code"
                style={{ letterSpacing: '0.15em' }}
              >
                {enrollment.code}
              </Code>
              <Copyable value={enrollment.code} label="Copy enrollment code" />
            </Group>
            <Text size="sm" c={expired ? 'red' : 'dimmed'} role="timer" aria-live="off">
              {expired ? 'This code has expired; create a new one.' : `Expires in ${mmss(secondsLeft)} (single use).`}
            </Text>
          </Stack>
          <Stack gap={4}>
            <Text size="sm" fw={600}>
              On the worker machine, run
            </Text>
            <Group gap="sm" wrap="nowrap" align="flex-start">
              <Code block className="mono-break" style={{ flex: 1 }}>
                {command}
              </Code>
              <Copyable value={command} label="Copy enroll command" />
            </Group>
          </Stack>
          <Alert variant="light" color="yellow">
            This code is not shown again. The worker also needs this tenant&apos;s webhook signing secret to sign its
            requests.
          </Alert>
          <Group justify="flex-end">
            <Button onClick={close}>Done</Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
