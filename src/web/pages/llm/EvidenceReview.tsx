// The evidence review, for the CMMC page's Evidence review tab: up to 8 documents (PDF, plain text
// or Markdown; about 8 MB in all) are checked against the 15 CMMC Level 1 requirements. Each
// requirement gets Covered, Partial or Missing with the cited file names and pages, the missing
// documentation and prioritized next steps, streamed: the offline analysis shows as a preliminary
// review while the model works, then the final review replaces it. Nothing is stored. A Stop button cancels a running
// review (the model call on the server is aborted). Without a language model, or when the
// model's verdicts fail validation, the offline analysis answers (labelled).
//
// <EvidenceReview tenantId headingLevel? />
//   tenantId      the current tenant (required)
//   headingLevel  2, 3 or 4 for the result's heading (default 3)
// API: POST /api/v1/tenants/:tenantId/llm/evidence-review (docs/llm.md).
import { Alert, Badge, Button, FileInput, Group, List, Paper, Stack, Table, Text, Title } from '@mantine/core';
import { useRef, useState, type FormEvent } from 'react';
import { DataTable } from '../../components/DataTable.tsx';
import { LimitedTextarea } from '../../components/LimitedTextarea.tsx';
import { llmErrorMessage, reviewEvidence, type EvidenceReview as Review } from '../../lib/llm-api.ts';

export interface EvidenceReviewProps {
  tenantId: string;
  headingLevel?: 2 | 3 | 4;
}

const MAX_FILES = 8;
const MAX_BYTES = 8 * 1024 * 1024;
const NOTES_MAX = 4_000;
const WORD = /\.(docx?|docm|dotx?|rtf|odt)$/i;
const ACCEPTED = /\.(pdf|txt|text|md|markdown)$/i;
const VERDICT_COLOR = { Covered: 'green', Partial: 'yellow', Missing: 'red' } as const;

/** What is wrong with the chosen files before anything is sent, or null. */
export function checkEvidenceFiles(files: File[]): string | null {
  if (files.length === 0) return 'Choose at least one file.';
  if (files.length > MAX_FILES) return `Choose at most ${MAX_FILES} files.`;
  const word = files.find((f) => WORD.test(f.name));
  if (word)
    return `"${word.name}" is a Word document. Save it as PDF first (File → Save As → PDF), then choose the PDF.`;
  const other = files.find((f) => !ACCEPTED.test(f.name));
  if (other) return `"${other.name}" is not a PDF, plain text (.txt) or Markdown (.md) file.`;
  const total = files.reduce((n, f) => n + f.size, 0);
  if (total > MAX_BYTES)
    return `The files total ${(total / 1024 / 1024).toFixed(1)} MB; at most 8 MB in all are accepted.`;
  return null;
}

export function EvidenceReview({ tenantId, headingLevel = 3 }: EvidenceReviewProps) {
  const [files, setFiles] = useState<File[]>([]);
  const [notes, setNotes] = useState('');
  const [touched, setTouched] = useState(false);
  const [status, setStatus] = useState<'idle' | 'running' | 'done' | 'stopped' | 'error'>('idle');
  const [result, setResult] = useState<Review | null>(null);
  // The offline review shown while the model is still reviewing (replaced by the final one).
  const [preliminary, setPreliminary] = useState<Review | null>(null);
  const [error, setError] = useState<unknown>(null);
  const controller = useRef<AbortController | null>(null);
  const problem =
    checkEvidenceFiles(files) ?? (notes.length > NOTES_MAX ? `Notes are limited to ${NOTES_MAX} characters.` : null);

  const run = () => {
    controller.current?.abort();
    const ac = new AbortController();
    controller.current = ac;
    setStatus('running');
    setError(null);
    setResult(null);
    setPreliminary(null);
    reviewEvidence(tenantId, { files, notes }, ac.signal, (p) => {
      if (controller.current === ac) setPreliminary(p);
    }).then(
      (r) => {
        if (controller.current !== ac) return;
        setPreliminary(null);
        setResult(r);
        setStatus('done');
      },
      (e: unknown) => {
        if (controller.current !== ac) return;
        if (ac.signal.aborted) setStatus('stopped');
        else {
          setError(e);
          setStatus('error');
        }
      },
    );
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (!problem) run();
  };

  const running = status === 'running';
  return (
    <Stack gap="md">
      <form onSubmit={submit} noValidate aria-label="Review evidence documents">
        <Stack gap="sm" maw={720}>
          <FileInput
            label="Documents"
            description="Up to 8 files, about 8 MB in all: PDF, plain text or Markdown. Save Word files as PDF first. Scanned PDFs without text cannot be assessed. The files are read, not stored."
            multiple
            clearable
            accept=".pdf,.txt,.text,.md,.markdown,application/pdf,text/plain,text/markdown"
            value={files}
            onChange={setFiles}
            disabled={running}
            error={touched && problem && problem !== `Notes are limited to ${NOTES_MAX} characters.` ? problem : null}
          />
          <LimitedTextarea
            label="Notes (optional)"
            description="Context for the reviewer; notes are not evidence and are never cited."
            value={notes}
            onValueChange={setNotes}
            max={NOTES_MAX}
            minRows={2}
            maxRows={6}
            disabled={running}
          />
          <Group>
            <Button type="submit" loading={running} disabled={running}>
              Review documents
            </Button>
            {running && (
              <Button color="red" variant="light" onClick={() => controller.current?.abort()}>
                Stop
              </Button>
            )}
          </Group>
        </Stack>
      </form>
      <Text size="xs" c="dimmed" role="status" aria-live="polite">
        {running
          ? preliminary
            ? 'The language model is reviewing the documents; the offline analysis is shown meanwhile…'
            : 'Reading the documents…'
          : status === 'stopped'
            ? 'Stopped. Nothing was reviewed.'
            : status === 'done'
              ? 'Review complete.'
              : ''}
      </Text>
      {status === 'error' && (
        <Alert color="red" variant="light" role="alert" title="No review">
          <Group justify="space-between" align="center">
            <Text size="sm">{llmErrorMessage(error)}</Text>
            <Button size="xs" variant="default" onClick={run}>
              Try again
            </Button>
          </Group>
        </Alert>
      )}
      {running && preliminary && <ReviewResult review={preliminary} headingLevel={headingLevel} preliminary />}
      {result && <ReviewResult review={result} headingLevel={headingLevel} />}
    </Stack>
  );
}

function ReviewResult({
  review,
  headingLevel,
  preliminary = false,
}: {
  review: Review;
  headingLevel: 2 | 3 | 4;
  preliminary?: boolean;
}) {
  const sub = (headingLevel + 1) as 3 | 4 | 5;
  return (
    <Paper withBorder radius="md" p="md">
      <Stack gap="md">
        <Group gap="xs">
          <Title order={headingLevel} size="h5">
            {preliminary ? 'Preliminary review' : 'Review'}
          </Title>
          <Badge variant="light" color={review.source === 'offline' ? 'gray' : 'blue'} data-testid="review-source">
            {review.label}
          </Badge>
          <Text size="sm" c="dimmed">
            {review.summary.covered} covered · {review.summary.partial} partial · {review.summary.missing} missing
          </Text>
        </Group>
        {review.fallbackReason && (
          <Alert color="yellow" variant="light" title="Showing the offline analysis">
            <Text size="sm">
              {review.fallbackError
                ? `The language model could not answer: ${review.fallbackError.message}`
                : review.fallbackReason}{' '}
              The verdicts below come from matching the documents' text.
            </Text>
          </Alert>
        )}
        {review.files.some((f) => !f.assessable || f.note) && (
          <List size="sm" spacing={4}>
            {review.files
              .filter((f) => !f.assessable || f.note)
              .map((f) => (
                <List.Item key={f.fileName}>
                  <Text span size="sm" fw={600}>
                    {f.fileName}
                  </Text>
                  {': '}
                  {f.note ?? 'not assessable'}
                </List.Item>
              ))}
          </List>
        )}
        <DataTable label="Requirements" minWidth={760} columns={['Requirement', 'Verdict', 'Evidence', 'Why']}>
          {review.requirements.map((r) => (
            <Table.Tr key={r.id}>
              <Table.Td>
                <Text size="sm" fw={600}>
                  {r.id}
                </Text>
                <Text size="xs" c="dimmed">
                  {r.title}
                </Text>
              </Table.Td>
              <Table.Td style={{ minWidth: 112 }}>
                <Badge color={VERDICT_COLOR[r.verdict]} variant="light" style={{ overflow: 'visible' }}>
                  {r.verdict}
                </Badge>
              </Table.Td>
              <Table.Td>
                <Text size="sm">
                  {r.citations.length
                    ? r.citations
                        .map((c) => `${c.fileName}${c.pages.length ? ` (p. ${c.pages.join(', ')})` : ''}`)
                        .join('; ')
                    : '—'}
                </Text>
              </Table.Td>
              <Table.Td>
                <Text size="sm">{r.rationale}</Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </DataTable>
        {review.nextSteps.length > 0 && (
          <Stack gap="xs">
            <Title order={sub} size="h6">
              Next steps
            </Title>
            <List type="ordered" size="sm" spacing={4}>
              {review.nextSteps.map((s) => (
                <List.Item key={s.priority}>{s.text}</List.Item>
              ))}
            </List>
          </Stack>
        )}
        {review.missingDocumentation.length > 0 && (
          <Stack gap="xs">
            <Title order={sub} size="h6">
              Missing documentation
            </Title>
            <List size="sm" spacing={4}>
              {review.missingDocumentation.map((m) => (
                <List.Item key={m.requirementId}>
                  <Text span size="sm" fw={600}>
                    {m.requirementId}
                  </Text>
                  {': '}
                  {m.items.join('; ')}
                </List.Item>
              ))}
            </List>
          </Stack>
        )}
      </Stack>
    </Paper>
  );
}
