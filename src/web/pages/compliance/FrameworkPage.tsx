// One framework's controls: a framework switcher, summary, filters kept in the URL (search, status,
// group) and the control table with status badges. Each control opens its detail page.
import {
  Badge,
  Button,
  Group,
  NativeSelect,
  Paper,
  SegmentedControl,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { DataTable } from '../../components/DataTable.tsx';
import { TextLink } from '../../components/links.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import {
  FRAMEWORK_IDS,
  frameworkQuery,
  type ControlFilters,
  type ControlStatus,
  type FrameworkDetail,
  type FrameworkId,
} from '../../lib/compliance-api.ts';
import { useTenant } from '../../lib/me.ts';
import { useUrlText } from '../../lib/use-url-text.ts';
import { CONTROL_STATUSES, formatDay, SeverityCounts, STATUS_LABELS, StatusBadge } from './compliance-ui.tsx';

/** `controlStatus`, not `status`: search types are shared across routes, and /assets has its own `status`. */
export interface FrameworkSearch {
  q?: string;
  controlStatus?: ControlStatus;
  group?: string;
}

const SHORT_NAMES: Record<FrameworkId, string> = {
  soc2: 'SOC 2',
  gdpr: 'GDPR',
  iso27001: 'ISO 27001',
  'nist-csf': 'NIST CSF',
  'cis-v8': 'CIS v8',
};

export function FrameworkPage({ framework, search }: { framework: FrameworkId; search: FrameworkSearch }) {
  const tenant = useTenant();
  const navigate = useNavigate();
  const filters: ControlFilters = {};
  if (search.q) filters.q = search.q;
  if (search.controlStatus) filters.status = search.controlStatus;
  if (search.group) filters.group = search.group;
  const query = useQuery(frameworkQuery(tenant.id, framework, filters));
  const update = (patch: Partial<FrameworkSearch>) =>
    void navigate({
      to: '/compliance/$framework',
      params: { framework },
      search: (prev) => ({ ...prev, ...patch }),
      replace: true,
    });

  const [text, setText] = useUrlText(search.q, (q) => update({ q }));

  const data = query.data;
  const title = data?.framework.shortName ?? SHORT_NAMES[framework];
  const filtered = Boolean(search.q || search.controlStatus || search.group);

  return (
    <>
      <TextLink to="/compliance" size="sm" display="inline-block" mb="sm">
        ← All frameworks
      </TextLink>
      <PageHeader
        title={title}
        titleContext={tenant.name}
        description={data ? `${data.framework.name} · ${data.framework.edition}` : undefined}
      />
      <SegmentedControl
        mb="lg"
        fullWidth
        aria-label="Framework"
        value={framework}
        data={FRAMEWORK_IDS.map((id) => ({ value: id, label: SHORT_NAMES[id] }))}
        onChange={(id) =>
          void navigate({ to: '/compliance/$framework', params: { framework: id as FrameworkId }, search: {} })
        }
      />
      {query.isPending ? (
        <LoadingState label="Loading controls…" />
      ) : !data ? (
        <ErrorState error={query.error} title="Could not load the controls" onRetry={() => void query.refetch()} />
      ) : (
        <Stack gap="lg">
          <Summary data={data} />
          <Paper withBorder p="md" radius="md" component="section" aria-label="Filters">
            <SimpleGrid cols={{ base: 1, sm: 3 }} spacing="sm">
              <TextInput
                label="Search controls"
                type="search"
                placeholder="Number or title"
                maxLength={200}
                value={text}
                onChange={(e) => setText(e.currentTarget.value)}
              />
              <NativeSelect
                label="Status"
                data={[
                  { value: '', label: 'Any status' },
                  ...CONTROL_STATUSES.map((s) => ({ value: s, label: STATUS_LABELS[s] })),
                ]}
                value={search.controlStatus ?? ''}
                onChange={(e) =>
                  update({ controlStatus: (e.currentTarget.value || undefined) as ControlStatus | undefined })
                }
              />
              <NativeSelect
                label={groupLabel(data)}
                data={[
                  { value: '', label: 'All' },
                  ...data.framework.groups.map((g) => ({
                    value: g.id,
                    label: `${g.parentId ? '— ' : ''}${g.id === g.title ? g.title : `${g.id} ${g.title}`}`,
                  })),
                ]}
                value={search.group ?? ''}
                onChange={(e) => update({ group: e.currentTarget.value || undefined })}
              />
            </SimpleGrid>
            {filtered && (
              <Group justify="flex-end" mt="sm">
                <Button
                  variant="default"
                  size="xs"
                  onClick={() =>
                    void navigate({ to: '/compliance/$framework', params: { framework }, search: {}, replace: true })
                  }
                >
                  Clear filters
                </Button>
              </Group>
            )}
          </Paper>
          <ControlsTable data={data} framework={framework} />
          <Text size="xs" c="dimmed">
            {data.framework.licence.name}. {data.framework.licence.note} Catalogue {data.framework.catalogueVersion};
            status as of {formatDay(data.asOf)} (UTC).
          </Text>
        </Stack>
      )}
    </>
  );
}

function groupLabel(data: FrameworkDetail): string {
  const kinds = [...new Set(data.framework.groups.map((g) => g.kind))];
  return kinds.map((k) => k[0]!.toUpperCase() + k.slice(1)).join(' / ');
}

function Summary({ data }: { data: FrameworkDetail }) {
  const s = data.summary;
  const items: [string, number, string][] = [
    ['Controls', s.controls, 'gray'],
    ['With open findings', s.withOpenFindings, 'red'],
    ['With current evidence', s.withCurrentEvidence, 'green'],
    ['Evidence expired', s.withExpiredEvidence, 'orange'],
    ['No evidence', s.byStatus.no_evidence, 'gray'],
  ];
  return (
    <SimpleGrid cols={{ base: 2, sm: 5 }} spacing="sm" component="dl" m={0} aria-label="Summary">
      {items.map(([label, n, color]) => (
        <Paper key={label} withBorder radius="md" p="sm">
          <Text component="dt" size="xs" c="dimmed">
            {label}
          </Text>
          <Text component="dd" m={0} fw={700} size="xl" c={n > 0 && color !== 'gray' ? color : undefined}>
            {n}
          </Text>
        </Paper>
      ))}
    </SimpleGrid>
  );
}

function ControlsTable({ data, framework }: { data: FrameworkDetail; framework: FrameworkId }) {
  const groups = new Map(data.framework.groups.map((g) => [g.id, g]));
  const isCis = framework === 'cis-v8';
  return (
    <Stack gap="xs">
      <Paper withBorder radius="md">
        <DataTable
          label={`${data.framework.shortName} controls`}
          minWidth={820}
          columns={['Control', 'Status', 'Open findings', 'Evidence', isCis && 'IG']}
          empty={data.controls.length === 0 ? 'No controls match these filters.' : undefined}
        >
          {data.controls.map((c) => (
            <Table.Tr key={c.id} data-control={c.id}>
              <Table.Td style={{ maxWidth: 460 }}>
                <TextLink
                  to="/compliance/$framework/$controlId"
                  params={{ framework, controlId: c.id }}
                  size="sm"
                  fw={600}
                >
                  {c.id}
                </TextLink>{' '}
                <Text span size="sm">
                  {c.title}
                </Text>
                <Text size="xs" c="dimmed">
                  {groups.get(c.groupId)?.title}
                </Text>
              </Table.Td>
              <Table.Td>
                <StatusBadge status={c.status} />
              </Table.Td>
              <Table.Td>
                {c.openFindings > 0 ? (
                  <SeverityCounts counts={c.openBySeverity} />
                ) : (
                  <Text span size="sm" c="dimmed">
                    None
                  </Text>
                )}
              </Table.Td>
              <Table.Td className="nowrap">
                {c.evidence.current + c.evidence.expired + c.evidence.upcoming === 0 ? (
                  <Text span size="sm" c="dimmed">
                    None
                  </Text>
                ) : (
                  <Stack gap={2}>
                    <Text size="sm">
                      {c.evidence.current} current{c.evidence.expired ? `, ${c.evidence.expired} expired` : ''}
                      {c.evidence.upcoming ? `, ${c.evidence.upcoming} upcoming` : ''}
                    </Text>
                    {c.evidence.nextExpiry && (
                      <Text size="xs" c="dimmed">
                        Next expiry {formatDay(c.evidence.nextExpiry)}
                      </Text>
                    )}
                  </Stack>
                )}
              </Table.Td>
              {isCis && (
                <Table.Td>
                  <Badge variant="outline" color="gray" size="sm">
                    IG{c.implementationGroup}
                  </Badge>
                </Table.Td>
              )}
            </Table.Tr>
          ))}
        </DataTable>
      </Paper>
      <Text size="sm" c="dimmed" aria-live="polite" ta="center">
        {data.controls.length} of {data.summary.controls} shown.
      </Text>
    </Stack>
  );
}
