// What a tenant may register, normalised so the same thing is never stored twice, and the DNS
// name its ownership is judged by.
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import type { AssetKind } from './assets-schemas.ts';

export interface NormalisedTarget {
  target: string;
  /** The DNS name ownership is judged by; null when none applies (IP address, Docker Hub image). */
  dnsName: string | null;
}

export class TargetError extends Error {}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

export function normaliseDnsName(input: string): string {
  const ascii = domainToASCII(input.trim().replace(/\.$/, '').toLowerCase());
  if (!ascii || ascii.length > 253) throw new TargetError('Not a valid DNS name.');
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l)) || /^\d+$/.test(labels.at(-1)!))
    throw new TargetError('Give a DNS name such as example.com (no scheme or path).');
  return ascii;
}

// [registry[:port]/]repository[:tag][@sha256:digest]
const IMAGE_RE =
  /^(?:(?<registry>[a-z0-9.-]+(?::\d{1,5})?)\/)?(?<repo>[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*)(?::(?<tag>[\w][\w.-]{0,127}))?(?:@(?<digest>sha256:[a-f0-9]{64}))?$/;

export function normaliseTarget(kind: AssetKind, raw: string): NormalisedTarget {
  const input = raw.trim();
  switch (kind) {
    case 'domain': {
      const name = normaliseDnsName(input);
      return { target: name, dnsName: name };
    }
    case 'host': {
      const bare = input.replace(/^\[|\]$/g, '');
      if (isIP(bare)) return { target: bare.toLowerCase(), dnsName: null };
      const name = normaliseDnsName(input);
      return { target: name, dnsName: name };
    }
    case 'webapp': {
      let url: URL;
      try {
        url = new URL(input);
      } catch {
        throw new TargetError('Give a URL such as https://app.example.com/.');
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        throw new TargetError('Only http and https URLs can be scanned.');
      if (url.username || url.password) throw new TargetError('Leave credentials out of the URL.');
      url.hash = '';
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const dnsName = isIP(host) ? null : normaliseDnsName(host);
      return { target: url.toString(), dnsName };
    }
    case 'container_image': {
      const m = IMAGE_RE.exec(input.toLowerCase() === input ? input : input);
      if (!m?.groups) throw new TargetError('Give an image reference such as ghcr.io/acme/app:1.2 or nginx:1.27.');
      const registry = m.groups.registry && /[.:]/.test(m.groups.registry) ? m.groups.registry : undefined;
      const repo = registry
        ? m.groups.repo!
        : m.groups.registry
          ? `${m.groups.registry}/${m.groups.repo}`
          : m.groups.repo!;
      if (!m.groups.tag && !m.groups.digest)
        throw new TargetError('Add a tag or digest, e.g. :1.2 or @sha256:…, so the scanned image is unambiguous.');
      const target = `${registry ? `${registry}/` : ''}${repo}${m.groups.tag ? `:${m.groups.tag}` : ''}${m.groups.digest ? `@${m.groups.digest}` : ''}`;
      const registryHost = registry?.replace(/:\d+$/, '');
      return { target, dnsName: registryHost && !isIP(registryHost) ? normaliseDnsName(registryHost) : null };
    }
  }
}

/** True when `name` is `domain` or one of its subdomains. */
export function isUnder(name: string, domain: string): boolean {
  return name === domain || name.endsWith(`.${domain}`);
}
