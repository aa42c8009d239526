// Staff → Mailbox (super-admins): the mails an installation without SMTP kept instead of sending,
// newest first, filtered by recipient; one mail shown as its text part with its links clickable.
// An HTML part is shown as source only, never rendered (it is not ours to trust).
import { Alert, Anchor, Button, CopyButton, Group, Stack, Table, Text, TextInput } from '@mantine/core';
import { infiniteQueryOptions, useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { TextLink } from '../../components/links.tsx';
import { api } from '../../lib/api.ts';
import type { MailboxMessage, MailboxPage as Page } from '../../lib/types.ts';
import { formatInstant } from './MeshRecordsList.tsx';
import { SuperAdminGuard } from './StaffGuard.tsx';

export interface MailboxSearch {
  /** The mail shown. */
  mail?: number | undefined;
  /** The recipient filter. */
  to?: string | undefined;
}

const PAGE_SIZE = 50;

const mailboxQuery = (to: string) =>
  infiniteQueryOptions({
    queryKey: ['staff', 'mailbox', to] as const,
    queryFn: ({ pageParam, signal }) =>
      api<Page>('/api/v1/staff/mailbox', {
        query: { to: to || undefined, before: pageParam, limit: PAGE_SIZE },
        signal,
      }),
    initialPageParam: undefined as number | undefined,
    getNextPageParam: (last: Page) => last.nextBefore ?? undefined,
  });

export function MailboxPage({ search }: { search: MailboxSearch }) {
  return (
    <SuperAdminGuard message="Only the installation's super-admins can read the mailbox: its mails hold sign-in, password and invitation links.">
      <Mailbox search={search} />
    </SuperAdminGuard>
  );
}

function Mailbox({ search }: { search: MailboxSearch }) {
  const navigate = useNavigate();
  const to = search.to ?? '';
  const [filter, setFilter] = useState(to);
  const list = useInfiniteQuery(mailboxQuery(to));
  const first = list.data?.pages[0];
  const messages = list.data?.pages.flatMap((p) => p.messages) ?? [];
  const apply = (e: FormEvent) => {
    e.preventDefault();
    void navigate({ to: '/settings/staff/mailbox', search: { to: filter.trim() || undefined } });
  };

  return (
    <>
      <PageHeader
        title="Mailbox"
        titleContext="Staff"
        description={
          first
            ? `Mails this installation kept instead of sending, because it has no SMTP server (SMTP_URL). The newest ${first.keep} of the last ${first.maxAgeDays} days are kept.`
            : 'Mails this installation kept instead of sending, because it has no SMTP server (SMTP_URL).'
        }
      />
      <Stack gap="lg">
        {first?.smtpConfigured && (
          <Alert color="blue" variant="light" role="note" title="This server sends mail">
            SMTP is configured, so new mails go out and are no longer kept here. Mails kept before stay until they age
            out.
          </Alert>
        )}
        <Alert color="yellow" variant="light" role="note" title="The links act for their recipient">
          A verification, password or invitation link works for whoever opens it. Pass it to its recipient, or open it
          in a private window: opening a verification link here signs this browser in as that user.
        </Alert>
        {search.mail !== undefined && <MailView id={search.mail} />}
        <SectionCard headingId="mailbox-list" title="Kept mails">
          <Stack gap="md">
            <form onSubmit={apply} role="search" aria-label="Filter the mailbox">
              <Group align="flex-end" gap="sm">
                <TextInput
                  label="Recipient"
                  description="Part of the address, any case"
                  value={filter}
                  onChange={(e) => setFilter(e.currentTarget.value)}
                  maxLength={320}
                  style={{ flex: '1 1 16rem' }}
                />
                <Button type="submit" variant="default">
                  Filter
                </Button>
              </Group>
            </form>
            {list.isPending ? (
              <LoadingState label="Loading the mailbox…" />
            ) : list.isError ? (
              <ErrorState error={list.error} onRetry={() => void list.refetch()} />
            ) : messages.length === 0 ? (
              <Text c="dimmed">{to ? `No kept mail to an address containing “${to}”.` : 'No mail was kept.'}</Text>
            ) : (
              <>
                <Table.ScrollContainer minWidth={720}>
                  <Table aria-label="Kept mails">
                    <Table.Thead>
                      <Table.Tr>
                        <Table.Th>Kept</Table.Th>
                        <Table.Th>To</Table.Th>
                        <Table.Th>Subject</Table.Th>
                        <Table.Th>Tenant</Table.Th>
                      </Table.Tr>
                    </Table.Thead>
                    <Table.Tbody>
                      {messages.map((m) => (
                        <Table.Tr key={m.id} aria-current={m.id === search.mail ? 'true' : undefined}>
                          <Table.Td className="nowrap">{formatInstant(m.createdAt)}</Table.Td>
                          <Table.Td>{m.to}</Table.Td>
                          <Table.Td>
                            <TextLink to="/settings/staff/mailbox" search={{ mail: m.id, to: search.to }}>
                              {m.subject}
                            </TextLink>
                          </Table.Td>
                          <Table.Td>{m.tenantName ?? '—'}</Table.Td>
                        </Table.Tr>
                      ))}
                    </Table.Tbody>
                  </Table>
                </Table.ScrollContainer>
                {list.hasNextPage && (
                  <Button
                    variant="default"
                    onClick={() => void list.fetchNextPage()}
                    loading={list.isFetchingNextPage}
                    style={{ alignSelf: 'flex-start' }}
                  >
                    Load more
                  </Button>
                )}
              </>
            )}
          </Stack>
        </SectionCard>
      </Stack>
    </>
  );
}

function MailView({ id }: { id: number }) {
  const mail = useQuery({
    queryKey: ['staff', 'mailbox', 'mail', id],
    queryFn: () => api<MailboxMessage>(`/api/v1/staff/mailbox/${id}`),
  });
  if (mail.isPending) return <LoadingState label="Loading the mail…" />;
  if (mail.isError) return <ErrorState error={mail.error} onRetry={() => void mail.refetch()} />;
  const m = mail.data;
  return (
    <SectionCard headingId="mailbox-mail" title={m.subject}>
      <Stack gap="sm">
        <Text size="sm">
          To <strong>{m.to}</strong>, kept {formatInstant(m.createdAt)}
          {m.tenantName ? `, about ${m.tenantName}` : ''}.
        </Text>
        {m.link && (
          <Group gap="sm" wrap="nowrap" align="center">
            <Text size="sm" fw={600}>
              Link:
            </Text>
            <Anchor href={m.link} size="sm" style={{ wordBreak: 'break-all' }} rel="noreferrer" data-testid="mail-link">
              {m.link}
            </Anchor>
            <CopyButton value={m.link}>
              {({ copied, copy }) => (
                <Button size="compact-sm" variant="default" onClick={copy} aria-label="Copy the link">
                  {copied ? 'Copied' : 'Copy'}
                </Button>
              )}
            </CopyButton>
          </Group>
        )}
        <Text
          component="pre"
          size="sm"
          data-testid="mail-text"
          style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word', fontFamily: 'inherit', margin: 0 }}
        >
          <Linkified text={m.text} />
        </Text>
        {m.html !== null && (
          <details>
            <summary>HTML part (source, not rendered)</summary>
            <Text component="pre" size="xs" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>
              {m.html}
            </Text>
          </details>
        )}
      </Stack>
    </SectionCard>
  );
}

const URL_PATTERN = /(https?:\/\/[^\s<>"']+)/g;

/** Plain text with its http(s) addresses as links; everything else stays text (React escapes it). */
function Linkified({ text }: { text: string }) {
  return (
    <>
      {text.split(URL_PATTERN).map((part, i) =>
        i % 2 === 1 ? (
          <Anchor key={i} href={part} rel="noreferrer" inherit>
            {part}
          </Anchor>
        ) : (
          part
        ),
      )}
    </>
  );
}
