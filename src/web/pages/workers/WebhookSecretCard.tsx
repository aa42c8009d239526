// The tenant's webhook signing secret: workers sign every request with it (X-Rampart-Signature).
// The page shows only whether it exists and when it changed; a new secret is shown once, right
// after it is generated. Rotating keeps the old one valid for a grace period.
import { Alert, Badge, Button, Code, CopyButton, Group, NumberInput, Stack, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { notifyError } from '../../lib/errors.ts';
import { formatDateTime } from '../../lib/format.ts';
import {
  rotateWebhookSecret,
  webhookSecretQuery,
  workersKeys,
  type WebhookSecretCreated,
} from '../../lib/workers-api.ts';

export function WebhookSecretCard({ tenantId }: { tenantId: string }) {
  const queryClient = useQueryClient();
  const query = useQuery(webhookSecretQuery(tenantId));
  const [graceHours, setGraceHours] = useState<number | string>(24);
  const [confirming, setConfirming] = useState(false);
  const [created, setCreated] = useState<WebhookSecretCreated | null>(null);
  const rotate = useMutation({
    mutationFn: () => rotateWebhookSecret(tenantId, typeof graceHours === 'number' ? graceHours : 24),
    onSuccess: (data) => {
      setCreated(data);
      setConfirming(false);
      const { secret: _secret, ...status } = data;
      queryClient.setQueryData(workersKeys.secret(tenantId), status);
    },
    onError: (error) => notifyError(error, 'Could not generate a secret'),
  });

  const status = query.data;
  const graceValid =
    typeof graceHours === 'number' && Number.isInteger(graceHours) && graceHours >= 0 && graceHours <= 168;

  return (
    <SectionCard
      headingId="webhook-secret-heading"
      title="Webhook signing secret"
      description="Workers sign every request body with this secret (X-Rampart-Signature: sha256=…). It is stored encrypted and shown only once."
      aside={
        status && (
          <Badge color={status.configured ? 'green' : 'gray'} variant="light">
            {status.configured ? 'Configured' : 'Not set'}
          </Badge>
        )
      }
    >
      {query.isPending ? (
        <LoadingState label="Loading the signing secret status…" />
      ) : query.isError ? (
        <ErrorState
          error={query.error}
          title="Could not load the signing secret status"
          onRetry={() => void query.refetch()}
        />
      ) : (
        <Stack gap="sm">
          {status!.configured ? (
            <Text size="sm">
              Created {formatDateTime(status!.createdAt)}
              {status!.rotatedAt ? ` (last rotation ${formatDateTime(status!.rotatedAt)})` : ''}.
              {status!.previousValidUntil
                ? ` The previous secret still verifies until ${formatDateTime(status!.previousValidUntil)}.`
                : ''}
            </Text>
          ) : (
            <Text size="sm">No secret yet: workers cannot send signed requests until one is generated.</Text>
          )}
          {created && (
            <Alert variant="light" color="yellow" title="Copy the new secret now">
              <Stack gap="xs">
                <Group gap="sm" wrap="nowrap" align="flex-start">
                  <Code block className="mono-break" style={{ flex: 1 }} data-testid="webhook-secret">
                    {created.secret}
                  </Code>
                  <CopyButton value={created.secret}>
                    {({ copied, copy }) => (
                      <Button size="compact-sm" variant="default" onClick={copy} aria-label="Copy signing secret">
                        {copied ? 'Copied' : 'Copy'}
                      </Button>
                    )}
                  </CopyButton>
                </Group>
                <Text size="sm">It is not shown again. Configure it on every worker of this tenant.</Text>
                <Group>
                  <Button size="compact-sm" variant="default" onClick={() => setCreated(null)}>
                    I have copied it
                  </Button>
                </Group>
              </Stack>
            </Alert>
          )}
          {status!.canManage ? (
            <Group align="flex-end" gap="sm">
              {status!.configured && (
                <NumberInput
                  label="Grace period (hours)"
                  description="How long the old secret keeps working (0–168)."
                  min={0}
                  max={168}
                  step={1}
                  allowDecimal={false}
                  value={graceHours}
                  onChange={setGraceHours}
                  error={graceValid ? null : 'Whole hours from 0 to 168'}
                  w={220}
                />
              )}
              <Button
                onClick={() => (status!.configured ? setConfirming(true) : rotate.mutate())}
                loading={rotate.isPending && !confirming}
                disabled={!graceValid}
              >
                {status!.configured ? 'Rotate secret' : 'Generate secret'}
              </Button>
            </Group>
          ) : (
            <Text size="sm" c="dimmed">
              Only owners and admins can generate or rotate the secret.
            </Text>
          )}
        </Stack>
      )}
      <ConfirmDialog
        opened={confirming}
        title="Rotate the signing secret?"
        confirmLabel="Rotate"
        loading={rotate.isPending}
        onConfirm={() => rotate.mutate()}
        onClose={() => setConfirming(false)}
      >
        {graceHours === 0
          ? 'The current secret stops working immediately; workers fail until they have the new one.'
          : `The current secret keeps working for ${graceHours} more hours, then only the new one does.`}
      </ConfirmDialog>
    </SectionCard>
  );
}
