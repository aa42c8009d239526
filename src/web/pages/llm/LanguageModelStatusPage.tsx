// Staff → Language model (/settings/staff/language-model): whether a language model is configured
// (GET /api/v1/staff/llm/status answers only that boolean: never the address, model or key) and
// what each helper does with and without one.
//
// <LlmConfiguredBadge /> (no props) is the same status as a badge, for other staff pages (e.g. the
// mesh "ask operations" page).
import { Badge, List, Stack, Text } from '@mantine/core';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { api } from '../../lib/api.ts';
import type { LlmStatus } from '../../../llm/llm-schemas.ts';

export const llmStatusQuery = queryOptions({
  queryKey: ['staff', 'llm', 'status'] as const,
  queryFn: ({ signal }) => api<LlmStatus>('/api/v1/staff/llm/status', { signal }),
  staleTime: 60_000,
});

export function LlmConfiguredBadge() {
  const q = useQuery(llmStatusQuery);
  if (!q.data) return null;
  return (
    <Badge variant="light" color={q.data.configured ? 'blue' : 'gray'} data-testid="llm-configured">
      {q.data.configured ? 'Language model configured' : 'No language model: offline analysis'}
    </Badge>
  );
}

export function LanguageModelStatusPage() {
  const q = useQuery(llmStatusQuery);
  return (
    <>
      <PageHeader
        title="Language model"
        description="The hosted language-model helpers. Operators configure the model with LLM_BASE_URL, LLM_API_KEY and LLM_MODEL; this page only tells whether one is configured."
      />
      {q.isPending ? (
        <LoadingState />
      ) : q.isError ? (
        <ErrorState error={q.error} title="Could not load the status" onRetry={() => void q.refetch()} />
      ) : (
        <Stack gap="lg">
          <SectionCard headingId="llm-status" title="Status" aside={<LlmConfiguredBadge />}>
            <Text size="sm">
              {q.data.configured
                ? 'A language model is configured. Its answers are streamed, checked against the evidence, and replaced by the offline analysis when they cite evidence that does not exist or when the model fails (busy, out of credits, too slow). Users see that a model answered, never which one.'
                : 'No language model is configured. Every helper still works with its offline analysis, labelled "offline analysis".'}
            </Text>
          </SectionCard>
          <SectionCard headingId="llm-helpers" title="Helpers">
            <List size="sm" spacing="xs">
              <List.Item>
                Explain a result file (customers, Explain a result file): offline, a summary by severity with the top
                fixes. Explanations are kept with the uploaded file in each user's private history.
              </List.Item>
              <List.Item>
                Device check (CMMC → Device check): offline, each failing or unreadable check's meaning, fix and
                re-check steps. Nothing is stored.
              </List.Item>
              <List.Item>
                Evidence review (CMMC → Evidence review): up to 8 files, about 8 MB, PDF, TXT or Markdown; offline,
                key-phrase matching per requirement with the cited files and pages. Nothing is stored.
              </List.Item>
              <List.Item>Ask operations (staff): answers over the mesh records.</List.Item>
            </List>
          </SectionCard>
        </Stack>
      )}
    </>
  );
}
