// CMMC → Policies: the Level 1 policy set generated from Scope, read in the app or as PDF, and
// approved by the Affirming Official (recorded as the approver) in one confirmation that lists
// every draft, with an effective date and a review-by date. Only an approved version in force and
// not past its review date counts for the score; drafts never do. Recording a review sets the
// next review date.
import {
  Badge,
  Button,
  Checkbox,
  Group,
  Modal,
  Paper,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
  Typography,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Fragment, useState } from 'react';
import { ErrorAlert, ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import {
  approvePolicies,
  generatePolicies,
  setPolicyReviewDate,
  policiesQuery,
  policyPdfUrl,
  policyQuery,
  programKeys,
  type PoliciesDto,
} from '../../lib/cmmc-api.ts';
import { notifySuccess } from '../../lib/errors.ts';
import { formatDate } from '../../lib/format.ts';

type Doc = NonNullable<PoliciesDto['documents'][number]['latest']>;
const todayIso = () => new Date().toISOString().slice(0, 10);
/** One calendar year after a YYYY-MM-DD day (the server's default review date). */
function oneYearAfter(day: string): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCFullYear(d.getUTCFullYear() + 1);
  return d.toISOString().slice(0, 10);
}

/** The generated Markdown subset (headings, paragraphs, "- " lists) as React elements; no HTML is injected. */
function PolicyText({ body }: { body: string }) {
  const blocks: React.ReactNode[] = [];
  let list: string[] = [];
  const flush = () => {
    if (list.length)
      blocks.push(
        <ul key={`l${blocks.length}`}>
          {list.map((l, i) => (
            <li key={i}>{l}</li>
          ))}
        </ul>,
      );
    list = [];
  };
  for (const line of body.split('\n')) {
    if (line.startsWith('- ')) {
      list.push(line.slice(2));
      continue;
    }
    flush();
    if (line.startsWith('# ')) blocks.push(<h2 key={blocks.length}>{line.slice(2)}</h2>);
    else if (line.startsWith('## ')) blocks.push(<h3 key={blocks.length}>{line.slice(3)}</h3>);
    else if (line.trim()) blocks.push(<p key={blocks.length}>{line}</p>);
  }
  flush();
  return (
    <Typography>
      <Fragment>{blocks}</Fragment>
    </Typography>
  );
}

function ReadModal({ tenantId, id, onClose }: { tenantId: string; id: string; onClose: () => void }) {
  const q = useQuery(policyQuery(tenantId, id));
  return (
    <Modal
      opened
      onClose={onClose}
      size="xl"
      title={q.data ? `${q.data.title} (version ${q.data.version}, ${q.data.status})` : 'Policy'}
    >
      {q.isPending ? <LoadingState /> : q.isError ? <ErrorState error={q.error} /> : <PolicyText body={q.data.body} />}
    </Modal>
  );
}

/** The one confirmation for approving drafts: every draft listed (all ticked), one effective and review date. */
function ApproveDialog({
  tenantId,
  drafts,
  onClose,
  onDone,
}: {
  tenantId: string;
  drafts: Doc[];
  onClose: () => void;
  onDone: () => void;
}) {
  const [chosen, setChosen] = useState<string[]>(drafts.map((d) => d.id));
  const [date, setDate] = useState(todayIso());
  const [review, setReview] = useState(oneYearAfter(todayIso()));
  const [official, setOfficial] = useState(false);
  const approve = useMutation({
    mutationFn: () => approvePolicies(tenantId, chosen, date, review),
    onSuccess: (r) => {
      notifySuccess(r.documents.length === 1 ? '1 policy approved.' : `${r.documents.length} policies approved.`);
      onDone();
      onClose();
    },
  });
  const n = chosen.length;
  return (
    <Modal opened onClose={onClose} size="lg" title="Approve policies">
      <Stack gap="sm">
        <Text size="sm">
          You approve these drafts as the Affirming Official. Each counts for the score from its effective date until
          its review date; Rampart reminds you by e-mail 30 days before the review date and on the day.
        </Text>
        <Checkbox.Group value={chosen} onChange={setChosen} label="Drafts to approve">
          <Stack gap={4} mt={4} data-testid="approve-list">
            {drafts.map((d) => (
              <Checkbox key={d.id} value={d.id} label={`${d.title} (version ${d.version})`} />
            ))}
          </Stack>
        </Checkbox.Group>
        <Group gap="sm" align="flex-end">
          <TextInput type="date" label="Effective date" value={date} onChange={(e) => setDate(e.currentTarget.value)} />
          <TextInput
            type="date"
            label="Review by"
            description="Default: one year from today"
            value={review}
            onChange={(e) => setReview(e.currentTarget.value)}
          />
        </Group>
        <Checkbox
          checked={official}
          onChange={(e) => setOfficial(e.currentTarget.checked)}
          label="I approve as the Affirming Official"
        />
        <ErrorAlert error={approve.error} title="Nothing was approved" />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button
            onClick={() => approve.mutate()}
            loading={approve.isPending}
            disabled={n === 0 || !date || !review || !official}
          >
            {n === 1 ? 'Approve 1 policy' : `Approve ${n} policies`}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** Records a review of the version in force: a new review-by date. */
function ReviewDialog({
  tenantId,
  title,
  doc,
  onClose,
  onDone,
}: {
  tenantId: string;
  title: string;
  doc: Doc;
  onClose: () => void;
  onDone: () => void;
}) {
  const [review, setReview] = useState(oneYearAfter(todayIso()));
  const save = useMutation({
    mutationFn: () => setPolicyReviewDate(tenantId, doc.id, review),
    onSuccess: () => {
      notifySuccess(`${title}: next review by ${review}.`);
      onDone();
      onClose();
    },
  });
  return (
    <Modal opened onClose={onClose} title={`Record a review: ${title}`}>
      <Stack gap="sm">
        <Text size="sm">
          You read version {doc.version} and it still matches how the company works (otherwise regenerate and approve a
          new version). Set when it is next due for review.
        </Text>
        <TextInput
          type="date"
          label="Next review by"
          value={review}
          onChange={(e) => setReview(e.currentTarget.value)}
        />
        <ErrorAlert error={save.error} title="Could not record the review" />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button onClick={() => save.mutate()} loading={save.isPending} disabled={!review}>
            Record review
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** The review-by date of the version in force, red once it has passed. */
function ReviewCell({ doc }: { doc: Doc }) {
  if (doc.reviewOverdueSince)
    return (
      <Badge color="red" variant="light">
        Review overdue since {doc.reviewOverdueSince}
      </Badge>
    );
  return <Text size="sm">{doc.nextReviewDate ? `Review by ${doc.nextReviewDate}` : '—'}</Text>;
}

export function PoliciesTab({ tenantId }: { tenantId: string }) {
  const qc = useQueryClient();
  const q = useQuery(policiesQuery(tenantId));
  const [reading, setReading] = useState<string | null>(null);
  const [approving, setApproving] = useState(false);
  const [reviewing, setReviewing] = useState<{ title: string; doc: Doc } | null>(null);
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: programKeys.policies(tenantId) });
    void qc.invalidateQueries({ queryKey: programKeys.score(tenantId) });
  };
  const generate = useMutation({
    mutationFn: () => generatePolicies(tenantId),
    onSuccess: (r) => {
      notifySuccess(`${r.generated} policy drafts generated from your Scope answers.`);
      refresh();
    },
  });
  if (q.isPending) return <LoadingState label="Loading the policies…" />;
  if (q.isError)
    return <ErrorState error={q.error} title="Could not load the policies" onRetry={() => void q.refetch()} />;
  const { documents, canManage, canApprove, affirmingOfficial } = q.data;
  const any = documents.some((d) => d.latest);
  const drafts = documents.flatMap((d) => (d.latest?.status === 'draft' ? [d.latest] : []));
  const overdue = documents.filter((d) => d.inForce?.reviewOverdueSince).length;

  return (
    <Stack gap="md">
      <Paper withBorder p="lg" radius="md">
        <Stack gap="sm">
          <Title order={2} size="h3">
            Level 1 policy set
          </Title>
          <Text size="sm">
            Rampart writes the policies from your Scope answers (company, CAGE codes, people, mail platform, Affirming
            Official). Read them, change your practice where they do not match, then approve them with their effective
            date and review date. Drafts do not count as evidence; each domain&apos;s approved policy is needed for its
            requirements to be MET, until its review date passes.
          </Text>
          {canManage && (
            <Group>
              <Button
                onClick={() => generate.mutate()}
                loading={generate.isPending}
                variant={any ? 'default' : 'filled'}
              >
                {any ? 'Regenerate drafts from Scope' : 'Generate policies'}
              </Button>
            </Group>
          )}
          {canApprove && drafts.length > 0 && (
            <Group>
              <Button onClick={() => setApproving(true)}>
                {drafts.length === 1 ? 'Approve the draft…' : `Approve ${drafts.length} drafts…`}
              </Button>
            </Group>
          )}
          <ErrorAlert error={generate.error} title="Could not generate the policies" />
          {overdue > 0 && (
            <Text size="sm" c="red" data-testid="policies-overdue">
              {overdue === 1 ? '1 policy is' : `${overdue} policies are`} past the review date and no longer count for
              the score. Read it, then record the review with a new date (or approve a new version).
            </Text>
          )}
          <Text size="sm" data-testid="policy-approver">
            {canApprove
              ? `You are the Affirming Official (${affirmingOfficial.name}): you approve the drafts.`
              : `Only the Affirming Official, ${affirmingOfficial.name} (${affirmingOfficial.email}), approves policies${canManage ? ' (an owner or admin of this tenant, signed in with that e-mail)' : ''}. You cannot approve them with this account${affirmingOfficial.isCaller ? ': the Affirming Official needs the owner or admin role' : ''}; change the Affirming Official in Scope if it is someone else now.`}
          </Text>
        </Stack>
      </Paper>
      <Table withTableBorder striped verticalSpacing="sm">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Document</Table.Th>
            <Table.Th>Newest version</Table.Th>
            <Table.Th>In force</Table.Th>
            <Table.Th>Review</Table.Th>
            <Table.Th>Actions</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {documents.map((d) => (
            <Table.Tr key={d.kind} data-testid={`policy-${d.kind}`}>
              <Table.Td>
                <Text size="sm" fw={500}>
                  {d.title}
                </Text>
              </Table.Td>
              <Table.Td>
                {d.latest ? (
                  <Group gap={6}>
                    <Text size="sm">v{d.latest.version}</Text>
                    <Badge color={d.latest.status === 'approved' ? 'green' : 'yellow'} variant="light">
                      {d.latest.status === 'approved' ? 'Approved' : 'Draft'}
                    </Badge>
                  </Group>
                ) : (
                  <Text size="sm" c="dimmed">
                    Not generated
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                {d.inForce ? (
                  <Text size="sm">
                    v{d.inForce.version} since {formatDate(d.inForce.effectiveDate)}, approved by{' '}
                    {d.inForce.approvedByEmail}
                  </Text>
                ) : d.latest?.status === 'approved' ? (
                  <Text size="sm">Effective {formatDate(d.latest.effectiveDate)}</Text>
                ) : (
                  <Text size="sm" c="dimmed">
                    None
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                {d.inForce ? (
                  <Stack gap={4} align="flex-start">
                    <ReviewCell doc={d.inForce} />
                    {canApprove && (
                      <Button
                        size="compact-xs"
                        variant="default"
                        onClick={() => setReviewing({ title: d.title, doc: d.inForce! })}
                        aria-label={`Record a review of ${d.title}`}
                      >
                        Record review
                      </Button>
                    )}
                  </Stack>
                ) : (
                  <Text size="sm" c="dimmed">
                    —
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                {d.latest && (
                  <Stack gap={6}>
                    <Group gap="xs">
                      <Button
                        size="xs"
                        variant="default"
                        onClick={() => setReading(d.latest!.id)}
                        aria-label={`Read ${d.title}`}
                      >
                        Read
                      </Button>
                      <Button
                        size="xs"
                        variant="default"
                        component="a"
                        href={policyPdfUrl(tenantId, d.latest.id)}
                        aria-label={`Download ${d.title} as PDF`}
                      >
                        PDF
                      </Button>
                    </Group>
                  </Stack>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {reading && <ReadModal tenantId={tenantId} id={reading} onClose={() => setReading(null)} />}
      {approving && (
        <ApproveDialog tenantId={tenantId} drafts={drafts} onClose={() => setApproving(false)} onDone={refresh} />
      )}
      {reviewing && (
        <ReviewDialog
          tenantId={tenantId}
          title={reviewing.title}
          doc={reviewing.doc}
          onClose={() => setReviewing(null)}
          onDone={refresh}
        />
      )}
    </Stack>
  );
}
