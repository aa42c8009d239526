import { Group, Text } from '@mantine/core';
import { IconShield } from './icons.tsx';

export function Logo({ withText = true }: { withText?: boolean }) {
  return (
    <Group gap={8} wrap="nowrap" c="var(--mantine-primary-color-filled)">
      <IconShield size={26} strokeWidth={2.2} />
      {withText && (
        <Text fw={750} size="lg" c="var(--mantine-color-text)" style={{ letterSpacing: '-0.01em' }}>
          Rampart
        </Text>
      )}
    </Group>
  );
}
