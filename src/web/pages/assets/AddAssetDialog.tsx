// The "Add asset" dialog: kind, target (with help and examples for the chosen kind), name, tags,
// owner and notes. Server answers about the target show at the Target field; after adding, the
// asset's page opens (for a domain it shows the TXT record to publish).
import {
  Alert,
  Button,
  Group,
  Modal,
  NativeSelect,
  SegmentedControl,
  Stack,
  Text,
  Textarea,
  TextInput,
} from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { TextLink } from '../../components/links.tsx';
import { ErrorAlert } from '../../components/QueryStates.tsx';
import { ApiError } from '../../lib/api.ts';
import { assetKeys, createAsset, updateAsset, uploadImageArchive, type UploadProgress } from '../../lib/assets-api.ts';
import { notifySuccess } from '../../lib/errors.ts';
import { useTenant } from '../../lib/me.ts';
import type { Asset, AssetKind, CreateAssetBody, UpdateAssetBody } from '../../lib/types.ts';
import { useForm } from '../../lib/use-form.ts';
import { ASSET_KINDS, checkTags, checkTarget, fieldErrorsOf, KIND_HELP, KIND_LABELS, parseTags } from './asset-ui.tsx';
import { ArchiveFileInput, UploadProgressBar } from './ImageArchiveCard.tsx';

type AddAssetValues = { kind: AssetKind; target: string; name: string; tags: string; owner: string; notes: string };

const EMPTY: AddAssetValues = { kind: 'domain', target: '', name: '', tags: '', owner: '', notes: '' };

const FIELDS = ['kind', 'target', 'name', 'tags', 'owner', 'notes'] as const;

export function AddAssetDialog({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  return (
    <Modal
      opened={opened}
      onClose={onClose}
      title="Add asset"
      size="lg"
      closeButtonProps={{ 'aria-label': 'Close add asset' }}
    >
      {opened && <AddAssetForm onDone={onClose} />}
    </Modal>
  );
}

function AddAssetForm({ onDone }: { onDone: () => void }) {
  const tenant = useTenant();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [formError, setFormError] = useState<unknown>(null);
  /** The asset that is already registered (409 asset_exists), to link to. */
  const [existingId, setExistingId] = useState<string | null>(null);
  // Container images come from a registry reference or an uploaded archive.
  const [source, setSource] = useState<'reference' | 'archive'>('reference');
  const [file, setFile] = useState<File | null>(null);
  const [fileError, setFileError] = useState<string | null>(null);
  const [progress, setProgress] = useState<UploadProgress | null>(null);
  const fromArchive = (kind: AssetKind) => kind === 'container_image' && source === 'archive';
  const form = useForm<AddAssetValues>(EMPTY, (v) => ({
    target: fromArchive(v.kind) ? null : checkTarget(v.kind, v.target),
    name: v.name.trim().length > 200 ? 'Use at most 200 characters' : null,
    tags: checkTags(v.tags),
    owner: v.owner.trim().length > 200 ? 'Use at most 200 characters' : null,
    notes: v.notes.length > 5000 ? 'Use at most 5,000 characters' : null,
  }));
  const help = KIND_HELP[form.values.kind];

  const add = useMutation({
    mutationFn: async (body: CreateAssetBody): Promise<{ asset: Asset }> => {
      if (!fromArchive(body.kind) || !file) return createAsset(tenant.id, body);
      const { asset } = await uploadImageArchive(tenant.id, file, {
        ...(body.name ? { name: body.name } : {}),
        onProgress: setProgress,
      });
      const rest: UpdateAssetBody = {
        ...(body.tags ? { tags: body.tags } : {}),
        ...(body.owner ? { owner: body.owner } : {}),
        ...(body.notes ? { notes: body.notes } : {}),
      };
      return Object.keys(rest).length > 0 ? updateAsset(tenant.id, asset.id, rest) : { asset };
    },
    onSettled: () => setProgress(null),
    onSuccess: async ({ asset }) => {
      notifySuccess(`${asset.name || asset.target} was added.`);
      onDone();
      await queryClient.invalidateQueries({ queryKey: assetKeys.lists(tenant.id) });
      await navigate({ to: '/assets/$assetId', params: { assetId: asset.id } });
    },
    onError: (error) => {
      setFormError(null);
      if (
        error instanceof ApiError &&
        fromArchive(form.values.kind) &&
        ['invalid_image_archive', 'payload_too_large', 'asset_exists'].includes(error.code)
      ) {
        const details = error.details as { assetId?: unknown } | null | undefined;
        setExistingId(typeof details?.assetId === 'string' ? details.assetId : null);
        setFileError(error.message);
        return;
      }
      if (error instanceof ApiError && error.code === 'asset_exists') {
        const details = error.details as { assetId?: unknown } | null | undefined;
        setExistingId(typeof details?.assetId === 'string' ? details.assetId : null);
        form.setErrors({
          target: error.message || `This ${KIND_LABELS[form.values.kind].toLowerCase()} is already registered.`,
        });
        return;
      }
      if (error instanceof ApiError && error.code === 'validation_failed') {
        const fields = fieldErrorsOf(error, FIELDS);
        if (Object.keys(fields).length > 0) {
          form.setErrors(fields);
          return;
        }
      }
      // Anything else that is about the target (a code or message naming it) goes there too.
      if (error instanceof ApiError && (/target/i.test(error.code) || /target/i.test(error.message))) {
        form.setErrors({ target: error.message });
        return;
      }
      setFormError(error);
    },
  });

  const submit = (v: AddAssetValues) => {
    setFormError(null);
    setExistingId(null);
    setFileError(null);
    if (fromArchive(v.kind) && !file) {
      setFileError('Choose the image archive to upload');
      return;
    }
    const body: CreateAssetBody = { kind: v.kind, target: fromArchive(v.kind) && file ? file.name : v.target.trim() };
    if (v.name.trim()) body.name = v.name.trim();
    const tags = parseTags(v.tags);
    if (tags.length > 0) body.tags = tags;
    if (v.owner.trim()) body.owner = v.owner.trim();
    if (v.notes.trim()) body.notes = v.notes.trim();
    add.mutate(body);
  };

  return (
    <form ref={form.formRef} onSubmit={form.onSubmit(submit)} noValidate>
      <Stack gap="md">
        <NativeSelect
          label="Kind"
          data={ASSET_KINDS.map((k) => ({ value: k, label: KIND_LABELS[k] }))}
          value={form.values.kind}
          onChange={(e) => {
            form.setValue('kind', e.currentTarget.value as AssetKind);
            // The target's error was about the previous kind.
            if (form.errors.target) form.setErrors({ ...form.errors, target: null, kind: null });
          }}
          error={form.errors.kind}
        />
        {!fromArchive(form.values.kind) && (
          <Alert color="gray" variant="light" role="note" p="sm">
            {help.verification}
          </Alert>
        )}
        {form.values.kind === 'container_image' && (
          <SegmentedControl
            aria-label="Image source"
            value={source}
            onChange={(value) => {
              setSource(value as 'reference' | 'archive');
              setFileError(null);
              if (form.errors.target) form.setErrors({ ...form.errors, target: null });
            }}
            data={[
              { value: 'reference', label: 'Registry reference' },
              { value: 'archive', label: 'Upload archive' },
            ]}
          />
        )}
        {fromArchive(form.values.kind) ? (
          <>
            <Text size="sm" c="dimmed">
              An uploaded archive is yours by construction: it is verified at once, and Rampart scans the file without
              reaching any registry or host.
            </Text>
            <ArchiveFileInput
              value={file}
              onChange={(f) => {
                setFile(f);
                setFileError(null);
              }}
              error={fileError}
              disabled={add.isPending}
            />
            {existingId && fileError && (
              <TextLink to="/assets/$assetId" params={{ assetId: existingId }} size="sm" mt={-8} onClick={onDone}>
                Open the asset that holds this archive
              </TextLink>
            )}
            <UploadProgressBar progress={progress} />
          </>
        ) : (
          <TextInput
            label="Target"
            description={help.target}
            placeholder={help.placeholder}
            required
            spellCheck={false}
            autoCapitalize="off"
            autoComplete="off"
            data-autofocus
            {...form.field('target')}
          />
        )}
        {existingId && form.errors.target && (
          <TextLink to="/assets/$assetId" params={{ assetId: existingId }} size="sm" mt={-8} onClick={onDone}>
            Open the asset that is already registered
          </TextLink>
        )}
        <TextInput
          label="Name"
          description="Optional; a short label for lists. Defaults to the target."
          maxLength={200}
          {...form.field('name')}
        />
        <TextInput
          label="Tags"
          description="Optional, comma separated, e.g. production, web"
          spellCheck={false}
          autoCapitalize="off"
          {...form.field('tags')}
        />
        <TextInput
          label="Owner"
          description="Optional; the person or team responsible, e.g. platform team"
          maxLength={200}
          {...form.field('owner')}
        />
        <Textarea
          label="Notes"
          description="Optional"
          autosize
          minRows={2}
          maxRows={6}
          value={form.values.notes}
          error={form.errors.notes}
          onChange={(e) => form.setValue('notes', e.currentTarget.value)}
        />
        <ErrorAlert error={formError} title="The asset was not added" withIcon={false} />
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
          <Button type="submit" loading={add.isPending}>
            {fromArchive(form.values.kind) ? 'Upload and add' : 'Add asset'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
