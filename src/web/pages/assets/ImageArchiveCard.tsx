// A container image uploaded as an archive: what is stored (file, size, format, SHA-256), a
// download link, and an upload control for a new version. Also the file picker with progress the
// "Add asset" dialog uses for new archives.
import { Anchor, Button, Code, CopyButton, FileInput, Group, Progress, Stack, Table, Text } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { ErrorAlert } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { imageArchiveUrl, uploadImageArchive, type UploadProgress } from '../../lib/assets-api.ts';
import { notifySuccess } from '../../lib/errors.ts';
import { formatDateTime } from '../../lib/format.ts';
import type { Asset } from '../../lib/types.ts';
import { useAssetUpdater } from './use-asset-updater.ts';

const ACCEPT = '.tar,.tar.gz,.tgz,application/x-tar,application/gzip,application/x-gzip';

export function formatBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return i === 0
    ? `${n.toLocaleString()} bytes`
    : `${v.toLocaleString(undefined, { maximumFractionDigits: 1 })} ${units[i]}`;
}

/** A file picker for image archives. */
export function ArchiveFileInput(props: {
  value: File | null;
  onChange: (file: File | null) => void;
  error?: string | null;
  label?: string;
  disabled?: boolean;
}) {
  return (
    <FileInput
      label={props.label ?? 'Image archive'}
      description="The tar file `docker save` or an OCI tool wrote (.tar), optionally gzip-compressed (.tar.gz)."
      accept={ACCEPT}
      clearable
      value={props.value}
      onChange={props.onChange}
      error={props.error}
      disabled={props.disabled}
    />
  );
}

export function UploadProgressBar({ progress }: { progress: UploadProgress | null }) {
  if (!progress) return null;
  const pct = progress.total > 0 ? Math.min(100, Math.round((progress.loaded / progress.total) * 100)) : 0;
  return (
    <Stack gap={4}>
      <Progress value={pct} aria-label="Upload progress" animated={pct < 100} />
      <Text size="xs" c="dimmed" aria-live="polite">
        {pct < 100
          ? `Uploading… ${formatBytes(progress.loaded)} of ${formatBytes(progress.total)}`
          : 'Checking and storing the archive…'}
      </Text>
    </Stack>
  );
}

export function ImageArchiveCard({ asset, tenantId }: { asset: Asset; tenantId: string }) {
  const archive = asset.archive;
  const applyAsset = useAssetUpdater(tenantId, asset.id);
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<UploadProgress | null>(null);
  const upload = useMutation({
    mutationFn: (f: File) => uploadImageArchive(tenantId, f, { assetId: asset.id, onProgress: setProgress }),
    onSuccess: async ({ asset: saved }) => {
      notifySuccess(`${saved.archive?.fileName ?? 'The archive'} is now the current version.`);
      setFile(null);
      await applyAsset(saved);
    },
    onSettled: () => setProgress(null),
  });
  if (!archive) return null;
  const archived = asset.archivedAt !== null;

  return (
    <SectionCard
      headingId="image-archive-heading"
      title="Image archive"
      description="The uploaded image Rampart scans. It stays in your tenant's storage."
    >
      <Table variant="vertical" layout="fixed" withTableBorder verticalSpacing="xs">
        <Table.Tbody>
          <Table.Tr>
            <Table.Th w={120}>File</Table.Th>
            <Table.Td style={{ overflowWrap: 'anywhere' }}>{archive.fileName}</Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Th>Size</Table.Th>
            <Table.Td>
              {formatBytes(archive.size)} ({archive.format === 'tar+gzip' ? 'gzip-compressed tar' : 'tar'})
            </Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Th>SHA-256</Table.Th>
            <Table.Td>
              <Group gap="xs" wrap="nowrap" align="flex-start">
                <Code fz="xs" className="mono-break" style={{ flex: 1 }}>
                  {archive.sha256}
                </Code>
                <CopyButton value={archive.sha256}>
                  {({ copied, copy }) => (
                    <Button size="compact-xs" variant="default" onClick={copy} aria-label="Copy SHA-256">
                      {copied ? 'Copied' : 'Copy'}
                    </Button>
                  )}
                </CopyButton>
              </Group>
            </Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Th>Uploaded</Table.Th>
            <Table.Td>{formatDateTime(archive.uploadedAt)}</Table.Td>
          </Table.Tr>
        </Table.Tbody>
      </Table>
      <Anchor href={imageArchiveUrl(tenantId, asset.id)} download={archive.fileName} size="sm">
        Download the archive
      </Anchor>
      {!archived && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (file) upload.mutate(file);
          }}
        >
          <Stack gap="sm">
            <ArchiveFileInput label="New version" value={file} onChange={setFile} disabled={upload.isPending} />
            <UploadProgressBar progress={progress} />
            <ErrorAlert error={upload.error} title="The archive was not uploaded" withIcon={false} />
            <Group>
              <Button type="submit" disabled={!file} loading={upload.isPending}>
                Upload new version
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </SectionCard>
  );
}
