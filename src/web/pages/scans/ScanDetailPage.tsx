// One scan: status and overall progress, its options, and for a chunked scan one row per chunk
// with its own progress bar and what it covers. Refreshes itself until the scan has finished.
// Cancel asks first; cancelling a chunked scan cancels its unfinished chunks.
import { Alert, Button, Code, Group, Paper, SimpleGrid, Stack, Table, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { DataTable } from '../../components/DataTable.tsx';
import { TextLink } from '../../components/links.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { ApiError } from '../../lib/api.ts';
import { notifyError, notifySuccess } from '../../lib/errors.ts';
import { formatDateTime } from '../../lib/format.ts';
import { useTenant } from '../../lib/me.ts';
import { cancelScan, isFinished, scanKeys, scanQuery, type Scan, type ScanDetail } from '../../lib/scans-api.ts';
import { ScanIngestionPanel } from '../imports/ScanIngestionPanel.tsx';
import {
  describeChunk,
  describeCoverage,
  describeOptions,
  SCAN_KIND_LABELS,
  ScanProgress,
  ScanStatusBadge,
  WaitReasonNote,
} from './scan-ui.tsx';

export function ScanDetailPage({ scanId }: { scanId: string }) {
  const tenant = useTenant();
  const query = useQuery(scanQuery(tenant.id, scanId));
  if (query.isPending)
    return (
      <>
        <BackLink />
        <LoadingState label="Loading the scan…" />
      </>
    );
  if (query.isError) {
    const notFound =
      query.error instanceof ApiError && (query.error.status === 404 || query.error.code === 'validation_failed');
    return (
      <>
        <BackLink />
        <PageHeader title={notFound ? 'Scan not found' : 'Scan'} titleContext={tenant.name} />
        <ErrorState
          error={
            notFound
              ? new Error(`There is no scan with this id in ${tenant.name}. It may belong to another tenant.`)
              : query.error
          }
          title={notFound ? 'Scan not found' : 'Could not load the scan'}
          onRetry={notFound ? undefined : () => void query.refetch()}
        />
      </>
    );
  }
  return <ScanView detail={query.data} tenantId={tenant.id} tenantName={tenant.name} />;
}

function BackLink() {
  return (
    <TextLink to="/scans" size="sm" display="inline-block" mb="sm">
      ← All scans
    </TextLink>
  );
}

function Fact({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm" component="div">
        {children}
      </Text>
    </div>
  );
}

/** Why a succeeded scan closed nothing: its result was inconclusive or partial. */
function OutcomeNote({ scan }: { scan: Scan }) {
  if (scan.status !== 'succeeded' || (scan.outcome !== 'inconclusive' && scan.outcome !== 'partial')) return null;
  const inconclusive = scan.outcome === 'inconclusive';
  return (
    <Alert
      color={inconclusive ? 'orange' : 'yellow'}
      title={inconclusive ? 'Inconclusive: nothing was looked at' : 'Partial result'}
    >
      <Text size="sm">
        {scan.outcomeReason ??
          (inconclusive ? 'The target gave no answer.' : 'Part of what the scan covers was not looked at.')}
      </Text>
      <Text size="sm" mt={4}>
        {inconclusive
          ? 'No finding was closed: findings stay as they were until a scan can look again.'
          : 'Findings it reported were recorded; none was closed as fixed on its word.'}
      </Text>
    </Alert>
  );
}

function ScanView({ detail, tenantId, tenantName }: { detail: ScanDetail; tenantId: string; tenantName: string }) {
  const { scan, children } = detail;
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const target = scan.asset.name || scan.asset.target;
  const cancel = useMutation({
    mutationFn: () => cancelScan(tenantId, scan.id),
    onSuccess: async (next) => {
      queryClient.setQueryData(scanKeys.detail(tenantId, scan.id), next);
      setConfirming(false);
      notifySuccess('The scan was cancelled.');
      await queryClient.invalidateQueries({ queryKey: scanKeys.lists(tenantId) });
      await queryClient.invalidateQueries({ queryKey: scanKeys.usage(tenantId) });
    },
    onError: async (error) => {
      setConfirming(false);
      notifyError(error, 'The scan was not cancelled');
      await queryClient.invalidateQueries({ queryKey: scanKeys.detail(tenantId, scan.id) });
    },
  });
  const finished = isFinished(scan);
  const coverage = describeCoverage(detail.coverage);

  return (
    <>
      <BackLink />
      <PageHeader
        title={`${SCAN_KIND_LABELS[scan.kind]} of ${target}`}
        titleContext={tenantName}
        actions={
          !finished && (
            <Button color="red" variant="light" onClick={() => setConfirming(true)}>
              Cancel scan
            </Button>
          )
        }
      />
      <Stack gap="lg">
        <Paper withBorder p="lg" radius="md" component="section" aria-label="Progress">
          <Stack gap="md">
            <Group gap="sm" aria-live="polite">
              <ScanStatusBadge status={scan.status} outcome={scan.outcome} />
              {!finished && (
                <Text size="xs" c="dimmed">
                  Updates every few seconds
                </Text>
              )}
            </Group>
            <ScanProgress scan={scan} label="Overall progress" />
            {scan.error && (
              <Text size="sm" c="var(--mantine-color-error)">
                {scan.error}
              </Text>
            )}
            <OutcomeNote scan={scan} />
            <WaitReasonNote scan={scan} />
            {finished && (
              <Group gap="md">
                <TextLink to="/findings" search={{ scanId: scan.id, status: 'all' }} size="sm">
                  Findings of this scan
                </TextLink>
                <TextLink
                  to="/findings"
                  search={{ assetId: scan.asset.id, scanner: scan.kind, status: 'all' }}
                  size="sm"
                >
                  Findings of this asset from {SCAN_KIND_LABELS[scan.kind].toLowerCase()}s
                </TextLink>
              </Group>
            )}
            <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }} spacing="sm">
              <Fact label="Asset">
                <TextLink
                  to="/assets/$assetId"
                  params={{ assetId: scan.asset.id }}
                  size="sm"
                  style={{ wordBreak: 'break-word' }}
                >
                  {target}
                </TextLink>
              </Fact>
              <Fact label="Queued">{formatDateTime(scan.createdAt)}</Fact>
              <Fact label="Started">{formatDateTime(scan.startedAt)}</Fact>
              <Fact label="Finished">{formatDateTime(scan.finishedAt)}</Fact>
              <Fact label="Requested by">
                {scan.scheduleId ? (
                  <TextLink to="/schedules/$scheduleId" params={{ scheduleId: scan.scheduleId }} size="sm">
                    A schedule
                  </TextLink>
                ) : (
                  (scan.requestedBy?.email ?? '—')
                )}
              </Fact>
              <Fact label="Options">{describeOptions(scan.kind, scan.options)}</Fact>
              <Fact label="Chunks">{scan.chunkCount ?? 'Not chunked'}</Fact>
              {coverage.length > 0 && (
                <Fact label="Covered">
                  {coverage.map((line) => (
                    <div key={line}>{line}</div>
                  ))}
                </Fact>
              )}
            </SimpleGrid>
            <details>
              <summary>
                <Text span size="sm">
                  All options
                </Text>
              </summary>
              <Code block mt="xs">
                {JSON.stringify(scan.options, null, 2)}
              </Code>
            </details>
          </Stack>
        </Paper>
        {children.length > 0 && (
          <SectionCard
            headingId="chunks-heading"
            title="Chunks"
            description="Each chunk runs on its own, on any worker; the scan above combines their status and progress."
          >
            <DataTable label="Chunks" minWidth={640} columns={['Chunk', 'Covers', 'Status', 'Progress']}>
              {children.map((c) => (
                <Table.Tr key={c.id} data-testid={`chunk-${c.chunkIndex}`}>
                  <Table.Td className="nowrap">
                    {(c.chunkIndex ?? 0) + 1} of {c.chunkCount}
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" style={{ wordBreak: 'break-word' }}>
                      {describeChunk(c.chunkSpec)}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <ScanStatusBadge status={c.status} outcome={c.outcome} />
                  </Table.Td>
                  <Table.Td>
                    <ScanProgress scan={c} label={`Progress of chunk ${(c.chunkIndex ?? 0) + 1}`} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </DataTable>
          </SectionCard>
        )}
        {!scan.chunkCount && <ScanIngestionPanel tenantId={tenantId} scanId={scan.id} scanStatus={scan.status} />}
      </Stack>
      <ConfirmDialog
        opened={confirming}
        title="Cancel this scan?"
        confirmLabel="Cancel scan"
        cancelLabel="Keep running"
        danger
        loading={cancel.isPending}
        onConfirm={() => cancel.mutate()}
        onClose={() => setConfirming(false)}
      >
        {scan.chunkCount
          ? 'Its unfinished chunks stop too; finished chunks keep their results.'
          : 'A worker running it stops at its next update.'}{' '}
        A scan cancelled before any work started does not count against the daily quota.
      </ConfirmDialog>
    </>
  );
}
