// Tenant areas that later work fills in. Until then each explains what it will hold.
import { Anchor, Card, EmptyState, List, Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { IconCmmc, IconCompliance, IconFindings, IconScans, IconWorkers } from '../../components/icons.tsx';
import { TextLink } from '../../components/links.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { useTenant } from '../../lib/me.ts';

interface AreaProps {
  title: string;
  intro: string;
  icon: ReactNode;
  emptyTitle: string;
  emptyText: ReactNode;
  points: ReactNode[];
}

function Area({ title, intro, icon, emptyTitle, emptyText, points }: AreaProps) {
  const tenant = useTenant();
  return (
    <>
      <PageHeader title={title} description={intro} titleContext={tenant.name} />
      <Card withBorder radius="md" p={{ base: 'lg', sm: 'xl' }}>
        <Stack gap="lg" align="center">
          <EmptyState
            icon={icon}
            variant="light"
            title={emptyTitle}
            description={emptyText}
            size="md"
            data-testid="empty-state"
          />
          <Stack gap={6} maw={620} w="100%">
            <Text fw={600} size="sm">
              What you will see here for {tenant.name}
            </Text>
            <List size="sm" spacing={4}>
              {points.map((p, i) => (
                <List.Item key={i}>{p}</List.Item>
              ))}
            </List>
          </Stack>
        </Stack>
      </Card>
    </>
  );
}

export function ScansPage() {
  return (
    <Area
      title="Scans"
      intro="Queued, running and finished scans of your assets."
      icon={<IconScans size={28} />}
      emptyTitle="No scans yet"
      emptyText="Once an asset is verified you can queue port, template, web-application and container scans, run now or on a schedule. Workers pick them up and report back."
      points={[
        'Progress of each scan, including large scans split into 2 to 8 parallel chunks.',
        <>
          Limits from your{' '}
          <TextLink to="/settings/tenant" size="sm">
            tenant settings
          </TextLink>
          : the daily scan quota and scans at once per asset.
        </>,
        'Raw reports, kept in built-in storage or your own S3-compatible bucket.',
      ]}
    />
  );
}

export function FindingsPage() {
  return (
    <Area
      title="Findings"
      intro="Issues your scans discovered, ranked by severity."
      icon={<IconFindings size={28} />}
      emptyTitle="No findings yet"
      emptyText="Findings appear when scans finish: open ports, vulnerable software, weak TLS, risky web-app behaviour and vulnerable image packages."
      points={[
        'Severity, affected asset, evidence and suggested fix for each finding.',
        'Critical findings raise an alert as soon as they appear.',
        'Mapping of each finding to the compliance controls it affects.',
      ]}
    />
  );
}

export function CompliancePage() {
  return (
    <Area
      title="Compliance"
      intro="Framework controls, their status and your evidence."
      icon={<IconCompliance size={28} />}
      emptyTitle="No frameworks tracked yet"
      emptyText="Track SOC 2, GDPR, ISO 27001, NIST CSF and CIS v8. Scan findings map to controls, and you attach evidence to each control."
      points={['Per-framework progress and the controls that still need work.', 'Evidence uploads per control.', 'Exports for your auditor.']}
    />
  );
}

export function CmmcPage() {
  return (
    <Area
      title="CMMC"
      intro="Level 1 supplier cybersecurity (FAR 52.204-21) for companies that bid on government work."
      icon={<IconCmmc size={28} />}
      emptyTitle="No CMMC Level 1 profile yet"
      emptyText="Scope your company, run signed read-only device-check scripts, attest office and process items, and score all 15 controls pass or fail. Your company officer files the score in SPRS; Rampart never files for you."
      points={[
        'Device check: signed Windows and macOS scripts, and the latest result per computer.',
        'Evidence review of your policies against the 15 controls.',
        'Generated policy documents and the yearly renewal date.',
      ]}
    />
  );
}

export function WorkersPage() {
  return (
    <Area
      title="Workers"
      intro="The machines that run your scans."
      icon={<IconWorkers size={28} />}
      emptyTitle="No workers enrolled"
      emptyText="Workers lease queued scans, run them and upload the raw reports. Enroll a desktop worker with a one-time 8-character code, or use the hosted worker."
      points={[
        'Each worker with its last heartbeat, version and the scans it is running.',
        'Enrollment codes (single use, valid 15 minutes).',
        <>
          Report storage and request-signing settings.{' '}
          <Anchor href="/docs" size="sm">
            API reference
          </Anchor>
        </>,
      ]}
    />
  );
}
