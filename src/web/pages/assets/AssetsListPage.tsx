// Assets: the tenant's inventory (domains, hosts, web apps, container images) with each one's
// verification state, filters kept in the URL, "Load more" paging and the "Add asset" dialog.
import { Button, Group, NativeSelect, Paper, SimpleGrid, Stack, Switch, Table, Text, TextInput } from '@mantine/core';
import { useInfiniteQuery, type InfiniteData, type UseInfiniteQueryResult } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useMemo, useState } from 'react';
import { DataTable } from '../../components/DataTable.tsx';
import { IconAssets, IconPlus } from '../../components/icons.tsx';
import { TextLink } from '../../components/links.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, FirstItemState, LoadingState, NoMatches } from '../../components/QueryStates.tsx';
import { assetsQuery } from '../../lib/assets-api.ts';
import { formatDateTime } from '../../lib/format.ts';
import { useTenant } from '../../lib/me.ts';
import type { Asset, AssetFilters, AssetKind, AssetsPage, VerificationStatus } from '../../lib/types.ts';
import { AddAssetDialog } from './AddAssetDialog.tsx';
import {
  ArchivedBadge,
  ASSET_KINDS,
  KIND_LABELS,
  KindBadge,
  showsTarget,
  STATUS_LABELS,
  TagList,
  VERIFICATION_STATUSES,
  VerificationBadge,
} from './asset-ui.tsx';
import { useUrlText } from '../../lib/use-url-text.ts';

export interface AssetsSearch {
  q?: string;
  kind?: AssetKind;
  status?: VerificationStatus;
  tag?: string;
  archived?: boolean;
}

export function AssetsListPage({ search }: { search: AssetsSearch }) {
  const tenant = useTenant();
  const navigate = useNavigate();
  const [adding, setAdding] = useState(false);

  const update = (patch: Partial<AssetsSearch>) =>
    void navigate({
      from: '/assets',
      to: '/assets',
      search: (prev: AssetsSearch) => ({ ...prev, ...patch }),
      replace: true,
    });
  const [q, setQ] = useUrlText(search.q, (v) => update({ q: v }));
  const [tag, setTag] = useUrlText(search.tag, (v) => update({ tag: v }));

  const filters = useMemo(() => {
    const f: AssetFilters = {};
    if (search.q) f.q = search.q;
    if (search.kind) f.kind = search.kind;
    if (search.status) f.status = search.status;
    if (search.tag) f.tag = search.tag;
    if (search.archived) f.archived = 'true';
    return f;
  }, [search.q, search.kind, search.status, search.tag, search.archived]);
  const query = useInfiniteQuery(assetsQuery(tenant.id, filters));
  const filtered = Object.keys(filters).length > 0;

  return (
    <>
      <PageHeader
        title="Assets"
        titleContext={tenant.name}
        description="Everything you are allowed to scan, with proof that it belongs to you. Domains are proven with a DNS TXT record; hosts, web apps and images under a verified domain are covered by it."
        actions={
          <Button leftSection={<IconPlus />} onClick={() => setAdding(true)}>
            Add asset
          </Button>
        }
      />
      <Paper withBorder p="md" radius="md" mb="lg" component="section" aria-label="Filters">
        <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }} spacing="sm" verticalSpacing="sm">
          <TextInput
            label="Search assets"
            type="search"
            placeholder="Name or target"
            maxLength={200}
            spellCheck={false}
            autoCapitalize="off"
            value={q}
            onChange={(e) => setQ(e.currentTarget.value)}
          />
          <NativeSelect
            label="Kind"
            data={[{ value: '', label: 'Any kind' }, ...ASSET_KINDS.map((k) => ({ value: k, label: KIND_LABELS[k] }))]}
            value={search.kind ?? ''}
            onChange={(e) => update({ kind: (e.currentTarget.value || undefined) as AssetKind | undefined })}
          />
          <NativeSelect
            label="Verification"
            data={[
              { value: '', label: 'Any state' },
              ...VERIFICATION_STATUSES.map((s) => ({ value: s, label: STATUS_LABELS[s] })),
            ]}
            value={search.status ?? ''}
            onChange={(e) => update({ status: (e.currentTarget.value || undefined) as VerificationStatus | undefined })}
          />
          <TextInput
            label="Tag"
            placeholder="e.g. production"
            maxLength={50}
            spellCheck={false}
            autoCapitalize="off"
            value={tag}
            onChange={(e) => setTag(e.currentTarget.value)}
          />
        </SimpleGrid>
        <Group justify="space-between" mt="md" gap="sm">
          <Switch
            label="Show archived"
            description="Archived assets instead of active ones"
            checked={search.archived === true}
            onChange={(e) => update({ archived: e.currentTarget.checked || undefined })}
          />
          {filtered && (
            <Button
              variant="default"
              size="xs"
              onClick={() => void navigate({ to: '/assets', search: {}, replace: true })}
            >
              Clear filters
            </Button>
          )}
        </Group>
      </Paper>
      <AssetsTable
        query={query}
        filtered={Object.keys(filters).some((k) => k !== 'archived')}
        archived={search.archived === true}
        onAdd={() => setAdding(true)}
      />
      <AddAssetDialog opened={adding} onClose={() => setAdding(false)} />
    </>
  );
}

interface AssetsTableProps {
  query: UseInfiniteQueryResult<InfiniteData<AssetsPage>, Error>;
  filtered: boolean;
  archived: boolean;
  onAdd: () => void;
}

function AssetsTable({ query, filtered, archived, onAdd }: AssetsTableProps) {
  if (query.isPending) return <LoadingState label="Loading assets…" />;
  if (!query.data)
    return <ErrorState error={query.error} title="Could not load the assets" onRetry={() => void query.refetch()} />;

  const assets: Asset[] = query.data.pages.flatMap((p) => p.assets);
  if (assets.length === 0) {
    if (filtered || archived)
      return (
        <NoMatches>
          {archived
            ? filtered
              ? 'No archived assets match these filters.'
              : 'No archived assets.'
            : 'No assets match these filters.'}
        </NoMatches>
      );
    return (
      <FirstItemState
        icon={<IconAssets size={28} />}
        title="No assets yet"
        description="Add the domains, hosts, web apps and container images you want to scan. You prove you own a domain with a DNS TXT record before scans run against it."
        action={{ label: 'Add your first asset', onClick: onAdd }}
      />
    );
  }

  return (
    <Stack gap="md">
      <Paper withBorder radius="md">
        <DataTable label="Assets" minWidth={760} columns={['Asset', 'Kind', 'Verification', 'Tags', 'Last checked']}>
          {assets.map((a) => (
            <Table.Tr key={a.id}>
              <Table.Td style={{ maxWidth: 320 }}>
                <Group gap={6} wrap="nowrap" align="center">
                  <TextLink
                    to="/assets/$assetId"
                    params={{ assetId: a.id }}
                    size="sm"
                    fw={600}
                    style={{ wordBreak: 'break-word' }}
                  >
                    {a.name || a.target}
                  </TextLink>
                  {a.archivedAt && <ArchivedBadge />}
                </Group>
                {showsTarget(a) && (
                  <Text size="xs" c="dimmed" className="mono-break">
                    {a.target}
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                <KindBadge kind={a.kind} />
              </Table.Td>
              <Table.Td>
                <VerificationBadge status={a.verification.status} />
                {a.verification.via === 'covered' && a.verification.coveredBy && (
                  <Text size="xs" c="dimmed" style={{ wordBreak: 'break-word' }}>
                    {a.verification.status === 'bypassed'
                      ? `Covered by the bypass of host ${a.verification.coveredBy.target}`
                      : `Covered by ${a.verification.coveredBy.target}`}
                  </Text>
                )}
                {a.verification.status === 'pending' && a.verification.lastResult === 'failed' && (
                  <Text size="xs" c="var(--mantine-color-error)">
                    Last check failed
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                <TagList tags={a.tags} />
              </Table.Td>
              <Table.Td className="nowrap">
                {a.verification.lastCheckedAt ? (
                  formatDateTime(a.verification.lastCheckedAt)
                ) : (
                  <Text span size="sm" c="dimmed">
                    Never
                  </Text>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </DataTable>
      </Paper>
      <Stack gap="xs" align="center">
        <Text size="sm" c="dimmed" aria-live="polite" ta="center">
          {assets.length} {assets.length === 1 ? 'asset' : 'assets'} shown{query.hasNextPage ? '' : '.'}
        </Text>
        {query.hasNextPage && (
          <Button variant="default" loading={query.isFetchingNextPage} onClick={() => void query.fetchNextPage()}>
            Load more
          </Button>
        )}
      </Stack>
      {query.isError && <ErrorState error={query.error} title="Could not load more assets" />}
    </Stack>
  );
}
