// Staff → Platform roles: the installation's approved staff domains, kept in the database beside
// STAFF_EMAIL_DOMAINS (which only the server's environment changes). Super-admins edit them.
import { Button, Group, Stack, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { ErrorAlert, ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { api } from '../../lib/api.ts';
import { notifySuccess } from '../../lib/errors.ts';

interface InstallationSettings {
  staffEmailDomains: string[];
  configuredStaffEmailDomains: string[];
}
const KEY = ['staff', 'installation'];

export function InstallationDomainsCard() {
  const queryClient = useQueryClient();
  const settings = useQuery({ queryKey: KEY, queryFn: () => api<InstallationSettings>('/api/v1/staff/installation') });
  const [value, setValue] = useState('');
  useEffect(() => {
    if (settings.data) setValue(settings.data.staffEmailDomains.join(', '));
  }, [settings.data]);
  const save = useMutation({
    mutationFn: (domains: string[]) =>
      api<InstallationSettings>('/api/v1/staff/installation', { method: 'PUT', body: { staffEmailDomains: domains } }),
    onSuccess: async (next) => {
      queryClient.setQueryData(KEY, next);
      notifySuccess('The approved staff domains were saved.');
      await queryClient.invalidateQueries({ queryKey: ['me'] });
    },
  });
  return (
    <SectionCard headingId="installation-domains" title="Approved staff domains">
      {settings.isPending ? (
        <LoadingState label="Loading the installation's settings…" />
      ) : settings.isError ? (
        <ErrorState
          error={settings.error}
          title="Could not load the installation's settings"
          onRetry={() => void settings.refetch()}
        />
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            save.mutate(
              value
                .split(',')
                .map((d) => d.trim())
                .filter(Boolean),
            );
          }}
        >
          <Stack gap="sm">
            <Text size="sm">
              Staff rights need an address in one of these domains and a platform role. From the server&apos;s
              STAFF_EMAIL_DOMAINS: {settings.data.configuredStaffEmailDomains.join(', ') || 'none'}.
            </Text>
            <ErrorAlert error={save.error} title="The domains were not saved" />
            <TextInput
              label="Domains kept by this installation"
              description="Comma-separated, such as example.com, ops.example.com"
              value={value}
              onChange={(e) => setValue(e.currentTarget.value)}
            />
            <Group justify="flex-end">
              <Button type="submit" loading={save.isPending}>
                Save domains
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </SectionCard>
  );
}
