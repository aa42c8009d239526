// Super-admins only: bypass an asset's ownership verification, or revoke a bypass, with a reason.
// Both are written to the platform audit log and the asset's verification log.
import { Button, Group, Modal, Stack, Text, Textarea } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { ErrorAlert } from '../../components/QueryStates.tsx';
import { ApiError } from '../../lib/api.ts';
import { bypassVerification, revokeBypass } from '../../lib/assets-api.ts';
import { notifySuccess } from '../../lib/errors.ts';
import type { Asset } from '../../lib/types.ts';
import { useForm } from '../../lib/use-form.ts';
import { fieldErrorsOf } from './asset-ui.tsx';
import { useAssetUpdater } from './use-asset-updater.ts';

export const REASON_MIN = 10;

/** A host asset's target as a URL writes it (an IPv6 address in brackets). */
const hostOf = (target: string) => (target.includes(':') ? `[${target}]` : target);
export const REASON_MAX = 500;

interface BypassDialogProps {
  /** Which dialog is open, or null. */
  mode: 'bypass' | 'revoke' | null;
  asset: Asset;
  tenantId: string;
  tenantName: string;
  onClose: () => void;
}

export function BypassDialog({ mode, asset, tenantId, tenantName, onClose }: BypassDialogProps) {
  return (
    <Modal
      opened={mode !== null}
      onClose={onClose}
      title={mode === 'revoke' ? 'Revoke bypass' : 'Bypass verification'}
      size="lg"
      closeButtonProps={{ 'aria-label': 'Close dialog' }}
    >
      {mode && <BypassForm mode={mode} asset={asset} tenantId={tenantId} tenantName={tenantName} onDone={onClose} />}
    </Modal>
  );
}

function BypassForm({
  mode,
  asset,
  tenantId,
  tenantName,
  onDone,
}: Omit<BypassDialogProps, 'mode' | 'onClose'> & { mode: 'bypass' | 'revoke'; onDone: () => void }) {
  const applyAsset = useAssetUpdater(tenantId, asset.id);
  const [failure, setFailure] = useState<unknown>(null);
  const form = useForm({ reason: '' }, (v) => {
    const reason = v.reason.trim();
    if (!reason) return { reason: 'Reason is required' };
    if (reason.length < REASON_MIN) return { reason: `Use at least ${REASON_MIN} characters` };
    if (reason.length > REASON_MAX) return { reason: `Use at most ${REASON_MAX} characters` };
    return {};
  });
  const submit = useMutation({
    mutationFn: (reason: string) =>
      mode === 'bypass' ? bypassVerification(asset.id, { reason }) : revokeBypass(asset.id, { reason }),
    onMutate: () => setFailure(null),
    onSuccess: async ({ asset: saved }) => {
      notifySuccess(
        mode === 'bypass'
          ? `Verification of ${asset.target} is bypassed.`
          : `The bypass of ${asset.target} was revoked.`,
      );
      onDone();
      await applyAsset(saved);
    },
    onError: (error) => {
      const reasonIssue = error instanceof ApiError ? fieldErrorsOf(error, ['reason'] as const).reason : undefined;
      if (reasonIssue) form.setErrors({ reason: reasonIssue });
      else setFailure(error);
    },
  });
  const length = form.values.reason.trim().length;

  return (
    <form ref={form.formRef} noValidate onSubmit={form.onSubmit((v) => submit.mutate(v.reason.trim()))}>
      <Stack gap="md">
        {mode === 'bypass' ? (
          <>
            <Text size="sm">
              Scans of <strong className="mono-break">{asset.target}</strong> for {tenantName} will be allowed without
              proof of ownership. Only do this after confirming by other means that {tenantName} may scan it, for
              example an IP address in their own network.
            </Text>
            {asset.kind === 'host' ? (
              <Text size="sm">
                A bypass of a host also covers the web applications on that host: web app assets whose URL names exactly{' '}
                <strong className="mono-break">{hostOf(asset.target)}</strong>, on any port, now or added later. It does
                not cover other hosts or subdomains, and ends for those apps when this bypass is revoked.
              </Text>
            ) : (
              <Text size="sm">
                To cover every web application on a machine at once, bypass the host asset of that machine instead: a
                host&apos;s bypass covers the web apps whose URL names exactly that host, on any port.
              </Text>
            )}
            <Text size="sm">
              The tenant sees the asset as “Bypassed by admin”, in amber, never as proven. The bypass, your e-mail
              address and the reason are written to the platform audit log and to the asset's verification log.
            </Text>
          </>
        ) : (
          <Text size="sm">
            Scans of <strong className="mono-break">{asset.target}</strong>
            {asset.kind === 'host' ? ' and of the web applications its bypass covers' : ''} stop being allowed until
            ownership is proven or it is bypassed again. The revocation, your e-mail address and the reason are written
            to the platform audit log and to the asset's verification log.
          </Text>
        )}
        <Textarea
          label="Reason"
          description={`${REASON_MIN} to ${REASON_MAX} characters (${length} so far)`}
          required
          withAsterisk={false}
          autosize
          minRows={3}
          maxRows={8}
          maxLength={REASON_MAX}
          data-autofocus
          value={form.values.reason}
          error={form.errors.reason}
          onChange={(e) => form.setValue('reason', e.currentTarget.value)}
        />
        <ErrorAlert
          error={failure}
          title={mode === 'bypass' ? 'The bypass was not saved' : 'The bypass was not revoked'}
          withIcon={false}
        />
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
          <Button type="submit" color="yellow" loading={submit.isPending}>
            {mode === 'bypass' ? 'Bypass verification' : 'Revoke bypass'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
