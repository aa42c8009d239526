// /cmmc: the CMMC Level 1 (FAR 52.204-21) area, in the order a company works through it: Scope
// (the company profile), Device check (signed scripts, results per computer), Attestations,
// Policies, Evidence review (language-model review of documents), Score & SPRS.
import { Alert, Badge, Group, Stack, Tabs, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { profileQuery } from '../../lib/cmmc-api.ts';
import { useTenant } from '../../lib/me.ts';
import { EvidenceReview } from '../llm/EvidenceReview.tsx';
import { AttestationsTab } from './AttestationsTab.tsx';
import { DeviceCheckTab } from './DeviceCheckTab.tsx';
import { PoliciesTab } from './PoliciesTab.tsx';
import { ScopeTab } from './ScopeTab.tsx';
import { ScoreTab } from './ScoreTab.tsx';

const TABS = [
  { value: 'scope', label: 'Scope' },
  { value: 'device-check', label: 'Device check' },
  { value: 'attestations', label: 'Attestations' },
  { value: 'policies', label: 'Policies' },
  { value: 'evidence-review', label: 'Evidence review' },
  { value: 'score', label: 'Score & SPRS' },
] as const;
type Tab = (typeof TABS)[number]['value'];

const STATUS_LABELS: Record<string, { label: string; color: string }> = {
  in_progress: { label: 'In progress', color: 'blue' },
  compliant: { label: 'Compliant', color: 'green' },
  renewal_due: { label: 'Renewal due', color: 'yellow' },
  not_compliant: { label: 'Not compliant', color: 'red' },
  expired: { label: 'Expired', color: 'red' },
};

function NeedsScope() {
  return (
    <Alert color="blue" variant="light" title="Fill in Scope first">
      <Group gap="xs">
        <Text size="sm">
          Every step works on your company&apos;s profile (CAGE code, people, mail platform, Affirming Official). Save
          the Scope tab, then come back here.
        </Text>
      </Group>
    </Alert>
  );
}

export function CmmcPage() {
  const tenant = useTenant();
  const profile = useQuery(profileQuery(tenant.id));
  const [tab, setTab] = useState<Tab>('scope');
  const status = profile.data?.profile ? STATUS_LABELS[profile.data.profile.status] : null;

  return (
    <>
      <PageHeader
        title="CMMC Level 1"
        titleContext={tenant.name}
        description="Supplier cybersecurity for companies that handle Federal Contract Information (FAR 52.204-21). All 15 controls are scored pass or fail; your Affirming Official files the result in SPRS. Rampart never files for you."
        actions={
          status ? (
            <Badge color={status.color} variant="light" size="lg">
              {status.label}
            </Badge>
          ) : undefined
        }
      />
      {profile.isPending ? (
        <LoadingState label="Loading the CMMC profile…" />
      ) : profile.isError ? (
        <ErrorState
          error={profile.error}
          title="Could not load the CMMC profile"
          onRetry={() => void profile.refetch()}
        />
      ) : (
        <Tabs value={tab} onChange={(v) => v && setTab(v as Tab)} keepMounted={false}>
          <Tabs.List aria-label="CMMC Level 1 steps" mb="md">
            {TABS.map((t) => (
              <Tabs.Tab key={t.value} value={t.value}>
                {t.label}
              </Tabs.Tab>
            ))}
          </Tabs.List>
          <Tabs.Panel value="scope">
            <ScopeTab tenantId={tenant.id} data={profile.data} onSaved={() => setTab('device-check')} />
          </Tabs.Panel>
          <Tabs.Panel value="device-check">
            {profile.data.profile ? (
              <DeviceCheckTab tenantId={tenant.id} profile={profile.data.profile} canManage={profile.data.canManage} />
            ) : (
              <NeedsScope />
            )}
          </Tabs.Panel>
          <Tabs.Panel value="attestations">
            {profile.data.profile ? <AttestationsTab tenantId={tenant.id} /> : <NeedsScope />}
          </Tabs.Panel>
          <Tabs.Panel value="policies">
            {profile.data.profile ? <PoliciesTab tenantId={tenant.id} /> : <NeedsScope />}
          </Tabs.Panel>
          <Tabs.Panel value="evidence-review">
            <Stack gap="md">
              <Title order={2} size="h3">
                Evidence review
              </Title>
              <Text size="sm">
                Upload up to 8 policy or evidence documents (PDF, text or Markdown) and get a Covered / Partial /
                Missing view per control, with the file names it relied on and what to do next. Nothing is stored, and
                the review does not change your score: only attestations, device checks and approved policies do.
              </Text>
              <EvidenceReview tenantId={tenant.id} headingLevel={3} />
            </Stack>
          </Tabs.Panel>
          <Tabs.Panel value="score">
            {profile.data.profile ? (
              <ScoreTab tenantId={tenant.id} profile={profile.data.profile} canManage={profile.data.canManage} />
            ) : (
              <NeedsScope />
            )}
          </Tabs.Panel>
        </Tabs>
      )}
    </>
  );
}
