// Staff → Ask operations (/settings/mesh-ask, staff): a question about the mesh over 24 h, 7 d or
// 30 d. The server gathers numbered evidence from the mesh records (shown as it arrives), then
// the answer streams in the sections Answer, Relevant findings, Trends, Suggested next steps and
// Caveats, citing evidence as [E<n>]; the citations are checked once the answer is complete.
// Without a language model, or when the model fails before its first word, the offline summary
// answers, labelled, with the friendly reason (busy with the wait, credits exhausted, timeout) and,
// unless the credits are exhausted, "Try again". Past answers (everyone's) are listed below and
// open with their evidence.
import { Alert, Badge, Button, Group, Modal, SegmentedControl, Stack, Table, Text, Textarea } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { DataTable } from '../../components/DataTable.tsx';
import { MarkdownText } from '../../components/MarkdownText.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { ForbiddenPage } from '../../components/StatusPages.tsx';
import { StreamedAnswer, useStreamedAnswer } from '../../components/StreamedAnswer.tsx';
import { formatDateTime } from '../../lib/format.ts';
import { useMe } from '../../lib/me.ts';
import { LlmConfiguredBadge } from '../llm/LanguageModelStatusPage.tsx';
import {
  askAnswerQuery,
  askAnswersQuery,
  askMeshOperations,
  meshAskKeys,
  type AskDone,
  type AskMeta,
  type EvidenceItem,
} from '../../lib/mesh-ask-api.ts';
import type { HealthWindow } from '../../lib/mesh-health-api.ts';

const QUESTION_MAX = 4_000;
/** Short labels: the control sits inside a card and must fit a phone's width. */
const WINDOW_OPTIONS: { value: HealthWindow; label: string }[] = [
  { value: '24h', label: '24 hours' },
  { value: '7d', label: '7 days' },
  { value: '30d', label: '30 days' },
];
const WINDOW_LABEL: Record<number, string> = { 1: '24 hours', 7: '7 days', 30: '30 days' };
const KIND_LABEL: Record<EvidenceItem['kind'], string> = {
  overview: 'Overview',
  peer_outbound: 'Outbound',
  peer_failures: 'Failures',
  peer_trend: 'Trend',
  inbound: 'Inbound',
  received: 'Reported events',
  outbox: 'Outbox',
};

export function MeshAskPage() {
  const me = useMe();
  if (!me.staff) return <ForbiddenPage />;
  return <MeshAsk />;
}

function MeshAsk() {
  const queryClient = useQueryClient();
  const [question, setQuestion] = useState('');
  const [window, setWindow] = useState<HealthWindow>('7d');
  const [touched, setTouched] = useState(false);
  const [meta, setMeta] = useState<AskMeta | null>(null);
  const [done, setDone] = useState<AskDone | null>(null);
  const [viewing, setViewing] = useState<string | null>(null);
  const answers = useQuery(askAnswersQuery);
  const answer = useStreamedAnswer({
    onDone: () => void queryClient.invalidateQueries({ queryKey: meshAskKeys.answers }),
  });
  const running = answer.status === 'waiting' || answer.status === 'streaming';
  const trimmed = question.trim();
  const problem = !trimmed
    ? 'Ask a question.'
    : trimmed.length > QUESTION_MAX
      ? `At most ${QUESTION_MAX} characters.`
      : null;

  const run = () => {
    if (problem) return;
    const input = { question: trimmed, window };
    setMeta(null);
    setDone(null);
    answer.start((handlers, signal) =>
      askMeshOperations(input, { ...handlers, onEvidence: setMeta, onDone: setDone }, signal),
    );
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    run();
  };

  return (
    <>
      <PageHeader
        title="Ask operations"
        titleContext="Staff"
        description="Ask about the service mesh in plain words. The answer is drawn only from numbered evidence taken from the mesh records of the window, and cites it as [E1], [E2], …; the citations are checked. Every answer is kept below for all staff to read."
      />
      <Stack gap="lg">
        <SectionCard headingId="ask-form" title="Ask a question" aside={<LlmConfiguredBadge />}>
          <form onSubmit={submit} noValidate aria-labelledby="ask-form">
            <Stack gap="md" maw={720}>
              <Textarea
                label="Question"
                placeholder="Which peers failed this week, and why?"
                value={question}
                onChange={(e) => setQuestion(e.currentTarget.value)}
                autosize
                minRows={3}
                maxRows={10}
                required
                disabled={running}
                error={touched && problem}
                description={`${trimmed.length} / ${QUESTION_MAX} characters`}
              />
              <div>
                <Text size="sm" fw={500} mb={4} id="ask-window-label">
                  Window (ending now)
                </Text>
                <SegmentedControl
                  aria-labelledby="ask-window-label"
                  value={window}
                  onChange={(v) => setWindow(v as HealthWindow)}
                  data={WINDOW_OPTIONS}
                  disabled={running}
                  style={{ maxWidth: '100%' }}
                />
              </div>
              <Group>
                <Button type="submit" loading={answer.status === 'waiting'} disabled={running}>
                  Ask
                </Button>
              </Group>
            </Stack>
          </form>
        </SectionCard>

        <StreamedAnswer answer={answer} title="Answer" headingLevel={2} onRetry={problem ? undefined : run} />
        {done && <CitationCheckNote done={done} />}
        {meta && (
          <EvidenceCard
            headingId="ask-evidence"
            rowIds
            evidence={meta.evidence}
            title={`Evidence (${meta.evidence.length} items, ${formatDateTime(meta.from)} to ${formatDateTime(meta.to)})`}
          />
        )}

        <SectionCard
          headingId="ask-history"
          title="Past answers"
          description="Newest first; the question, the evidence and the answer as they were."
        >
          {answers.isPending ? (
            <LoadingState label="Loading past answers…" />
          ) : answers.isError ? (
            <ErrorState
              error={answers.error}
              title="Could not load past answers"
              onRetry={() => void answers.refetch()}
            />
          ) : (
            <DataTable
              label="Past answers"
              minWidth={760}
              columns={[
                'Question',
                'Window',
                'Written by',
                'Asked by',
                'When',
                { label: 'Actions', visuallyHidden: true },
              ]}
              empty={answers.data.length === 0 && 'No answers yet.'}
            >
              {answers.data.map((a) => (
                <Table.Tr key={a.id}>
                  <Table.Td maw={360}>
                    <Text size="sm" lineClamp={2} style={{ overflowWrap: 'anywhere' }}>
                      {a.question}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{WINDOW_LABEL[a.windowDays] ?? `${a.windowDays} days`}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{a.model ? `Model: ${a.model}` : 'Offline summary'}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{a.createdByEmail ?? '—'}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{formatDateTime(a.createdAt)}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Button
                      size="xs"
                      variant="default"
                      onClick={() => setViewing(a.id)}
                      aria-label={`View the answer to: ${a.question.slice(0, 80)}`}
                    >
                      View
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </DataTable>
          )}
        </SectionCard>
      </Stack>
      {viewing && <AnswerModal id={viewing} onClose={() => setViewing(null)} />}
    </>
  );
}

function CitationCheckNote({ done }: { done: AskDone }) {
  const { check } = done;
  // The model's answer was streamed and then not used (a model that failed before its first word
  // wrote nothing to check: the answer card says why the offline summary answers).
  if (done.fallbackReason !== null && done.fallbackError === null)
    return (
      <Alert color="yellow" variant="light" title="Citation check" data-testid="citation-check">
        <Text size="sm">
          {check.unknown.length > 0
            ? `The model's answer cites evidence that does not exist: ${check.unknown.join(', ')}. `
            : `${done.fallbackReason} `}
          It was not used: the offline summary above answers instead, and is what was stored.
        </Text>
      </Alert>
    );
  if (!check.missingSections.length)
    return (
      <Text size="sm" c="dimmed" data-testid="citation-check">
        Citations checked:{' '}
        {check.cited.length ? `${check.cited.join(', ')} cited, all in the evidence.` : 'the answer cites no evidence.'}
      </Text>
    );
  return (
    <Alert color="yellow" variant="light" title="Citation check" data-testid="citation-check">
      <Text size="sm">
        Citations checked:{' '}
        {check.cited.length ? `${check.cited.join(', ')} cited, all in the evidence.` : 'the answer cites no evidence.'}
      </Text>
      <Text size="sm">The answer lacks: {check.missingSections.join(', ')}.</Text>
    </Alert>
  );
}

function EvidenceCard({
  evidence,
  title,
  headingId,
  rowIds,
}: {
  evidence: EvidenceItem[];
  title: string;
  headingId: string;
  rowIds?: boolean;
}) {
  return (
    <SectionCard
      headingId={headingId}
      title={title}
      description="Gathered from the mesh records in a fixed order; the same records give the same numbers."
    >
      <DataTable label="Evidence" minWidth={640} columns={['No.', 'Kind', 'About', 'Fact']}>
        {evidence.map((e) => (
          <Table.Tr key={e.n} id={rowIds ? `evidence-E${e.n}` : undefined}>
            <Table.Td>
              <Text size="sm" fw={600}>
                E{e.n}
              </Text>
            </Table.Td>
            <Table.Td>
              <Badge variant="light" color="gray">
                {KIND_LABEL[e.kind]}
              </Badge>
            </Table.Td>
            <Table.Td>
              <Text size="sm">{e.subject ?? 'All peers'}</Text>
            </Table.Td>
            <Table.Td>
              <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
                {e.text}
              </Text>
            </Table.Td>
          </Table.Tr>
        ))}
      </DataTable>
    </SectionCard>
  );
}

function AnswerModal({ id, onClose }: { id: string; onClose: () => void }) {
  const q = useQuery(askAnswerQuery(id));
  return (
    <Modal opened onClose={onClose} size="xl" title="Stored answer">
      {q.isPending ? (
        <LoadingState />
      ) : q.isError ? (
        <ErrorState error={q.error} title="Could not load the answer" />
      ) : (
        <Stack gap="sm">
          <Text size="sm" fw={600} style={{ overflowWrap: 'anywhere' }}>
            {q.data.question}
          </Text>
          <Text size="xs" c="dimmed">
            {/* The summary's first line says why it answered (no model, a failure, a rejected answer). */}
            {q.data.model ? `Model: ${q.data.model}` : 'Offline summary'} · last{' '}
            {WINDOW_LABEL[q.data.windowDays] ?? `${q.data.windowDays} days`} · {formatDateTime(q.data.createdAt)} ·{' '}
            {(q.data.durationMs / 1000).toFixed(1)} s
            {q.data.createdByEmail ? ` · asked by ${q.data.createdByEmail}` : ''}
          </Text>
          <MarkdownText text={q.data.markdown} testId="saved-answer" />
          <EvidenceCard
            headingId="ask-stored-evidence"
            evidence={q.data.evidence}
            title={`Evidence (${q.data.evidence.length} items)`}
          />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Close
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
