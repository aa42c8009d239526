// Centered card used by sign-in, sign-up, password and invitation pages.
import { Paper, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { usePageTitle } from '../lib/use-page-title.ts';
import { Logo } from './Logo.tsx';

interface AuthLayoutProps {
  title: string;
  subtitle?: ReactNode;
  children: ReactNode;
  footer?: ReactNode;
}

export function AuthLayout({ title, subtitle, children, footer }: AuthLayoutProps) {
  usePageTitle(title);
  return (
    <div className="auth-shell">
      <Stack w="100%" maw={440} gap="lg">
        <Logo />
        <Paper component="main" id="main" withBorder shadow="sm" radius="lg" p={{ base: 'lg', sm: 'xl' }}>
          <Stack gap="lg">
            <Stack gap={6}>
              <Title order={1} size="h2" tabIndex={-1} data-page-heading>
                {title}
              </Title>
              {subtitle && (
                <Text c="dimmed" size="sm">
                  {subtitle}
                </Text>
              )}
            </Stack>
            {children}
          </Stack>
        </Paper>
        {footer && (
          <Text size="sm" ta="center" component="div">
            {footer}
          </Text>
        )}
      </Stack>
    </div>
  );
}
