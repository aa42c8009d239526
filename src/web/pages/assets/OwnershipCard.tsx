// Ownership of one asset: for a pending domain the TXT record to publish (with copy buttons) and
// "Check now"; for covered assets the verified domain that covers them; for IP addresses and
// images on registries nobody can prove, how a super-admin bypass allows scanning; for bypassed
// assets who bypassed and why (in amber, never as verified). Super-admins bypass and revoke here.
import { Alert, Box, Button, Code, CopyButton, Group, Stack, Table, Text, VisuallyHidden } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { IconCheck } from '../../components/icons.tsx';
import { TextLink } from '../../components/links.tsx';
import { ErrorAlert } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { verifyAsset } from '../../lib/assets-api.ts';
import { formatDateTime } from '../../lib/format.ts';
import { useMe } from '../../lib/me.ts';
import type { Asset, AssetDetail, VerifyAssetResponse } from '../../lib/types.ts';
import { dnsNameOf } from './asset-ui.tsx';
import { BypassDialog } from './BypassDialog.tsx';
import { useAssetUpdater } from './use-asset-updater.ts';

type Outcome = VerifyAssetResponse['result'];

interface OwnershipCardProps {
  detail: AssetDetail;
  tenantId: string;
  tenantName: string;
}

export function OwnershipCard({ detail, tenantId, tenantName }: OwnershipCardProps) {
  const me = useMe();
  const { asset, instructions } = detail;
  const v = asset.verification;
  const archived = asset.archivedAt !== null;
  const applyAsset = useAssetUpdater(tenantId, asset.id);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [bypassMode, setBypassMode] = useState<'bypass' | 'revoke' | null>(null);

  const verify = useMutation({
    mutationFn: () => verifyAsset(tenantId, asset.id),
    onMutate: () => setOutcome(null),
    onSuccess: async (data) => {
      setOutcome(data.result);
      await applyAsset(data.asset);
    },
  });

  const proving = asset.kind === 'domain' && instructions !== null;
  // Domains are checked in DNS; other kinds with a DNS name are checked for a covering domain.
  // Nothing to check for an IP address or a Docker Hub image, nor while a bypass is in force.
  const canCheck = !archived && v.status !== 'bypassed' && (asset.kind === 'domain' || dnsNameOf(asset) !== null);

  let body: ReactNode;
  // A web application on a bypassed host is covered by that host's bypass, not by one of its own.
  const hostBypass = v.status === 'bypassed' && v.via === 'covered' && v.coveredBy ? v.coveredBy : null;
  if (hostBypass) body = <HostBypassNote host={hostBypass} />;
  else if (v.status === 'bypassed') body = <BypassedNote asset={asset} />;
  else if (v.status === 'verified' && v.via === 'covered' && v.coveredBy)
    body = <CoveredNote coveredBy={v.coveredBy} />;
  else if (v.status === 'verified' && v.via === 'upload')
    body = (
      <Alert color="green" variant="light" title="Verified by upload" role="note">
        Your tenant uploaded this image archive{v.verifiedAt ? ` (${formatDateTime(v.verifiedAt)})` : ''}, so there is
        nothing to prove: Rampart scans the file itself and reaches no host on anyone&apos;s network.
      </Alert>
    );
  else if (v.status === 'verified')
    body = (
      <Alert color="green" variant="light" title="Verified" role="note">
        Ownership was proven with a DNS TXT record{v.verifiedAt ? ` on ${formatDateTime(v.verifiedAt)}` : ''}. Keep the
        record in place: if it disappears, the domain goes back to pending and is no longer scanned.
      </Alert>
    );
  else if (asset.kind === 'domain') body = null;
  else body = <NotCoveredNote asset={asset} />;

  const title = proving && v.status === 'pending' ? 'Prove ownership' : 'Ownership';
  const description =
    proving && v.status === 'pending'
      ? `Publish this DNS TXT record for ${asset.target} at your DNS provider, then check it. Until then ${tenantName} cannot scan this domain.`
      : undefined;

  return (
    <SectionCard headingId="ownership-heading" title={title} description={description}>
      {archived && (
        <Alert color="gray" variant="light" role="note">
          This asset is archived: it is not checked or scanned. An admin can restore it.
        </Alert>
      )}
      {body}
      {instructions && !archived && (
        <TxtRecord
          recordName={instructions.recordName}
          recordType={instructions.recordType}
          recordValue={instructions.recordValue}
          domain={asset.target}
        />
      )}
      {!outcome && v.lastCheckedAt && <LastCheck asset={asset} />}
      <div aria-live="polite">{outcome && <OutcomeAlert outcome={outcome} domain={asset.kind === 'domain'} />}</div>
      <ErrorAlert error={verify.error} title="The check did not run" withIcon={false} />
      {(canCheck || (me.superAdmin && !archived && v.status !== 'verified')) && (
        <Group gap="sm">
          {canCheck && (
            <Button
              onClick={() => verify.mutate()}
              loading={verify.isPending}
              variant={v.status === 'verified' ? 'default' : 'filled'}
            >
              Check now
            </Button>
          )}
          {me.superAdmin && !archived && v.status === 'pending' && (
            <Button variant="light" color="yellow" onClick={() => setBypassMode('bypass')}>
              Bypass verification
            </Button>
          )}
          {me.superAdmin && !archived && v.status === 'bypassed' && !hostBypass && (
            <Button variant="light" color="yellow" onClick={() => setBypassMode('revoke')}>
              Revoke bypass
            </Button>
          )}
        </Group>
      )}
      <BypassDialog
        mode={bypassMode}
        asset={asset}
        tenantId={tenantId}
        tenantName={tenantName}
        onClose={() => setBypassMode(null)}
      />
    </SectionCard>
  );
}

function TxtRecord({
  recordName,
  recordType,
  recordValue,
  domain,
}: {
  recordName: string;
  recordType: string;
  recordValue: string;
  domain: string;
}) {
  const suffix = `.${domain.replace(/\.$/, '')}`;
  const shortName = recordName.toLowerCase().endsWith(suffix.toLowerCase())
    ? recordName.slice(0, -suffix.length)
    : null;
  return (
    <Stack gap="sm">
      <Table variant="vertical" layout="fixed" withTableBorder verticalSpacing="xs">
        <Table.Tbody>
          <RecordRow label="Name" value={recordName} copyLabel="Copy record name" />
          <Table.Tr>
            <Table.Th w={72}>Type</Table.Th>
            <Table.Td>
              <Code fz="sm">{recordType}</Code>
            </Table.Td>
          </Table.Tr>
          <RecordRow label="Value" value={recordValue} copyLabel="Copy record value" />
        </Table.Tbody>
      </Table>
      <Text size="sm" c="dimmed">
        {shortName && (
          <>
            Some DNS providers add {domain} to the name for you: then enter only <Code>{shortName}</Code>.{' '}
          </>
        )}
        New records usually take 1–5 minutes to be visible, sometimes longer if your provider caches answers. Leave the
        record in place after the check succeeds.
      </Text>
    </Stack>
  );
}

function RecordRow({ label, value, copyLabel }: { label: string; value: string; copyLabel: string }) {
  return (
    <Table.Tr>
      <Table.Th w={72}>{label}</Table.Th>
      <Table.Td>
        <Group gap="xs" wrap="nowrap" align="flex-start" justify="space-between">
          <Text size="sm" className="mono-break" style={{ minWidth: 0 }}>
            {value}
          </Text>
          <CopyButton value={value} timeout={2000}>
            {({ copied, copy }) => (
              <Box style={{ flexShrink: 0 }}>
                <Button
                  size="compact-sm"
                  variant={copied ? 'light' : 'default'}
                  color={copied ? 'green' : undefined}
                  aria-label={copyLabel}
                  leftSection={copied ? <IconCheck size={14} /> : undefined}
                  onClick={copy}
                >
                  {copied ? 'Copied' : 'Copy'}
                </Button>
                <VisuallyHidden role="status">{copied ? `${label} copied` : ''}</VisuallyHidden>
              </Box>
            )}
          </CopyButton>
        </Group>
      </Table.Td>
    </Table.Tr>
  );
}

function OutcomeAlert({ outcome, domain }: { outcome: Outcome; domain: boolean }) {
  if (outcome.outcome === 'verified')
    return (
      <Alert color="green" variant="light" title={domain ? 'Verified' : 'Covered'} role="status">
        {outcome.detail || 'Ownership is proven and scans can run.'}
      </Alert>
    );
  if (outcome.outcome === 'pending')
    return (
      <Alert color="blue" variant="light" title={domain ? 'Record not found yet' : 'Not covered yet'} role="status">
        <Stack gap={4}>
          {outcome.detail && (
            <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
              {outcome.detail}
            </Text>
          )}
          {domain && (
            <Text size="sm">
              If you just published it, wait a few minutes and check again, and check that the name and value match
              exactly.
            </Text>
          )}
        </Stack>
      </Alert>
    );
  return (
    <Alert color="red" variant="light" title="Check failed" role="alert">
      <Stack gap={4}>
        <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
          {outcome.detail}
        </Text>
        <Text size="sm">
          The DNS lookup itself did not work, so nothing was learned about your record. Try again in a few minutes.
        </Text>
      </Stack>
    </Alert>
  );
}

const LAST_RESULT: Record<string, string> = {
  verified: 'record found',
  pending: 'record not found yet',
  failed: 'check failed',
};

function LastCheck({ asset }: { asset: Asset }) {
  const v = asset.verification;
  const result = v.lastResult ? LAST_RESULT[v.lastResult] : null;
  return (
    <Text
      size="sm"
      c={v.lastResult === 'failed' ? 'var(--mantine-color-error)' : 'dimmed'}
      style={{ overflowWrap: 'anywhere' }}
    >
      Last checked {formatDateTime(v.lastCheckedAt)}
      {result ? `: ${result}` : ''}
      {v.lastError ? ` (${v.lastError})` : ''}.
    </Text>
  );
}

function CoveredNote({ coveredBy }: { coveredBy: { assetId: string; target: string } }) {
  return (
    <Alert color="green" variant="light" title={`Covered by ${coveredBy.target}`} role="note">
      This asset is under{' '}
      <TextLink to="/assets/$assetId" params={{ assetId: coveredBy.assetId }} size="sm">
        {coveredBy.target}
      </TextLink>
      , a domain whose ownership is verified, so it can be scanned without a proof of its own. If that domain loses its
      proof, this asset goes back to pending.
    </Alert>
  );
}

function HostBypassNote({ host }: { host: { assetId: string; target: string } }) {
  return (
    <Alert color="yellow" variant="light" title={`Covered by the bypass of host ${host.target}`} role="note">
      This web application runs on{' '}
      <TextLink to="/assets/$assetId" params={{ assetId: host.assetId }} size="sm">
        {host.target}
      </TextLink>
      , a host a Rampart super-admin allowed scanning of without proof of ownership, so it can be scanned too. Ownership
      has not been proven. If that bypass is revoked or the host archived, this asset goes back to pending.
    </Alert>
  );
}

function BypassedNote({ asset }: { asset: Asset }) {
  const bypass = asset.verification.bypass;
  return (
    <Alert color="yellow" variant="light" title="Bypassed by admin" role="note">
      <Stack gap={4}>
        <Text size="sm">
          A Rampart super-admin allowed scanning of this asset without proof of ownership. Ownership has not been
          proven.
        </Text>
        {bypass && (
          <>
            <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
              <strong>Reason:</strong> {bypass.reason}
            </Text>
            <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
              By {bypass.by} on {formatDateTime(bypass.at)}
            </Text>
          </>
        )}
      </Stack>
    </Alert>
  );
}

/** Pending non-domains: what would cover them, or why only a super-admin bypass can. */
function NotCoveredNote({ asset }: { asset: Asset }) {
  const name = dnsNameOf(asset);
  const bypassHint =
    "A super-admin of this installation can bypass verification after confirming it is yours: ask your installation's administrators (on a self-hosted install, the account that opened the first-run setup link). A bypass is recorded and shown as “Bypassed by admin”.";
  let text: ReactNode;
  if (name === null && asset.kind === 'container_image')
    text = (
      <>
        This image is on Docker Hub, a registry you cannot prove ownership of, so no domain of yours can cover it. To
        allow scanning it: {bypassHint}
      </>
    );
  else if (name === null)
    text = (
      <>
        An IP address cannot be proven with DNS, so no domain of yours can cover{' '}
        {asset.kind === 'webapp' ? 'this web app' : 'it'}. To allow scanning it: {bypassHint}
      </>
    );
  else if (asset.kind === 'container_image')
    text = (
      <>
        This image is covered once its registry host, <Code>{name}</Code>, is under a domain you have verified: add that
        domain as an asset and publish its TXT record. For a registry you cannot verify (a public one such as ghcr.io or
        quay.io), a super-admin bypass is the way to allow scanning: {bypassHint}
      </>
    );
  else
    text = (
      <>
        Add the domain that <Code>{name}</Code> belongs to as an asset and publish its TXT record; once that domain is
        verified, this {asset.kind === 'webapp' ? 'web app' : 'host'} is covered by it.
      </>
    );
  return (
    <Alert
      color="gray"
      variant="light"
      title={name === null ? 'Scanning needs a super-admin bypass' : 'Not covered yet'}
      role="note"
    >
      {text}
    </Alert>
  );
}
