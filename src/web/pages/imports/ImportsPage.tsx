// "Import results": upload a scanner's report (nmap, nuclei, ZAP, Trivy, SARIF or Rampart's native
// format) for one of the tenant's assets. Shows the upload's progress, then the reading progress
// of the import until its findings are in, and the history of imports with their outcome.
import {
  Badge,
  Button,
  FileInput,
  Group,
  NativeSelect,
  Progress,
  Stack,
  Table,
  Text,
  VisuallyHidden,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { DataTable } from '../../components/DataTable.tsx';
import { ButtonLink, TextLink } from '../../components/links.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorAlert, ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { formatDateTime } from '../../lib/format.ts';
import {
  FORMAT_LABELS,
  IMPORT_FORMATS,
  importKeys,
  importQuery,
  importReport,
  importsQuery,
  isActive,
  type ImportFormat,
  type Ingestion,
  type UploadProgress,
} from '../../lib/imports-api.ts';
import { useTenant } from '../../lib/me.ts';
import { scanKeys, scannableAssetsQuery } from '../../lib/scans-api.ts';
import { formatBytes } from '../assets/ImageArchiveCard.tsx';

const STATUS: Record<Ingestion['status'], { label: string; color: string }> = {
  queued: { label: 'Queued', color: 'gray' },
  running: { label: 'Reading', color: 'blue' },
  succeeded: { label: 'Imported', color: 'green' },
  failed: { label: 'Failed', color: 'red' },
};

export function IngestionStatusBadge({ status }: { status: Ingestion['status'] }) {
  return (
    <Badge color={STATUS[status].color} variant="light">
      {STATUS[status].label}
    </Badge>
  );
}

/** One line on what an import found: new, seen again, reopened, closed, skipped. */
export function describeOutcome(i: Ingestion): string {
  if (i.status === 'failed') return i.error ?? 'Failed.';
  if (!i.summary)
    return i.status === 'running' ? `${i.findingsRead.toLocaleString()} findings read so far` : 'Waiting to be read';
  const s = i.summary;
  const parts = [
    `${s.distinct.toLocaleString()} findings`,
    `${s.created.toLocaleString()} new`,
    `${s.seen.toLocaleString()} seen before`,
  ];
  if (s.reopened) parts.push(`${s.reopened.toLocaleString()} reopened`);
  if (s.fixed) parts.push(`${s.fixed.toLocaleString()} closed`);
  if (s.skipped) parts.push(`${s.skipped.toLocaleString()} records skipped`);
  if (s.outcome === 'inconclusive' || s.outcome === 'partial')
    parts.push(`${s.outcome}${s.outcomeReason ? ` (${s.outcomeReason})` : ''}: nothing closed`);
  if (s.splits.length) parts.push(`split to ${s.splits.length + 1} assets`);
  return parts.join(', ');
}

export function ImportsPage() {
  const tenant = useTenant();
  const queryClient = useQueryClient();
  const assets = useQuery(scannableAssetsQuery(tenant.id));
  const history = useQuery(importsQuery(tenant.id));
  const [assetId, setAssetId] = useState<string | null>(null);
  const [format, setFormat] = useState<ImportFormat | 'auto'>('auto');
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<UploadProgress | null>(null);
  const [current, setCurrent] = useState<string | null>(null);
  const [touched, setTouched] = useState(false);

  const upload = useMutation({
    mutationFn: () => importReport(tenant.id, { assetId: assetId!, format, file: file! }, { onProgress: setProgress }),
    onSuccess: async (imp) => {
      setCurrent(imp.id);
      setFile(null);
      setTouched(false);
      queryClient.setQueryData(importKeys.one(tenant.id, imp.id), imp);
      await queryClient.invalidateQueries({ queryKey: importKeys.list(tenant.id) });
      await queryClient.invalidateQueries({ queryKey: scanKeys.lists(tenant.id) });
    },
    onSettled: () => setProgress(null),
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (!assetId || !file) return;
    upload.mutate();
  };

  const assetOptions = (assets.data ?? []).map((a) => ({
    value: a.id,
    label: a.name && a.name !== a.target ? `${a.name} (${a.target})` : a.target,
  }));

  return (
    <>
      <PageHeader
        title="Import results"
        titleContext={tenant.name}
        description="Bring in findings from a scan run elsewhere: upload its report for the asset it describes. Findings merge with those of Rampart's own scans."
        actions={
          <ButtonLink to="/explain-results" variant="default">
            Explain a result file
          </ButtonLink>
        }
      />
      <Stack gap="lg">
        <SectionCard
          headingId="import-form"
          title="Upload a report"
          description={`${IMPORT_FORMATS.map((f) => FORMAT_LABELS[f]).join(', ')}. Hosts in the report are matched to your assets.`}
        >
          <form onSubmit={submit} noValidate aria-labelledby="import-form">
            <Stack gap="md" maw={560}>
              <NativeSelect
                label="Asset"
                description="Only assets with proven ownership (or a bypass) that are not archived."
                data={[{ value: '', label: assets.isPending ? 'Loading assets…' : 'Choose an asset' }, ...assetOptions]}
                value={assetId ?? ''}
                onChange={(e) => setAssetId(e.currentTarget.value || null)}
                required
                disabled={upload.isPending}
                error={
                  touched && !assetId
                    ? 'Choose the asset the report is about.'
                    : assets.isError
                      ? 'Could not load the assets.'
                      : null
                }
              />
              <NativeSelect
                label="Format"
                description="Leave on automatic detection unless the file is not recognised."
                data={[
                  { value: 'auto', label: 'Detect automatically' },
                  ...IMPORT_FORMATS.map((f) => ({ value: f, label: FORMAT_LABELS[f] })),
                ]}
                value={format}
                onChange={(e) => setFormat(e.currentTarget.value as ImportFormat | 'auto')}
                disabled={upload.isPending}
              />
              <FileInput
                label="Report file"
                value={file}
                onChange={setFile}
                clearable
                required
                disabled={upload.isPending}
                error={touched && !file ? 'Choose the report file.' : null}
              />
              {progress && <UploadBar progress={progress} />}
              {upload.isError && <ErrorAlert error={upload.error} title="The report was not imported" />}
              <Group>
                <Button type="submit" loading={upload.isPending}>
                  Import
                </Button>
              </Group>
            </Stack>
          </form>
        </SectionCard>

        {current && <CurrentImport tenantId={tenant.id} id={current} />}

        <SectionCard
          headingId="import-history"
          title="Imports"
          description="The reports imported into this tenant, newest first."
        >
          {history.isPending ? (
            <LoadingState label="Loading imports…" />
          ) : history.isError ? (
            <ErrorState
              error={history.error}
              title="Could not load the imports"
              onRetry={() => void history.refetch()}
            />
          ) : (
            <DataTable
              label="Imports"
              minWidth={860}
              columns={['File', 'Asset', 'Status', 'Outcome', 'Imported', 'Scan']}
              empty={history.data.imports.length === 0 && 'No reports imported yet.'}
            >
              {history.data.imports.map((i) => (
                <Table.Tr key={i.id}>
                  <Table.Td>
                    <TextLink to="/imports/$importId" params={{ importId: i.id }} size="sm" fw={600}>
                      {i.fileName ?? 'report'}
                    </TextLink>
                    <Text size="xs" c="dimmed">
                      {i.format ? FORMAT_LABELS[i.format] : 'Format not detected'} · {formatBytes(i.size)}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <TextLink to="/assets/$assetId" params={{ assetId: i.asset.id }} size="sm">
                      {i.asset.name || i.asset.target}
                    </TextLink>
                  </Table.Td>
                  <Table.Td>
                    <IngestionStatusBadge status={i.status} />
                    {isActive(i) && (
                      <Text size="xs" c="dimmed">
                        {i.percent}%
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" c={i.status === 'failed' ? 'red' : undefined} style={{ wordBreak: 'break-word' }}>
                      {describeOutcome(i)}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{formatDateTime(i.createdAt)}</Text>
                    {i.createdBy && (
                      <Text size="xs" c="dimmed">
                        {i.createdBy.email}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <TextLink to="/scans/$scanId" params={{ scanId: i.scanId }} size="sm">
                      View scan<VisuallyHidden> of {i.fileName ?? 'the report'}</VisuallyHidden>
                    </TextLink>
                  </Table.Td>
                </Table.Tr>
              ))}
            </DataTable>
          )}
        </SectionCard>
      </Stack>
    </>
  );
}

function UploadBar({ progress }: { progress: UploadProgress }) {
  const pct = progress.total > 0 ? Math.min(100, Math.round((progress.loaded / progress.total) * 100)) : 0;
  return (
    <Stack gap={4}>
      <Progress value={pct} aria-label="Upload progress" animated={pct < 100} />
      <Text size="xs" c="dimmed" aria-live="polite">
        {pct < 100
          ? `Uploading… ${formatBytes(progress.loaded)} of ${formatBytes(progress.total)}`
          : 'Checking the report…'}
      </Text>
    </Stack>
  );
}

/** The import just made: its reading progress until it finishes, then its outcome. */
function CurrentImport({ tenantId, id }: { tenantId: string; id: string }) {
  const query = useQuery(importQuery(tenantId, id));
  const queryClient = useQueryClient();
  const data = query.data;
  const finished = data && !isActive(data);
  const [refreshed, setRefreshed] = useState(false);
  if (finished && !refreshed) {
    setRefreshed(true);
    void queryClient.invalidateQueries({ queryKey: importKeys.list(tenantId) });
  }
  if (!data) return query.isError ? <ErrorAlert error={query.error} title="Could not follow the import" /> : null;
  return (
    <SectionCard
      headingId="current-import"
      title={`Importing ${data.fileName ?? 'the report'}`}
      aside={<IngestionStatusBadge status={data.status} />}
    >
      <Stack gap={4}>
        <Progress
          value={data.percent}
          color={data.status === 'failed' ? 'red' : undefined}
          aria-label="Import progress"
          animated={isActive(data)}
        />
        <Text size="sm" aria-live="polite" c={data.status === 'failed' ? 'red' : undefined}>
          {data.status === 'succeeded'
            ? `Done: ${describeOutcome(data)}.`
            : data.status === 'failed'
              ? describeOutcome(data)
              : `${data.percent}% read, ${describeOutcome(data)}.`}
        </Text>
        <Group gap="lg">
          <TextLink to="/imports/$importId" params={{ importId: data.id }} size="sm">
            See what was read, skipped and why
          </TextLink>
          <TextLink to="/scans/$scanId" params={{ scanId: data.scanId }} size="sm">
            Open the scan
          </TextLink>
        </Group>
      </Stack>
    </SectionCard>
  );
}
