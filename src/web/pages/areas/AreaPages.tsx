// Tenant areas that later work fills in. Until then each explains what it will hold.
import { Card, EmptyState, List, Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { IconCmmc } from '../../components/icons.tsx';
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
