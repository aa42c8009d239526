import { Group, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { usePageTitle } from '../lib/use-page-title.ts';

interface PageHeaderProps {
  title: string;
  description?: ReactNode;
  actions?: ReactNode;
  /** Extra context for the document title, e.g. the tenant name. */
  titleContext?: string;
}

export function PageHeader({ title, description, actions, titleContext }: PageHeaderProps) {
  usePageTitle(titleContext ? `${title} · ${titleContext}` : title);
  return (
    <Group justify="space-between" align="flex-start" mb="lg" gap="md" wrap="wrap">
      <Stack gap={4} style={{ flex: '1 1 20rem', minWidth: 0 }}>
        <Title order={1} size="h2" tabIndex={-1} data-page-heading>
          {title}
        </Title>
        {description && (
          <Text c="dimmed" size="sm" maw={720}>
            {description}
          </Text>
        )}
      </Stack>
      {actions && <Group gap="sm">{actions}</Group>}
    </Group>
  );
}
