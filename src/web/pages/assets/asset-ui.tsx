// Shared pieces of the asset pages: kind and verification badges, per-kind help and examples,
// quick client-side target checks (the server stays the authority) and small parsers.
import { Badge, Text } from '@mantine/core';
import type { ApiError } from '../../lib/api.ts';
import type { Asset, AssetKind, AssetLogEntry, VerificationStatus } from '../../lib/types.ts';

export const ASSET_KINDS: AssetKind[] = ['domain', 'host', 'webapp', 'container_image'];
export const VERIFICATION_STATUSES: VerificationStatus[] = ['verified', 'pending', 'bypassed'];

export const KIND_LABELS: Record<AssetKind, string> = {
  domain: 'Domain',
  host: 'Host',
  webapp: 'Web app',
  container_image: 'Container image',
};
const KIND_COLORS: Record<AssetKind, string> = {
  domain: 'indigo',
  host: 'cyan',
  webapp: 'teal',
  container_image: 'grape',
};

export const STATUS_LABELS: Record<VerificationStatus, string> = {
  verified: 'Verified',
  pending: 'Pending',
  bypassed: 'Bypassed by admin',
};

export function isAssetKind(value: unknown): value is AssetKind {
  return typeof value === 'string' && (ASSET_KINDS as string[]).includes(value);
}

export function isVerificationStatus(value: unknown): value is VerificationStatus {
  return typeof value === 'string' && (VERIFICATION_STATUSES as string[]).includes(value);
}

export function KindBadge({ kind }: { kind: AssetKind }) {
  return (
    <Badge variant="light" color={KIND_COLORS[kind] ?? 'gray'} className="nowrap">
      {KIND_LABELS[kind] ?? kind}
    </Badge>
  );
}

/**
 * Verified is green; pending is gray; a super-admin bypass is amber and says so: it is never shown
 * in green or called "verified", because nobody proved ownership.
 */
export function VerificationBadge({ status }: { status: VerificationStatus }) {
  if (status === 'verified')
    return (
      <Badge variant="light" color="green">
        Verified
      </Badge>
    );
  if (status === 'bypassed')
    return (
      <Badge variant="filled" color="yellow" title="A Rampart super-admin allowed scanning without proof of ownership">
        Bypassed by admin
      </Badge>
    );
  return (
    <Badge variant="light" color="gray">
      Pending
    </Badge>
  );
}

export function ArchivedBadge() {
  return (
    <Badge variant="outline" color="gray">
      Archived
    </Badge>
  );
}

interface KindHelp {
  /** What the target is, with examples. */
  target: string;
  placeholder: string;
  /** How an asset of this kind gets cleared for scanning. */
  verification: string;
}

export const KIND_HELP: Record<AssetKind, KindHelp> = {
  domain: {
    target: 'A DNS name you control, without http:// or a path, e.g. example.com or shop.example.com.',
    placeholder: 'example.com',
    verification:
      'You prove ownership by publishing a DNS TXT record. Once verified, its subdomains and the hosts and web apps under it are covered.',
  },
  host: {
    target: 'An IP address or a DNS name, e.g. 203.0.113.10 or mail.example.com.',
    placeholder: '203.0.113.10 or mail.example.com',
    verification:
      'A DNS name is covered by a verified domain it belongs to. An IP address cannot be proven with DNS: a Rampart super-admin bypass is the way to allow scanning it.',
  },
  webapp: {
    target: 'The full URL, starting with http:// or https://, e.g. https://app.example.com/login.',
    placeholder: 'https://app.example.com',
    verification: 'Covered when its host name is under a verified domain of yours.',
  },
  container_image: {
    target: 'An image reference, e.g. ghcr.io/acme/app:1.2, nginx:1.27, or one pinned with @sha256:….',
    placeholder: 'ghcr.io/acme/app:1.2',
    verification:
      'Covered when its registry host is under a verified domain of yours. Images on registries you cannot verify (Docker Hub, ghcr.io) need a Rampart super-admin bypass before they can be scanned.',
  },
};

const IPV4_RE = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

export function isIpAddress(value: string): boolean {
  const v = value.trim().replace(/^\[|\]$/g, '');
  if (IPV4_RE.test(v)) return true;
  // IPv6: hex groups and colons, at least two colons (a rough check; the server decides).
  return /^[0-9a-f:.]+$/i.test(v) && (v.match(/:/g)?.length ?? 0) >= 2;
}

/** The registry host of an image reference, or null for Docker Hub ("nginx:1.27", "acme/app:1"). */
export function imageRegistry(reference: string): string | null {
  const withoutDigest = reference.trim().split('@')[0] ?? '';
  const slash = withoutDigest.indexOf('/');
  if (slash < 0) return null;
  const first = withoutDigest.slice(0, slash);
  return /[.:]/.test(first) ? first.toLowerCase().replace(/:\d+$/, '') : null;
}

/** The DNS name an asset's ownership is judged by, or null (an IP address, a Docker Hub image). */
export function dnsNameOf(asset: Pick<Asset, 'kind' | 'target'>): string | null {
  let name: string | null;
  if (asset.kind === 'webapp') {
    try {
      name = new URL(asset.target).hostname.replace(/^\[|\]$/g, '') || null;
    } catch {
      name = null;
    }
  } else if (asset.kind === 'container_image') name = imageRegistry(asset.target);
  else name = asset.target;
  return name && !isIpAddress(name) ? name : null;
}

const SCHEME_RE = /^[a-z][a-z0-9+.-]*:\/\//i;

/** Quick feedback before the request; null when the target looks acceptable. The server decides. */
export function checkTarget(kind: AssetKind, value: string): string | null {
  const v = value.trim();
  if (!v) return 'Target is required';
  if (v.length > 500) return 'Use at most 500 characters';
  if (/\s/.test(v)) return 'The target cannot contain spaces';
  switch (kind) {
    case 'domain':
      if (SCHEME_RE.test(v)) return 'Enter the domain without http:// or https://, e.g. example.com';
      if (v.includes('/')) return 'Enter only the domain, without a path, e.g. example.com';
      if (isIpAddress(v)) return 'That is an IP address: add it as a host instead';
      return v.replace(/\.$/, '').includes('.') ? null : 'Enter a DNS name like example.com';
    case 'host':
      if (SCHEME_RE.test(v)) return 'Enter a host without http:// or https://; for a URL choose Web app';
      if (v.includes('/')) return 'Enter only the IP address or host name, without a path';
      return isIpAddress(v) || v.replace(/\.$/, '').includes('.')
        ? null
        : 'Enter an IP address like 203.0.113.10 or a DNS name like mail.example.com';
    case 'webapp':
      return /^https?:\/\/[^/\s]+/i.test(v)
        ? null
        : 'Enter a URL starting with http:// or https://, e.g. https://app.example.com';
    case 'container_image': {
      if (SCHEME_RE.test(v)) return 'Enter the image reference without a scheme, e.g. ghcr.io/acme/app:1.2';
      if (v !== v.toLowerCase()) return 'Image references are lower case';
      const lastPart = v.split('@')[0]!.split('/').pop() ?? '';
      if (!v.includes('@') && !lastPart.includes(':')) return 'Add a tag or digest, e.g. :1.2 or @sha256:…';
      return null;
    }
  }
}

const TAG_MAX = 50;
const TAGS_MAX = 30;

/** Tags as typed (comma separated): null when acceptable. */
export function checkTags(text: string): string | null {
  const tags = parseTags(text);
  if (tags.length > TAGS_MAX) return `Use at most ${TAGS_MAX} tags`;
  const long = tags.find((t) => t.length > TAG_MAX);
  return long ? `Keep each tag to ${TAG_MAX} characters at most` : null;
}

/**
 * Field errors of a 400 validation_failed answer, keyed by form field: "body.target" goes to
 * target, "body.tags.2" to tags.
 */
export function fieldErrorsOf<F extends string>(error: ApiError, fields: readonly F[]): Partial<Record<F, string>> {
  const out: Partial<Record<F, string>> = {};
  for (const [path, message] of Object.entries(error.fieldIssues())) {
    const bare = path.replace(/^body\./, '');
    const field = fields.find((f) => bare === f || bare.startsWith(`${f}.`));
    if (field && !out[field]) out[field] = message;
  }
  return out;
}

/** "prod, web ,, api" → ["prod", "web", "api"], without duplicates. */
export function parseTags(text: string): string[] {
  const tags = text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  return [...new Set(tags)];
}

export function TagList({ tags }: { tags: string[] }) {
  if (tags.length === 0)
    return (
      <Text span size="sm" c="dimmed">
        —
      </Text>
    );
  return (
    <span style={{ display: 'inline-flex', flexWrap: 'wrap', gap: 4 }}>
      {tags.map((t) => (
        <Badge key={t} size="sm" variant="outline" color="gray" tt="none">
          {t}
        </Badge>
      ))}
    </span>
  );
}

/** An asset's target, unless its name already says it. */
export function showsTarget(asset: Pick<Asset, 'name' | 'target'>): boolean {
  return asset.name.trim() !== '' && asset.name !== asset.target;
}

export const LOG_EVENTS: Record<
  AssetLogEntry['event'],
  { label: string; color: string; variant?: 'light' | 'filled' | 'outline' }
> = {
  created: { label: 'Added', color: 'indigo' },
  check: { label: 'Checked', color: 'gray' },
  verified: { label: 'Verified', color: 'green' },
  pending: { label: 'Record not found', color: 'gray' },
  failed: { label: 'Check failed', color: 'red' },
  proof_lost: { label: 'Proof lost', color: 'orange' },
  bypassed: { label: 'Bypassed by admin', color: 'yellow', variant: 'filled' },
  bypass_revoked: { label: 'Bypass revoked', color: 'gray', variant: 'outline' },
  archived: { label: 'Archived', color: 'gray', variant: 'outline' },
  restored: { label: 'Restored', color: 'indigo' },
  archive_uploaded: { label: 'Archive uploaded', color: 'grape' },
  archive_replaced: { label: 'New archive version', color: 'grape' },
};
