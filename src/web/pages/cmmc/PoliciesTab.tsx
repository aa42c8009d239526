// CMMC → Policies: the Level 1 policy set generated from Scope, read in the app or as PDF, and
// approved (by an owner or admin, recorded as the approver) with an effective date. Only an
// approved version in force counts for the score; drafts never do.
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
  approvePolicy,
  generatePolicies,
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

function ApproveRow({ tenantId, doc, onDone }: { tenantId: string; doc: Doc; onDone: () => void }) {
  const [date, setDate] = useState(todayIso());
  const [official, setOfficial] = useState(false);
  const approve = useMutation({
    mutationFn: () => approvePolicy(tenantId, doc.id, date),
    onSuccess: () => {
      notifySuccess(`${doc.title} approved.`);
      onDone();
    },
  });
  return (
    <Stack gap={4}>
      <Group gap="xs" align="flex-end" wrap="nowrap">
        <TextInput
          type="date"
          size="xs"
          label="Effective date"
          value={date}
          onChange={(e) => setDate(e.currentTarget.value)}
          aria-label={`Effective date of ${doc.title}`}
        />
        <Button
          size="xs"
          onClick={() => approve.mutate()}
          loading={approve.isPending}
          disabled={!date || !official}
          aria-label={`Approve ${doc.title}`}
        >
          Approve
        </Button>
      </Group>
      <Checkbox
        size="xs"
        checked={official}
        onChange={(e) => setOfficial(e.currentTarget.checked)}
        label="I approve as the Affirming Official"
        aria-label={`I approve as the Affirming Official: ${doc.title}`}
      />
      <ErrorAlert error={approve.error} title="Could not approve" />
    </Stack>
  );
}

export function PoliciesTab({ tenantId }: { tenantId: string }) {
  const qc = useQueryClient();
  const q = useQuery(policiesQuery(tenantId));
  const [reading, setReading] = useState<string | null>(null);
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

  return (
    <Stack gap="md">
      <Paper withBorder p="lg" radius="md">
        <Stack gap="sm">
          <Title order={3}>Level 1 policy set</Title>
          <Text size="sm">
            Rampart writes the policies from your Scope answers (company, CAGE codes, people, mail platform, Affirming
            Official). Read them, change your practice where they do not match, then approve each with its effective
            date. Drafts do not count as evidence; each domain&apos;s approved policy is needed for its requirements to
            be MET.
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
          <ErrorAlert error={generate.error} title="Could not generate the policies" />
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
                    {canApprove && d.latest.status === 'draft' && (
                      <ApproveRow tenantId={tenantId} doc={d.latest} onDone={refresh} />
                    )}
                  </Stack>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {reading && <ReadModal tenantId={tenantId} id={reading} onClose={() => setReading(null)} />}
    </Stack>
  );
}
