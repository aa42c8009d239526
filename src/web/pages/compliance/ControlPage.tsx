// One control: its catalogue entry and status, the open findings mapped to it, its evidence (with
// download and delete), and the upload form (file, title, effective date, optional expiry).
import {
  ActionIcon,
  Anchor,
  Badge,
  Button,
  FileInput,
  Group,
  Paper,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Textarea,
  TextInput,
  Tooltip,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { DataTable } from '../../components/DataTable.tsx';
import { TextLink } from '../../components/links.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorAlert, ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { ApiError } from '../../lib/api.ts';
import {
  complianceKeys,
  controlQuery,
  deleteEvidence,
  evidenceDownloadUrl,
  uploadEvidence,
  type ControlDetail,
  type Evidence,
  type FrameworkId,
} from '../../lib/compliance-api.ts';
import { notifySuccess } from '../../lib/errors.ts';
import { formatDateTime } from '../../lib/format.ts';
import { useTenant } from '../../lib/me.ts';
import { useConfirmedAction } from '../../lib/use-confirmed-action.ts';
import { useForm } from '../../lib/use-form.ts';
import {
  EVIDENCE_ACCEPT,
  EvidenceStateBadge,
  formatDay,
  formatSize,
  SeverityBadge,
  SeverityCounts,
  STATUS_HELP,
  StatusBadge,
  todayLocal,
} from './compliance-ui.tsx';

export function ControlPage({ framework, controlId }: { framework: FrameworkId; controlId: string }) {
  const tenant = useTenant();
  const query = useQuery(controlQuery(tenant.id, framework, controlId));
  const back = (
    <TextLink to="/compliance/$framework" params={{ framework }} size="sm" display="inline-block" mb="sm">
      ← All controls
    </TextLink>
  );
  if (query.isPending)
    return (
      <>
        {back}
        <LoadingState label="Loading the control…" />
      </>
    );
  if (query.isError) {
    const notFound = query.error instanceof ApiError && query.error.status === 404;
    return (
      <>
        {back}
        <PageHeader title={notFound ? 'Control not found' : controlId} titleContext={tenant.name} />
        <ErrorState
          error={query.error}
          title={notFound ? 'Control not found' : 'Could not load the control'}
          onRetry={notFound ? undefined : () => void query.refetch()}
        />
      </>
    );
  }
  const d = query.data;
  return (
    <>
      {back}
      <PageHeader
        title={`${d.control.id} ${d.control.title.length <= 90 ? d.control.title : ''}`.trim()}
        titleContext={tenant.name}
        description={`${d.framework.shortName} · ${d.control.parentGroup ? `${d.control.parentGroup.title} › ` : ''}${d.control.group.title}`}
      />
      <Group gap="xs" mt={-8} mb="lg" role="group" aria-label="Status">
        <StatusBadge status={d.status} />
        {d.control.implementationGroup && (
          <Badge variant="outline" color="gray">
            IG{d.control.implementationGroup}
          </Badge>
        )}
        <Text size="xs" c="dimmed">
          {STATUS_HELP[d.status]}
        </Text>
      </Group>
      <Stack gap="lg">
        {(d.control.description || d.control.title.length > 90) && (
          <Paper withBorder radius="md" p="lg">
            <Text size="sm">{d.control.description ?? d.control.title}</Text>
          </Paper>
        )}
        <FindingsCard detail={d} />
        <EvidenceCard detail={d} tenantId={tenant.id} framework={framework} />
        <UploadCard tenantId={tenant.id} framework={framework} controlId={d.control.id} />
      </Stack>
    </>
  );
}

function FindingsCard({ detail }: { detail: ControlDetail }) {
  const f = detail.findings;
  return (
    <SectionCard
      headingId="findings-heading"
      title="Open findings mapped here"
      description="Scan findings whose weakness (CWE), rule or scanner bears on this control. Fix them, or mark them accepted or false positives, to stop the control failing."
      aside={<SeverityCounts counts={f.bySeverity} />}
    >
      <DataTable
        label="Mapped findings"
        minWidth={860}
        columns={['Finding', 'Severity', 'Asset', 'Location', 'Instances', 'Last seen']}
        empty={f.items.length === 0 ? 'No open findings map to this control.' : undefined}
      >
        {f.items.map((item) => (
          <Table.Tr key={item.id}>
            <Table.Td>
              <TextLink to="/findings/$findingId" params={{ findingId: item.id }} size="sm" fw={500}>
                {item.title}
              </TextLink>
              <Text size="xs" c="dimmed" className="mono-break">
                {item.scanner} · {item.ruleId}
              </Text>
            </Table.Td>
            <Table.Td>
              <SeverityBadge severity={item.severity} />
            </Table.Td>
            <Table.Td>
              <TextLink to="/assets/$assetId" params={{ assetId: item.asset.id }} size="sm">
                {item.asset.name || item.asset.target}
              </TextLink>
            </Table.Td>
            <Table.Td>
              <Text size="sm" className="mono-break">
                {item.location}
              </Text>
            </Table.Td>
            <Table.Td>{item.instances}</Table.Td>
            <Table.Td className="nowrap">{formatDateTime(item.lastSeenAt)}</Table.Td>
          </Table.Tr>
        ))}
      </DataTable>
      {f.truncated && (
        <Text size="sm" c="dimmed">
          Showing the {f.items.length} most severe of {f.open} open findings.
        </Text>
      )}
    </SectionCard>
  );
}

function EvidenceCard({
  detail,
  tenantId,
  framework,
}: {
  detail: ControlDetail;
  tenantId: string;
  framework: FrameworkId;
}) {
  const removal = useConfirmedAction<Evidence>({
    action: (e) => deleteEvidence(tenantId, e.id),
    successMessage: (e) => `Deleted “${e.title}”.`,
    errorTitle: 'Evidence not deleted',
    queryKey: complianceKeys.all(tenantId),
    refreshOnError: true,
  });
  const rows = detail.evidence;
  return (
    <SectionCard
      headingId="evidence-heading"
      title="Evidence"
      description="Files that show this control is in place. Evidence counts from its effective date through its expiry date."
    >
      <DataTable
        label="Evidence"
        minWidth={760}
        columns={['Evidence', 'State', 'Effective', 'Expires', 'Uploaded', { label: 'Actions', visuallyHidden: true }]}
        empty={rows.length === 0 ? 'No evidence yet. Upload the first file below.' : undefined}
      >
        {rows.map((e) => (
          <Table.Tr key={e.id} data-evidence={e.id}>
            <Table.Td style={{ maxWidth: 320 }}>
              <Text size="sm" fw={600}>
                {e.title}
              </Text>
              <Anchor
                href={evidenceDownloadUrl(tenantId, e.id)}
                size="xs"
                className="mono-break"
                download={e.fileName}
                aria-label={`Download ${e.fileName}`}
              >
                {e.fileName}
              </Anchor>
              <Text span size="xs" c="dimmed">
                {' '}
                · {formatSize(e.size)}
              </Text>
              {e.description && (
                <Text size="xs" c="dimmed">
                  {e.description}
                </Text>
              )}
            </Table.Td>
            <Table.Td>
              <EvidenceStateBadge state={e.state} />
            </Table.Td>
            <Table.Td className="nowrap">{formatDay(e.effectiveDate)}</Table.Td>
            <Table.Td className="nowrap">
              {e.expiresAt ? (
                formatDay(e.expiresAt)
              ) : (
                <Text span size="sm" c="dimmed">
                  Never
                </Text>
              )}
            </Table.Td>
            <Table.Td>
              <Text size="sm">{formatDateTime(e.createdAt)}</Text>
              <Text size="xs" c="dimmed">
                {e.uploadedBy.email ?? 'Former member'}
              </Text>
            </Table.Td>
            <Table.Td ta="right">
              {e.canDelete && (
                <Tooltip label="Delete" withArrow>
                  <ActionIcon
                    variant="subtle"
                    color="red"
                    onClick={() => removal.ask(e)}
                    aria-label={`Delete ${e.title}`}
                  >
                    ×
                  </ActionIcon>
                </Tooltip>
              )}
            </Table.Td>
          </Table.Tr>
        ))}
      </DataTable>
      <Text size="xs" c="dimmed">
        SHA-256 of each file is recorded at upload; deletions are kept in the audit log.
      </Text>
      <ConfirmDialog title="Delete evidence?" confirmLabel="Delete" danger {...removal.dialogProps}>
        “{removal.target?.title}” ({removal.target?.fileName}) will be removed from{' '}
        {framework === 'gdpr' ? 'this article' : 'this control'} and from storage. This cannot be undone.
      </ConfirmDialog>
    </SectionCard>
  );
}

type UploadValues = { title: string; description: string; effectiveDate: string; expiresAt: string; file: File | null };

function UploadCard({
  tenantId,
  framework,
  controlId,
}: {
  tenantId: string;
  framework: FrameworkId;
  controlId: string;
}) {
  const queryClient = useQueryClient();
  const initial: UploadValues = { title: '', description: '', effectiveDate: todayLocal(), expiresAt: '', file: null };
  const form = useForm<UploadValues>(initial, (v) => ({
    file: v.file ? null : 'Choose a file',
    title: !v.title.trim()
      ? 'Give the evidence a title'
      : v.title.trim().length > 200
        ? 'Use at most 200 characters'
        : null,
    description: v.description.length > 2000 ? 'Use at most 2,000 characters' : null,
    effectiveDate: /^\d{4}-\d{2}-\d{2}$/.test(v.effectiveDate) ? null : 'Enter the date the evidence takes effect',
    expiresAt:
      v.expiresAt && v.expiresAt <= v.effectiveDate ? 'The expiry date must be after the effective date' : null,
  }));
  const upload = useMutation({
    mutationFn: (v: UploadValues) =>
      uploadEvidence(tenantId, framework, controlId, {
        title: v.title.trim(),
        description: v.description.trim(),
        effectiveDate: v.effectiveDate,
        expiresAt: v.expiresAt,
        file: v.file!,
      }),
    onSuccess: async ({ evidence }) => {
      notifySuccess(`Uploaded “${evidence.title}”.`);
      form.reset({ ...initial, effectiveDate: todayLocal() });
      await queryClient.invalidateQueries({ queryKey: complianceKeys.all(tenantId) });
    },
    onError: (error) => {
      if (error instanceof ApiError && error.code === 'validation_failed') {
        const issues = error.fieldIssues();
        form.setErrors({
          title: issues['title'],
          description: issues['description'],
          effectiveDate: issues['effectiveDate'],
          expiresAt: issues['expiresAt'],
          file: issues['file'],
        });
      }
    },
  });
  return (
    <SectionCard
      headingId="upload-heading"
      title="Upload evidence"
      description="PDF, images, text, CSV, JSON or office documents, up to the size your operator allows (25 MB by default)."
    >
      <form
        ref={form.formRef}
        noValidate
        onSubmit={form.onSubmit((v) => upload.mutate(v))}
        aria-labelledby="upload-heading"
      >
        <Stack gap="md">
          <FileInput
            label="File"
            description="PDF, image, text, CSV, JSON or office document"
            accept={EVIDENCE_ACCEPT}
            clearable
            withAsterisk
            value={form.values.file}
            error={form.errors.file}
            onChange={(file) => form.setValue('file', file)}
            name="file"
          />
          <TextInput
            label="Title"
            withAsterisk
            maxLength={200}
            {...form.field('title')}
            placeholder="e.g. Information security policy v3"
          />
          <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="md">
            <TextInput type="date" label="Effective date" withAsterisk {...form.field('effectiveDate')} />
            <TextInput
              type="date"
              label="Expires"
              description="Optional; leave empty if it does not expire"
              {...form.field('expiresAt')}
            />
          </SimpleGrid>
          <Textarea
            label="Notes"
            autosize
            minRows={2}
            maxRows={6}
            maxLength={2000}
            value={form.values.description}
            error={form.errors.description}
            onChange={(e) => form.setValue('description', e.currentTarget.value)}
          />
          <ErrorAlert
            error={
              upload.error && !(upload.error instanceof ApiError && upload.error.code === 'validation_failed')
                ? upload.error
                : null
            }
            title="Evidence not uploaded"
          />
          <Group justify="flex-end">
            <Button type="submit" loading={upload.isPending}>
              Upload evidence
            </Button>
          </Group>
        </Stack>
      </form>
    </SectionCard>
  );
}
