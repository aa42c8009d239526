// One import's result: what the file was, how far reading got, and what came of it: records read,
// findings new, seen again, reopened and closed, duplicates merged, checks that passed, records
// skipped by reason, values cleaned, the assets a multi-host report was split to, hosts that are
// no asset, and what the report says it covered. Nothing an import leaves out goes unsaid.
import { Alert, Badge, Code, Group, List, Paper, Progress, SimpleGrid, Stack, Table, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { DataTable } from '../../components/DataTable.tsx';
import { TextLink } from '../../components/links.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { ApiError } from '../../lib/api.ts';
import { formatDateTime } from '../../lib/format.ts';
import { FORMAT_LABELS, importQuery, isActive, type Ingestion } from '../../lib/imports-api.ts';
import { useTenant } from '../../lib/me.ts';
import { formatBytes } from '../assets/ImageArchiveCard.tsx';
import { describeOutcome, IngestionStatusBadge } from './ImportsPage.tsx';

type Summary = NonNullable<Ingestion['summary']>;
const n = (x: number) => x.toLocaleString('en-US');

function BackLink() {
  return (
    <TextLink to="/imports" size="sm" display="inline-block" mb="sm">
      ← Import results
    </TextLink>
  );
}

export function ImportDetailPage({ importId }: { importId: string }) {
  const tenant = useTenant();
  const query = useQuery(importQuery(tenant.id, importId));
  if (query.isPending)
    return (
      <>
        <BackLink />
        <LoadingState label="Loading the import…" />
      </>
    );
  if (query.isError) {
    const notFound =
      query.error instanceof ApiError && (query.error.status === 404 || query.error.code === 'validation_failed');
    return (
      <>
        <BackLink />
        <PageHeader title={notFound ? 'Import not found' : 'Import'} titleContext={tenant.name} />
        <ErrorState
          error={notFound ? new Error(`There is no import with this id in ${tenant.name}.`) : query.error}
          title={notFound ? 'Import not found' : 'Could not load the import'}
          onRetry={notFound ? undefined : () => void query.refetch()}
        />
      </>
    );
  }
  const i = query.data;
  return (
    <>
      <BackLink />
      <PageHeader
        title={i.fileName ?? 'Imported report'}
        titleContext={tenant.name}
        description={
          <>
            {i.format ? FORMAT_LABELS[i.format] : 'Format not detected yet'}
            {i.summary?.tool ? ` · ${i.summary.tool}` : ''} · {formatBytes(i.size)} · for{' '}
            <TextLink to="/assets/$assetId" params={{ assetId: i.asset.id }} size="sm" underline="always">
              {i.asset.name || i.asset.target}
            </TextLink>
          </>
        }
        actions={<IngestionStatusBadge status={i.status} />}
      />
      <Stack gap="lg">
        <SectionCard headingId="import-outcome" title="Outcome">
          <Stack gap="sm">
            {isActive(i) && <Progress value={i.percent} aria-label="Reading progress" animated />}
            <Text
              size="sm"
              c={i.status === 'failed' ? 'red' : undefined}
              aria-live="polite"
              style={{ wordBreak: 'break-word' }}
            >
              {isActive(i) ? `${i.percent}% read, ${describeOutcome(i)}.` : describeOutcome(i)}
            </Text>
            {i.summary && <Counts s={i.summary} />}
            {i.summary?.outcome === 'inconclusive' && (
              <Alert color="yellow" title="Inconclusive: nothing was closed">
                {i.summary.outcomeReason ?? 'The report looked at nothing.'} Findings stay as they were.
              </Alert>
            )}
            {i.summary?.partial && (
              <Alert color="yellow" title="Partial report: nothing was closed">
                {i.summary.partial}
              </Alert>
            )}
            {i.summary && !i.summary.partial && i.summary.outcome !== 'inconclusive' && i.summary.closedNothing && (
              <Alert color="blue" title="Nothing was closed on this asset">
                The report said nothing about {i.asset.name || i.asset.target}, so none of its open findings were marked
                fixed.
              </Alert>
            )}
            <Group gap="lg">
              <TextLink to="/scans/$scanId" params={{ scanId: i.scanId }} size="sm">
                Open the scan
              </TextLink>
              <Text size="xs" c="dimmed">
                Imported {formatDateTime(i.createdAt)}
                {i.createdBy ? ` by ${i.createdBy.email}` : ''} · SHA-256 <Code>{i.sha256.slice(0, 16)}…</Code>
              </Text>
            </Group>
          </Stack>
        </SectionCard>
        {i.summary && <Details s={i.summary} />}
      </Stack>
    </>
  );
}

function Fact({ label, value, hint }: { label: string; value: ReactNode; hint?: string }) {
  return (
    <Paper withBorder p="sm" radius="md">
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text fw={700} size="lg">
        {value}
      </Text>
      {hint && (
        <Text size="xs" c="dimmed">
          {hint}
        </Text>
      )}
    </Paper>
  );
}

function Counts({ s }: { s: Summary }) {
  const merged = s.received - s.distinct;
  const splitFindings = s.splits.reduce((a, x) => a + x.findings, 0);
  return (
    <SimpleGrid cols={{ base: 2, sm: 3, md: 5 }} spacing="sm">
      <Fact label="Records read" value={n(s.records)} hint="results, alerts, ports, items in the file" />
      <Fact
        label="Findings"
        value={n(s.distinct)}
        hint={merged > 0 ? `${n(s.received)} read, ${n(merged)} duplicates merged` : `${n(s.received)} read`}
      />
      <Fact
        label="New"
        value={n(s.created)}
        hint={`${n(s.seen)} seen before${s.reopened ? `, ${n(s.reopened)} reopened` : ''}`}
      />
      <Fact label="Closed as fixed" value={n(s.fixed)} hint="open findings this report no longer shows" />
      <Fact
        label="Skipped"
        value={n(s.skipped)}
        hint={s.passed ? `${n(s.passed)} checks passed (not problems)` : 'with their reasons below'}
      />
      {splitFindings > 0 && (
        <Fact
          label="To other assets"
          value={n(splitFindings)}
          hint={`${s.splits.length} asset${s.splits.length === 1 ? '' : 's'}`}
        />
      )}
    </SimpleGrid>
  );
}

function Details({ s }: { s: Summary }) {
  return (
    <>
      {s.skipReasons.length > 0 && (
        <SectionCard
          headingId="import-skipped"
          title="Skipped records"
          description="Records of the report that did not become findings, and why."
        >
          <DataTable label="Skipped records" minWidth={560} columns={['Reason', 'Records', 'For example']}>
            {s.skipReasons.map((r) => (
              <Table.Tr key={r.reason}>
                <Table.Td>
                  <Text size="sm" style={{ wordBreak: 'break-word' }}>
                    {r.reason}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{n(r.count)}</Text>
                </Table.Td>
                <Table.Td>
                  <Text size="xs" c="dimmed" style={{ wordBreak: 'break-word' }}>
                    {r.where.join(', ')}
                  </Text>
                </Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        </SectionCard>
      )}
      {s.cleaned.length > 0 && (
        <SectionCard
          headingId="import-cleaned"
          title="Cleaned values"
          description="Values the database cannot store were changed and the rest of each record kept."
        >
          <DataTable label="Cleaned values" minWidth={560} columns={['What', 'Times', 'Where']}>
            {s.cleaned.map((c) => (
              <Table.Tr key={c.kind}>
                <Table.Td>
                  <Text size="sm">{c.label}</Text>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{n(c.count)}</Text>
                </Table.Td>
                <Table.Td>
                  <Text size="xs" c="dimmed">
                    {c.where.join(', ')}
                  </Text>
                </Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        </SectionCard>
      )}
      {(s.splits.length > 0 || s.unmatchedHosts.length > 0) && (
        <SectionCard
          headingId="import-hosts"
          title="Hosts and assets"
          description="A report of several hosts is split: each host that is an asset of this tenant gets a scan of its own."
        >
          <Stack gap="md">
            {s.splits.length > 0 && (
              <DataTable label="Other assets" minWidth={560} columns={['Asset', 'Findings', 'New', 'Closed', 'Scan']}>
                {s.splits.map((x) => (
                  <Table.Tr key={x.scanId}>
                    <Table.Td>
                      {x.assetId ? (
                        <TextLink to="/assets/$assetId" params={{ assetId: x.assetId }} size="sm">
                          {x.assetName ?? x.assetId}
                        </TextLink>
                      ) : (
                        <Text size="sm">{x.assetName ?? '—'}</Text>
                      )}
                    </Table.Td>
                    <Table.Td>
                      <Text size="sm">{n(x.distinct)}</Text>
                    </Table.Td>
                    <Table.Td>
                      <Text size="sm">{n(x.created)}</Text>
                    </Table.Td>
                    <Table.Td>
                      <Text size="sm">{n(x.fixed)}</Text>
                    </Table.Td>
                    <Table.Td>
                      <TextLink to="/scans/$scanId" params={{ scanId: x.scanId }} size="sm">
                        View scan
                      </TextLink>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </DataTable>
            )}
            {s.unmatchedHosts.length > 0 && (
              <Alert color="yellow" title="Hosts that are no asset of this tenant were not imported">
                <Text size="sm">Add them as assets (and prove ownership), then import the report again:</Text>
                <Text size="sm" ff="monospace" style={{ wordBreak: 'break-word' }}>
                  {s.unmatchedHosts.join(', ')}
                </Text>
              </Alert>
            )}
          </Stack>
        </SectionCard>
      )}
      {s.coverage && <CoverageCard c={s.coverage} />}
    </>
  );
}

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Group gap="xs" align="flex-start" wrap="nowrap">
      <Text size="sm" c="dimmed" miw={150}>
        {label}
      </Text>
      <div style={{ minWidth: 0 }}>{children}</div>
    </Group>
  );
}

const SHOWN = 40;
function Some({ items, noun }: { items: string[]; noun: string }) {
  if (items.length === 0) return <Text size="sm">none named</Text>;
  return (
    <Text size="sm" style={{ wordBreak: 'break-word' }}>
      {items.slice(0, SHOWN).join(', ')}
      {items.length > SHOWN ? ` and ${n(items.length - SHOWN)} more ${noun}` : ''}
    </Text>
  );
}

function CoverageCard({ c }: { c: NonNullable<Summary['coverage']> }) {
  return (
    <SectionCard
      headingId="import-coverage"
      title="What the report covered"
      description="As the report states it: the tools, checks, hosts, ports and targets it looked at."
    >
      <Stack gap="xs">
        <Row label="Tools">
          <List size="sm" spacing={2}>
            {c.tools.map((t) => (
              <List.Item key={`${t.name}:${t.version ?? ''}`}>
                {t.name}
                {t.version ? ` ${t.version}` : ''}{' '}
                <Badge variant="light" size="xs">
                  {t.scanner}
                </Badge>
              </List.Item>
            ))}
          </List>
        </Row>
        {c.classes.length > 0 && (
          <Row label="Checks">
            <Some items={c.classes} noun="classes" />
          </Row>
        )}
        <Row label={c.rules.declared ? 'Rules run' : 'Rules that reported'}>
          <Some items={c.rules.ids} noun="rules" />
        </Row>
        {c.hosts.length > 0 && (
          <Row label="Hosts">
            <Some items={c.hosts.map((h) => (h.up === false ? `${h.name} (down)` : h.name))} noun="hosts" />
          </Row>
        )}
        {c.ports.length > 0 && (
          <Row label="Ports probed">
            <Text size="sm">
              {c.ports
                .map((p) => `${p.protocol} ${p.ranges.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(', ')}`)
                .join('; ')}
            </Text>
          </Row>
        )}
        {c.targets.length > 0 && (
          <Row label="Targets">
            <Some items={c.targets} noun="targets" />
          </Row>
        )}
        {c.truncated && (
          <Text size="xs" c="dimmed">
            Long lists were cut; the counts above are complete.
          </Text>
        )}
      </Stack>
    </SectionCard>
  );
}
