// Settings → Storage: where this tenant's files (image archives, evidence, scan reports) are kept.
// Built-in storage by default; admins and owners can connect the tenant's own S3-compatible bucket,
// test the connection, and switch back. Keys are write-only: the page only shows whether they are set.
import { Alert, Badge, Button, Checkbox, Group, Paper, Stack, Switch, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { PasswordField } from '../../components/PasswordField.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { ApiError } from '../../lib/api.ts';
import { notifyError, notifySuccess } from '../../lib/errors.ts';
import { formatDateTime } from '../../lib/format.ts';
import { useTenant } from '../../lib/me.ts';
import {
  removeStorage,
  saveStorage,
  storageKeys,
  storageQuery,
  testStorage,
  type S3SettingsBody,
  type StorageSettings,
} from '../../lib/storage-api.ts';
import { useForm } from '../../lib/use-form.ts';

export function StorageSettingsPage() {
  const tenant = useTenant();
  const query = useQuery(storageQuery(tenant.id));
  return (
    <>
      <PageHeader
        title="Storage"
        titleContext={tenant.name}
        description={`Where ${tenant.name}'s files are kept: uploaded image archives, evidence files and scan reports.`}
      />
      {query.isPending ? (
        <LoadingState label="Loading storage settings…" />
      ) : query.isError ? (
        <ErrorState
          error={query.error}
          title="Could not load the storage settings"
          onRetry={() => void query.refetch()}
        />
      ) : (
        <StorageView tenantId={tenant.id} settings={query.data} />
      )}
    </>
  );
}

type Values = {
  endpoint: string;
  region: string;
  bucket: string;
  pathStyle: boolean;
  prefix: string;
  accessKeyId: string;
  secretAccessKey: string;
  enabled: boolean;
};

const valuesOf = (s: StorageSettings): Values => ({
  endpoint: s.s3?.endpoint ?? '',
  region: s.s3?.region ?? '',
  bucket: s.s3?.bucket ?? '',
  pathStyle: s.s3?.pathStyle ?? true,
  prefix: s.s3?.prefix ?? '',
  accessKeyId: '',
  secretAccessKey: '',
  enabled: s.s3?.enabled ?? true,
});

const FIELDS = ['endpoint', 'region', 'bucket', 'prefix', 'accessKeyId', 'secretAccessKey'] as const;

function validate(v: Values, hasKeys: boolean) {
  let endpoint: string | null = null;
  try {
    const u = new URL(v.endpoint.trim());
    if (u.protocol !== 'http:' && u.protocol !== 'https:') endpoint = 'Use an http:// or https:// URL';
  } catch {
    endpoint = v.endpoint.trim() ? 'Use an http:// or https:// URL' : 'Endpoint is required';
  }
  const bucket = v.bucket.trim();
  return {
    endpoint,
    region: !v.region.trim()
      ? 'Region is required (R2 uses auto)'
      : /^[a-z0-9][a-z0-9_-]*$/i.test(v.region.trim())
        ? null
        : 'Letters, digits, hyphens and underscores',
    bucket: !bucket
      ? 'Bucket is required'
      : bucket.length < 3 || bucket.length > 63 || !/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/.test(bucket)
        ? '3 to 63 lower-case letters, digits, dots and hyphens'
        : null,
    accessKeyId: !hasKeys && !v.accessKeyId.trim() ? 'Access key id is required' : null,
    secretAccessKey: !hasKeys && !v.secretAccessKey.trim() ? 'Secret access key is required' : null,
  };
}

function bodyOf(v: Values): S3SettingsBody {
  return {
    endpoint: v.endpoint.trim(),
    region: v.region.trim(),
    bucket: v.bucket.trim(),
    pathStyle: v.pathStyle,
    prefix: v.prefix.trim(),
    enabled: v.enabled,
    ...(v.accessKeyId.trim() ? { accessKeyId: v.accessKeyId.trim() } : {}),
    ...(v.secretAccessKey.trim() ? { secretAccessKey: v.secretAccessKey.trim() } : {}),
  };
}

function StorageView({ tenantId, settings }: { tenantId: string; settings: StorageSettings }) {
  const queryClient = useQueryClient();
  const readOnly = !settings.canEdit;
  const hasKeys = !!settings.s3?.hasAccessKeyId && !!settings.s3?.hasSecretAccessKey;
  const form = useForm<Values>(valuesOf(settings), (v) => validate(v, hasKeys));
  const { reset } = form;
  const [testResult, setTestResult] = useState<{ ok: boolean; message: string; code?: string } | null>(null);
  const [confirmRemove, setConfirmRemove] = useState(false);

  useEffect(() => {
    reset(valuesOf(settings));
  }, [reset, settings.s3?.updatedAt]);

  const applyFieldErrors = (error: unknown) => {
    if (error instanceof ApiError && error.code === 'validation_failed') {
      const issues = error.fieldIssues();
      form.setErrors(Object.fromEntries(FIELDS.map((f) => [f, issues[`body.${f}`] ?? issues[f] ?? null])));
    }
  };

  const save = useMutation({
    mutationFn: (v: Values) => saveStorage(tenantId, bodyOf(v)),
    onSuccess: (data) => {
      queryClient.setQueryData(storageKeys.settings(tenantId), data);
      setTestResult(null);
      notifySuccess(
        data.active === 's3'
          ? 'Bucket settings saved. New files go to the bucket.'
          : 'Bucket settings saved. New files stay in built-in storage while the bucket is off.',
      );
    },
    onError: (error) => {
      applyFieldErrors(error);
      notifyError(error, 'Storage settings not saved');
    },
  });

  const test = useMutation({
    // The form as it stands when it was changed; otherwise the saved settings (and the result is recorded).
    mutationFn: ({ candidate }: { candidate: boolean }) => {
      if (!candidate) return testStorage(tenantId);
      const { enabled: _enabled, ...rest } = bodyOf(form.values);
      return testStorage(tenantId, rest);
    },
    onMutate: () => setTestResult(null),
    onSuccess: (data) => setTestResult({ ok: true, message: data.message }),
    onError: (error) => {
      applyFieldErrors(error);
      setTestResult({
        ok: false,
        message: error instanceof Error ? error.message : String(error),
        ...(error instanceof ApiError ? { code: error.code } : {}),
      });
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: storageKeys.settings(tenantId) }),
  });

  const remove = useMutation({
    mutationFn: () => removeStorage(tenantId),
    onSuccess: (data) => {
      queryClient.setQueryData(storageKeys.settings(tenantId), data);
      setConfirmRemove(false);
      setTestResult(null);
      reset(valuesOf(data));
      notifySuccess('Back on built-in storage.');
    },
    onError: (error) => notifyError(error, 'Could not switch back'),
  });

  const saved = valuesOf(settings);
  const dirty = (Object.keys(saved) as (keyof Values)[]).some((k) => form.values[k] !== saved[k]);
  const last = settings.s3?.lastTest ?? null;

  return (
    <Stack gap="lg" maw={720}>
      <Paper withBorder p="lg" radius="md">
        <Group justify="space-between" align="center" wrap="wrap" gap="sm">
          <div>
            <Title order={2} size="h4" id="storage-current">
              Current storage
            </Title>
            <Text size="sm" c="dimmed">
              {settings.active === 's3' && settings.s3
                ? `New files go to the bucket ${settings.s3.bucket}${settings.s3.prefix ? ` under ${settings.s3.prefix}/` : ''} at ${settings.s3.endpoint}.`
                : 'New files go to Rampart’s built-in storage on the server.'}{' '}
              Files stored before a switch stay readable where they are.
            </Text>
          </div>
          <Badge
            size="lg"
            variant="light"
            color={settings.active === 's3' ? 'indigo' : 'gray'}
            aria-describedby="storage-current"
          >
            {settings.active === 's3' ? 'Your bucket' : 'Built-in'}
          </Badge>
        </Group>
      </Paper>

      <Paper withBorder p="lg" radius="md">
        <form
          ref={form.formRef}
          noValidate
          onSubmit={form.onSubmit((v) => save.mutate(v))}
          aria-labelledby="bucket-heading"
        >
          <Stack gap="md">
            <div>
              <Title order={2} size="h4" id="bucket-heading">
                Your S3-compatible bucket
              </Title>
              <Text size="sm" c="dimmed">
                Amazon S3, MinIO, Cloudflare R2, Ceph and other S3-compatible stores. The keys need permission to put,
                get and delete objects in the bucket.
              </Text>
            </div>
            {readOnly && (
              <Alert color="gray" variant="light" role="note">
                Only admins and owners can change where files are stored.
              </Alert>
            )}
            <TextInput
              label="Endpoint"
              description="e.g. https://s3.eu-central-1.amazonaws.com or https://minio.example.com:9000. Internal addresses (loopback, private networks) are refused unless your operator allows them."
              required={!readOnly}
              readOnly={readOnly}
              spellCheck={false}
              autoComplete="off"
              {...form.field('endpoint')}
            />
            <Group grow align="flex-start">
              <TextInput
                label="Region"
                description="e.g. eu-central-1; R2 uses auto"
                required={!readOnly}
                readOnly={readOnly}
                spellCheck={false}
                autoComplete="off"
                {...form.field('region')}
              />
              <TextInput
                label="Bucket"
                required={!readOnly}
                readOnly={readOnly}
                spellCheck={false}
                autoComplete="off"
                {...form.field('bucket')}
              />
            </Group>
            <TextInput
              label="Key prefix"
              description="Optional folder inside the bucket, e.g. rampart/production"
              readOnly={readOnly}
              spellCheck={false}
              autoComplete="off"
              {...form.field('prefix')}
            />
            <Checkbox
              label="Path-style addressing"
              description="Needed by MinIO and most self-hosted stores (https://endpoint/bucket/key). Off uses virtual-hosted style (https://bucket.endpoint/key)."
              checked={form.values.pathStyle}
              disabled={readOnly}
              onChange={(e) => form.setValue('pathStyle', e.currentTarget.checked)}
            />
            <TextInput
              label="Access key id"
              description={settings.s3?.hasAccessKeyId ? 'Set. Leave empty to keep it.' : undefined}
              placeholder={settings.s3?.hasAccessKeyId ? '•••••••• (stored)' : undefined}
              required={!readOnly && !hasKeys}
              readOnly={readOnly}
              spellCheck={false}
              autoComplete="off"
              {...form.field('accessKeyId')}
            />
            <PasswordField
              label="Secret access key"
              description={
                settings.s3?.hasSecretAccessKey
                  ? 'Set. Leave empty to keep it. It is stored encrypted and never shown again.'
                  : 'Stored encrypted; never shown again.'
              }
              placeholder={settings.s3?.hasSecretAccessKey ? '•••••••• (stored)' : undefined}
              required={!readOnly && !hasKeys}
              readOnly={readOnly}
              autoComplete="new-password"
              {...form.field('secretAccessKey')}
            />
            <Switch
              label="Store new files in this bucket"
              description="Off keeps the settings but stores new files in built-in storage."
              checked={form.values.enabled}
              disabled={readOnly}
              onChange={(e) => form.setValue('enabled', e.currentTarget.checked)}
            />

            <div aria-live="polite">
              {testResult ? (
                <Alert
                  color={testResult.ok ? 'green' : 'red'}
                  variant="light"
                  title={testResult.ok ? 'Connection works' : 'Connection failed'}
                  role="status"
                >
                  {testResult.message}
                  {testResult.code && (
                    <Text size="xs" c="dimmed" mt={4}>
                      Code: {testResult.code}
                    </Text>
                  )}
                </Alert>
              ) : (
                last && (
                  <Text size="sm" c={last.ok ? 'green.8' : 'red.8'}>
                    Last test {formatDateTime(last.at)}:{' '}
                    {last.ok ? 'connection worked.' : `failed (${last.error ?? 'error'}). ${last.message}`}
                  </Text>
                )
              )}
            </div>

            {!readOnly && (
              <Group justify="space-between" gap="sm" wrap="wrap">
                <Group gap="sm">
                  <Button
                    variant="default"
                    loading={test.isPending}
                    onClick={() => {
                      const candidate = dirty || !settings.s3;
                      if (candidate) {
                        const errors = validate(form.values, hasKeys);
                        if (Object.values(errors).some(Boolean)) {
                          form.setErrors(errors);
                          return;
                        }
                      }
                      test.mutate({ candidate });
                    }}
                  >
                    Test connection
                  </Button>
                  {settings.s3 && (
                    <Button variant="subtle" color="red" onClick={() => setConfirmRemove(true)}>
                      Switch back to built-in storage
                    </Button>
                  )}
                </Group>
                <Group gap="sm">
                  <Button
                    variant="default"
                    disabled={!dirty || save.isPending}
                    onClick={() => reset(valuesOf(settings))}
                  >
                    Discard changes
                  </Button>
                  <Button type="submit" loading={save.isPending} disabled={!dirty && !!settings.s3}>
                    Save bucket settings
                  </Button>
                </Group>
              </Group>
            )}
            {settings.s3 && (
              <Text size="xs" c="dimmed">
                Last changed {formatDateTime(settings.s3.updatedAt)}
              </Text>
            )}
          </Stack>
        </form>
      </Paper>

      <ConfirmDialog
        opened={confirmRemove}
        title="Switch back to built-in storage?"
        confirmLabel="Switch back"
        danger
        loading={remove.isPending}
        onConfirm={() => remove.mutate()}
        onClose={() => setConfirmRemove(false)}
      >
        The bucket settings and keys are deleted and new files go to built-in storage. Files already in the bucket stay
        there: Rampart can read them again only if you connect the bucket again.
      </ConfirmDialog>
    </Stack>
  );
}
