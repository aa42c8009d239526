// Compliance overview: one card per framework with how its controls stand for this tenant.
import { Badge, Group, Paper, Progress, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { ButtonLink } from '../../components/links.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { frameworksQuery, type FrameworkSummaryItem } from '../../lib/compliance-api.ts';
import { useTenant } from '../../lib/me.ts';
import { formatDay } from './compliance-ui.tsx';

export function CompliancePage() {
  const tenant = useTenant();
  const query = useQuery(frameworksQuery(tenant.id));
  return (
    <>
      <PageHeader
        title="Compliance"
        titleContext={tenant.name}
        description="How your controls stand in each framework. Open scan findings mark the controls they bear on as failing; evidence you upload per control (with an effective date and expiry) marks it evidenced. A control never counts as passing without evidence."
      />
      {query.isPending ? (
        <LoadingState label="Loading frameworks…" />
      ) : query.isError ? (
        <ErrorState error={query.error} title="Could not load the frameworks" onRetry={() => void query.refetch()} />
      ) : (
        <>
          <SimpleGrid
            cols={{ base: 1, sm: 2, lg: 3 }}
            spacing="lg"
            component="ul"
            style={{ listStyle: 'none', padding: 0, margin: 0 }}
            aria-label="Frameworks"
          >
            {query.data.frameworks.map((f) => (
              <FrameworkCard key={f.id} framework={f} />
            ))}
          </SimpleGrid>
          <Text size="xs" c="dimmed" mt="lg">
            Status as of {formatDay(query.data.asOf)} (UTC). ISO/IEC 27001, SOC 2 and CIS Controls are shown by number
            and short title only; their full texts are licensed by ISO/IEC, the AICPA and CIS.
          </Text>
        </>
      )}
    </>
  );
}

const plural = (noun: string) =>
  noun === 'criterion' ? 'criteria' : noun.endsWith('y') ? `${noun.slice(0, -1)}ies` : `${noun}s`;

function FrameworkCard({ framework: f }: { framework: FrameworkSummaryItem }) {
  const s = f.summary;
  const pct = (n: number) => (s.controls ? (n / s.controls) * 100 : 0);
  const headingId = `fw-${f.id}`;
  return (
    <Paper component="li" withBorder radius="md" p="lg" aria-labelledby={headingId} data-framework={f.id}>
      <Stack gap="sm" h="100%">
        <div>
          <Title order={2} size="h4" id={headingId}>
            {f.shortName}
          </Title>
          <Text size="xs" c="dimmed">
            {f.edition}
          </Text>
        </div>
        {/* One picture of the shares, named as a whole: its sections are not progress bars of their own. */}
        <div
          role="img"
          aria-label={`${f.shortName}: ${s.byStatus.evidenced} evidenced, ${s.byStatus.failing} failing, ${s.byStatus.evidence_expired} expired, ${s.byStatus.no_evidence} without evidence`}
        >
          <Progress.Root size="lg" aria-hidden>
            <Progress.Section value={pct(s.byStatus.evidenced)} color="green" />
            <Progress.Section value={pct(s.byStatus.failing)} color="red" />
            <Progress.Section value={pct(s.byStatus.evidence_expired)} color="orange" />
          </Progress.Root>
        </div>
        <Group gap="xs">
          <Badge variant="light" color="gray">
            {s.controls} {plural(f.controlNoun)}
          </Badge>
          {s.byStatus.failing > 0 && (
            <Badge variant="filled" color="red">
              {s.byStatus.failing} failing
            </Badge>
          )}
          <Badge variant="light" color="green">
            {s.withCurrentEvidence} evidenced
          </Badge>
          {s.withExpiredEvidence > 0 && (
            <Badge variant="light" color="orange">
              {s.withExpiredEvidence} expired
            </Badge>
          )}
        </Group>
        <ButtonLink to="/compliance/$framework" params={{ framework: f.id }} variant="light" mt="auto">
          Open {f.shortName} controls
        </ButtonLink>
      </Stack>
    </Paper>
  );
}
