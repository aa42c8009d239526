// What a container image scan keeps of an image's files, and how the layers stack: which paths
// are package metadata (classify), the size cap of each kind, paths cleaned of escapes, and the
// visible files after whiteouts and links (stackLayers, resolveFiles). No I/O.
import { ScannerError } from '../types.ts';

/** Bounds that keep a hostile archive from exhausting memory or time. */
export interface ImageLimits {
  maxLayers: number;
  /** Tar entries across all layers. */
  maxEntries: number;
  /** Bytes of layer tars read after decompression, across all layers. */
  maxUncompressedBytes: number;
  /** Decompressed-to-compressed ratio refused once a stream has produced ratioFloorBytes. */
  maxCompressionRatio: number;
  ratioFloorBytes: number;
  /** manifest.json, index.json, image configs and OCI manifests. */
  maxMetadataBytes: number;
  /** All kept files together. */
  maxKeptBytes: number;
  maxKeptFiles: number;
  /** A package database (dpkg status, apk installed, rpmdb.sqlite) larger than this is refused. */
  maxPackageDbBytes: number;
}

export const DEFAULT_IMAGE_LIMITS: ImageLimits = {
  maxLayers: 512,
  maxEntries: 5_000_000,
  maxUncompressedBytes: 64 * 1024 ** 3,
  maxCompressionRatio: 200,
  ratioFloorBytes: 512 * 1024 ** 2,
  maxMetadataBytes: 8 * 1024 ** 2,
  maxKeptBytes: 1024 ** 3,
  maxKeptFiles: 500_000,
  maxPackageDbBytes: 64 * 1024 ** 2,
};

/** What a kept file is for; the inventory dispatches on it. */
export type KeptKind = 'os-release' | 'dpkg' | 'apk' | 'rpm' | 'rpm-legacy' | 'npm' | 'pypi';

export interface KeptEntry {
  kind: KeptKind;
  data?: Buffer;
  /** A symbolic or hard link, resolved after the layers are stacked. */
  link?: string;
  hard?: boolean;
}

export interface LayerFiles {
  files: Map<string, KeptEntry>;
  whiteouts: string[];
  opaque: string[];
}

export const MiB = 1024 * 1024;
/** Linux's PATH_MAX: no file in a real image has a longer name. */
const MAX_PATH = 4096;
export const hostile = (message: string) => new ScannerError(`The image archive was refused: ${message}`, false);

/**
 * A tar member's path relative to the image root, or '' for the root. `..` segments and NUL bytes
 * are refused: no legitimate image has them, and they are how archives escape their directory.
 */
export function cleanPath(name: string): string {
  if (name.includes('\0')) throw hostile(`an entry name contains a NUL byte`);
  if (name.length > MAX_PATH) throw hostile(`an entry name is longer than ${MAX_PATH} characters`);
  const parts: string[] = [];
  for (const p of name.split('/')) {
    if (p === '' || p === '.') continue;
    if (p === '..') throw hostile(`the entry ${JSON.stringify(name.slice(0, 200))} climbs out of the archive with ..`);
    parts.push(p);
  }
  return parts.join('/');
}

/** Which kept-file kind a path is, or null for the files a scan skips. */
export function classify(path: string): KeptKind | null {
  switch (path) {
    case 'etc/os-release':
    case 'usr/lib/os-release':
      return 'os-release';
    case 'var/lib/dpkg/status':
      return 'dpkg';
    case 'lib/apk/db/installed':
    case 'usr/lib/apk/db/installed':
      return 'apk';
    case 'var/lib/rpm/rpmdb.sqlite':
    case 'usr/lib/sysimage/rpm/rpmdb.sqlite':
      return 'rpm';
    // Berkeley DB and NDB rpm databases are not read; their presence is reported.
    case 'var/lib/rpm/Packages':
    case 'var/lib/rpm/Packages.db':
    case 'usr/lib/sysimage/rpm/Packages.db':
      return 'rpm-legacy';
  }
  if (path.startsWith('var/lib/dpkg/status.d/')) {
    const rest = path.slice('var/lib/dpkg/status.d/'.length);
    return rest && !rest.includes('/') && !rest.endsWith('.md5sums') ? 'dpkg' : null;
  }
  if (path.endsWith('/package.json')) {
    const parts = path.split('/');
    const n = parts.length;
    if (n >= 3 && parts[n - 3] === 'node_modules' && !parts[n - 2]!.startsWith('@') && !parts[n - 2]!.startsWith('.'))
      return 'npm';
    if (n >= 4 && parts[n - 4] === 'node_modules' && parts[n - 3]!.startsWith('@')) return 'npm';
    return null;
  }
  if (path.endsWith('.dist-info/METADATA') || path.endsWith('.egg-info/PKG-INFO') || path.endsWith('.egg-info'))
    return 'pypi';
  return null;
}

// Per kind: the most kept, and whether a bigger file fails the scan (a package database cut short
// would hide packages) or is truncated (Python metadata: the headers come first) or skipped.
export function capOf(kind: KeptKind, limits: ImageLimits): { max: number; over: 'refuse' | 'truncate' | 'skip' } {
  switch (kind) {
    case 'dpkg':
    case 'apk':
      return { max: limits.maxPackageDbBytes, over: 'refuse' };
    case 'rpm':
      return { max: Math.max(limits.maxPackageDbBytes, 4 * limits.maxPackageDbBytes), over: 'refuse' };
    case 'pypi':
      return { max: 256 * 1024, over: 'truncate' };
    case 'os-release':
      return { max: 64 * 1024, over: 'skip' };
    case 'rpm-legacy':
      return { max: 0, over: 'truncate' };
    case 'npm':
      return { max: MiB, over: 'skip' };
  }
}

/** Whether an ancestor directory of path (or path itself, for whiteouts) was removed above. */
function covered(path: string, gone: Set<string>, opaque: Set<string>): boolean {
  if (gone.has(path)) return true;
  if (opaque.has('')) return true;
  for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) {
    const dir = path.slice(0, i);
    if (gone.has(dir) || opaque.has(dir)) return true;
  }
  return false;
}

/**
 * The files visible in the stacked image: walked from the top layer down, a path is taken from the
 * highest layer that has it unless a whiteout or opaque directory in a layer above removed it.
 */
export function stackLayers(layers: LayerFiles[]): Map<string, KeptEntry> {
  const visible = new Map<string, KeptEntry>();
  const gone = new Set<string>();
  const opaque = new Set<string>();
  for (let i = layers.length - 1; i >= 0; i--) {
    const layer = layers[i]!;
    for (const [path, entry] of layer.files) {
      if (!visible.has(path) && !covered(path, gone, opaque)) visible.set(path, entry);
    }
    for (const w of layer.whiteouts) gone.add(w);
    for (const o of layer.opaque) opaque.add(o);
  }
  return visible;
}

export const MAX_LINK_HOPS = 40;

/** A link target as a root-relative path; `..` stops at the root, as it does inside a chroot. */
export function linkTarget(from: string, link: string, hard: boolean): string {
  const parts = hard || link.startsWith('/') ? [] : from.split('/').slice(0, -1);
  for (const p of link.split('/')) {
    if (p === '' || p === '.') continue;
    if (p === '..') parts.pop();
    else parts.push(p);
  }
  return parts.join('/');
}

export function resolveFiles(visible: Map<string, KeptEntry>): Map<string, { kind: KeptKind; data: Buffer }> {
  const out = new Map<string, { kind: KeptKind; data: Buffer }>();
  for (const [path, entry] of visible) {
    let e: KeptEntry | undefined = entry;
    let at = path;
    let hops = 0;
    while (e && !e.data && e.link !== undefined) {
      if (++hops > MAX_LINK_HOPS) throw hostile(`${path} is a symbolic link loop`);
      at = linkTarget(at, e.link, e.hard === true);
      e = visible.get(at);
    }
    if (e?.data) out.set(path, { kind: entry.kind, data: e.data });
  }
  return out;
}
