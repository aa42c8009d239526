// A finding's identity. The fingerprint hashes identifying fields only — asset, scanner, rule,
// normalised location, the rule's discriminator — never title, description, evidence, severity
// or timestamps, which scanners reword between versions (DefectDojo's duplicate storms came from
// hashing such text: docs/decisions.md).
import { sha256Hex } from '../lib/crypto.ts';
import type { FindingLocation, Scanner } from './findings-schemas.ts';

export interface NormalisedLocation {
  /** Stored as jsonb: the normalised fields (the URL without query and fragment). */
  stored: Record<string, string | number>;
  /** One line for people, filters and exports. */
  text: string;
  /** What identifies the place (no line numbers: they shift with unrelated edits). */
  key: string;
  port: number | null;
  path: string | null;
}

const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443, ws: 80, wss: 443, ftp: 21 };

const normaliseHost = (h: string) =>
  h
    .trim()
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^\[(.*)\]$/, '$1');

/** '/a//b/./c/' → '/a/b/c'; the root stays '/'. Case is kept: paths are case-sensitive. */
export function normalisePath(p: string): string {
  const raw = p.split(/[?#]/, 1)[0] ?? '';
  const out: string[] = [];
  for (const seg of raw.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  return `/${out.join('/')}`;
}

export function normaliseLocation(loc: FindingLocation): NormalisedLocation {
  const stored: Record<string, string | number> = {};
  let scheme: string | null = null;
  let host = loc.host ? normaliseHost(loc.host) : null;
  let port = loc.port ?? null;
  let path = loc.path ? normalisePath(loc.path) : null;
  if (loc.url) {
    let u: URL | null = null;
    try {
      u = new URL(loc.url);
    } catch {
      u = null;
    }
    if (u && u.host) {
      scheme = u.protocol.replace(/:$/, '').toLowerCase();
      host = normaliseHost(u.hostname);
      port = u.port ? Number(u.port) : (DEFAULT_PORTS[scheme] ?? port);
      path = normalisePath(u.pathname);
    } else {
      // Not a URL with a host (a file URL, a relative reference): kept as given, minus query and fragment.
      stored.url = loc.url.split(/[?#]/, 1)[0]!;
    }
  }
  const protocol = loc.protocol ? loc.protocol.trim().toLowerCase() : null;
  if (scheme) stored.scheme = scheme;
  if (host) stored.host = host;
  if (port !== null) stored.port = port;
  if (protocol) stored.protocol = protocol;
  if (path) stored.path = path;
  if (loc.param) stored.param = loc.param;
  if (loc.package) stored.package = loc.package.trim();
  if (loc.version) stored.version = loc.version.trim();
  if (loc.file) stored.file = loc.file.trim();
  if (loc.line !== undefined) stored.line = loc.line;
  if (scheme && host) {
    const showPort = port !== null && port !== DEFAULT_PORTS[scheme];
    stored.url = `${scheme}://${host.includes(':') ? `[${host}]` : host}${showPort ? `:${port}` : ''}${path ?? '/'}`;
  }

  const parts: string[] = [];
  if (typeof stored.url === 'string') parts.push(stored.url);
  else if (host)
    parts.push(
      `${protocol ?? 'tcp'}://${host.includes(':') ? `[${host}]` : host}${port !== null ? `:${port}` : ''}${path && path !== '/' ? path : ''}`,
    );
  else if (port !== null) parts.push(`${protocol ?? 'tcp'}/${port}`);
  else if (path) parts.push(path);
  if (loc.param) parts.push(`[${loc.param}]`);
  if (stored.package) parts.push(`${stored.package}${stored.version ? `@${stored.version}` : ''}`);
  if (stored.file) parts.push(`${stored.file}${loc.line !== undefined ? `:${loc.line}` : ''}`);
  const text = parts.join(' ') || '(asset)';

  // The identity: every normalised field but the line, in a fixed order.
  const key = JSON.stringify([
    scheme,
    host,
    port,
    protocol ?? (scheme ? null : port !== null ? 'tcp' : null),
    path,
    loc.param ?? null,
    stored.package ?? null,
    stored.version ?? null,
    stored.file ?? null,
    typeof stored.url === 'string' && !scheme ? stored.url : null,
  ]);
  return { stored, text, key, port, path };
}

export const FINGERPRINT_VERSION = 'v1';

/**
 * sha256 over the identifying fields, lowercase hex. Stable across tenants' data and time. A
 * finding whose rule id is a tool's own (a SARIF producer, ZAP, Nessus, ...) names that tool:
 * it is part of the identity, so two tools' rules never merge. Without a tool the hash is the
 * one of earlier versions.
 */
export function findingFingerprint(f: {
  assetId: string;
  scanner: Scanner;
  ruleId: string;
  locationKey: string;
  discriminator?: string | undefined;
  tool?: string | null | undefined;
}): string {
  const parts: unknown[] = [
    `rampart-finding-${FINGERPRINT_VERSION}`,
    f.assetId,
    f.scanner,
    f.ruleId.trim().toLowerCase(),
    f.locationKey,
    f.discriminator?.trim().toLowerCase() ?? null,
  ];
  if (f.tool) parts.push(`tool:${f.tool.trim().toLowerCase()}`);
  return sha256Hex(JSON.stringify(parts));
}
