// Not found, forbidden and unexpected-error pages.
import { Button, Center, Code, Stack, Text, Title } from '@mantine/core';
import type { ErrorComponentProps } from '@tanstack/react-router';
import { errorMessage } from '../lib/errors.ts';
import { usePageTitle } from '../lib/use-page-title.ts';
import { ButtonLink } from './links.tsx';

export function NotFoundPage() {
  usePageTitle('Page not found');
  return (
    <Center mih="60dvh" p="md" component="main" id="main">
      <Stack align="center" gap="md" maw={480} ta="center">
        <Text fw={700} c="dimmed" size="sm">
          404
        </Text>
        <Title order={1} size="h2">
          Page not found
        </Title>
        <Text c="dimmed">There is no page at this address. Check the link, or go back to the start.</Text>
        <ButtonLink to="/">Go to Rampart home</ButtonLink>
      </Stack>
    </Center>
  );
}

interface ForbiddenProps {
  title?: string;
  message?: string;
}

/** Shown in place of a page the user may not see; nothing of the data is fetched. */
export function ForbiddenPage({
  title = 'Staff only',
  message = 'This area is for Rampart staff. Your account does not have staff rights, so nothing here is shown.',
}: ForbiddenProps) {
  usePageTitle(title);
  return (
    <Stack align="flex-start" gap="md" maw={560} py="xl">
      <Text fw={700} c="dimmed" size="sm">
        403
      </Text>
      <Title order={1} size="h2" tabIndex={-1} data-page-heading>
        {title}
      </Title>
      <Text>{message}</Text>
      <ButtonLink to="/assets" variant="default">
        Back to your tenant
      </ButtonLink>
    </Stack>
  );
}

export function RouteErrorPage({ error, reset }: ErrorComponentProps) {
  usePageTitle('Something went wrong');
  return (
    <Center mih="60dvh" p="md">
      <Stack align="center" gap="md" maw={520} ta="center" role="alert">
        <Title order={1} size="h2">
          Something went wrong
        </Title>
        <Text c="dimmed">The page failed to load. Try again; if it keeps failing, reload the browser tab.</Text>
        <Code block>{errorMessage(error)}</Code>
        <Button onClick={reset}>Try again</Button>
      </Stack>
    </Center>
  );
}
