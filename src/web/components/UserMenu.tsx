import { Avatar, Menu, Text, UnstyledButton, useMantineColorScheme } from '@mantine/core';
import { useNavigate } from '@tanstack/react-router';
import { initials, platformRoleLabel } from '../lib/format.ts';
import { useSignOut } from '../lib/me.ts';
import type { Me } from '../lib/types.ts';
import { IconLogout, IconMoon, IconSun, IconUser } from './icons.tsx';

export function UserMenu({ me }: { me: Me }) {
  const navigate = useNavigate();
  const signOut = useSignOut();
  const { colorScheme, setColorScheme } = useMantineColorScheme();
  const dark = colorScheme === 'dark';
  const letters = initials(me.user.name || me.user.email);

  return (
    <Menu position="bottom-end" width={260} shadow="md" withinPortal>
      <Menu.Target>
        {/* The name starts with the visible initials (WCAG 2.5.3, label in name). */}
        <UnstyledButton aria-label={`${letters}, User menu`} style={{ borderRadius: '50%' }}>
          <Avatar color="indigo" radius="xl" size={36} aria-hidden="true">
            {letters}
          </Avatar>
        </UnstyledButton>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Label>
          <Text size="sm" fw={600} c="var(--mantine-color-text)" truncate>
            {me.user.name}
          </Text>
          <Text size="xs" c="dimmed" truncate>
            {me.user.email}
          </Text>
          {me.platformRole && (
            <Text size="xs" c="dimmed">
              Rampart {platformRoleLabel(me.platformRole).toLowerCase()}
            </Text>
          )}
        </Menu.Label>
        <Menu.Divider />
        <Menu.Item leftSection={<IconUser size={16} />} onClick={() => void navigate({ to: '/account' })}>
          Account
        </Menu.Item>
        <Menu.Item
          leftSection={dark ? <IconSun size={16} /> : <IconMoon size={16} />}
          onClick={() => setColorScheme(dark ? 'light' : 'dark')}
        >
          {dark ? 'Light theme' : 'Dark theme'}
        </Menu.Item>
        <Menu.Divider />
        <Menu.Item leftSection={<IconLogout size={16} />} onClick={() => void signOut()}>
          Sign out
        </Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}
