// CMMC → Attestations: the office and process items of each of the 15 requirements, answered yes,
// no or not applicable (with a note), with who answered when and evidence files attached. Owners
// and admins answer; members read. Answers are edited in place and saved a section at a time
// ("Save section") or all at once ("Save all"): one request, stored together or not at all, with
// the reason shown on each item the server refused.
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
  answerItemErrors,
  answerItems,
  attestationsQuery,
  deleteCmmcEvidence,
  evidenceUrl,
  programKeys,
  uploadCmmcEvidence,
  type AttestationItemDto,
  type AttestationsDto,
} from '../../lib/cmmc-api.ts';
import { notifySuccess } from '../../lib/errors.ts';
import { formatDateTime } from '../../lib/format.ts';

type Answer = 'yes' | 'no' | 'not_applicable';
const ANSWER_LABEL: Record<Answer, string> = { yes: 'Yes', no: 'No', not_applicable: 'Not applicable' };
const ANSWER_COLOR: Record<Answer, string> = { yes: 'green', no: 'red', not_applicable: 'gray' };

/** An unsaved edit of one item. */
interface Edit {
  answer: Answer | '';
  note: string;
}
type Edits = Record<string, Edit>;

const valueOf = (item: AttestationItemDto, edits: Edits): Edit =>
  edits[item.id] ?? { answer: item.answer ?? '', note: item.note ?? '' };
/** Changed from what is stored, and complete enough to send (an answer picked). */
const isDirty = (item: AttestationItemDto, edits: Edits) => {
  const e = edits[item.id];
  return !!e && e.answer !== '' && (e.answer !== item.answer || (e.note.trim() || null) !== (item.note ?? null));
};

function ItemEditor({
  tenantId,
  item,
  canManage,
  value,
  onChange,
  error,
}: {
  tenantId: string;
  item: AttestationItemDto;
  canManage: boolean;
  value: Edit;
  onChange: (e: Edit) => void;
  error: string | undefined;
}) {
  const qc = useQueryClient();
  const invalidate = () => {
    void qc.invalidateQueries({ queryKey: programKeys.attestations(tenantId) });
    void qc.invalidateQueries({ queryKey: programKeys.score(tenantId) });
  };
  const upload = useMutation({
    mutationFn: (f: File) => uploadCmmcEvidence(tenantId, item.id, f),
    onSuccess: invalidate,
  });
  const remove = useMutation({ mutationFn: (id: string) => deleteCmmcEvidence(tenantId, id), onSuccess: invalidate });
  const needsNote = value.answer === 'not_applicable' && !value.note.trim();
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
              value={value.answer}
              onChange={(v) => onChange({ ...value, answer: v as Answer })}
              data={(['yes', 'no', 'not_applicable'] as const).map((a) => ({ value: a, label: ANSWER_LABEL[a] }))}
              size="xs"
              style={{ alignSelf: 'flex-start' }}
            />
            <Textarea
              label="Note"
              description={
                value.answer === 'not_applicable'
                  ? 'Required: say why this does not apply.'
                  : 'Optional: where the evidence is, who does it.'
              }
              value={value.note}
              onChange={(e) => onChange({ ...value, note: e.currentTarget.value })}
              autosize
              minRows={1}
              maxLength={4000}
              error={error ?? (needsNote ? 'A note is required for not applicable.' : undefined)}
            />
            <Group gap="xs">
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
        <ErrorAlert error={upload.error ?? remove.error} title="That did not work" />
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
  const qc = useQueryClient();
  const q = useQuery(attestationsQuery(tenantId));
  const [edits, setEdits] = useState<Edits>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  /** Which save is running: a requirement id, or 'all'. */
  const [saving, setSaving] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: async ({ items }: { scope: string; items: AttestationItemDto[] }) => {
      const sent = items.map((i) => {
        const v = valueOf(i, edits);
        return { itemId: i.id, answer: v.answer as Answer, note: v.note.trim() || null };
      });
      try {
        return await answerItems(tenantId, sent);
      } catch (err) {
        setErrors(answerItemErrors(err, sent));
        throw err;
      }
    },
    onMutate: ({ scope }) => setSaving(scope),
    onSettled: () => setSaving(null),
    onSuccess: async (r, { items }) => {
      setErrors({});
      await qc.invalidateQueries({ queryKey: programKeys.attestations(tenantId) });
      void qc.invalidateQueries({ queryKey: programKeys.score(tenantId) });
      setEdits((prev) => {
        const next = { ...prev };
        for (const i of items) delete next[i.id];
        return next;
      });
      notifySuccess(r.saved === 1 ? '1 answer saved.' : `${r.saved} answers saved.`);
    },
  });
  if (q.isPending) return <LoadingState label="Loading the attestation items…" />;
  if (q.isError)
    return <ErrorState error={q.error} title="Could not load the attestations" onRetry={() => void q.refetch()} />;
  const { requirements, canManage } = q.data;
  const dirtyOf = (items: AttestationsDto['requirements'][number]['items']) => items.filter((i) => isDirty(i, edits));
  const allDirty = requirements.flatMap((r) => dirtyOf(r.items));
  const change = (id: string, e: Edit) => {
    setEdits((prev) => ({ ...prev, [id]: e }));
    setErrors((prev) => {
      if (!(id in prev)) return prev;
      const next = { ...prev };
      delete next[id];
      return next;
    });
  };
  const saveAll = canManage && (
    <Group gap="sm">
      <Button
        onClick={() => save.mutate({ scope: 'all', items: allDirty })}
        disabled={allDirty.length === 0 || saving !== null}
        loading={saving === 'all'}
      >
        Save all
      </Button>
      <Text size="sm" c="dimmed" data-testid="attestations-unsaved">
        {allDirty.length === 0
          ? 'No unsaved answers.'
          : `${allDirty.length} unsaved answer${allDirty.length === 1 ? '' : 's'}.`}
      </Text>
    </Group>
  );
  return (
    <Stack gap="md">
      <Text size="sm">
        Answer each office and process item honestly. &ldquo;No&rdquo; or an unanswered item keeps its requirement NOT
        MET. &ldquo;Not applicable&rdquo; needs a note and counts as met. Attach files (roster, visitor log,
        screenshots) as evidence. Save a section when you finish it, or save all at the end: nothing is stored until
        every answer sent is valid.
      </Text>
      {saveAll}
      <ErrorAlert
        error={save.error}
        title={
          Object.keys(errors).length > 0
            ? 'Nothing was saved: correct the items marked below'
            : 'Could not save the answers'
        }
      />
      <Accordion variant="separated" multiple>
        {requirements.map((r) => {
          const answered = r.items.filter((i) => i.answer).length;
          const open = r.items.some((i) => i.answer === 'no');
          const dirty = dirtyOf(r.items);
          const refused = r.items.filter((i) => errors[i.id]).length;
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
                  {dirty.length > 0 && (
                    <Badge variant="light" color="yellow">
                      {dirty.length} unsaved
                    </Badge>
                  )}
                  {refused > 0 && (
                    <Badge variant="light" color="red">
                      {refused} to correct
                    </Badge>
                  )}
                </Group>
              </Accordion.Control>
              <Accordion.Panel>
                <Stack gap="sm">
                  <Text size="xs" c="dimmed">
                    {r.statement}
                  </Text>
                  {r.items.map((i) => (
                    <ItemEditor
                      key={i.id}
                      tenantId={tenantId}
                      item={i}
                      canManage={canManage}
                      value={valueOf(i, edits)}
                      onChange={(e) => change(i.id, e)}
                      error={errors[i.id]}
                    />
                  ))}
                  {canManage && (
                    <Group>
                      <Button
                        size="xs"
                        onClick={() => save.mutate({ scope: r.id, items: dirty })}
                        disabled={dirty.length === 0 || saving !== null}
                        loading={saving === r.id}
                        aria-label={`Save section ${r.id}`}
                      >
                        Save section
                      </Button>
                    </Group>
                  )}
                </Stack>
              </Accordion.Panel>
            </Accordion.Item>
          );
        })}
      </Accordion>
    </Stack>
  );
}
