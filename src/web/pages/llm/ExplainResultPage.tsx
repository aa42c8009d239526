// "Explain a result file": upload a scanner's result file (nmap, nuclei, ZAP, Trivy, SARIF or
// Rampart's native report) and read a streamed explanation with the fixes to make first. With a
// language model configured the model writes it; otherwise the offline analysis does (labelled).
// Nothing is imported; the finished explanation is kept with the uploaded file in the user's own
// history (private to them), where both can be viewed again, the file downloaded, or deleted.
import { Button, Code, FileInput, Group, Modal, ScrollArea, Stack, Table, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { DataTable } from '../../components/DataTable.tsx';
import { TextLink } from '../../components/links.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorAlert, ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { MarkdownText } from '../../components/MarkdownText.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { StreamedAnswer, useStreamedAnswer } from '../../components/StreamedAnswer.tsx';
import { formatDateTime } from '../../lib/format.ts';
import {
  deleteExplanation,
  explainResultFile,
  explanationFileUrl,
  explanationQuery,
  explanationsQuery,
  llmKeys,
  previewExplanationFile,
  type ExplanationSummary,
} from '../../lib/llm-api.ts';
import { useTenant } from '../../lib/me.ts';

const FORMAT_LABELS: Record<string, string> = {
  native: 'Rampart native',
  nmap: 'nmap XML',
  nuclei: 'nuclei JSONL',
  zap: 'OWASP ZAP',
  trivy: 'Trivy',
  sarif: 'SARIF',
};

function countsLine(e: ExplanationSummary): string {
  const c = e.counts;
  const parts = [
    c.critical && `${c.critical} critical`,
    c.high && `${c.high} high`,
    c.medium && `${c.medium} medium`,
    c.low && `${c.low} low`,
    c.info && `${c.info} info`,
  ].filter(Boolean);
  return `${c.total} finding${c.total === 1 ? '' : 's'}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

export function ExplainResultPage() {
  const tenant = useTenant();
  const queryClient = useQueryClient();
  const [file, setFile] = useState<File | null>(null);
  const [touched, setTouched] = useState(false);
  const [viewing, setViewing] = useState<string | null>(null);
  const history = useQuery(explanationsQuery(tenant.id));
  const answer = useStreamedAnswer({
    onDone: () => void queryClient.invalidateQueries({ queryKey: llmKeys.explanations(tenant.id) }),
  });
  const running = answer.status === 'waiting' || answer.status === 'streaming';

  const remove = useMutation({
    mutationFn: (id: string) => deleteExplanation(tenant.id, id),
    onSuccess: async () => {
      setViewing(null);
      await queryClient.invalidateQueries({ queryKey: llmKeys.explanations(tenant.id) });
    },
  });

  const run = () => {
    if (!file) return;
    const f = file;
    answer.start((handlers, signal) => explainResultFile(tenant.id, f, handlers, signal));
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    run();
  };

  return (
    <>
      <PageHeader
        title="Explain a result file"
        titleContext={tenant.name}
        description={
          <>
            Upload a scanner’s result file to get a plain-language summary and the fixes to make first. The file is kept
            with the explanation in your private history, not imported; to add its findings to Rampart, use{' '}
            <TextLink to="/imports" size="sm" underline="always">
              Import results
            </TextLink>
            .
          </>
        }
      />
      <Stack gap="lg">
        <SectionCard
          headingId="explain-form"
          title="Result file"
          description="nmap XML, nuclei JSON Lines, OWASP ZAP JSON, Trivy JSON (v2), SARIF 2.1.0 or Rampart's native report; up to 32 MB."
        >
          <form onSubmit={submit} noValidate aria-labelledby="explain-form">
            <Stack gap="md" maw={560}>
              <FileInput
                label="Result file"
                value={file}
                onChange={setFile}
                clearable
                required
                disabled={running}
                error={touched && !file ? 'Choose the result file.' : null}
              />
              <Group>
                <Button type="submit" loading={answer.status === 'waiting'} disabled={running}>
                  Explain
                </Button>
              </Group>
            </Stack>
          </form>
        </SectionCard>

        <StreamedAnswer answer={answer} title="Explanation" headingLevel={2} onRetry={file ? run : undefined} />

        <SectionCard
          headingId="explain-history"
          title="Your explanations"
          description="Only you can see these, with the result files you uploaded. Deleting an explanation deletes its file too."
        >
          {history.isPending ? (
            <LoadingState label="Loading your explanations…" />
          ) : history.isError ? (
            <ErrorState
              error={history.error}
              title="Could not load your explanations"
              onRetry={() => void history.refetch()}
            />
          ) : (
            <DataTable
              label="Your explanations"
              minWidth={720}
              columns={['File', 'Findings', 'Written by', 'When', { label: 'Actions', visuallyHidden: true }]}
              empty={history.data.length === 0 && 'No explanations yet.'}
            >
              {history.data.map((e) => (
                <Table.Tr key={e.id}>
                  <Table.Td>
                    <Text size="sm" fw={600}>
                      {e.fileName}
                    </Text>
                    <Text size="xs" c="dimmed">
                      {FORMAT_LABELS[e.format] ?? e.format}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{countsLine(e)}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{e.source === 'offline' ? 'Offline analysis' : 'Language model'}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{formatDateTime(e.createdAt)}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Group gap="xs" justify="flex-end" wrap="nowrap">
                      <Button
                        size="xs"
                        variant="default"
                        onClick={() => setViewing(e.id)}
                        aria-label={`View the explanation of ${e.fileName}`}
                      >
                        View
                      </Button>
                      <Button
                        size="xs"
                        variant="subtle"
                        color="red"
                        loading={remove.isPending && remove.variables === e.id}
                        onClick={() => remove.mutate(e.id)}
                        aria-label={`Delete the explanation of ${e.fileName}`}
                      >
                        Delete
                      </Button>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </DataTable>
          )}
          <ErrorAlert error={remove.error} title="Could not delete the explanation" />
        </SectionCard>
      </Stack>
      {viewing && (
        <ExplanationModal
          tenantId={tenant.id}
          id={viewing}
          onClose={() => setViewing(null)}
          onDelete={() => remove.mutate(viewing)}
          deleting={remove.isPending}
        />
      )}
    </>
  );
}

const PREVIEW_BYTES = 64 * 1024;

function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function ExplanationModal({
  tenantId,
  id,
  onClose,
  onDelete,
  deleting,
}: {
  tenantId: string;
  id: string;
  onClose: () => void;
  onDelete: () => void;
  deleting: boolean;
}) {
  const q = useQuery(explanationQuery(tenantId, id));
  const [showFile, setShowFile] = useState(false);
  // Loaded only when asked for: the file may be up to 32 MB; the preview reads its start.
  const preview = useQuery({
    queryKey: [...llmKeys.explanation(tenantId, id), 'file-preview'],
    queryFn: ({ signal }) => previewExplanationFile(tenantId, id, PREVIEW_BYTES, signal),
    enabled: showFile,
    staleTime: Infinity,
  });
  return (
    <Modal opened onClose={onClose} size="xl" title={q.data ? `Explanation of ${q.data.fileName}` : 'Explanation'}>
      {q.isPending ? (
        <LoadingState />
      ) : q.isError ? (
        <ErrorState error={q.error} title="Could not load the explanation" />
      ) : (
        <Stack gap="sm">
          <Text size="xs" c="dimmed">
            {q.data.source === 'offline' ? 'Offline analysis' : 'Language model'} · {formatDateTime(q.data.createdAt)} ·{' '}
            {countsLine(q.data)}
          </Text>
          <MarkdownText text={q.data.answer} testId="saved-answer" />
          {q.data.fileSize === null ? (
            <Text size="sm" c="dimmed">
              The result file was not kept: this explanation was made before files were kept with the history.
            </Text>
          ) : (
            <Stack gap="xs">
              <Group gap="xs">
                <Text size="sm">
                  Result file: {q.data.fileName} ({formatBytes(q.data.fileSize)})
                </Text>
                {/* An attachment of opaque bytes: the browser saves it, never renders it. */}
                <Button
                  component="a"
                  href={explanationFileUrl(tenantId, id)}
                  download={q.data.fileName}
                  size="xs"
                  variant="default"
                >
                  Download the result file
                </Button>
                <Button size="xs" variant="subtle" onClick={() => setShowFile((v) => !v)} aria-expanded={showFile}>
                  {showFile ? 'Hide the result file' : 'Show the result file'}
                </Button>
              </Group>
              {showFile &&
                (preview.isPending ? (
                  <LoadingState label="Loading the result file…" />
                ) : preview.isError ? (
                  <ErrorState error={preview.error} title="Could not load the result file" />
                ) : (
                  <>
                    <ScrollArea.Autosize mah={320} type="auto">
                      <Code block data-testid="saved-result-file">
                        {preview.data.text}
                      </Code>
                    </ScrollArea.Autosize>
                    {preview.data.truncated && (
                      <Text size="xs" c="dimmed">
                        Showing the first {formatBytes(PREVIEW_BYTES)}; download the file for all of it.
                      </Text>
                    )}
                  </>
                ))}
            </Stack>
          )}
          <Group justify="flex-end">
            <Button variant="subtle" color="red" onClick={onDelete} loading={deleting}>
              Delete
            </Button>
            <Button variant="default" onClick={onClose}>
              Close
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
