// The container scanner as the agent and the CLI use it: read an image archive or OCI layout,
// list its packages, match them against an offline OSV database, and check the image config.
import { statSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { NormalizedFindingInput, ReportCoverage } from '../../../findings/index.ts';
import { SEVERITIES, SEVERITY_RANK, severitySchema, type Severity } from '../../../findings/findings-schemas.ts';
import { WORKER_VERSION } from '../../version.ts';
import { ScannerError, type Scanner, type ScanTask } from '../types.ts';
import {
  configFindings,
  dedupeVulnerabilities,
  vulnerabilityFinding,
  vulnerabilityFor,
  type Vulnerability,
} from './findings.ts';
import { readImage, type ImageContents, type ImageLimits } from './image.ts';
import { takeInventory, type Inventory, type PackageType } from './inventory.ts';
import { OsvDbError, openOsvDb, type OsvDatabase } from './osv-db.ts';
import { matchAdvisory, packageKey } from './osv.ts';
import { parseImageReference, pullImage, type PulledImage } from './registry.ts';

export {
  readImage,
  cleanPath,
  classify,
  stackLayers,
  DEFAULT_IMAGE_LIMITS,
  type ImageContents,
  type ImageConfig,
  type ImageLimits,
  type ReadImageOptions,
  type KeptKind,
} from './image.ts';
export {
  takeInventory,
  parseDpkgStatus,
  parseApkInstalled,
  parseRpmSqlite,
  parsePackageJson,
  parsePythonMetadata,
  parseOsRelease,
  osEcosystem,
  type Inventory,
  type Package,
  type PackageType,
  type OsInfo,
} from './inventory.ts';
export { importOsvDump, openOsvDb, OsvDbError, OSV_DB_FORMAT, type OsvDatabase, type ImportSummary } from './osv-db.ts';
export {
  osvRecordSchema,
  matchAdvisory,
  evaluateRange,
  ecosystemMatches,
  advisorySeverity,
  cveIds,
  normalizePypiName,
  packageKey,
  type OsvRecord,
  type InstalledPackage,
  type AdvisoryMatch,
} from './osv.ts';
export {
  compareDpkg,
  compareApk,
  compareRpm,
  rpmvercmp,
  compareSemver,
  comparePep440,
  comparatorFor,
  type VersionCompare,
} from './versions.ts';
export { cvss3BaseScore, severityOfScore } from './cvss.ts';
export {
  parseImageReference,
  pullImage,
  registryBaseUrl,
  type ImageReference,
  type PulledImage,
  type PullOptions,
} from './registry.ts';
export {
  configFindings,
  secretInEnv,
  vulnerabilityFinding,
  dedupeVulnerabilities,
  type Vulnerability,
} from './findings.ts';

export interface ContainerScannerSettings {
  /** An OSV database: a file built by importOsvDump, or OSV JSON (a file or directory) for small sets. */
  osvDbPath?: string;
  /**
   * Scan without an advisory database (packages and config only). Off by default: a scan that
   * silently checked no advisories would close every open vulnerability finding on ingest.
   */
  allowNoDb?: boolean;
  /** The image to read instead of the task's target (the CLI's file); a lease's task.localFile comes first. */
  archivePath?: string;
  limits?: Partial<ImageLimits>;
  /** Where pulled images are unpacked for the scan (a temporary directory by default). */
  pullDir?: string;
  /** Registries (host:port) reached over plain HTTP although not on loopback. */
  insecureRegistries?: string[];
}

const optionsSchema = z.object({
  severityThreshold: severitySchema.default('low'),
  ignoreUnfixed: z.boolean().default(false),
});
export type ContainerScanOptions = z.output<typeof optionsSchema>;

/** The lease's options (untrusted): the threshold and the unfixed toggle, other keys ignored. */
export function containerOptions(options: Record<string, unknown>): ContainerScanOptions {
  const parsed = optionsSchema.safeParse({
    severityThreshold: options.severityThreshold ?? undefined,
    ignoreUnfixed: options.ignoreUnfixed ?? undefined,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ScannerError(
      `Invalid container scan option ${issue.path.join('.')}: ${issue.path[0] === 'severityThreshold' ? `give one of ${SEVERITIES.join(', ')}` : 'give true or false'}`,
      false,
    );
  }
  return parsed.data;
}

/** A local image path named by a target: an absolute path or a file: URL. Registry references are not paths. */
export function localImagePath(target: string): string | null {
  const t = target.trim();
  if (/^file:\/\//i.test(t)) {
    try {
      return fileURLToPath(t);
    } catch {
      return null;
    }
  }
  return isAbsolute(t) ? t : null;
}

export interface VulnerabilityRow {
  severity: Severity;
  id: string;
  package: string;
  installed: string;
  fixed: string | null;
  ecosystem: string;
  file?: string;
}

export interface ContainerScanDetails {
  image: {
    format: ImageContents['format'];
    os: string | null;
    osVersion: string | null;
    osName: string | null;
    osEcosystem: string | null;
    architecture: string | null;
    layers: number;
    user: string | null;
    repoTags: string[];
  };
  /** Packages per package manager (dpkg, apk, rpm, npm, pypi). */
  packages: Partial<Record<PackageType, number>>;
  /** Packages per OSV ecosystem (`Debian:12`, `npm`, `PyPI`). */
  packageEcosystems: Record<string, number>;
  packageTotal: number;
  vulnerabilities: Record<Severity, number>;
  vulnerabilityTable: VulnerabilityRow[];
  database: { format: string; advisories: number; builtAt?: string } | null;
  options: ContainerScanOptions;
  notes: string[];
  bytesRead: number;
}

/** Matches every package of the inventory against the database. */
export function findVulnerabilities(inv: Inventory, db: OsvDatabase, signal?: AbortSignal): Vulnerability[] {
  const vulns: Vulnerability[] = [];
  const cache = new Map<string, ReturnType<OsvDatabase['lookup']>>();
  for (const [i, pkg] of inv.packages.entries()) {
    if (i % 256 === 0) signal?.throwIfAborted();
    const k = packageKey(pkg.ecosystem, pkg.name);
    const key = `${k.ecosystem}\0${k.name}`;
    let records = cache.get(key);
    if (!records) {
      records = db.lookup(k.ecosystem, k.name);
      cache.set(key, records);
    }
    for (const record of records) {
      const match = matchAdvisory(record, pkg);
      if (match) vulns.push(vulnerabilityFor(pkg, match));
    }
  }
  return dedupeVulnerabilities(vulns);
}

const rowOrder = (a: VulnerabilityRow, b: VulnerabilityRow) =>
  SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] ||
  a.package.localeCompare(b.package) ||
  a.id.localeCompare(b.id);

export function createContainerScanner(
  settings: ContainerScannerSettings = {},
): Scanner & { scan(task: ScanTask): Promise<{ findings: NormalizedFindingInput[]; details: ContainerScanDetails }> } {
  // The database stays open across leases and is reopened when an import replaces the file; a
  // replaced handle closes once the scans still using it are done (leases may run in parallel).
  interface Opened {
    handle: OsvDatabase;
    mtimeMs: number;
    users: number;
    stale: boolean;
  }
  let current: Opened | null = null;
  const release = (o: Opened) => {
    o.users--;
    if (o.stale && o.users === 0) o.handle.close();
  };
  async function acquire(): Promise<Opened | null> {
    if (!settings.osvDbPath) {
      if (settings.allowNoDb) return null;
      throw new ScannerError(
        'No OSV database is configured for container scans; import one with `rampart-worker osv import <path>` and set its path',
        false,
      );
    }
    let mtimeMs: number;
    try {
      mtimeMs = statSync(settings.osvDbPath).mtimeMs;
    } catch (e) {
      throw new ScannerError(
        `The OSV database ${settings.osvDbPath} cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        false,
        { cause: e },
      );
    }
    if (!current || current.mtimeMs !== mtimeMs) {
      let handle: OsvDatabase;
      try {
        handle = await openOsvDb(settings.osvDbPath);
      } catch (e) {
        if (e instanceof OsvDbError) throw new ScannerError(e.message, false, { cause: e });
        throw e;
      }
      const old = current;
      current = { handle, mtimeMs, users: 0, stale: false };
      if (old) {
        old.stale = true;
        if (old.users === 0) old.handle.close();
      }
    }
    current.users++;
    return current;
  }

  async function scan(task: ScanTask) {
    const options = containerOptions(task.options);
    const path = task.localFile ?? settings.archivePath ?? localImagePath(task.target);
    const reference = path ? null : parseImageReference(task.target);
    if (!path && !reference) {
      throw new ScannerError(
        `The target ${JSON.stringify(task.target.slice(0, 200))} is neither an image reference (registry/name:tag@digest) nor a local image archive or OCI layout path`,
        false,
      );
    }
    const opened = await acquire();
    let scratch: string | null = null;
    try {
      let pulled: PulledImage | null = null;
      let at = path;
      if (!at) {
        // A registry reference: pull it into a layout of its own, read like any other.
        if (settings.pullDir) await mkdir(settings.pullDir, { recursive: true });
        scratch = await mkdtemp(join(settings.pullDir ?? tmpdir(), 'rampart-pull-'));
        task.progress(0, `Pulling ${task.target}`);
        pulled = await pullImage(task.target, scratch, {
          signal: task.signal,
          ...(task.egress ? { egress: task.egress } : {}),
          ...(settings.insecureRegistries ? { insecureRegistries: settings.insecureRegistries } : {}),
          onProgress: ({ bytes, layers, of }) =>
            task.progress(
              Math.min(40, (layers / Math.max(1, of)) * 40),
              `Pulled ${(bytes / 1048576).toFixed(0)} MiB, layer ${layers} of ${of}`,
            ),
        });
        at = scratch;
      }
      const out = await scanWith(task, options, at, opened?.handle ?? null);
      const threshold = SEVERITY_RANK[options.severityThreshold];
      const coverage: ReportCoverage = {
        image: {
          ...(reference || !task.localFile ? { reference: task.target.slice(0, 1_000) } : {}),
          ...(pulled ? { digest: pulled.digest, platform: pulled.platform } : {}),
        },
        ...(threshold > 0 ? { severities: SEVERITIES.slice(threshold) } : {}),
      };
      return { ...out, coverage, pulled };
    } finally {
      if (opened) release(opened);
      if (scratch) await rm(scratch, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  async function scanWith(task: ScanTask, options: ContainerScanOptions, path: string, advisories: OsvDatabase | null) {
    task.progress(0, 'Reading the image');
    const image = await readImage(path, {
      signal: task.signal,
      ...(settings.limits ? { limits: settings.limits } : {}),
      onProgress: ({ bytesRead, totalBytes, layers }) =>
        task.progress(
          totalBytes ? (bytesRead / totalBytes) * 90 : 0,
          `Read ${(bytesRead / 1048576).toFixed(0)} of ${(totalBytes / 1048576).toFixed(0)} MiB, ${layers} layer${layers === 1 ? '' : 's'}`,
        ),
    });
    task.signal.throwIfAborted();
    const inv = takeInventory(image);
    task.progress(92, `Matching ${inv.packages.length} packages`);
    const notes = [...inv.notes];
    if (image.skipped.length)
      notes.push(
        `${image.skipped.length} metadata file${image.skipped.length === 1 ? ' was' : 's were'} over the size limit and not read (e.g. ${image.skipped.slice(0, 3).join(', ')})`,
      );
    if (!advisories) notes.push('No OSV database was given: packages were listed but not checked for vulnerabilities');
    const threshold = SEVERITY_RANK[options.severityThreshold];
    const vulns = (advisories ? findVulnerabilities(inv, advisories, task.signal) : []).filter(
      (v) => SEVERITY_RANK[v.severity] >= threshold && !(options.ignoreUnfixed && v.match.fixed === undefined),
    );
    const findings = [
      ...vulns.map(vulnerabilityFinding),
      ...configFindings(image.config).filter((f) => SEVERITY_RANK[f.severity] >= threshold),
    ];
    const counts = Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Record<Severity, number>;
    for (const v of vulns) counts[v.severity]++;
    const packages: Partial<Record<PackageType, number>> = {};
    const packageEcosystems: Record<string, number> = {};
    for (const p of inv.packages) {
      packages[p.type] = (packages[p.type] ?? 0) + 1;
      packageEcosystems[p.ecosystem] = (packageEcosystems[p.ecosystem] ?? 0) + 1;
    }
    const details: ContainerScanDetails = {
      image: {
        format: image.format,
        os: inv.os?.id ?? null,
        osVersion: inv.os?.versionId ?? null,
        osName: inv.os?.prettyName ?? null,
        osEcosystem: inv.os?.ecosystem ?? null,
        architecture: typeof image.config.architecture === 'string' ? image.config.architecture : null,
        layers: image.layers,
        user:
          typeof image.config.config?.User === 'string' && image.config.config.User.trim()
            ? image.config.config.User.trim()
            : null,
        repoTags: image.repoTags,
      },
      packages,
      packageEcosystems,
      packageTotal: inv.packages.length,
      vulnerabilities: counts,
      vulnerabilityTable: vulns
        .map((v) => ({
          severity: v.severity,
          id: v.match.record.id,
          package: v.package.name,
          installed: v.package.version,
          fixed: v.match.fixed ?? null,
          ecosystem: v.package.ecosystem,
          ...(v.package.file ? { file: v.package.file } : {}),
        }))
        .sort(rowOrder),
      database: advisories
        ? {
            format: advisories.info.format,
            advisories: advisories.info.advisories,
            ...(advisories.info.builtAt ? { builtAt: advisories.info.builtAt } : {}),
          }
        : null,
      options,
      notes,
      bytesRead: image.bytesRead,
    };
    task.progress(100, `${inv.packages.length} packages, ${vulns.length} vulnerabilities`);
    return { findings, details };
  }

  return {
    kind: 'container',
    tool: { name: 'rampart-container', version: WORKER_VERSION },
    scan,
    async run(task) {
      const { findings, details, coverage, pulled } = await scan(task);
      return { findings, coverage, details: { ...details, ...(pulled ? { pulled } : {}) } };
    },
  };
}
