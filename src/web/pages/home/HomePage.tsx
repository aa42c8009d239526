// The tenant's home page, where sign-in lands: open findings by severity and their 30-day trend,
// scans running and queued (with why they wait), assets awaiting proof and the CMMC status, each
// linking to the filtered list. A new tenant is told what to do first.
import { Badge, Group, List, SimpleGrid, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { IconAssets } from '../../components/icons.tsx';
import { TextLink } from '../../components/links.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, FirstItemState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { formatDate, pluralize } from '../../lib/format.ts';
import { useTenant } from '../../lib/me.ts';
import { overviewQuery, type Overview } from '../../lib/overview-api.ts';
import { SEVERITIES, SEVERITY_COLORS, SEVERITY_LABELS } from '../findings/finding-ui.tsx';
import { ScanStatusBadge, SCAN_KIND_LABELS, WaitReasonNote } from '../scans/scan-ui.tsx';

const CMMC_STATUS: Record<NonNullable<Overview['cmmc']>['status'], { label: string; color: string }> = {
  in_progress: { label: 'In progress', color: 'blue' },
  compliant: { label: 'Compliant', color: 'green' },
  renewal_due: { label: 'Renewal due', color: 'yellow' },
  not_compliant: { label: 'Not compliant', color: 'red' },
  expired: { label: 'Expired', color: 'red' },
};

export function HomePage() {
  const tenant = useTenant();
  const query = useQuery(overviewQuery(tenant.id));
  return (
    <>
      <PageHeader
        title="Home"
        titleContext={tenant.name}
        description="What needs attention in this tenant: open findings, scans under way, assets awaiting proof of ownership and the CMMC status."
      />
      {query.isPending ? (
        <LoadingState label="Loading the overview…" />
      ) : !query.data ? (
        <ErrorState error={query.error} title="Could not load the overview" onRetry={() => void query.refetch()} />
      ) : (
        <OverviewCards overview={query.data} />
      )}
    </>
  );
}

function OverviewCards({ overview }: { overview: Overview }) {
  const navigate = useNavigate();
  if (overview.assets.total === 0)
    return (
      <Stack gap="lg">
        <FirstItemState
          icon={<IconAssets size={28} />}
          title="Start by adding an asset"
          description="Add a domain, host, web application or container image you own. Once its ownership is proven (or bypassed), run a scan from its page; findings and their trend appear here."
          action={{ label: 'Add an asset', onClick: () => void navigate({ to: '/assets' }) }}
        />
        <CmmcCard cmmc={overview.cmmc} />
      </Stack>
    );
  return (
    <SimpleGrid cols={{ base: 1, md: 2 }} spacing="lg">
      <FindingsCard findings={overview.findings} />
      <ScansCard scans={overview.scans} />
      <AssetsCard assets={overview.assets} />
      <CmmcCard cmmc={overview.cmmc} />
    </SimpleGrid>
  );
}

function FindingsCard({ findings }: { findings: Overview['findings'] }) {
  const opened = findings.trend.reduce((n, d) => n + d.opened, 0);
  const fixed = findings.trend.reduce((n, d) => n + d.fixed, 0);
  return (
    <SectionCard
      headingId="home-findings"
      title="Open findings"
      aside={
        <TextLink to="/findings" size="sm">
          All open findings ({findings.openTotal.toLocaleString()})
        </TextLink>
      }
    >
      {findings.openTotal === 0 && opened === 0 ? (
        <Text size="sm" c="dimmed">
          No findings yet. Run a scan of a verified asset, or import a scanner&apos;s report under Import results.
        </Text>
      ) : (
        <>
          <Group gap="xs" wrap="wrap">
            {[...SEVERITIES].map((s) => (
              <TextLink key={s} to="/findings" search={{ severity: s }} underline="never" data-severity={s}>
                <Badge color={SEVERITY_COLORS[s]} variant={s === 'critical' ? 'filled' : 'light'} size="lg">
                  {SEVERITY_LABELS[s]}: {findings.open[s].toLocaleString()}
                </Badge>
              </TextLink>
            ))}
          </Group>
          {findings.overdue > 0 && (
            <TextLink to="/findings" search={{ overdue: true }} size="sm" c="red.8">
              {pluralize(findings.overdue, 'open finding')} past the SLA due date
            </TextLink>
          )}
          <TrendChart trend={findings.trend} opened={opened} fixed={fixed} />
        </>
      )}
    </SectionCard>
  );
}

/** Opened vs fixed per day as paired bars; the text beside it says the same for screen readers. */
function TrendChart({ trend, opened, fixed }: { trend: Overview['findings']['trend']; opened: number; fixed: number }) {
  const max = Math.max(1, ...trend.map((d) => Math.max(d.opened, d.fixed)));
  const w = 8;
  const h = 48;
  return (
    <Stack gap={4}>
      <Text size="sm" data-trend>
        Last {trend.length} days: {opened.toLocaleString()} opened, {fixed.toLocaleString()} fixed.
      </Text>
      <svg
        viewBox={`0 0 ${trend.length * w} ${h}`}
        width="100%"
        height={h}
        preserveAspectRatio="none"
        aria-hidden="true"
        focusable="false"
      >
        {trend.map((d, i) => (
          <g key={d.day}>
            <rect
              x={i * w + 1}
              y={h - (d.opened / max) * h}
              width={3}
              height={(d.opened / max) * h}
              fill="var(--mantine-color-red-6)"
            />
            <rect
              x={i * w + 4}
              y={h - (d.fixed / max) * h}
              width={3}
              height={(d.fixed / max) * h}
              fill="var(--mantine-color-green-6)"
            />
          </g>
        ))}
      </svg>
      <Text size="xs" c="dimmed">
        Red: first seen that day. Green: fixed that day. From {formatDate(trend[0]?.day)} to{' '}
        {formatDate(trend.at(-1)?.day)}.
      </Text>
    </Stack>
  );
}

function ScansCard({ scans }: { scans: Overview['scans'] }) {
  return (
    <SectionCard
      headingId="home-scans"
      title="Scans under way"
      aside={
        <TextLink to="/scans" search={{ active: true }} size="sm">
          All unfinished scans
        </TextLink>
      }
      description={`${scans.running.toLocaleString()} running, ${scans.queued.toLocaleString()} queued`}
    >
      {scans.active.length === 0 ? (
        <Text size="sm" c="dimmed">
          No scan is running or queued. Open an asset and choose Run scan, or set up a schedule under Schedules.
        </Text>
      ) : (
        <List listStyleType="none" spacing="sm">
          {scans.active.map((s) => (
            <List.Item key={s.id}>
              <Group gap="xs" wrap="wrap">
                <TextLink to="/scans/$scanId" params={{ scanId: s.id }} size="sm">
                  {SCAN_KIND_LABELS[s.kind]} of {s.asset.name}
                </TextLink>
                <ScanStatusBadge status={s.status} outcome={s.outcome} />
              </Group>
              <WaitReasonNote scan={s} compact />
            </List.Item>
          ))}
        </List>
      )}
    </SectionCard>
  );
}

function AssetsCard({ assets }: { assets: Overview['assets'] }) {
  return (
    <SectionCard
      headingId="home-assets"
      title="Assets awaiting proof"
      aside={
        <TextLink to="/assets" search={{ status: 'pending' }} size="sm">
          All awaiting proof ({assets.awaitingProof.toLocaleString()})
        </TextLink>
      }
      description={`${pluralize(assets.total, 'asset')} in this tenant. No scan runs against an asset until its ownership is proven.`}
    >
      {assets.pending.length === 0 ? (
        <Text size="sm" c="dimmed">
          Every asset&apos;s ownership is proven or bypassed.
        </Text>
      ) : (
        <List listStyleType="none" spacing="xs">
          {assets.pending.map((a) => (
            <List.Item key={a.id}>
              <TextLink to="/assets/$assetId" params={{ assetId: a.id }} size="sm">
                {a.name}
              </TextLink>{' '}
              <Text span size="xs" c="dimmed">
                {a.target}
              </Text>
            </List.Item>
          ))}
        </List>
      )}
    </SectionCard>
  );
}

function CmmcCard({ cmmc }: { cmmc: Overview['cmmc'] }) {
  return (
    <SectionCard
      headingId="home-cmmc"
      title="CMMC Level 1"
      aside={
        <TextLink to="/cmmc" size="sm">
          Open CMMC
        </TextLink>
      }
    >
      {!cmmc ? (
        <Text size="sm" c="dimmed">
          Not started. If you bid on U.S. defense contracts, fill in the Scope step under CMMC to begin the annual
          self-assessment.
        </Text>
      ) : (
        <Stack gap="xs">
          <Group gap="xs">
            <Text size="sm">Status:</Text>
            <Badge color={CMMC_STATUS[cmmc.status].color} variant="light" data-cmmc-status={cmmc.status}>
              {CMMC_STATUS[cmmc.status].label}
            </Badge>
          </Group>
          <Text size="sm">
            {cmmc.nextDue
              ? `Next affirmation due ${formatDate(cmmc.nextDue)} (${
                  cmmc.daysUntilDue! >= 0
                    ? `in ${pluralize(cmmc.daysUntilDue!, 'day')}`
                    : `${pluralize(-cmmc.daysUntilDue!, 'day')} ago`
                }).`
              : 'No affirmation yet: finish the steps and confirm the score in SPRS to set the first due date.'}
          </Text>
        </Stack>
      )}
    </SectionCard>
  );
}
