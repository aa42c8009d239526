// One asset: header with its badges, ownership proof (TXT record, "Check now", coverage, bypass),
// details to edit, the verification history, and archive/restore for admins and owners.
import { Badge, Button, Group, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { TextLink } from '../../components/links.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { ApiError } from '../../lib/api.ts';
import { archiveAsset, assetKeys, assetQuery, restoreAsset, updateAsset } from '../../lib/assets-api.ts';
import { notifyError, notifySuccess } from '../../lib/errors.ts';
import { formatDate, formatDateTime } from '../../lib/format.ts';
import { isTenantAdmin, useTenant } from '../../lib/me.ts';
import type { Asset, AssetDetail, AssetLogEntry, UpdateAssetBody } from '../../lib/types.ts';
import { useConfirmedAction } from '../../lib/use-confirmed-action.ts';
import { useForm } from '../../lib/use-form.ts';
import {
  ArchivedBadge,
  checkTags,
  fieldErrorsOf,
  KindBadge,
  LOG_EVENTS,
  parseTags,
  showsTarget,
  VerificationBadge,
} from './asset-ui.tsx';
import { ImageArchiveCard } from './ImageArchiveCard.tsx';
import { OwnershipCard } from './OwnershipCard.tsx';
import { useAssetUpdater } from './use-asset-updater.ts';

export function AssetDetailPage({ assetId }: { assetId: string }) {
  const tenant = useTenant();
  const query = useQuery(assetQuery(tenant.id, assetId));

  if (query.isPending)
    return (
      <>
        <BackLink />
        <LoadingState label="Loading the asset…" />
      </>
    );
  if (query.isError) {
    // A malformed id in the address is refused as invalid (400): to the reader it is not found either.
    const notFound =
      query.error instanceof ApiError && (query.error.status === 404 || query.error.code === 'validation_failed');
    return (
      <>
        <BackLink />
        <PageHeader title={notFound ? 'Asset not found' : 'Asset'} titleContext={tenant.name} />
        <ErrorState
          error={
            notFound
              ? new Error(`There is no asset with this id in ${tenant.name}. It may belong to another tenant.`)
              : query.error
          }
          title={notFound ? 'Asset not found' : 'Could not load the asset'}
          onRetry={notFound ? undefined : () => void query.refetch()}
        />
      </>
    );
  }
  return (
    <AssetView detail={query.data} tenantId={tenant.id} tenantName={tenant.name} canAdmin={isTenantAdmin(tenant)} />
  );
}

function BackLink() {
  return (
    <TextLink to="/assets" size="sm" display="inline-block" mb="sm">
      ← All assets
    </TextLink>
  );
}

interface AssetViewProps {
  detail: AssetDetail;
  tenantId: string;
  tenantName: string;
  canAdmin: boolean;
}

function AssetView({ detail, tenantId, tenantName, canAdmin }: AssetViewProps) {
  const { asset } = detail;
  return (
    <>
      <BackLink />
      <PageHeader
        title={asset.name || asset.target}
        titleContext={tenantName}
        description={showsTarget(asset) ? <span className="mono-break">{asset.target}</span> : undefined}
      />
      <Group gap="xs" mt={showsTarget(asset) ? -8 : -12} mb="lg" aria-label="Status" role="group">
        <KindBadge kind={asset.kind} />
        <VerificationBadge status={asset.verification.status} />
        {asset.archivedAt && <ArchivedBadge />}
        <Text size="xs" c="dimmed">
          Added {formatDate(asset.createdAt)}
        </Text>
      </Group>
      <Stack gap="lg">
        <OwnershipCard detail={detail} tenantId={tenantId} tenantName={tenantName} />
        {asset.archive && <ImageArchiveCard asset={asset} tenantId={tenantId} />}
        <EditAssetCard asset={asset} tenantId={tenantId} />
        <HistoryCard log={detail.log} />
        {canAdmin && <ArchiveCard asset={asset} tenantId={tenantId} />}
      </Stack>
    </>
  );
}

type EditValues = { name: string; tags: string; owner: string; notes: string };

const editValues = (a: Asset): EditValues => ({
  name: a.name,
  tags: a.tags.join(', '),
  owner: a.owner ?? '',
  notes: a.notes ?? '',
});

function EditAssetCard({ asset, tenantId }: { asset: Asset; tenantId: string }) {
  const applyAsset = useAssetUpdater(tenantId, asset.id);
  const form = useForm<EditValues>(editValues(asset), (v) => ({
    name: !v.name.trim() ? 'Name is required' : v.name.trim().length > 200 ? 'Use at most 200 characters' : null,
    tags: checkTags(v.tags),
    owner: v.owner.trim().length > 200 ? 'Use at most 200 characters' : null,
    notes: v.notes.length > 5000 ? 'Use at most 5,000 characters' : null,
  }));
  const { reset } = form;

  // Follow the server's copy when it changes (saved here or by someone else), not on every refetch.
  useEffect(() => {
    reset(editValues(asset));
  }, [reset, asset.updatedAt]);

  const changes = (v: EditValues): UpdateAssetBody => {
    const body: UpdateAssetBody = {};
    if (v.name.trim() !== asset.name) body.name = v.name.trim();
    const tags = parseTags(v.tags);
    if (tags.join('\n') !== asset.tags.join('\n')) body.tags = tags;
    if ((v.owner.trim() || null) !== asset.owner) body.owner = v.owner.trim() || null;
    if ((v.notes.trim() || null) !== asset.notes) body.notes = v.notes.trim() || null;
    return body;
  };
  const dirty = Object.keys(changes(form.values)).length > 0;

  const save = useMutation({
    mutationFn: (body: UpdateAssetBody) => updateAsset(tenantId, asset.id, body),
    onSuccess: async ({ asset: saved }) => {
      notifySuccess('Changes saved.');
      reset(editValues(saved));
      await applyAsset(saved);
    },
    onError: (error) => {
      if (error instanceof ApiError && error.code === 'validation_failed') {
        form.setErrors(fieldErrorsOf(error, ['name', 'tags', 'owner', 'notes'] as const));
      }
      notifyError(error, 'Changes not saved');
    },
  });

  return (
    <SectionCard
      headingId="details-heading"
      title="Details"
      description={
        asset.source === 'archive'
          ? 'A label, tags and who is responsible. The target follows the uploaded archive’s digest.'
          : 'A label, tags and who is responsible. The kind and target cannot change: add a new asset instead.'
      }
    >
      <form
        ref={form.formRef}
        noValidate
        onSubmit={form.onSubmit((v) => {
          const body = changes(v);
          if (Object.keys(body).length > 0) save.mutate(body);
        })}
      >
        <Stack gap="md">
          <TextInput label="Name" required maxLength={200} {...form.field('name')} />
          <TextInput
            label="Tags"
            description="Comma separated, e.g. production, web"
            spellCheck={false}
            autoCapitalize="off"
            {...form.field('tags')}
          />
          <TextInput
            label="Owner"
            description="The person or team responsible"
            maxLength={200}
            {...form.field('owner')}
          />
          <Textarea
            label="Notes"
            autosize
            minRows={2}
            maxRows={8}
            value={form.values.notes}
            error={form.errors.notes}
            onChange={(e) => form.setValue('notes', e.currentTarget.value)}
          />
          <Group justify="space-between" align="center" gap="sm">
            <Text size="xs" c="dimmed">
              Last changed {formatDateTime(asset.updatedAt)}
            </Text>
            <Group gap="sm">
              <Button variant="default" disabled={!dirty || save.isPending} onClick={() => reset(editValues(asset))}>
                Discard changes
              </Button>
              <Button type="submit" loading={save.isPending} disabled={!dirty}>
                Save changes
              </Button>
            </Group>
          </Group>
        </Stack>
      </form>
    </SectionCard>
  );
}

function HistoryCard({ log }: { log: AssetLogEntry[] }) {
  // The server sends the latest 50, newest first.
  const entries = log;
  return (
    <SectionCard
      headingId="history-heading"
      title="Verification history"
      description="Checks, proofs, bypasses and archiving, newest first (the latest 50)."
      gap="sm"
    >
      {entries.length === 0 ? (
        <Text size="sm" c="dimmed">
          No history yet.
        </Text>
      ) : (
        <Stack component="ol" gap={0} m={0} p={0} style={{ listStyle: 'none' }}>
          {entries.map((e, i) => {
            const meta = LOG_EVENTS[e.event] ?? { label: e.event, color: 'gray' };
            return (
              <li
                key={e.id}
                style={{
                  borderTop: i === 0 ? undefined : '1px solid var(--mantine-color-default-border)',
                  padding: '0.6rem 0',
                }}
              >
                <Group gap="xs" wrap="wrap" align="center">
                  <Badge variant={meta.variant ?? 'light'} color={meta.color}>
                    {meta.label}
                  </Badge>
                  <Text size="sm" className="nowrap">
                    {formatDateTime(e.at)}
                  </Text>
                  {e.actorEmail && (
                    <Text size="sm" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
                      by {e.actorEmail}
                    </Text>
                  )}
                </Group>
                {e.detail && (
                  <Text size="sm" mt={4} style={{ overflowWrap: 'anywhere' }}>
                    {e.detail}
                  </Text>
                )}
              </li>
            );
          })}
        </Stack>
      )}
    </SectionCard>
  );
}

function ArchiveCard({ asset, tenantId }: { asset: Asset; tenantId: string }) {
  const applyAsset = useAssetUpdater(tenantId, asset.id);
  const archived = asset.archivedAt !== null;
  const name = (a: Asset) => a.name || a.target;
  const action = useConfirmedAction({
    action: async (a: Asset) => {
      const { asset: saved } = a.archivedAt ? await restoreAsset(tenantId, a.id) : await archiveAsset(tenantId, a.id);
      await applyAsset(saved);
    },
    successMessage: (a) => (a.archivedAt ? `${name(a)} was restored.` : `${name(a)} was archived.`),
    errorTitle: archived ? 'Could not restore the asset' : 'Could not archive the asset',
    queryKey: assetKeys.detail(tenantId, asset.id),
    refreshOnError: true,
  });
  // The dialog describes the asset as it was when asked, also while it closes after the change.
  const asked = useRef(asset);
  if (action.target) asked.current = action.target;
  const restoring = asked.current.archivedAt !== null;

  return (
    <SectionCard
      headingId="archive-heading"
      title={archived ? 'Restore asset' : 'Archive asset'}
      gap="sm"
      align="flex-start"
    >
      <Text size="sm" c="dimmed">
        {archived
          ? `Archived ${formatDate(asset.archivedAt)}. Restoring puts it back in the asset list with its verification state and history.`
          : 'Archived assets leave the asset list and are not scanned. Their details and verification history are kept, and admins can restore them.'}
      </Text>
      <Button
        variant={archived ? 'default' : 'light'}
        color={archived ? undefined : 'red'}
        onClick={() => action.ask(asset)}
      >
        {archived ? 'Restore asset' : 'Archive asset'}
      </Button>
      <ConfirmDialog
        {...action.dialogProps}
        title={restoring ? `Restore ${name(asked.current)}?` : `Archive ${name(asked.current)}?`}
        confirmLabel={restoring ? 'Restore asset' : 'Archive asset'}
        danger={!restoring}
      >
        {restoring
          ? 'The asset returns to the asset list.'
          : 'The asset leaves the asset list and is not scanned until it is restored.'}
      </ConfirmDialog>
    </SectionCard>
  );
}
