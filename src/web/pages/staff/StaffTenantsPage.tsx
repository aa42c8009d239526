// Staff → Tenants: every tenant on the platform.
import { Paper, Table, Text, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { DataTable } from '../../components/DataTable.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { formatDate } from '../../lib/format.ts';
import { staffTenantsQuery } from '../../lib/staff-api.ts';

export function StaffTenantsPage() {
  const tenants = useQuery(staffTenantsQuery);
  const [search, setSearch] = useState('');
  const rows = useMemo(() => {
    const q = search.trim().toLowerCase();
    const all = [...(tenants.data?.tenants ?? [])].sort((a, b) => a.name.localeCompare(b.name));
    return q ? all.filter((t) => t.name.toLowerCase().includes(q) || t.slug.includes(q) || t.id === q) : all;
  }, [tenants.data, search]);

  return (
    <>
      <PageHeader
        title="Tenants"
        titleContext="Staff"
        description="All tenants on this Rampart server, with their member counts."
      />
      {tenants.isPending ? (
        <LoadingState label="Loading tenants…" />
      ) : tenants.isError ? (
        <ErrorState error={tenants.error} title="Could not load tenants" onRetry={() => void tenants.refetch()} />
      ) : (
        <>
          <TextInput
            label="Search tenants"
            description="By name, slug or id"
            maw={360}
            mb="md"
            value={search}
            onChange={(e) => setSearch(e.currentTarget.value)}
          />
          <Text size="sm" c="dimmed" mb="xs" aria-live="polite">
            {rows.length} of {tenants.data.tenants.length} tenants
          </Text>
          <Paper withBorder radius="md">
            <DataTable
              label="Tenants"
              minWidth={560}
              striped
              columns={['Name', 'Slug', { label: 'Members', align: 'right' }, 'Created', 'Id']}
              empty={rows.length === 0 && (search.trim() ? 'No tenant matches this search.' : 'No tenants yet.')}
            >
              {rows.map((t) => (
                <Table.Tr key={t.id}>
                  <Table.Td fw={500}>{t.name}</Table.Td>
                  <Table.Td>{t.slug}</Table.Td>
                  <Table.Td ta="right">{t.memberCount}</Table.Td>
                  <Table.Td className="nowrap">{formatDate(t.createdAt)}</Table.Td>
                  <Table.Td>
                    <Text size="xs" c="dimmed" className="mono-break">
                      {t.id}
                    </Text>
                  </Table.Td>
                </Table.Tr>
              ))}
            </DataTable>
          </Paper>
        </>
      )}
    </>
  );
}
