// First run: a signed-in user who belongs to no tenant yet.
import { Paper, Stack, Text, Title } from '@mantine/core';
import { usePageTitle } from '../../lib/use-page-title.ts';
import { CreateTenantForm } from './CreateTenantForm.tsx';

export function FirstTenantPage() {
  usePageTitle('Create your first tenant');
  return (
    <Stack maw={560} mx="auto" py="xl" gap="lg">
      <Stack gap={6}>
        <Title order={1} size="h2" tabIndex={-1} data-page-heading>
          Create your first tenant
        </Title>
        <Text c="dimmed">
          A tenant holds your assets, scans, findings and compliance work, and the people who share them. You will be
          its owner and can invite your team next. If a colleague has invited you, open the link in their e-mail
          instead.
        </Text>
      </Stack>
      <Paper withBorder p="lg" radius="md">
        <CreateTenantForm autoFocus />
      </Paper>
    </Stack>
  );
}
