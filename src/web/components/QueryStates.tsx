import { Alert, Button, Center, EmptyState, Group, Loader, Paper, Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { errorMessage } from '../lib/errors.ts';
import { IconAlert } from './icons.tsx';

export function LoadingState({ label = 'Loading…' }: { label?: string }) {
  return (
    <Center py="xl" role="status" aria-live="polite">
      <Group gap="sm">
        <Loader size="sm" aria-hidden="true" />
        <Text c="dimmed">{label}</Text>
      </Group>
    </Center>
  );
}

export function ErrorState({
  error,
  title = 'Could not load this',
  onRetry,
}: {
  error: unknown;
  title?: string;
  onRetry?: () => void;
}) {
  return (
    <Alert color="red" variant="light" title={title} icon={<IconAlert />} role="alert">
      <Stack gap="sm" align="flex-start">
        <Text size="sm">{errorMessage(error)}</Text>
        {onRetry && (
          <Button size="xs" variant="default" onClick={onRetry}>
            Try again
          </Button>
        )}
      </Stack>
    </Alert>
  );
}

interface ErrorAlertProps {
  /** Nothing is shown while this is null or undefined (a mutation's `error`). */
  error: unknown;
  title?: string;
  /** The alert icon; off for the compact alerts inside cards and dialogs. */
  withIcon?: boolean;
  /** Replaces the error's own message. */
  children?: ReactNode;
}

/** The failure of a form submit or other action, announced at once. */
export function ErrorAlert({ error, title, withIcon = true, children }: ErrorAlertProps) {
  if (error === null || error === undefined) return null;
  return (
    <Alert color="red" variant="light" title={title} icon={withIcon ? <IconAlert /> : undefined} role="alert">
      {children ?? errorMessage(error)}
    </Alert>
  );
}

export function FullPageLoader({ label = 'Loading Rampart…' }: { label?: string }) {
  return (
    <Center mih="100dvh">
      <LoadingState label={label} />
    </Center>
  );
}

/** A filtered list that came back empty. */
export function NoMatches({ children }: { children: ReactNode }) {
  return (
    <Paper withBorder p="xl" radius="md">
      <Text ta="center" c="dimmed">
        {children}
      </Text>
    </Paper>
  );
}

/** A list with nothing in it yet: what will appear here, and the way to add the first one. */
export function FirstItemState({
  icon,
  title,
  description,
  action,
}: {
  icon: ReactNode;
  title: string;
  description: string;
  action?: { label: string; onClick: () => void };
}) {
  return (
    <Paper withBorder p={{ base: 'lg', sm: 'xl' }} radius="md">
      <EmptyState icon={icon} variant="light" title={title} description={description} size="md">
        {action && (
          <Button variant="light" onClick={action.onClick} mt="sm">
            {action.label}
          </Button>
        )}
      </EmptyState>
    </Paper>
  );
}
