// One finding: severity and status, where it is, CVSS and CWE/CVE links, SLA, the evidence the
// scanner captured, how to fix it, references, and its history; "Change status" for triage.
import { Anchor, Badge, Button, Code, Group, List, Stack, Table, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { TextLink } from '../../components/links.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { ApiError } from '../../lib/api.ts';
import { findingQuery, type FindingDetail } from '../../lib/findings-api.ts';
import { formatDate, formatDateTime } from '../../lib/format.ts';
import { isTenantAdmin, useTenant } from '../../lib/me.ts';
import {
  EVENT_LABELS,
  SCANNER_LABELS,
  SEVERITY_LABELS,
  SeverityBadge,
  STATUS_LABELS,
  StatusBadge,
  WeaknessLinks,
} from './finding-ui.tsx';
import { StatusDialog } from './StatusDialog.tsx';

function BackLink() {
  return (
    <TextLink to="/findings" size="sm" display="inline-block" mb="sm">
      ← All findings
    </TextLink>
  );
}

export function FindingDetailPage({ findingId }: { findingId: string }) {
  const tenant = useTenant();
  const query = useQuery(findingQuery(tenant.id, findingId));
  if (query.isPending)
    return (
      <>
        <BackLink />
        <LoadingState label="Loading the finding…" />
      </>
    );
  if (query.isError) {
    const notFound =
      query.error instanceof ApiError && (query.error.status === 404 || query.error.code === 'validation_failed');
    return (
      <>
        <BackLink />
        <PageHeader title={notFound ? 'Finding not found' : 'Finding'} titleContext={tenant.name} />
        <ErrorState
          error={
            notFound
              ? new Error(`There is no finding with this id in ${tenant.name}. It may belong to another tenant.`)
              : query.error
          }
          title={notFound ? 'Finding not found' : 'Could not load the finding'}
          onRetry={notFound ? undefined : () => void query.refetch()}
        />
      </>
    );
  }
  return (
    <FindingView
      detail={query.data}
      tenantId={tenant.id}
      tenantName={tenant.name}
      canAcceptRisk={isTenantAdmin(tenant)}
    />
  );
}

function Facts({ rows }: { rows: [string, ReactNode][] }) {
  return (
    <Table variant="vertical" layout="fixed" withTableBorder={false}>
      <Table.Tbody>
        {rows.map(([label, value]) => (
          <Table.Tr key={label}>
            <Table.Th w={{ base: 130, sm: 180 }} scope="row">
              {label}
            </Table.Th>
            <Table.Td style={{ wordBreak: 'break-word' }}>{value}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

const dim = (text = '—') => (
  <Text span size="sm" c="dimmed">
    {text}
  </Text>
);

function Block({ label, text }: { label: string; text: string }) {
  return (
    <Stack gap={4}>
      <Text size="sm" fw={600}>
        {label}
      </Text>
      <Code block style={{ maxHeight: 360, overflow: 'auto', whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
        {text}
      </Code>
    </Stack>
  );
}

function Evidence({ evidence }: { evidence: Record<string, unknown> }) {
  const str = (k: string) => (typeof evidence[k] === 'string' && evidence[k] ? (evidence[k] as string) : null);
  const extracted = Array.isArray(evidence.extracted)
    ? (evidence.extracted as unknown[]).filter((x): x is string => typeof x === 'string')
    : [];
  const data = evidence.data && typeof evidence.data === 'object' ? evidence.data : null;
  const parts = [
    str('summary'),
    str('request'),
    str('response'),
    str('curl'),
    str('snippet'),
    extracted.length,
    data,
  ].filter(Boolean);
  if (!parts.length)
    return (
      <Text size="sm" c="dimmed">
        The scanner captured no evidence for this finding.
      </Text>
    );
  return (
    <Stack gap="md">
      {str('summary') && <Text size="sm">{str('summary')}</Text>}
      {str('request') && <Block label="Request" text={str('request')!} />}
      {str('response') && <Block label="Response" text={str('response')!} />}
      {str('curl') && <Block label="Reproduce with curl" text={str('curl')!} />}
      {str('snippet') && <Block label="Snippet" text={str('snippet')!} />}
      {extracted.length > 0 && <Block label="Extracted values" text={extracted.join('\n')} />}
      {data && <Block label="Scanner data" text={JSON.stringify(data, null, 2)} />}
      <Text size="xs" c="dimmed">
        Credentials in headers (Authorization, Cookie, API keys) are replaced by [redacted] when findings are stored;
        long bodies are cut.
      </Text>
    </Stack>
  );
}

function FindingView({
  detail,
  tenantId,
  tenantName,
  canAcceptRisk,
}: {
  detail: FindingDetail;
  tenantId: string;
  tenantName: string;
  canAcceptRisk: boolean;
}) {
  const { finding: f, history } = detail;
  const [changing, setChanging] = useState(false);
  return (
    <>
      <BackLink />
      <PageHeader
        title={f.title}
        titleContext={tenantName}
        description={<span className="mono-break">{f.locationText}</span>}
        actions={<Button onClick={() => setChanging(true)}>Change status</Button>}
      />
      <Group gap="xs" mt={-8} mb="lg" aria-label="Status" role="group">
        <SeverityBadge severity={f.severity} />
        <StatusBadge status={f.status} />
        {f.overdue && (
          <Badge color="red" variant="light">
            Overdue
          </Badge>
        )}
      </Group>
      <Stack gap="lg">
        <SectionCard headingId="finding-details" title="Details">
          <Facts
            rows={[
              [
                'Asset',
                <TextLink key="a" to="/assets/$assetId" params={{ assetId: f.asset.id }} size="sm">
                  {f.asset.name || f.asset.target}
                </TextLink>,
              ],
              [
                'Location',
                <span key="l" className="mono-break">
                  {f.locationText}
                </span>,
              ],
              ['Found by', `${SCANNER_LABELS[f.scanner]}, rule ${f.ruleId}`],
              ['Severity', SEVERITY_LABELS[f.severity]],
              [
                'CVSS',
                f.cvssScore !== null ? (
                  <span key="c">
                    {f.cvssScore.toFixed(1)}
                    {f.cvssVector && (
                      <Text span size="xs" c="dimmed" ml={8} className="mono-break">
                        {f.cvssVector}
                      </Text>
                    )}
                  </span>
                ) : (
                  dim()
                ),
              ],
              ['Weakness and CVE', <WeaknessLinks key="w" cweIds={f.cweIds} cveIds={f.cveIds} />],
              ['First seen', formatDateTime(f.firstSeenAt)],
              ['Last seen', formatDateTime(f.lastSeenAt)],
              [
                'SLA due',
                f.slaDueAt
                  ? `${formatDate(f.slaDueAt)}${f.overdue ? ' (overdue)' : ''}`
                  : dim('No SLA for informational findings'),
              ],
              [
                'Status',
                `${STATUS_LABELS[f.status]}${f.statusChangedBy ? ` (by ${f.statusChangedBy}, ${formatDateTime(f.statusChangedAt)})` : f.statusChangedAt ? ` (by a rescan, ${formatDateTime(f.statusChangedAt)})` : ''}`,
              ],
              ...(f.statusReason ? ([['Reason', f.statusReason]] as [string, ReactNode][]) : []),
              ...(f.statusExpiresAt
                ? ([['Accepted until', formatDateTime(f.statusExpiresAt)]] as [string, ReactNode][])
                : []),
              ...(f.fixedAt ? ([['Fixed', formatDateTime(f.fixedAt)]] as [string, ReactNode][]) : []),
              ...(f.reopenedCount
                ? ([['Reopened', `${f.reopenedCount} ${f.reopenedCount === 1 ? 'time' : 'times'}`]] as [
                    string,
                    ReactNode,
                  ][])
                : []),
              [
                'Fingerprint',
                <Code key="fp" className="mono-break">
                  {f.fingerprint}
                </Code>,
              ],
            ]}
          />
        </SectionCard>
        {f.description && (
          <SectionCard headingId="finding-description" title="Description">
            <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
              {f.description}
            </Text>
          </SectionCard>
        )}
        <SectionCard headingId="finding-remediation" title="How to fix it">
          {f.remediation ? (
            <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
              {f.remediation}
            </Text>
          ) : (
            <Text size="sm" c="dimmed">
              The scanner gave no remediation advice for this rule.
            </Text>
          )}
          {f.references.length > 0 && (
            <List size="sm" spacing={4}>
              {f.references.map((r) => (
                <List.Item key={r}>
                  <Anchor href={r} target="_blank" rel="noopener noreferrer" size="sm" className="mono-break">
                    {r}
                  </Anchor>
                </List.Item>
              ))}
            </List>
          )}
        </SectionCard>
        <SectionCard headingId="finding-evidence" title="Evidence">
          <Evidence evidence={f.evidence} />
        </SectionCard>
        <SectionCard headingId="finding-history" title="History">
          <Table.ScrollContainer
            minWidth={560}
            type="native"
            tabIndex={0}
            role="region"
            aria-label="History table"
            style={{ position: 'relative' }}
          >
            <Table>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th scope="col">When</Table.Th>
                  <Table.Th scope="col">What</Table.Th>
                  <Table.Th scope="col">By</Table.Th>
                  <Table.Th scope="col">Note</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {history.map((h) => (
                  <Table.Tr key={h.id}>
                    <Table.Td className="nowrap">{formatDateTime(h.at)}</Table.Td>
                    <Table.Td>
                      {EVENT_LABELS[h.event]}
                      {h.event === 'status_changed' &&
                        h.toStatus &&
                        ` → ${STATUS_LABELS[h.toStatus as keyof typeof STATUS_LABELS] ?? h.toStatus}`}
                      {h.event === 'severity_changed' &&
                        h.detail &&
                        ` (${String(h.detail.from)} → ${String(h.detail.to)})`}
                    </Table.Td>
                    <Table.Td style={{ wordBreak: 'break-word' }}>
                      {h.actorEmail ?? (h.scanId ? 'A scan' : 'Rampart')}
                    </Table.Td>
                    <Table.Td style={{ wordBreak: 'break-word' }}>{h.reason ?? ''}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        </SectionCard>
      </Stack>
      <StatusDialog
        opened={changing}
        tenantId={tenantId}
        ids={[f.id]}
        canAcceptRisk={canAcceptRisk}
        initialStatus={f.status === 'open' ? 'false_positive' : 'open'}
        onClose={() => setChanging(false)}
      />
    </>
  );
}
