// Mesh peer registry (docs/mesh.md §2): the peers named by SVC_PEER_URL_* / SVC_SECRET_* entries,
// looked up by name or by the `x-svc-caller` header through the env suffix.
import { peerEnvSuffix, type Config } from '../lib/config.ts';
import { DISPATCH_PATH } from './mesh-signing.ts';

export interface Peer {
  /** Mesh name: the configured role name (SVC_MANAGEMENT_PEER / SVC_BID_PEER) or the suffix in lower-case dash form. */
  name: string;
  /** Env suffix (`BID_PORTAL`). */
  suffix: string;
  /** SVC_PEER_URL_<SUFFIX> as configured. */
  url?: string;
  /** Where requests are sent (resolveTransportUrl of `url`); absent when there is no (usable) URL. */
  transportUrl?: string;
  /** Non-enumerable: read it by property access; JSON.stringify, spreads and loggers never see it. */
  secretTo?: string;
  /** Non-enumerable, as secretTo. */
  secretFrom?: string;
  /** Inbound flow allowlist (SVC_PEER_FLOWS_<SUFFIX>, default ping, health_check). */
  flows: readonly string[];
}

export type PeerUrlForm = 'origin' | 'dispatch' | 'custom';

export interface PeerView {
  name: string;
  hasUrl: boolean;
  urlForm: PeerUrlForm | null;
  secretToPresent: boolean;
  secretFromPresent: boolean;
  flows: string[];
}

export interface PeerRegistry {
  list(): Peer[];
  byName(name: string): Peer | undefined;
  byCaller(caller: string): Peer | undefined;
}

function parseHttpUrl(configured: string): URL {
  const url = new URL(configured); // throws TypeError on an invalid URL
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`not an http(s) URL: ${url.protocol}`);
  url.hash = '';
  return url;
}

/**
 * Which documented form (docs/mesh.md §2.3) a configured peer URL has:
 * - `origin`: no path (or only slashes) → the dispatch path is appended;
 * - `dispatch`: the path already contains `/api/public/svc/dispatch` → used as is;
 * - `custom`: any other path → the complete transport URL.
 * Throws TypeError on a value that is not an http(s) URL.
 */
export function classifyPeerUrl(configured: string): PeerUrlForm {
  const { pathname } = parseHttpUrl(configured);
  if (/^\/*$/.test(pathname)) return 'origin';
  if (pathname.includes(DISPATCH_PATH)) return 'dispatch';
  return 'custom';
}

/**
 * The URL outbound calls go to (docs/mesh.md §2.3 and §6):
 * `https://a.example` or `https://a.example/` → `https://a.example/api/public/svc/dispatch`;
 * a URL whose path contains the dispatch path → as is, minus a trailing slash right after it;
 * any other path → unchanged. The query string is kept; a fragment is dropped; the URL comes back
 * in WHATWG-normalised form (lower-case host, default port removed). Signing is always over
 * DISPATCH_PATH whatever this returns. Throws TypeError on a value that is not an http(s) URL.
 */
export function resolveTransportUrl(configured: string): string {
  const url = parseHttpUrl(configured);
  if (/^\/*$/.test(url.pathname)) url.pathname = DISPATCH_PATH;
  else if (url.pathname.endsWith(`${DISPATCH_PATH}/`)) url.pathname = url.pathname.slice(0, -1);
  return url.toString();
}

function defaultName(suffix: string): string {
  return suffix.toLowerCase().replace(/_/g, '-');
}

function buildPeer(name: string, p: Config['peers'][string]): Peer {
  let transportUrl: string | undefined;
  if (p.url) {
    try {
      transportUrl = resolveTransportUrl(p.url);
    } catch {
      transportUrl = undefined; // config validation already rejects these; a call then fails as peer_not_configured
    }
  }
  const peer: Peer = {
    name,
    suffix: p.suffix,
    ...(p.url ? { url: p.url } : {}),
    ...(transportUrl ? { transportUrl } : {}),
    flows: Object.freeze([...p.flows]),
  };
  if (p.secretTo) Object.defineProperty(peer, 'secretTo', { value: p.secretTo, enumerable: false });
  if (p.secretFrom) Object.defineProperty(peer, 'secretFrom', { value: p.secretFrom, enumerable: false });
  return Object.freeze(peer);
}

export function createPeerRegistry(config: Config): PeerRegistry {
  // Role settings name a peer explicitly; that spelling wins over the derived one.
  const configuredNames = new Map<string, string>();
  for (const roleName of [config.SVC_MANAGEMENT_PEER, config.SVC_BID_PEER]) {
    const trimmed = roleName?.trim();
    if (trimmed) configuredNames.set(peerEnvSuffix(trimmed), trimmed);
  }
  const bySuffix = new Map<string, Peer>();
  for (const [suffix, p] of Object.entries(config.peers)) {
    bySuffix.set(suffix, buildPeer(configuredNames.get(suffix) ?? defaultName(suffix), p));
  }
  const sorted = [...bySuffix.values()].sort((a, b) => a.name.localeCompare(b.name));
  const lookup = (value: string): Peer | undefined =>
    typeof value === 'string' && value.length > 0 ? bySuffix.get(peerEnvSuffix(value)) : undefined;
  return {
    list: () => [...sorted],
    byName: lookup,
    byCaller: lookup,
  };
}

/** Presence-only view for staff pages: never a secret value, never the URL itself. */
export function describePeer(peer: Peer): PeerView {
  let urlForm: PeerUrlForm | null = null;
  if (peer.url) {
    try {
      urlForm = classifyPeerUrl(peer.url);
    } catch {
      urlForm = null;
    }
  }
  return {
    name: peer.name,
    hasUrl: Boolean(peer.url),
    urlForm,
    secretToPresent: Boolean(peer.secretTo),
    secretFromPresent: Boolean(peer.secretFrom),
    flows: [...peer.flows],
  };
}
