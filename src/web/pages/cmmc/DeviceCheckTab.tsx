// CMMC → Device check: issue the device token (shown once; a new one revokes the old), download
// the signed Windows and macOS scripts with their SHA-256 fingerprints, and see the latest result
// per computer (pass / fail / unknown per check; pending when older than 30 days), and how many of
// the computers Scope declares are covered ("5 of 6 computers"). Owners and admins retire a
// computer that was replaced or is gone, for a stated reason (it then stops counting until it
// sends a new run), un-retire it, and attest a computer that cannot run the script.
import {
  Accordion,
  Alert,
  Anchor,
  Badge,
  Button,
  Code,
  CopyButton,
  Group,
  Paper,
  Stack,
  Table,
  Text,
  Title,
  VisuallyHidden,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { ErrorAlert, ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import {
  cmmcKeys,
  devicesQuery,
  downloadScript,
  issueDeviceToken,
  programKeys,
  type DeviceDto,
  type DeviceListDto,
  type IssuedTokenDto,
  type ProfileDto,
} from '../../lib/cmmc-api.ts';
import { formatDateTime } from '../../lib/format.ts';
import { DeviceCheckExplainer } from '../llm/DeviceCheckExplainer.tsx';
import { Attestations, Coverage, RetireControls } from './DeviceCoverage.tsx';

const OS_LABEL = { windows: 'Windows', macos: 'macOS' } as const;
const RESULT_COLOR = { pass: 'green', fail: 'red', unknown: 'gray' } as const;
const HOW_TO_RUN = {
  windows:
    'In PowerShell (as administrator for the most complete results): powershell -NoProfile -ExecutionPolicy Bypass -File .\\rampart-cmmc-check-windows.ps1',
  macos: 'In Terminal (sudo gives the most complete results): bash rampart-cmmc-check-macos.sh',
} as const;
/** Why running elevated does not fail the administrator check (it looks at the signed-in user). */
const RUN_NOTE = {
  windows:
    'Run it while the daily user is signed in: the administrator check looks at that signed-in user, not at the account you elevate PowerShell with.',
  macos: 'With sudo, the administrator check looks at the user who ran sudo.',
} as const;

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

function IssuedPanel({ issued }: { issued: IssuedTokenDto }) {
  return (
    <Stack gap="md" data-testid="issued-scripts">
      <Alert color="yellow" variant="light" title="Shown only now">
        Download the scripts now: they carry this token, and Rampart keeps only a hash of it. Issuing a new token stops
        these scripts from sending results.
      </Alert>
      <Stack gap={4}>
        <Text size="sm" fw={600} id="device-token-label">
          Device token
        </Text>
        <Group gap="sm" wrap="nowrap">
          <Code className="mono-break" aria-labelledby="device-token-label" data-testid="device-token">
            {issued.token}
          </Code>
          <Copyable value={issued.token} label="Copy device token" />
        </Group>
      </Stack>
      {issued.baseUrlWarning && (
        <Alert color="orange" title="Your computers may not reach this address" data-testid="base-url-warning">
          {issued.baseUrlWarning}
        </Alert>
      )}
      <Table withTableBorder striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Script</Table.Th>
            <Table.Th>SHA-256 fingerprint</Table.Th>
            <Table.Th>
              <VisuallyHidden>Download</VisuallyHidden>
            </Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {issued.scripts.map((s) => (
            <Table.Tr key={s.os}>
              <Table.Td>
                <Text size="sm" fw={600}>
                  {OS_LABEL[s.os]}
                </Text>
                <Text size="xs" c="dimmed" className="mono-break">
                  {s.fileName}
                </Text>
              </Table.Td>
              <Table.Td>
                <Code className="mono-break" data-testid={`sha256-${s.os}`}>
                  {s.sha256}
                </Code>
              </Table.Td>
              <Table.Td>
                <Button
                  size="xs"
                  onClick={() => downloadScript(s)}
                  aria-label={`Download the ${OS_LABEL[s.os]} script`}
                >
                  Download
                </Button>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Text size="sm">
        Each script ends with a Rampart signature line (Ed25519 key fingerprint{' '}
        <Code data-testid="key-fingerprint">{issued.signingKey.fingerprint}</Code>). Before running one, check it at{' '}
        <Anchor href="/verify-script" target="_blank" rel="noopener">
          {issued.verifyUrl}
        </Anchor>{' '}
        and compare its SHA-256 with the fingerprint above.
      </Text>
      <Stack gap={4}>
        {(['windows', 'macos'] as const).map((os) => (
          <Text key={os} size="sm">
            <b>{OS_LABEL[os]}:</b> <Code className="mono-break">{HOW_TO_RUN[os]}</Code> {RUN_NOTE[os]}
          </Text>
        ))}
      </Stack>
    </Stack>
  );
}

function DeviceResults({ device, checks }: { device: DeviceDto; checks: DeviceListDto['checks'] }) {
  const rows = checks.filter((c) => c.os === device.os);
  return (
    <Table withTableBorder fz="sm">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Check</Table.Th>
          <Table.Th>Result</Table.Th>
          <Table.Th>Observed</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((c) => {
          const r = device.results[c.id];
          return (
            <Table.Tr key={c.id}>
              <Table.Td>
                {c.title}
                {c.supporting && (
                  <Text span size="xs" c="dimmed">
                    {' '}
                    (supporting)
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                {r ? (
                  <Badge color={RESULT_COLOR[r]} variant="light">
                    {r}
                  </Badge>
                ) : (
                  <Text size="xs" c="dimmed">
                    not reported
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                <Text size="xs" className="mono-break">
                  {device.details[c.id] ?? ''}
                </Text>
                {device.reasons[c.id] && (
                  <Text size="xs" c="blue" data-testid={`reason-${c.id}`}>
                    {device.reasons[c.id]!.explanation}
                  </Text>
                )}
              </Table.Td>
            </Table.Tr>
          );
        })}
      </Table.Tbody>
    </Table>
  );
}

function DeviceList({ tenantId, canManage }: { tenantId: string; canManage: boolean }) {
  const queryClient = useQueryClient();
  const devices = useQuery(devicesQuery(tenantId));
  if (devices.isPending) return <LoadingState label="Loading devices…" />;
  if (devices.isError)
    return (
      <ErrorState error={devices.error} title="Could not load the devices" onRetry={() => void devices.refetch()} />
    );
  const { devices: list, checks, staleDays, attestations } = devices.data;
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={2} size="h4">
          Devices
        </Title>
        <Button
          size="xs"
          variant="default"
          onClick={() => {
            void devices.refetch();
            void queryClient.invalidateQueries({ queryKey: programKeys.score(tenantId) });
          }}
          loading={devices.isFetching}
        >
          Refresh
        </Button>
      </Group>
      <Coverage tenantId={tenantId} />
      {list.length === 0 ? (
        <Text size="sm" c="dimmed" data-testid="no-devices">
          No results yet. Run a script on each computer that handles FCI; its latest result appears here.
        </Text>
      ) : (
        <Accordion variant="separated" multiple data-testid="device-list">
          {list.map((d) => (
            <Accordion.Item key={d.runId} value={d.runId} data-testid={`device-${d.hostname}`}>
              <Accordion.Control>
                <Group gap="sm" wrap="wrap">
                  <Text fw={600}>{d.hostname}</Text>
                  <Text size="sm" c="dimmed">
                    {OS_LABEL[d.os]} {d.osVersion ?? ''}
                  </Text>
                  {d.retired ? (
                    <Badge color="gray" variant="outline">
                      Retired
                    </Badge>
                  ) : d.pending ? (
                    <Badge color="yellow" variant="light">
                      Pending: last run over {staleDays} days ago
                    </Badge>
                  ) : d.summary.fail > 0 ? (
                    <Badge color="red" variant="light">
                      {d.summary.fail} failing
                    </Badge>
                  ) : d.summary.unknown > 0 ? (
                    <Badge color="gray" variant="light">
                      {d.summary.unknown} unknown
                    </Badge>
                  ) : (
                    <Badge color="green" variant="light">
                      All pass
                    </Badge>
                  )}
                  <Text size="xs" c="dimmed">
                    {d.summary.pass} pass · {d.summary.fail} fail · {d.summary.unknown} unknown ·{' '}
                    {formatDateTime(d.receivedAt)}
                  </Text>
                </Group>
              </Accordion.Control>
              <Accordion.Panel>
                <Stack gap="sm">
                  <DeviceResults device={d} checks={checks} />
                  {canManage && <RetireControls tenantId={tenantId} device={d} />}
                </Stack>
              </Accordion.Panel>
            </Accordion.Item>
          ))}
        </Accordion>
      )}
      <Attestations tenantId={tenantId} list={attestations} canManage={canManage} staleDays={staleDays} />
    </Stack>
  );
}

export function DeviceCheckTab({
  tenantId,
  profile,
  canManage,
}: {
  tenantId: string;
  profile: ProfileDto;
  canManage: boolean;
}) {
  const queryClient = useQueryClient();
  const [issued, setIssued] = useState<IssuedTokenDto | null>(null);
  const [confirm, setConfirm] = useState(false);
  const issue = useMutation({
    mutationFn: () => issueDeviceToken(tenantId),
    onSuccess: (res) => {
      setIssued(res);
      setConfirm(false);
      void queryClient.invalidateQueries({ queryKey: cmmcKeys.profile(tenantId) });
    },
    onError: () => setConfirm(false),
  });
  const hasToken = profile.deviceToken.issued;

  return (
    <Stack gap="lg">
      <Paper withBorder p="lg" radius="md">
        <Stack gap="md">
          <Text size="sm">
            Read-only scripts for Windows and macOS check the settings behind the device-side controls (anti-malware,
            firewall, updates, accounts, remote access, disk encryption) and send pass, fail or unknown per check to
            Rampart. Nothing on the computer is changed.
          </Text>
          {hasToken && !issued && (
            <Stack gap={4}>
              <Text size="sm">
                A device token was issued {formatDateTime(profile.deviceToken.issuedAt)}. Its scripts cannot be
                downloaded again (the token is shown only once); issue a new token for new scripts.
              </Text>
              {profile.deviceToken.scripts.map((s) => (
                <Text key={s.os} size="xs" c="dimmed" className="mono-break">
                  {s.fileName}: SHA-256 {s.sha256}
                </Text>
              ))}
            </Stack>
          )}
          <ErrorAlert error={issue.error} title="Could not issue the scripts" />
          {canManage ? (
            !issued && (
              <Group>
                <Button
                  onClick={() => (hasToken ? setConfirm(true) : issue.mutate())}
                  loading={issue.isPending && !confirm}
                >
                  {hasToken ? 'Issue a new token and scripts' : 'Issue token and scripts'}
                </Button>
              </Group>
            )
          ) : (
            <Text size="sm" c="dimmed">
              Only owners and admins can issue device-check scripts.
            </Text>
          )}
          {issued && <IssuedPanel issued={issued} />}
        </Stack>
      </Paper>
      <DeviceList tenantId={tenantId} canManage={canManage} />
      <Paper withBorder p="lg" radius="md">
        <Stack gap="sm">
          <Title order={3}>Explain the results</Title>
          <Text size="sm" c="dimmed">
            A plain-language explanation of the latest run per computer, with the fixes that matter most first and how
            to re-check. Paste script output from a computer that could not send its results.
          </Text>
          <DeviceCheckExplainer tenantId={tenantId} headingLevel={3} />
        </Stack>
      </Paper>
      <ConfirmDialog
        opened={confirm}
        title="Issue a new device token?"
        confirmLabel="Issue new token"
        danger
        loading={issue.isPending}
        onConfirm={() => issue.mutate()}
        onClose={() => setConfirm(false)}
      >
        The scripts you downloaded before stop working: their results are refused. Results already received stay.
      </ConfirmDialog>
    </Stack>
  );
}
