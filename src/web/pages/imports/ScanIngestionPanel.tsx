// The scan page's "Report and ingestion": the raw report(s) a worker uploaded (or the imported
// file) and the job that read them into findings, with its progress, outcome or error.
import { Progress, Stack, Table, Text, Tooltip } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { DataTable } from '../../components/DataTable.tsx';
import { ErrorAlert } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { formatDateTime } from '../../lib/format.ts';
import { FORMAT_LABELS, isActive, scanIngestionsQuery } from '../../lib/imports-api.ts';
import { formatBytes } from '../assets/ImageArchiveCard.tsx';
import { describeOutcome, IngestionStatusBadge } from './ImportsPage.tsx';

const short = (sha: string) => `${sha.slice(0, 12)}…`;

/** Shown when the scan has reached (or passed) the point where a report exists. */
export function ScanIngestionPanel({
  tenantId,
  scanId,
  scanStatus,
}: {
  tenantId: string;
  scanId: string;
  scanStatus: string;
}) {
  const query = useQuery(scanIngestionsQuery(tenantId, scanId, scanStatus));
  if (query.isError) return <ErrorAlert error={query.error} title="Could not load the report and its ingestion" />;
  const data = query.data;
  if (!data || (data.uploads.length === 0 && data.ingestions.length === 0)) return null;
  return (
    <SectionCard
      headingId="scan-ingestion"
      title="Report and ingestion"
      description="The raw report and how it was read into findings."
    >
      <Stack gap="md">
        {data.uploads.length > 0 && (
          <DataTable
            label="Uploaded reports"
            minWidth={640}
            columns={['Uploaded', 'Size', 'SHA-256', 'Format', 'Status']}
          >
            {data.uploads.map((u) => (
              <Table.Tr key={u.id}>
                <Table.Td>
                  <Text size="sm">{formatDateTime(u.createdAt)}</Text>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{formatBytes(u.size)}</Text>
                </Table.Td>
                <Table.Td>
                  <Tooltip label={u.sha256}>
                    <Text size="sm" ff="monospace" component="span" aria-label={`SHA-256 ${u.sha256}`}>
                      {short(u.sha256)}
                    </Text>
                  </Tooltip>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{u.format ? FORMAT_LABELS[u.format] : 'Detected on reading'}</Text>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{u.status === 'finalized' ? 'Complete' : 'Uploading'}</Text>
                </Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        )}
        {data.ingestions.map((i) => (
          <Stack key={i.id} gap={6}>
            <Text size="sm">
              <IngestionStatusBadge status={i.status} />{' '}
              {i.source === 'import' ? `Imported file ${i.fileName ?? ''}` : 'Worker report'} ·{' '}
              {i.format ? FORMAT_LABELS[i.format] : 'format not detected yet'} · {formatBytes(i.size)} ·{' '}
              <Tooltip label={i.sha256}>
                <Text span ff="monospace" size="sm" aria-label={`SHA-256 ${i.sha256}`}>
                  {short(i.sha256)}
                </Text>
              </Tooltip>
            </Text>
            {isActive(i) && <Progress value={i.percent} aria-label="Ingestion progress" animated />}
            <Text size="sm" c={i.status === 'failed' ? 'red' : undefined} aria-live="polite">
              {isActive(i) ? `${i.percent}% read, ${describeOutcome(i)}` : describeOutcome(i)}
              {i.attempts > 1 && ` (attempt ${i.attempts})`}
            </Text>
            {i.summary && i.summary.skipSamples.length > 0 && (
              <Text size="xs" c="dimmed">
                Skipped, for example:{' '}
                {i.summary.skipSamples
                  .slice(0, 3)
                  .map((s) => `${s.where}: ${s.reason}`)
                  .join('; ')}
              </Text>
            )}
          </Stack>
        ))}
      </Stack>
    </SectionCard>
  );
}
