// Which asset an imported finding is about, and its host as Rampart's own scanners write it.
// Rampart's scanners put the asset's target host (a name or an address) in every location, so an
// import that says `localhost`, the asset's address or one of its names is rewritten to that host:
// an imported finding and a scanned one for the same thing get the same location key and are one
// finding. A report of several hosts is split: each host that is another asset of the tenant (one
// that may be scanned, of a kind the report's scanner fits) goes to that asset's own scan; hosts
// that match no asset are not imported, and the import names them.
import { isIP } from 'node:net';
import type { ImportedFinding } from './importers/index.ts';

export interface RoutingAsset {
  id: string;
  name: string;
  kind: 'domain' | 'host' | 'webapp' | 'container_image';
  target: string;
}

/** The host Rampart's scanners write for an asset (null: a container image has none). */
export function assetHost(a: Pick<RoutingAsset, 'kind' | 'target'>): string | null {
  if (a.kind === 'container_image') return null;
  if (a.kind === 'webapp') {
    const u = URL.parse(a.target);
    return u ? normHost(u.hostname) : null;
  }
  return normHost(a.target);
}

export const normHost = (h: string) =>
  h
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');

const LOOPBACK_NAMES = new Set(['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback']);
export function isLoopback(h: string): boolean {
  const n = normHost(h);
  if (LOOPBACK_NAMES.has(n) || n.endsWith('.localhost')) return true;
  if (isIP(n) === 4) return n.startsWith('127.');
  return n === '::1' || n === '0:0:0:0:0:0:0:1';
}

/** The host a finding's location names (its `host`, or its URL's host). */
export function findingHost(f: Pick<ImportedFinding, 'location'>): string | null {
  if (f.location.host) return normHost(f.location.host);
  if (f.location.url) {
    const u = URL.parse(f.location.url);
    if (u && (u.protocol === 'http:' || u.protocol === 'https:' || u.hostname))
      return u.hostname ? normHost(u.hostname) : null;
  }
  return null;
}

export type Route =
  { kind: 'hostless' } | { kind: 'asset'; asset: RoutingAsset; host: string } | { kind: 'unmatched'; host: string };

export class HostRouter {
  readonly #chosen: RoutingAsset;
  readonly #chosenHost: string | null;
  readonly #chosenAddresses: Set<string>;
  readonly #byHost = new Map<string, RoutingAsset>();
  readonly #cache = new Map<string, RoutingAsset | null>();

  /**
   * `chosen` is the asset the user imported for; `others` the tenant's assets the report may be
   * split to; `chosenAddresses` what the chosen asset's name resolves to.
   */
  constructor(chosen: RoutingAsset, others: RoutingAsset[], chosenAddresses: string[]) {
    this.#chosen = chosen;
    this.#chosenHost = assetHost(chosen);
    this.#chosenAddresses = new Set(chosenAddresses.map(normHost));
    for (const a of others) {
      const h = assetHost(a);
      if (h && !this.#byHost.has(h)) this.#byHost.set(h, a);
    }
    if (this.#chosenHost) this.#byHost.set(this.#chosenHost, chosen);
  }

  /** The asset a host name or address is, or null. */
  match(host: string): RoutingAsset | null {
    const h = normHost(host.includes('://') ? (URL.parse(host)?.hostname ?? host) : host);
    const cached = this.#cache.get(h);
    if (cached !== undefined) return cached;
    let found: RoutingAsset | null = null;
    if (this.#chosenHost && (h === this.#chosenHost || this.#chosenAddresses.has(h) || isLoopback(h)))
      found = this.#chosen;
    else found = this.#byHost.get(h) ?? null;
    if (this.#cache.size < 10_000) this.#cache.set(h, found);
    return found;
  }

  /** Where a finding goes; its host, or failing that one of its aliases, decides. */
  route(f: ImportedFinding): Route {
    const host = findingHost(f);
    if (!host) return { kind: 'hostless' };
    for (const name of [host, ...(f.aliases ?? [])]) {
      const asset = this.match(name);
      if (asset) return { kind: 'asset', asset, host };
    }
    return { kind: 'unmatched', host };
  }
}

/**
 * The finding with its host written as Rampart's scanners write the asset's host (the reported
 * name is kept in the evidence when it differed). Aliases are dropped: they are not stored.
 */
export function canonicalFinding(
  f: ImportedFinding,
  asset: RoutingAsset | null,
  reportedHost: string | null,
): ImportedFinding {
  const { aliases: _aliases, ...rest } = f;
  const host = asset ? assetHost(asset) : null;
  if (!host || !reportedHost || reportedHost === host) return rest;
  const location = { ...rest.location };
  if (location.host) location.host = host;
  if (location.url) {
    // Only the host is swapped, in the text as written: re-serialising the URL would normalise
    // the path (a nuclei match at /.%2e/ is the point of the finding).
    const h = host.includes(':') ? `[${host}]` : host;
    location.url = location.url.replace(
      /^([a-z][a-z0-9+.-]*:\/\/)([^/?#@]*@)?(\[[^\]]*\]|[^/?#:]*)/i,
      (_m, scheme: string, user: string | undefined) => `${scheme}${user ?? ''}${h}`,
    );
  }
  const data = { ...(rest.evidence?.data ?? {}), reportedHost };
  const sized = JSON.stringify(data).length <= 16_384 ? data : rest.evidence?.data;
  return { ...rest, location, evidence: { ...(rest.evidence ?? {}), ...(sized ? { data: sized } : {}) } };
}
