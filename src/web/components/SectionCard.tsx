// A bordered card for one section of a page, labelled by its level-2 heading.
import { Group, Paper, Stack, Text, Title, type StackProps } from '@mantine/core';
import type { ReactNode } from 'react';

interface SectionCardProps {
  /** Id of the heading; the section's aria-labelledby points at it. */
  headingId: string;
  title: ReactNode;
  /** Dimmed text right under the heading. */
  description?: ReactNode;
  /** Shown at the end of the heading row, e.g. a status badge. */
  aside?: ReactNode;
  gap?: StackProps['gap'];
  align?: StackProps['align'];
  children: ReactNode;
}

export function SectionCard({ headingId, title, description, aside, gap = 'md', align, children }: SectionCardProps) {
  let heading = (
    <Title order={2} size="h4" id={headingId}>
      {title}
    </Title>
  );
  if (aside)
    heading = (
      <Group justify="space-between" align="center">
        {heading}
        {aside}
      </Group>
    );
  if (description)
    heading = (
      <div>
        {heading}
        <Text size="sm" c="dimmed">
          {description}
        </Text>
      </div>
    );
  return (
    <Paper withBorder p="lg" radius="md" component="section" aria-labelledby={headingId}>
      <Stack gap={gap} align={align}>
        {heading}
        {children}
      </Stack>
    </Paper>
  );
}
