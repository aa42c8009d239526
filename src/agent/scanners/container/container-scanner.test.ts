// The container scanner on images built here: a Debian-like docker save archive (plain, gzipped
// whole, and as an OCI tar), an Alpine OCI layout, an rpm-based image, a clean image, and hostile
// archives. Findings must pass the findings schema the server imports with.
// Over 500 lines on purpose: the images are built once for all cases (Debian, Alpine, rpm, OCI, hostile archives).
import { mkdtempSync, rmSync, writeFileSync, readFileSync, mkdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizedFindingSchema } from '../../../findings/index.ts';
import { UsageError } from '../../commands/common.ts';
import type { ScanTask } from '../types.ts';
import { containerCli } from './cli.ts';
import {
  createContainerScanner,
  importOsvDump,
  osEcosystem,
  parseApkInstalled,
  parseDpkgStatus,
  parseOsRelease,
  parsePythonMetadata,
  readImage,
  stackLayers,
  takeInventory,
  type ContainerScanDetails,
  type ImageLimits,
} from './index.ts';
import {
  alpineImage,
  cleanImage,
  debianImage,
  DEBIAN_DPKG_STATUS,
  DEBIAN_OS_RELEASE,
  rpmdbSqlite,
  writeDockerArchive,
  writeGzipBombArchive,
  writeLayer,
  writeOciArchive,
  writeOciLayout,
  writeTar,
  writeTraversalArchive,
  type TestImage,
} from '../../../../test/fixtures/image-archives.ts';

const SAMPLE = join(import.meta.dirname, 'sample-osv');
const work = mkdtempSync(join(tmpdir(), 'rampart-container-'));
const paths = {
  debian: join(work, 'debian.tar'),
  debianGz: join(work, 'debian.tar.gz'),
  debianOci: join(work, 'debian-oci.tar'),
  alpineDir: join(work, 'alpine-oci'),
  alpineTarGz: join(work, 'alpine-oci.tar.gz'),
  clean: join(work, 'clean.tar'),
  rocky: join(work, 'rocky.tar'),
};

beforeAll(async () => {
  await writeDockerArchive(paths.debian, debianImage());
  await writeDockerArchive(paths.debianGz, debianImage(), { gzipWhole: true, workDir: join(work, 'gz-parts') });
  await writeOciArchive(paths.debianOci, debianImage());
  await writeOciLayout(paths.alpineDir, alpineImage());
  await writeOciArchive(paths.alpineTarGz, alpineImage(), { gzipWhole: true });
  await writeDockerArchive(paths.clean, cleanImage());
  await writeDockerArchive(paths.rocky, {
    config: { config: { User: 'nobody' } },
    layers: [
      {
        files: [
          {
            path: 'etc/os-release',
            content: 'ID="rocky"\nVERSION_ID="9.3"\nPRETTY_NAME="Rocky Linux 9.3 (Blue Onyx)"\n',
          },
          {
            path: 'var/lib/rpm/rpmdb.sqlite',
            content: rpmdbSqlite([
              { name: 'openssl-libs', version: '3.0.7', release: '24.el9', epoch: 1 },
              { name: 'bash', version: '5.1.8', release: '6.el9_1' },
            ]),
          },
        ],
      },
    ],
  });
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

function task(target: string, options: Record<string, unknown> = {}, extra: Partial<ScanTask> = {}): ScanTask {
  return { target, options, chunk: null, signal: new AbortController().signal, progress: () => undefined, ...extra };
}

const sampleScanner = (extra: { limits?: Partial<ImageLimits> } = {}) =>
  createContainerScanner({ osvDbPath: SAMPLE, ...extra });

async function failure(p: Promise<unknown>): Promise<Error & { retryable?: boolean }> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e, 'expected a failure').toBeInstanceOf(Error);
  return e as Error & { retryable?: boolean };
}

const EXPECTED_DEBIAN_RULES = [
  'DEBIAN-CVE-2023-45853',
  'DSA-5532-1',
  'GHSA-35jh-r3h4-6jhm',
  'GHSA-gxpj-cx7g-858c',
  'GHSA-j8r2-6x86-q33q',
  'container/add-remote-url',
  'container/risky-port-exposed',
  'container/runs-as-root',
  'container/secret-in-env',
  'container/secret-in-env',
  'container/secret-in-env',
];

describe('the vulnerable Debian image', () => {
  it('reports every check, with valid findings, fixed versions and no secret values', async () => {
    const progress: number[] = [];
    const scanner = sampleScanner();
    const out = await scanner.run(task(paths.debian, {}, { progress: (p) => progress.push(p) }));
    const findings = out.findings.map((f) => normalizedFindingSchema.parse(f));
    expect(findings.map((f) => f.ruleId).sort()).toEqual(EXPECTED_DEBIAN_RULES);
    expect(scanner.tool).toMatchObject({ name: 'rampart-container' });
    expect(progress[0]).toBe(0);
    expect(progress.at(-1)).toBe(100);

    const byRule = (id: string) => findings.filter((f) => f.ruleId === id);
    expect(byRule('DSA-5532-1')[0]).toMatchObject({
      severity: 'medium',
      cve: ['CVE-2023-5363'],
      location: { package: 'openssl', version: '3.0.11-1~deb12u1', file: 'var/lib/dpkg/status' },
      discriminator: 'Debian:12:openssl',
      evidence: { data: { fixed: '3.0.11-1~deb12u2', binaries: ['libssl3', 'openssl'] } },
    });
    expect(byRule('DSA-5532-1')[0]!.remediation).toContain('3.0.11-1~deb12u2');
    expect(byRule('GHSA-35jh-r3h4-6jhm')[0]).toMatchObject({
      severity: 'high',
      cvss: { score: 7.2, vector: 'CVSS:3.1/AV:N/AC:L/PR:H/UI:N/S:U/C:H/I:H/A:H' },
      cve: ['CVE-2021-23337'],
      cwe: [77, 94],
      location: { package: 'lodash', version: '4.17.20', file: 'usr/src/app/node_modules/lodash/package.json' },
      discriminator: 'npm:lodash',
      evidence: { data: { fixed: '4.17.21' } },
    });
    // The nested copy under express/node_modules, and the lowest fix in the range it falls in.
    expect(byRule('GHSA-gxpj-cx7g-858c')[0]).toMatchObject({
      severity: 'low',
      location: { package: 'debug', version: '4.1.0' },
      evidence: { data: { fixed: '4.3.1' } },
    });
    // GHSA and PYSEC of the same CVE: one finding, under the GHSA id.
    expect(byRule('GHSA-j8r2-6x86-q33q')[0]).toMatchObject({
      severity: 'medium',
      cve: ['CVE-2023-32681'],
      location: { package: 'requests', version: '2.30.0' },
      discriminator: 'PyPI:requests',
    });
    // Debian's urgency "unimportant" for this CVE: low, not the default medium.
    expect(byRule('DEBIAN-CVE-2023-45853')[0]).toMatchObject({
      severity: 'low',
      location: { package: 'zlib', version: '1:1.2.13.dfsg-1' },
    });
    expect(byRule('DEBIAN-CVE-2023-45853')[0]!.remediation).toMatch(/No fixed version/);

    expect(
      byRule('container/secret-in-env')
        .map((f) => f.discriminator)
        .sort(),
    ).toEqual(['AWS_SECRET_ACCESS_KEY', 'DB_PASSWORD', 'UPSTREAM_ID']);
    const text = JSON.stringify(out);
    for (const secret of ['hunter2-very-secret', 'wJalrXUtnFEMI', 'AKIAIOSFODNN7EXAMPLE'])
      expect(text).not.toContain(secret);
    expect(byRule('container/risky-port-exposed')[0]).toMatchObject({
      severity: 'medium',
      location: { port: 23, protocol: 'tcp' },
      discriminator: '23/tcp',
    });
    expect(byRule('container/add-remote-url').map((f) => f.discriminator)).toEqual([
      'https://downloads.example.test/tool.tar.gz',
    ]);
    expect(byRule('container/runs-as-root')[0]).toMatchObject({
      severity: 'medium',
      location: { path: 'config.User' },
    });

    const d = out.details as unknown as ContainerScanDetails;
    expect(d.image).toMatchObject({
      format: 'docker-archive',
      os: 'debian',
      osVersion: '12',
      osEcosystem: 'Debian:12',
      layers: 3,
      user: null,
      repoTags: ['rampart-test/debian-app:1'],
    });
    expect(d.packages).toEqual({ dpkg: 5, npm: 6, pypi: 2 });
    expect(d.packageEcosystems).toEqual({ 'Debian:12': 5, npm: 6, PyPI: 2 });
    expect(d.vulnerabilities).toEqual({ info: 0, low: 2, medium: 2, high: 1, critical: 0 });
    expect(d.vulnerabilityTable[0]).toMatchObject({
      severity: 'high',
      id: 'GHSA-35jh-r3h4-6jhm',
      package: 'lodash',
      installed: '4.17.20',
      fixed: '4.17.21',
    });
    expect(d.database).toMatchObject({ advisories: 9 });
  });

  it('honours whiteouts and opaque directories, and reads only installed dpkg stanzas', async () => {
    const image = await readImage(paths.debian);
    const inv = takeInventory(image);
    const names = inv.packages.map((p) => `${p.type}:${p.name}@${p.version}`).sort();
    expect(names).toEqual([
      'dpkg:base-files@12.4+deb12u5',
      'dpkg:glibc@2.36-9+deb12u3',
      'dpkg:openssl@3.0.11-1~deb12u1',
      'dpkg:tzdata@2024a-0+deb12u1',
      'dpkg:zlib@1:1.2.13.dfsg-1',
      'npm:@acme/widget@2.0.0',
      'npm:@types/node@20.1.0',
      'npm:debug@4.1.0',
      'npm:express@4.18.2',
      'npm:lodash@4.17.20',
      'npm:new-vendored@0.2.0',
      'pypi:requests@2.30.0',
      'pypi:typing-extensions@4.9.0',
    ]);
    // etc/os-release is a symlink to ../usr/lib/os-release in the image.
    expect(inv.os).toMatchObject({ id: 'debian', versionId: '12', ecosystem: 'Debian:12' });
  });

  it('stacks layers top-down: a whiteout hides a subtree, an opaque directory only lower layers', () => {
    const f = (paths: string[]) => new Map(paths.map((p) => [p, { kind: 'npm' as const, data: Buffer.from(p) }]));
    const visible = stackLayers([
      {
        files: f([
          'a/node_modules/x/package.json',
          'a/node_modules/w/package.json',
          'b/node_modules/y/package.json',
          'c/node_modules/z/package.json',
        ]),
        whiteouts: [],
        opaque: [],
      },
      { files: f(['c/node_modules/z2/package.json']), whiteouts: ['a/node_modules'], opaque: ['c'] },
      { files: f(['a/node_modules/x/package.json']), whiteouts: [], opaque: [] },
    ]);
    expect([...visible.keys()].sort()).toEqual([
      'a/node_modules/x/package.json',
      'b/node_modules/y/package.json',
      'c/node_modules/z2/package.json',
    ]);
    expect(visible.get('a/node_modules/x/package.json')!.data!.toString()).toBe('a/node_modules/x/package.json');
  });

  it('reads the same image gzipped as a whole and as an OCI tar', async () => {
    const scanner = sampleScanner();
    for (const p of [paths.debianGz, paths.debianOci]) {
      const out = await scanner.run(task(p));
      expect(out.findings.map((f) => f.ruleId).sort(), p).toEqual(EXPECTED_DEBIAN_RULES);
    }
    const oci = await scanner.run(task(paths.debianOci));
    expect((oci.details as unknown as ContainerScanDetails).image).toMatchObject({
      format: 'oci-layout',
      layers: 3,
      repoTags: ['rampart-test/debian-app:1'],
    });
  });

  it('applies the severity threshold and the unfixed toggle from the lease options', async () => {
    const scanner = sampleScanner();
    const high = await scanner.run(task(paths.debian, { severityThreshold: 'high', unrelated: 1 }));
    expect(high.findings.map((f) => f.ruleId).sort()).toEqual([
      'GHSA-35jh-r3h4-6jhm',
      'container/secret-in-env',
      'container/secret-in-env',
      'container/secret-in-env',
    ]);
    const fixedOnly = await scanner.run(task(paths.debian, { ignoreUnfixed: true }));
    expect(fixedOnly.findings.map((f) => f.ruleId)).not.toContain('DEBIAN-CVE-2023-45853');
    expect(fixedOnly.findings.map((f) => f.ruleId)).toContain('DSA-5532-1');
    for (const options of [{ severityThreshold: 'urgent' }, { ignoreUnfixed: 'yes' }]) {
      expect(await failure(scanner.run(task(paths.debian, options)))).toMatchObject({
        name: 'ScannerError',
        retryable: false,
      });
    }
  });
});

describe('other images', () => {
  it('scans an Alpine OCI layout directory and the same layout as a gzipped tar', async () => {
    const scanner = sampleScanner();
    for (const p of [paths.alpineDir, paths.alpineTarGz]) {
      const out = await scanner.run(task(p));
      expect(
        out.findings.map((f) => normalizedFindingSchema.parse(f).ruleId),
        p,
      ).toEqual(['ALPINE-CVE-2025-26519']);
      expect(out.findings[0]).toMatchObject({
        location: { package: 'musl', version: '1.2.4_git20230717-r4' },
        discriminator: 'Alpine:v3.19:musl',
        evidence: { data: { fixed: '1.2.4_git20230717-r5' } },
      });
      const d = out.details as unknown as ContainerScanDetails;
      expect(d.image).toMatchObject({ format: 'oci-layout', os: 'alpine', osEcosystem: 'Alpine:v3.19', user: 'app' });
      // libcrypto3 and libssl3 come from one origin, openssl.
      expect(d.packages).toEqual({ apk: 3 });
    }
  });

  it('reads zstd layers, layers shared through symlinks, and picks linux/amd64 from a nested index', async () => {
    const zstdImage = { ...alpineImage(), layers: alpineImage().layers.map((l) => ({ files: l.files, zstd: true })) };
    const zstd = join(work, 'alpine-zstd.tar');
    await writeDockerArchive(zstd, zstdImage);
    expect((await sampleScanner().run(task(zstd))).findings.map((f) => f.ruleId)).toEqual(['ALPINE-CVE-2025-26519']);

    // Two manifest entries for one layer: the second is a symlink to the first, as docker save wrote them.
    const layerFile = join(work, 'shared-layer.tar');
    await writeLayer(layerFile, alpineImage().layers[0]!);
    const shared = join(work, 'shared.tar');
    await writeTar(shared, [
      { path: 'aaa/layer.tar', content: readFileSync(layerFile) },
      { path: 'bbb/', type: 'directory' },
      { path: 'bbb/layer.tar', type: 'symlink', linkname: '../aaa/layer.tar' },
      { path: 'config.json', content: JSON.stringify({ config: { User: 'app' } }) },
      {
        path: 'manifest.json',
        content: JSON.stringify([{ Config: 'config.json', Layers: ['aaa/layer.tar', 'bbb/layer.tar'] }]),
      },
    ]);
    const sharedOut = await sampleScanner().run(task(shared));
    expect(sharedOut.findings.map((f) => f.ruleId)).toEqual(['ALPINE-CVE-2025-26519']);
    expect((sharedOut.details as unknown as ContainerScanDetails).image.layers).toBe(2);

    const multi = join(work, 'multi-arch');
    await writeOciLayout(multi, alpineImage());
    const index = JSON.parse(readFileSync(join(multi, 'index.json'), 'utf8')) as {
      manifests: { digest: string; size: number }[];
    };
    const amd64 = index.manifests[0]!;
    const nested = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.index.v1+json',
        manifests: [
          {
            mediaType: 'application/vnd.oci.image.manifest.v1+json',
            digest: `sha256:${'e'.repeat(64)}`,
            size: 1,
            platform: { os: 'linux', architecture: 'arm64' },
          },
          {
            mediaType: 'application/vnd.oci.image.manifest.v1+json',
            digest: amd64.digest,
            size: amd64.size,
            platform: { os: 'linux', architecture: 'amd64' },
          },
        ],
      }),
    );
    const { createHash } = await import('node:crypto');
    const nestedHex = createHash('sha256').update(nested).digest('hex');
    writeFileSync(join(multi, 'blobs', 'sha256', nestedHex), nested);
    writeFileSync(
      join(multi, 'index.json'),
      JSON.stringify({
        schemaVersion: 2,
        manifests: [
          { mediaType: 'application/vnd.oci.image.index.v1+json', digest: `sha256:${nestedHex}`, size: nested.length },
        ],
      }),
    );
    expect((await sampleScanner().run(task(multi))).findings.map((f) => f.ruleId)).toEqual(['ALPINE-CVE-2025-26519']);
  });

  it('stays quiet on the clean image', async () => {
    const out = await sampleScanner().run(task(pathToFileURL(paths.clean).href));
    expect(out.findings).toEqual([]);
    const d = out.details as unknown as ContainerScanDetails;
    expect(d.image.user).toBe('10001:10001');
    expect(d.packages).toEqual({ dpkg: 3, npm: 1 });
    expect(Object.values(d.vulnerabilities).every((n) => n === 0)).toBe(true);
  });

  it('reads rpm packages from rpmdb.sqlite and matches them with rpm version order', async () => {
    const db = join(work, 'rocky-osv');
    mkdirSync(db);
    writeFileSync(
      join(db, 'RLSA-2024-0001.json'),
      JSON.stringify({
        id: 'RLSA-2024-0001',
        summary: 'openssl security update',
        affected: [
          {
            package: { ecosystem: 'Rocky Linux:9', name: 'openssl-libs' },
            ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '1:3.0.7-25.el9' }] }],
          },
        ],
      }),
    );
    const out = await createContainerScanner({ osvDbPath: db }).run(task(paths.rocky));
    expect(out.findings.map((f) => f.ruleId)).toEqual(['RLSA-2024-0001']);
    expect(out.findings[0]).toMatchObject({
      location: { package: 'openssl-libs', version: '1:3.0.7-24.el9', file: 'var/lib/rpm/rpmdb.sqlite' },
      evidence: { data: { fixed: '1:3.0.7-25.el9' } },
    });
    expect((out.details as unknown as ContainerScanDetails).packages).toEqual({ rpm: 2 });
  });

  it('reopens the database when an import replaces it, without breaking a scan in flight', async () => {
    const live = join(work, 'live.db');
    await importOsvDump(join(SAMPLE, 'ghsa-npm.json'), live);
    const scanner = createContainerScanner({ osvDbPath: live });
    const inFlight = scanner.run(task(paths.debian));
    await importOsvDump(SAMPLE, live);
    const ids = (out: { findings: { ruleId: string }[] }) =>
      out.findings
        .map((f) => f.ruleId)
        .filter((r) => !r.startsWith('container/'))
        .sort();
    expect(ids(await inFlight)).toEqual(['GHSA-35jh-r3h4-6jhm', 'GHSA-gxpj-cx7g-858c']);
    expect(ids(await scanner.run(task(paths.debian)))).toEqual([
      'DEBIAN-CVE-2023-45853',
      'DSA-5532-1',
      'GHSA-35jh-r3h4-6jhm',
      'GHSA-gxpj-cx7g-858c',
      'GHSA-j8r2-6x86-q33q',
    ]);
  });

  it('lists packages without a database only when allowed, and says so', async () => {
    expect(await failure(createContainerScanner().run(task(paths.debian)))).toMatchObject({
      name: 'ScannerError',
      retryable: false,
      message: expect.stringContaining('OSV database'),
    });
    const out = await createContainerScanner({ allowNoDb: true }).run(task(paths.debian));
    expect(out.findings.every((f) => f.ruleId.startsWith('container/'))).toBe(true);
    expect((out.details as unknown as ContainerScanDetails).notes.join(' ')).toMatch(/not checked for vulnerabilities/);
  });

  it('refuses targets that are neither local images nor image references: archive ids without their file, relative file names', async () => {
    const scanner = sampleScanner();
    for (const t of ['archive:sha256:' + 'a'.repeat(64), 'debian.tar', 'images/app.tar.gz']) {
      expect(await failure(scanner.run(task(t))), t).toMatchObject({
        name: 'ScannerError',
        retryable: false,
        message: expect.stringContaining('is neither an image reference'),
      });
    }
    expect(await failure(scanner.run(task(join(work, 'nope.tar'))))).toMatchObject({
      name: 'ScannerError',
      message: expect.stringContaining('ENOENT'),
    });
    // The archive the agent downloaded for an archive: target (task.localFile) is read instead of the target.
    const viaLease = await scanner.run(task('archive:sha256:' + 'b'.repeat(64), {}, { localFile: paths.alpineTarGz }));
    expect(viaLease.findings.map((f) => f.ruleId)).toEqual(['ALPINE-CVE-2025-26519']);
    const viaSetting = await createContainerScanner({ osvDbPath: SAMPLE, archivePath: paths.alpineDir }).run(
      task('archive:sha256:' + 'b'.repeat(64)),
    );
    expect(viaSetting.findings.map((f) => f.ruleId)).toEqual(['ALPINE-CVE-2025-26519']);
  });

  it('stops reading when cancelled', async () => {
    const big = join(work, 'big.tar');
    await writeDockerArchive(big, debianImage({ filler: 24 * 1024 * 1024 }), { workDir: join(work, 'big-parts') });
    const already = new AbortController();
    already.abort(new Error('cancelled before start'));
    await expect(sampleScanner().run(task(big, {}, { signal: already.signal }))).rejects.toThrow(
      'cancelled before start',
    );
    const c = new AbortController();
    let calls = 0;
    let afterAbort = 0;
    const run = sampleScanner().run(
      task(
        big,
        {},
        {
          signal: c.signal,
          progress: () => {
            if (c.signal.aborted) afterAbort++;
            if (++calls === 2) c.abort(new Error('lease lost'));
          },
        },
      ),
    );
    await expect(run).rejects.toThrow('lease lost');
    // The archive is read in 1 MiB chunks, one progress call each: reading stops within a chunk or two, not 20 MiB later.
    expect(afterAbort).toBeLessThan(4);
  });
});

describe('hostile archives', () => {
  const refused = async (path: string, limits: Partial<ImageLimits> = {}) => {
    const e = await failure(sampleScanner({ limits }).run(task(path)));
    expect(e).toMatchObject({ name: 'ScannerError', retryable: false });
    return e.message;
  };
  const withLayer = (files: TestImage['layers'][number]['files'], gzip = false): TestImage => ({
    config: { config: { User: 'app' } },
    layers: [{ files, gzip }],
  });

  it('refuses path traversal in the archive and in a layer', async () => {
    const outer = join(work, 'evil-outer.tar');
    await writeTar(outer, [
      { path: '../../etc/cron.d/evil', content: 'x' },
      { path: 'manifest.json', content: '[]' },
    ]);
    expect(await refused(outer)).toMatch(/climbs out of the archive/);
    const inner = join(work, 'evil-layer.tar');
    await writeTraversalArchive(inner);
    expect(await refused(inner)).toMatch(/climbs out of the archive/);
  });

  it('refuses decompression bombs, in a layer and in the whole file', async () => {
    const layerBomb = join(work, 'bomb-layer.tar');
    await writeGzipBombArchive(layerBomb, 48 * 1024 * 1024);
    expect(await refused(layerBomb, { ratioFloorBytes: 4 * 1024 * 1024, maxCompressionRatio: 100 })).toMatch(
      /decompression bomb/,
    );
    const wholeBomb = join(work, 'bomb-whole.tar.gz');
    await writeTar(wholeBomb, [{ path: 'zeros.bin', zeroBytes: 48 * 1024 * 1024 }], { gzip: true });
    expect(await refused(wholeBomb, { ratioFloorBytes: 4 * 1024 * 1024, maxCompressionRatio: 100 })).toMatch(
      /decompression bomb/,
    );
    const manyFiles = join(work, 'many-files.tar');
    await writeDockerArchive(
      manyFiles,
      withLayer(
        Array.from({ length: 8 }, (_, i) => ({ path: `z${i}`, zeroBytes: 512 * 1024 })),
        true,
      ),
    );
    expect(await refused(manyFiles, { maxUncompressedBytes: 1024 * 1024 })).toMatch(/more than 1048576 bytes/);
  });

  it('refuses an oversized package database, too many entries, and symlink loops', async () => {
    expect(await refused(paths.debian, { maxPackageDbBytes: 1024 })).toMatch(/var\/lib\/dpkg\/status is \d+ bytes/);
    expect(await refused(paths.debian, { maxEntries: 10 })).toMatch(/more than 10 entries/);
    const loop = join(work, 'loop.tar');
    await writeDockerArchive(
      loop,
      withLayer([
        { path: 'etc/os-release', type: 'symlink', linkname: '../usr/lib/os-release' },
        { path: 'usr/lib/os-release', type: 'symlink', linkname: '/etc/os-release' },
        { path: 'var/lib/dpkg/status', content: DEBIAN_DPKG_STATUS },
      ]),
    );
    expect(await refused(loop)).toMatch(/symbolic link loop/);
  });

  it('refuses files that are not images, truncated archives, missing layers and bad digests', async () => {
    const junk = join(work, 'junk.bin');
    writeFileSync(junk, Buffer.alloc(4096, 7));
    expect(await refused(junk)).toMatch(/not a readable tar archive|neither manifest.json nor index.json/);
    const whole = readFileSync(paths.debian);
    const truncated = join(work, 'truncated.tar');
    writeFileSync(truncated, whole.subarray(0, Math.floor(whole.length / 2)));
    expect(await refused(truncated)).toBeTruthy();
    const missing = join(work, 'missing-layer.tar');
    await writeTar(missing, [
      { path: 'manifest.json', content: JSON.stringify([{ Config: 'c.json', Layers: ['nothere/layer.tar'] }]) },
      { path: 'c.json', content: '{}' },
    ]);
    expect(await refused(missing)).toMatch(/does not hold as a layer/);
    const badDigest = join(work, 'bad-digest');
    mkdirSync(badDigest);
    writeFileSync(
      join(badDigest, 'index.json'),
      JSON.stringify({
        schemaVersion: 2,
        manifests: [{ mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: 'sha256:../../etc/passwd' }],
      }),
    );
    expect(await refused(badDigest)).toMatch(/not a sha256 or sha512 digest/);
    const noIndex = join(work, 'empty-dir');
    mkdirSync(noIndex);
    expect(await refused(noIndex)).toMatch(/not an OCI image layout/);
  });

  it('refuses names longer than PATH_MAX and layout blobs that link outside the layout', async () => {
    const long = join(work, 'long-name.tar');
    await writeDockerArchive(
      long,
      withLayer([
        { path: `${'d/'.repeat(2_100)}node_modules/x/package.json`, content: '{"name":"x","version":"1.0.0"}' },
      ]),
    );
    expect(await refused(long)).toMatch(/longer than 4096/);
    const escape = join(work, 'escape-layout');
    await writeOciLayout(escape, alpineImage());
    const manifest = JSON.parse(readFileSync(join(escape, 'index.json'), 'utf8')) as {
      manifests: { digest: string }[];
    };
    const m = JSON.parse(
      readFileSync(join(escape, 'blobs', 'sha256', manifest.manifests[0]!.digest.slice(7)), 'utf8'),
    ) as { layers: { digest: string }[] };
    const layerPath = join(escape, 'blobs', 'sha256', m.layers[0]!.digest.slice(7));
    rmSync(layerPath);
    symlinkSync(paths.debian, layerPath);
    expect(await refused(escape)).toMatch(/leads outside the layout directory/);
  });

  it('refuses a member that declares an absurd size', async () => {
    // A tar header whose size field is base-256 encoded 2^40 (1 TiB), checksum recomputed.
    const header = Buffer.alloc(512);
    header.write('layer.tar', 0);
    header.write('0000644\0', 100);
    header.write('0000000\0', 108);
    header.write('0000000\0', 116);
    header[124] = 0x80;
    header[130] = 0x01;
    header.write('00000000000\0', 136);
    header.write('0', 156);
    header.write('ustar\0', 257);
    header.write('00', 263);
    header.fill(' ', 148, 156);
    let sum = 0;
    for (const b of header) sum += b;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    const absurd = join(work, 'absurd.tar');
    writeFileSync(absurd, Buffer.concat([header, Buffer.alloc(4096)]));
    expect(await refused(absurd)).toMatch(/declares 1099511627776 bytes/);
  });

  it('refuses malformed manifests and configs of every shape with a ScannerError', async () => {
    const { createHash } = await import('node:crypto');
    const hex = (b: string) => createHash('sha256').update(b).digest('hex');
    const ociCases: { index: string; blobs?: string[] }[] = [
      { index: 'null' },
      { index: '[]' },
      { index: '{"manifests":[null,5,"x"]}' },
      { index: '{"manifests":[{"digest":5}]}' },
      { index: `{"manifests":[{"digest":"sha256:${hex('null')}","platform":null,"annotations":7}]}`, blobs: ['null'] },
      {
        index: `{"manifests":[{"digest":"sha256:${hex('{"config":null,"layers":[null]}')}"}]}`,
        blobs: ['{"config":null,"layers":[null]}'],
      },
      {
        index: `{"manifests":[{"digest":"sha256:${hex('{"mediaType":"application/vnd.oci.image.index.v1+json","manifests":7}')}"}]}`,
        blobs: ['{"mediaType":"application/vnd.oci.image.index.v1+json","manifests":7}'],
      },
    ];
    for (const [i, c] of ociCases.entries()) {
      const dir = join(work, `malformed-oci-${i}`);
      mkdirSync(join(dir, 'blobs', 'sha256'), { recursive: true });
      writeFileSync(join(dir, 'index.json'), c.index);
      for (const b of c.blobs ?? []) writeFileSync(join(dir, 'blobs', 'sha256', hex(b)), b);
      await refused(dir);
    }
    const dockerCases = [
      'null',
      '[null]',
      '[{"Config":"c.json","Layers":[5]}]',
      '[{"Config":"c.json","Layers":[]}]',
      '{',
    ];
    for (const [i, manifest] of dockerCases.entries()) {
      const file = join(work, `malformed-docker-${i}.tar`);
      await writeTar(file, [
        { path: 'c.json', content: i === 3 ? '[]' : '{}' },
        { path: 'manifest.json', content: manifest },
      ]);
      await refused(file);
    }
  });

  it('skips a package.json over its cap instead of failing', async () => {
    const big = join(work, 'big-package-json.tar');
    await writeDockerArchive(
      big,
      withLayer([
        { path: 'etc/os-release', content: DEBIAN_OS_RELEASE },
        {
          path: 'app/node_modules/huge/package.json',
          content: JSON.stringify({ name: 'huge', version: '1.0.0', pad: 'x'.repeat(1_100_000) }),
        },
      ]),
    );
    const out = await sampleScanner().run(task(big));
    expect((out.details as unknown as ContainerScanDetails).notes.join(' ')).toMatch(/over the size limit/);
  });
});

describe('inventory parsers', () => {
  it('reads os-release and names the OSV ecosystem', () => {
    expect(parseOsRelease('ID=ubuntu\nVERSION_ID="22.04"\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\n# comment\n')).toEqual({
      ID: 'ubuntu',
      VERSION_ID: '22.04',
      PRETTY_NAME: 'Ubuntu 22.04.4 LTS',
    });
    expect(osEcosystem('ubuntu', '22.04')).toBe('Ubuntu:22.04');
    expect(osEcosystem('debian', '12')).toBe('Debian:12');
    expect(osEcosystem('debian', undefined)).toBe('Debian');
    expect(osEcosystem('alpine', '3.19.1')).toBe('Alpine:v3.19');
    expect(osEcosystem('rocky', '9.3')).toBe('Rocky Linux:9');
    expect(osEcosystem('arch', undefined)).toBeNull();
  });

  it('reads dpkg stanzas with source versions, apk origins, and Python metadata headers only', () => {
    const status =
      'Package: libc-bin\nStatus: install ok installed\nSource: glibc (2.36-9+deb12u3)\nVersion: 2.36-9+deb12u3+b1\nDescription: x\n continuation\n\nPackage: gone\nStatus: purge ok not-installed\nVersion: 1\n';
    expect(parseDpkgStatus(status)).toEqual([
      { name: 'libc-bin', version: '2.36-9+deb12u3+b1', source: 'glibc', sourceVersion: '2.36-9+deb12u3' },
    ]);
    expect(parseApkInstalled('P:libssl3\nV:3.1.4-r5\no:openssl\n\nP:musl\nV:1.2.4-r2\n')).toEqual([
      { name: 'libssl3', version: '3.1.4-r5', source: 'openssl', sourceVersion: '3.1.4-r5' },
      { name: 'musl', version: '1.2.4-r2', source: 'musl', sourceVersion: '1.2.4-r2' },
    ]);
    expect(
      parsePythonMetadata('Metadata-Version: 2.1\nName: Zope.Interface\nVersion: 6.1\n\nName: body-not-header\n'),
    ).toEqual({ name: 'zope-interface', version: '6.1' });
    expect(parsePythonMetadata('Metadata-Version: 2.1\nName: x\n')).toBeNull();
  });
});

describe('the scan CLI share', () => {
  it('prepares a scan from flags, prints the vulnerabilities table and JSON fields', async () => {
    const { scanner, options } = containerCli.prepare(
      { db: SAMPLE, severity: 'medium', 'ignore-unfixed': true },
      paths.debian,
    );
    expect(options).toEqual({ severityThreshold: 'medium', ignoreUnfixed: true });
    const out = await scanner.run(task('ignored', options));
    const lines = containerCli.table(out.details!, { durationMs: 1234 });
    const text = lines.join('\n');
    expect(text).toContain('OS: Debian GNU/Linux 12 (bookworm) [Debian:12]; user: root (not set)');
    expect(text).toContain('Packages: 13 (dpkg 5, npm 6, pypi 2)');
    expect(text).toMatch(/SEVERITY\s+ID\s+PACKAGE\s+INSTALLED\s+FIXED/);
    expect(text).toMatch(/HIGH\s+GHSA-35jh-r3h4-6jhm\s+lodash\s+4\.17\.20\s+4\.17\.21/);
    expect(text).not.toContain('DEBIAN-CVE-2023-45853');
    expect(text).not.toContain('GHSA-gxpj-cx7g-858c');
    const json = containerCli.json(out.details!);
    expect(json).toMatchObject({
      packageTotal: 13,
      image: { os: 'debian' },
      vulnerabilities: expect.arrayContaining([
        expect.objectContaining({ id: 'DSA-5532-1', fixed: '3.0.11-1~deb12u2' }),
      ]),
    });
    expect(() => containerCli.prepare({ severity: 'urgent' }, paths.debian)).toThrow(UsageError);
    expect(() => containerCli.prepare({}, join(work, 'absent.tar'))).toThrow(UsageError);
    const noDb = containerCli.prepare({}, paths.clean);
    const bare = await noDb.scanner.run(task('ignored', noDb.options));
    expect(containerCli.table(bare.details!, { durationMs: 5 }).join('\n')).toContain(
      'Advisories: none checked (no --db)',
    );
  });
});
