// The packages installed in an image, read from the metadata the package managers leave behind
// (dpkg status, apk installed, rpmdb.sqlite, node_modules package.json, Python METADATA) and named
// the way OSV advisories name them: distribution packages by their source package and release.
import { DatabaseSync } from 'node:sqlite';
import type { ImageContents, KeptKind } from './image.ts';
import { normalizePypiName, type InstalledPackage } from './osv.ts';

export type PackageType = 'dpkg' | 'apk' | 'rpm' | 'npm' | 'pypi';

export interface Package extends InstalledPackage {
  type: PackageType;
}

export interface OsInfo {
  id: string;
  versionId?: string;
  prettyName?: string;
  /** The OSV ecosystem of the distribution's packages, or null when OSV has none we can match. */
  ecosystem: string | null;
}

export interface Inventory {
  os: OsInfo | null;
  packages: Package[];
  /** Things the scan could not read, said plainly (shown in details). */
  notes: string[];
}

/** os-release(5): KEY=value lines, values optionally quoted with shell escapes. */
export function parseOsRelease(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*([A-Z0-9_]+)=(.*)$/.exec(line);
    if (!m) continue;
    let v = m[2]!.trim();
    if (
      (v.startsWith('"') && v.endsWith('"') && v.length >= 2) ||
      (v.startsWith("'") && v.endsWith("'") && v.length >= 2)
    )
      v = v.slice(1, -1).replace(/\\(["'\\$`])/g, '$1');
    out[m[1]!] = v;
  }
  return out;
}

/** The OSV ecosystem for an os-release ID and VERSION_ID (`Debian:12`, `Alpine:v3.19`, `Ubuntu:22.04`). */
export function osEcosystem(id: string, versionId: string | undefined): string | null {
  const major = versionId?.match(/^\d+/)?.[0];
  const majorMinor = versionId?.match(/^(\d+)\.(\d+)/);
  switch (id.toLowerCase()) {
    case 'debian':
      return major ? `Debian:${major}` : 'Debian';
    case 'ubuntu':
      return majorMinor ? `Ubuntu:${majorMinor[1]}.${majorMinor[2]!.padStart(2, '0')}` : null;
    case 'alpine':
      return majorMinor ? `Alpine:v${majorMinor[1]}.${majorMinor[2]}` : null;
    case 'wolfi':
      return 'Wolfi';
    case 'chainguard':
      return 'Chainguard';
    case 'rocky':
      return major ? `Rocky Linux:${major}` : null;
    case 'almalinux':
      return major ? `AlmaLinux:${major}` : null;
    default:
      return null;
  }
}

/** RFC 822-style stanzas separated by blank lines; continuation lines start with a space or tab. */
function* stanzas(text: string, separator: RegExp): Generator<Map<string, string>> {
  let cur = new Map<string, string>();
  let last = '';
  for (const line of text.split('\n')) {
    const l = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (l.trim() === '') {
      if (cur.size) yield cur;
      cur = new Map();
      last = '';
      continue;
    }
    if ((l[0] === ' ' || l[0] === '\t') && last) continue;
    const m = separator.exec(l);
    if (!m) continue;
    last = m[1]!;
    cur.set(last, m[2]!.trim());
  }
  if (cur.size) yield cur;
}

/** Groups binary packages under their source package and version (one advisory covers them all). */
function bySource(
  entries: { name: string; version: string; source: string; sourceVersion: string }[],
  ecosystem: string,
  type: PackageType,
  file: string,
): Package[] {
  const groups = new Map<string, Package>();
  for (const e of entries) {
    const key = `${e.source}\0${e.sourceVersion}`;
    const g = groups.get(key);
    if (g) g.binaries!.push(e.name);
    else groups.set(key, { type, ecosystem, name: e.source, version: e.sourceVersion, binaries: [e.name], file });
  }
  return [...groups.values()];
}

/** Installed packages of a dpkg status file (or a distroless status.d entry), by source package. */
export function parseDpkgStatus(
  text: string,
): { name: string; version: string; source: string; sourceVersion: string }[] {
  const out: { name: string; version: string; source: string; sourceVersion: string }[] = [];
  for (const s of stanzas(text, /^([A-Za-z0-9-]+):\s?(.*)$/)) {
    const name = s.get('Package');
    const version = s.get('Version');
    if (!name || !version) continue;
    // "install ok installed"; removed packages keep a stanza with config-files or not-installed.
    const status = s.get('Status');
    if (status !== undefined && status.split(/\s+/)[2] !== 'installed') continue;
    const m = /^(\S+)(?:\s+\((\S+)\))?/.exec(s.get('Source') ?? '');
    out.push({ name, version, source: m?.[1] ?? name, sourceVersion: m?.[2] ?? version });
  }
  return out;
}

/** Installed packages of an apk database, by origin (the APKBUILD advisories are filed under). */
export function parseApkInstalled(
  text: string,
): { name: string; version: string; source: string; sourceVersion: string }[] {
  const out: { name: string; version: string; source: string; sourceVersion: string }[] = [];
  for (const s of stanzas(text, /^([A-Za-z]):(.*)$/)) {
    const name = s.get('P');
    const version = s.get('V');
    if (!name || !version) continue;
    out.push({ name, version, source: s.get('o') || name, sourceVersion: version });
  }
  return out;
}

// rpm header tags (rpmtag.h) and the header blob layout: entry count, data size, 16-byte entries.
const RPMTAG = { name: 1000, version: 1001, release: 1002, epoch: 1003 } as const;
const MAX_RPM_PACKAGES = 100_000;

function rpmHeader(blob: Uint8Array): { name: string; version: string; release: string; epoch?: number } | null {
  const b = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
  if (b.length < 8) return null;
  const count = b.readUInt32BE(0);
  const dataLength = b.readUInt32BE(4);
  const dataStart = 8 + count * 16;
  if (count > 100_000 || dataStart + dataLength > b.length) return null;
  const strings = new Map<number, string>();
  let epoch: number | undefined;
  for (let i = 0; i < count; i++) {
    const at = 8 + i * 16;
    const tag = b.readUInt32BE(at);
    const type = b.readUInt32BE(at + 4);
    const offset = b.readUInt32BE(at + 8);
    if (offset >= dataLength) continue;
    if (tag === RPMTAG.epoch && type === 4 && offset + 4 <= dataLength) epoch = b.readUInt32BE(dataStart + offset);
    else if ((tag === RPMTAG.name || tag === RPMTAG.version || tag === RPMTAG.release) && type === 6) {
      const start = dataStart + offset;
      const end = b.indexOf(0, start);
      if (end < 0 || end > dataStart + dataLength) continue;
      strings.set(tag, b.toString('utf8', start, end));
    }
  }
  const name = strings.get(RPMTAG.name);
  const version = strings.get(RPMTAG.version);
  const release = strings.get(RPMTAG.release);
  if (!name || !version || !release) return null;
  return epoch === undefined ? { name, version, release } : { name, version, release, epoch };
}

/** Installed packages of an rpmdb.sqlite (RHEL 9, Fedora 33+, Rocky, Alma), read in memory. */
export function parseRpmSqlite(data: Buffer): { name: string; version: string }[] | null {
  let db: DatabaseSync | null = null;
  try {
    db = new DatabaseSync(':memory:');
    db.deserialize(data);
    const out: { name: string; version: string }[] = [];
    for (const row of db.prepare(`select blob from Packages limit ${MAX_RPM_PACKAGES}`).iterate() as Iterable<{
      blob: Uint8Array;
    }>) {
      if (!(row.blob instanceof Uint8Array)) continue;
      const h = rpmHeader(row.blob);
      // gpg-pubkey entries are imported signing keys, not software.
      if (!h || h.name === 'gpg-pubkey') continue;
      out.push({ name: h.name, version: `${h.epoch ? `${h.epoch}:` : ''}${h.version}-${h.release}` });
    }
    return out;
  } catch {
    return null;
  } finally {
    db?.close();
  }
}

/** An npm package's name and version from its package.json, when it has both. */
export function parsePackageJson(data: Buffer): { name: string; version: string } | null {
  try {
    const j = JSON.parse(data.toString('utf8')) as { name?: unknown; version?: unknown };
    if (typeof j.name !== 'string' || typeof j.version !== 'string') return null;
    const name = j.name.trim();
    const version = j.version.trim();
    if (!name || !version || name.length > 214 || version.length > 200) return null;
    return { name, version };
  } catch {
    return null;
  }
}

/** A Python distribution's name (PEP 503-normalised) and version from METADATA or PKG-INFO headers. */
export function parsePythonMetadata(text: string): { name: string; version: string } | null {
  let name: string | undefined;
  let version: string | undefined;
  for (const line of text.split('\n')) {
    const l = line.replace(/\r$/, '');
    if (l === '') break;
    const m = /^(Name|Version):\s*(.+)$/i.exec(l);
    if (!m) continue;
    if (m[1]!.toLowerCase() === 'name') name ??= m[2]!.trim();
    else version ??= m[2]!.trim();
  }
  if (!name || !version || name.length > 200 || version.length > 200) return null;
  return { name: normalizePypiName(name), version };
}

/** Everything installed in the image, with its operating system. */
export function takeInventory(image: Pick<ImageContents, 'files'>): Inventory {
  const notes: string[] = [];
  const byKind = new Map<KeptKind, [string, Buffer][]>();
  for (const [path, f] of image.files) {
    const list = byKind.get(f.kind) ?? [];
    list.push([path, f.data]);
    byKind.set(f.kind, list);
  }
  const osFiles = new Map(byKind.get('os-release') ?? []);
  const osText = (osFiles.get('etc/os-release') ?? osFiles.get('usr/lib/os-release'))?.toString('utf8');
  let os: OsInfo | null = null;
  if (osText) {
    const f = parseOsRelease(osText);
    if (f.ID)
      os = {
        id: f.ID,
        ...(f.VERSION_ID ? { versionId: f.VERSION_ID } : {}),
        ...(f.PRETTY_NAME ? { prettyName: f.PRETTY_NAME } : {}),
        ecosystem: osEcosystem(f.ID, f.VERSION_ID),
      };
  }
  const osEco = os?.ecosystem ?? null;
  const packages: Package[] = [];
  const osPackages = (type: PackageType, label: string) => {
    if (!osEco)
      notes.push(
        `${label} packages were found but the distribution (${os ? `${os.id} ${os.versionId ?? ''}`.trim() : 'no os-release'}) has no OSV ecosystem here; they were listed, not matched`,
      );
    return osEco ?? `${os?.id ?? 'unknown'}:${os?.versionId ?? ''}`;
  };

  const dpkg = (byKind.get('dpkg') ?? []).sort(([a], [b]) => (a < b ? -1 : 1));
  if (dpkg.length) {
    const eco = osPackages('dpkg', 'Debian');
    for (const [path, data] of dpkg)
      packages.push(...bySource(parseDpkgStatus(data.toString('utf8')), eco, 'dpkg', path));
  }
  // One database per manager: the same one may be reachable under both its old and new path.
  const first = (kind: KeptKind, order: string[]) => {
    const files = new Map(byKind.get(kind) ?? []);
    const path = order.find((p) => files.has(p));
    return path ? [[path, files.get(path)!] as const] : [];
  };
  for (const [path, data] of first('apk', ['lib/apk/db/installed', 'usr/lib/apk/db/installed'])) {
    packages.push(...bySource(parseApkInstalled(data.toString('utf8')), osPackages('apk', 'Alpine'), 'apk', path));
  }
  for (const [path, data] of first('rpm', ['usr/lib/sysimage/rpm/rpmdb.sqlite', 'var/lib/rpm/rpmdb.sqlite'])) {
    const rpms = parseRpmSqlite(data);
    if (!rpms) {
      notes.push(`${path} could not be read as an rpm SQLite database`);
      continue;
    }
    const eco = osPackages('rpm', 'RPM');
    for (const r of rpms) packages.push({ type: 'rpm', ecosystem: eco, name: r.name, version: r.version, file: path });
  }
  for (const [path] of byKind.get('rpm-legacy') ?? [])
    notes.push(
      `${path} is an rpm database in Berkeley DB or NDB format, which this scanner does not read; its packages are not listed`,
    );
  for (const [path, data] of byKind.get('npm') ?? []) {
    const p = parsePackageJson(data);
    if (p) packages.push({ type: 'npm', ecosystem: 'npm', name: p.name, version: p.version, file: path });
  }
  for (const [path, data] of byKind.get('pypi') ?? []) {
    const p = parsePythonMetadata(data.toString('utf8'));
    if (p) packages.push({ type: 'pypi', ecosystem: 'PyPI', name: p.name, version: p.version, file: path });
  }
  return { os, packages, notes };
}
