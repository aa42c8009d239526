// CMMC → Attestations: the office and process items of each of the 15 requirements, answered yes,
// no or not applicable (with a note), with who answered when and evidence files attached. Owners
// and admins answer; members read.
import {
  Accordion,
  Anchor,
  Badge,
  Button,
  FileButton,
  Group,
  Paper,
  SegmentedControl,
  Stack,
  Text,
  Textarea,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ErrorAlert, ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import {
  answerItem,
  attestationsQuery,
  deleteCmmcEvidence,
  evidenceUrl,
  programKeys,
  uploadCmmcEvidence,
  type AttestationItemDto,
} from '../../lib/cmmc-api.ts';
import { notifySuccess } from '../../lib/errors.ts';
import { formatDateTime } from '../../lib/format.ts';

type Answer = 'yes' | 'no' | 'not_applicable';
const ANSWER_LABEL: Record<Answer, string> = { yes: 'Yes', no: 'No', not_applicable: 'Not applicable' };
const ANSWER_COLOR: Record<Answer, string> = { yes: 'green', no: 'red', not_applicable: 'gray' };

function ItemEditor({ tenantId, item, canManage }: { tenantId: string; item: AttestationItemDto; canManage: boolean }) {
  const qc = useQueryClient();
  const [answer, setAnswer] = useState<Answer | ''>(item.answer ?? '');
  const [note, setNote] = useState(item.note ?? '');
  const invalidate = () => {
    void qc.invalidateQueries({ queryKey: programKeys.attestations(tenantId) });
    void qc.invalidateQueries({ queryKey: programKeys.score(tenantId) });
  };
  const save = useMutation({
    mutationFn: () => answerItem(tenantId, item.id, { answer: answer as Answer, note: note.trim() || null }),
    onSuccess: () => {
      invalidate();
      notifySuccess('Answer saved.');
    },
  });
  const upload = useMutation({
    mutationFn: (f: File) => uploadCmmcEvidence(tenantId, item.id, f),
    onSuccess: invalidate,
  });
  const remove = useMutation({ mutationFn: (id: string) => deleteCmmcEvidence(tenantId, id), onSuccess: invalidate });
  const needsNote = answer === 'not_applicable' && !note.trim();
  const dirty = answer !== (item.answer ?? '') || (note.trim() || null) !== (item.note ?? null);
  const labelId = `item-${item.id}`;

  return (
    <Paper withBorder p="md" radius="sm" data-testid={`item-${item.id}`}>
      <Stack gap="xs">
        <Group justify="space-between" align="flex-start" wrap="nowrap">
          <Text size="sm" id={labelId}>
            {item.text}
          </Text>
          {item.answer && (
            <Badge color={ANSWER_COLOR[item.answer]} variant="light">
              {ANSWER_LABEL[item.answer]}
            </Badge>
          )}
        </Group>
        {item.answeredAt && (
          <Text size="xs" c="dimmed">
            Answered by {item.answeredByEmail ?? 'a former member'} on {formatDateTime(item.answeredAt)}
          </Text>
        )}
        {canManage && (
          <>
            <SegmentedControl
              aria-labelledby={labelId}
              value={answer}
              onChange={(v) => setAnswer(v as Answer)}
              data={(['yes', 'no', 'not_applicable'] as const).map((a) => ({ value: a, label: ANSWER_LABEL[a] }))}
              size="xs"
              style={{ alignSelf: 'flex-start' }}
            />
            <Textarea
              label="Note"
              description={
                answer === 'not_applicable'
                  ? 'Required: say why this does not apply.'
                  : 'Optional: where the evidence is, who does it.'
              }
              value={note}
              onChange={(e) => setNote(e.currentTarget.value)}
              autosize
              minRows={1}
              maxLength={4000}
              error={needsNote ? 'A note is required for not applicable.' : undefined}
            />
            <Group gap="xs">
              <Button
                size="xs"
                onClick={() => save.mutate()}
                disabled={!answer || needsNote || !dirty}
                loading={save.isPending}
              >
                Save answer
              </Button>
              <FileButton
                onChange={(f) => f && upload.mutate(f)}
                accept=".pdf,.png,.jpg,.jpeg,.gif,.webp,.txt,.md,.csv,.json,.docx,.xlsx,.pptx,.odt,.ods,.doc,.xls"
              >
                {(props) => (
                  <Button {...props} size="xs" variant="default" loading={upload.isPending}>
                    Attach evidence file
                  </Button>
                )}
              </FileButton>
            </Group>
          </>
        )}
        <ErrorAlert error={save.error ?? upload.error ?? remove.error} title="That did not work" />
        {item.evidence.length > 0 && (
          <Stack gap={2}>
            {item.evidence.map((e) => (
              <Group key={e.id} gap="xs">
                <Anchor href={evidenceUrl(tenantId, e.id)} size="sm">
                  {e.fileName}
                </Anchor>
                <Text size="xs" c="dimmed">
                  {formatDateTime(e.createdAt)} · {e.uploadedByEmail ?? ''}
                </Text>
                {canManage && (
                  <Button
                    size="compact-xs"
                    variant="subtle"
                    color="red"
                    onClick={() => remove.mutate(e.id)}
                    aria-label={`Delete ${e.fileName}`}
                  >
                    Delete
                  </Button>
                )}
              </Group>
            ))}
          </Stack>
        )}
      </Stack>
    </Paper>
  );
}

export function AttestationsTab({ tenantId }: { tenantId: string }) {
  const q = useQuery(attestationsQuery(tenantId));
  if (q.isPending) return <LoadingState label="Loading the attestation items…" />;
  if (q.isError)
    return <ErrorState error={q.error} title="Could not load the attestations" onRetry={() => void q.refetch()} />;
  const { requirements, canManage } = q.data;
  return (
    <Stack gap="md">
      <Text size="sm">
        Answer each office and process item honestly. &ldquo;No&rdquo; or an unanswered item keeps its requirement NOT
        MET. &ldquo;Not applicable&rdquo; needs a note and counts as met. Attach files (roster, visitor log,
        screenshots) as evidence.
      </Text>
      <Accordion variant="separated" multiple>
        {requirements.map((r) => {
          const answered = r.items.filter((i) => i.answer).length;
          const open = r.items.some((i) => i.answer === 'no');
          return (
            <Accordion.Item key={r.id} value={r.id}>
              <Accordion.Control>
                <Group gap="sm">
                  <Text fw={600} size="sm">
                    {r.id} {r.title}
                  </Text>
                  <Badge variant="light" color={answered === r.items.length && !open ? 'green' : 'gray'}>
                    {answered}/{r.items.length} answered
                  </Badge>
                </Group>
              </Accordion.Control>
              <Accordion.Panel>
                <Stack gap="sm">
                  <Text size="xs" c="dimmed">
                    {r.statement}
                  </Text>
                  {r.items.map((i) => (
                    <ItemEditor
                      key={`${i.id}:${i.answeredAt ?? ''}`}
                      tenantId={tenantId}
                      item={i}
                      canManage={canManage}
                    />
                  ))}
                </Stack>
              </Accordion.Panel>
            </Accordion.Item>
          );
        })}
      </Accordion>
    </Stack>
  );
}
