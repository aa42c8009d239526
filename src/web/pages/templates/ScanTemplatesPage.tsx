// Scan templates: the tenant's own templates (upload, view, replace, delete; owners and admins)
// and the built-in ones every template scan runs. Template scans run both, filtered by the scan's
// severities, tags and template ids.
import { Badge, Button, Code, Group, Modal, Paper, ScrollArea, Stack, Table, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { DataTable } from '../../components/DataTable.tsx';
import { IconPlus, IconTemplate } from '../../components/icons.tsx';
import { TextLink } from '../../components/links.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, FirstItemState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { formatDateTime } from '../../lib/format.ts';
import { useTenant } from '../../lib/me.ts';
import {
  deleteTemplate,
  templateKeys,
  templateQuery,
  templatesQuery,
  type BuiltinTemplate,
  type ScanTemplate,
  type TemplateList,
} from '../../lib/templates-api.ts';
import { useConfirmedAction } from '../../lib/use-confirmed-action.ts';
import { SeverityBadge } from '../findings/finding-ui.tsx';
import { TemplateDialog } from './TemplateDialog.tsx';

const kib = (bytes: number) =>
  bytes >= 1024 * 1024
    ? `${+(bytes / 1024 / 1024).toFixed(1)} MiB`
    : `${(bytes / 1024).toFixed(bytes < 10_240 ? 1 : 0)} KiB`;

function Tags({ tags }: { tags: string[] }) {
  if (!tags.length)
    return (
      <Text size="sm" c="dimmed">
        —
      </Text>
    );
  return (
    <Group gap={4}>
      {tags.map((t) => (
        <Badge key={t} variant="outline" color="gray" size="sm" tt="none">
          {t}
        </Badge>
      ))}
    </Group>
  );
}

export function ScanTemplatesPage() {
  const tenant = useTenant();
  const query = useQuery(templatesQuery(tenant.id));
  const [uploading, setUploading] = useState(false);
  const [replacing, setReplacing] = useState<ScanTemplate | null>(null);
  const [viewing, setViewing] = useState<ScanTemplate | null>(null);
  const remove = useConfirmedAction<ScanTemplate>({
    action: (t) => deleteTemplate(tenant.id, t.id),
    successMessage: (t) => `Deleted “${t.templateId}”.`,
    errorTitle: 'The template was not deleted',
    queryKey: templateKeys.all(tenant.id),
    refreshOnError: true,
  });
  const canManage = query.data?.canManage ?? false;

  return (
    <>
      <TextLink to="/scans" size="sm" display="inline-block" mb="sm">
        ← Scans
      </TextLink>
      <PageHeader
        title="Scan templates"
        titleContext={tenant.name}
        description="Template scans run the built-in templates and your own: nuclei HTTP templates (paths or raw requests, variables, payloads, multi-step checks). A scan can be limited to some severities, tags or template ids."
        actions={
          canManage && (
            <Button leftSection={<IconPlus />} onClick={() => setUploading(true)}>
              Upload template
            </Button>
          )
        }
      />
      {query.isPending ? (
        <LoadingState label="Loading templates…" />
      ) : !query.data ? (
        <ErrorState error={query.error} title="Could not load the templates" onRetry={() => void query.refetch()} />
      ) : (
        <Stack gap="xl">
          <TenantTemplates
            data={query.data}
            onUpload={() => setUploading(true)}
            onView={setViewing}
            onReplace={setReplacing}
            onDelete={remove.ask}
          />
          <BuiltinTemplates templates={query.data.builtin} />
        </Stack>
      )}
      <TemplateDialog
        opened={uploading || replacing !== null}
        replacing={replacing}
        onClose={() => (setUploading(false), setReplacing(null))}
      />
      <ViewDialog template={viewing} onClose={() => setViewing(null)} />
      <ConfirmDialog title="Delete template?" confirmLabel="Delete template" danger {...remove.dialogProps}>
        Delete <Code>{remove.target?.templateId}</Code>? Scans queued from now on no longer run it; findings it reported
        stay.
      </ConfirmDialog>
    </>
  );
}

interface TenantTemplatesProps {
  data: TemplateList;
  onUpload: () => void;
  onView: (t: ScanTemplate) => void;
  onReplace: (t: ScanTemplate) => void;
  onDelete: (t: ScanTemplate) => void;
}

function TenantTemplates({ data, onUpload, onView, onReplace, onDelete }: TenantTemplatesProps) {
  const { templates, usage, limits, canManage } = data;
  if (templates.length === 0)
    return (
      <FirstItemState
        icon={<IconTemplate size={28} />}
        title="No templates of your own yet"
        description={
          canManage
            ? 'Upload a YAML template to check your sites for something the built-in templates do not cover. It is validated before it is stored.'
            : 'Owners and admins of this tenant can upload templates; template scans then run them too.'
        }
        action={canManage ? { label: 'Upload a template', onClick: onUpload } : undefined}
      />
    );
  return (
    <SectionCard
      headingId="tenant-templates-heading"
      title="Your templates"
      description={`${usage.count} of ${limits.templates} templates, ${kib(usage.totalBytes)} of ${kib(limits.totalBytes)}.`}
    >
      <DataTable
        label="Your templates"
        minWidth={860}
        columns={['Template', 'Severity', 'Tags', 'Size', 'Updated', { label: 'Actions', visuallyHidden: true }]}
      >
        {templates.map((t) => (
          <Table.Tr key={t.id}>
            <Table.Td style={{ maxWidth: 280, wordBreak: 'break-word' }}>
              <Text size="sm" fw={600}>
                {t.name}
              </Text>
              <Text size="xs" c="dimmed" className="mono">
                {t.templateId}
              </Text>
            </Table.Td>
            <Table.Td>
              <SeverityBadge severity={t.severity} />
            </Table.Td>
            <Table.Td>
              <Tags tags={t.tags} />
            </Table.Td>
            <Table.Td className="nowrap">
              <Text size="sm">{kib(t.size)}</Text>
            </Table.Td>
            <Table.Td>
              <Text size="sm" className="nowrap">
                {formatDateTime(t.updatedAt)}
              </Text>
              {t.createdBy && (
                <Text size="xs" c="dimmed">
                  by {t.createdBy.email}
                </Text>
              )}
            </Table.Td>
            <Table.Td>
              <Group gap="xs" justify="flex-end" wrap="nowrap">
                <Button size="xs" variant="default" onClick={() => onView(t)} aria-label={`View ${t.templateId}`}>
                  View
                </Button>
                {canManage && (
                  <>
                    <Button
                      size="xs"
                      variant="default"
                      onClick={() => onReplace(t)}
                      aria-label={`Replace ${t.templateId}`}
                    >
                      Replace
                    </Button>
                    <Button
                      size="xs"
                      variant="light"
                      color="red"
                      onClick={() => onDelete(t)}
                      aria-label={`Delete ${t.templateId}`}
                    >
                      Delete
                    </Button>
                  </>
                )}
              </Group>
            </Table.Td>
          </Table.Tr>
        ))}
      </DataTable>
    </SectionCard>
  );
}

function BuiltinTemplates({ templates }: { templates: BuiltinTemplate[] }) {
  return (
    <SectionCard
      headingId="builtin-templates-heading"
      title="Built-in templates"
      description="Shipped with Rampart and run by every template scan. Your templates cannot reuse their ids."
    >
      <DataTable
        label="Built-in templates"
        minWidth={720}
        columns={['Template', 'Severity', 'Tags']}
        empty={templates.length === 0 ? 'No built-in templates.' : undefined}
      >
        {templates.map((t) => (
          <Table.Tr key={t.templateId}>
            <Table.Td style={{ maxWidth: 360, wordBreak: 'break-word' }}>
              <Text size="sm">{t.name}</Text>
              <Text size="xs" c="dimmed" className="mono">
                {t.templateId}
              </Text>
            </Table.Td>
            <Table.Td>
              <SeverityBadge severity={t.severity} />
            </Table.Td>
            <Table.Td>
              <Tags tags={t.tags} />
            </Table.Td>
          </Table.Tr>
        ))}
      </DataTable>
    </SectionCard>
  );
}

function ViewDialog({ template, onClose }: { template: ScanTemplate | null; onClose: () => void }) {
  const title = template ? `Template ${template.templateId}` : 'Template';
  return (
    <Modal
      opened={template !== null}
      onClose={onClose}
      title={title}
      size="xl"
      closeButtonProps={{ 'aria-label': 'Close template' }}
    >
      {template && <TemplateYaml template={template} />}
    </Modal>
  );
}

function TemplateYaml({ template }: { template: ScanTemplate }) {
  const tenant = useTenant();
  const query = useQuery(templateQuery(tenant.id, template.id));
  if (query.isPending) return <LoadingState label="Loading the template…" />;
  if (!query.data)
    return <ErrorState error={query.error} title="Could not load the template" onRetry={() => void query.refetch()} />;
  const t = query.data.template;
  return (
    <Stack gap="sm">
      <Text size="sm" c="dimmed">
        {kib(t.size)} · SHA-256 <span className="mono">{t.sha256.slice(0, 16)}…</span> · updated{' '}
        {formatDateTime(t.updatedAt)}
      </Text>
      <Paper withBorder radius="md">
        <ScrollArea.Autosize mah="60vh" type="auto">
          <Code block aria-label={`YAML of ${t.templateId}`} tabIndex={0}>
            {t.yaml}
          </Code>
        </ScrollArea.Autosize>
      </Paper>
    </Stack>
  );
}
