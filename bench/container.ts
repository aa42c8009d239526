// npx node bench/container.ts — the container scanner on a ~200 MB `docker save` archive (target:
// ≤ 10 s). The archive is built in a temp dir: eight layers (every other one gzipped) of filler
// files with random content (incompressible, so gzip layers are as large as plain ones) among
// real package metadata — a dpkg status of 400 packages, 1,500 node_modules package.json files
// (scoped and nested), 200 Python dist-info directories — and an OSV database imported from the
// bundled sample. A separate process scans it BENCH_ROUNDS times (3); prints the median wall time
// and that process's peak RSS. BENCH_MB (200) sizes the archive.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createContainerScanner,
  importOsvDump,
  type ContainerScanDetails,
} from '../src/agent/scanners/container/index.ts';
import {
  DEBIAN_OS_RELEASE,
  writeDockerArchive,
  type TestFile,
  type TestLayer,
} from '../test/fixtures/image-archives.ts';
import { median, round } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TARGET_MB = Number(process.env.BENCH_MB ?? 200);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error('BENCH_ROUNDS must be a positive integer');

const MiB = 1024 * 1024;

function dpkgStatus(n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const name = i === 0 ? 'libssl3' : `libbench${i}`;
    out.push(
      [
        `Package: ${name}`,
        'Status: install ok installed',
        'Priority: optional',
        'Architecture: amd64',
        ...(i === 0 ? ['Source: openssl'] : i % 3 === 0 ? [`Source: benchsrc${i % 50}`] : []),
        `Version: ${i === 0 ? '3.0.11-1~deb12u1' : `1.${i}.0-1+deb12u1`}`,
        'Description: benchmark package',
        ' with a continuation line',
        '',
      ].join('\n'),
    );
  }
  return out.join('\n');
}

/** Filler: many small files (like a real root filesystem) and a few large ones, `bytes` in all. */
function filler(prefix: string, bytes: number): TestFile[] {
  const files: TestFile[] = [];
  let left = bytes;
  for (let i = 0; left > 0; i++) {
    const size = Math.min(left, i % 400 === 0 ? 4 * MiB : 1024 + ((i * 7919) % 16_384));
    files.push({ path: `${prefix}/d${i % 97}/f${i}.bin`, randomBytes: size });
    left -= size;
  }
  return files;
}

function layers(totalBytes: number): TestLayer[] {
  const per = Math.floor(totalBytes / 8);
  const node: TestFile[] = [];
  for (let i = 0; i < 1_500; i++) {
    const name = i % 10 === 0 ? `@scope${i % 7}/pkg${i}` : `pkg${i}`;
    const base = i % 4 === 0 ? `app/node_modules/parent${i % 13}/node_modules/${name}` : `app/node_modules/${name}`;
    node.push({
      path: `${base}/package.json`,
      content: JSON.stringify({ name, version: `1.${i % 30}.${i % 7}`, description: 'bench' }),
    });
    node.push({ path: `${base}/index.js`, randomBytes: 2048 });
  }
  node.push({
    path: 'app/node_modules/lodash/package.json',
    content: JSON.stringify({ name: 'lodash', version: '4.17.20' }),
  });
  const py: TestFile[] = [];
  for (let i = 0; i < 200; i++)
    py.push({
      path: `usr/lib/python3/dist-packages/bench_pkg${i}-1.${i}.0.dist-info/METADATA`,
      content: `Metadata-Version: 2.1\nName: bench_pkg${i}\nVersion: 1.${i}.0\n\n`,
    });
  py.push({
    path: 'usr/lib/python3/dist-packages/requests-2.30.0.dist-info/METADATA',
    content: 'Metadata-Version: 2.1\nName: requests\nVersion: 2.30.0\n\n',
  });
  return [
    {
      files: [
        { path: 'usr/lib/os-release', content: DEBIAN_OS_RELEASE },
        { path: 'etc/os-release', type: 'symlink', linkname: '../usr/lib/os-release' },
        { path: 'var/lib/dpkg/status', content: dpkgStatus(400) },
        ...filler('usr/lib/x86_64-linux-gnu', per),
      ],
    },
    { gzip: true, files: [...node, ...filler('app/dist', per - 1_500 * 2048)] },
    { files: [...py, ...filler('usr/share', per)] },
    { gzip: true, files: filler('opt/tools', per) },
    { files: filler('srv/data', per) },
    { gzip: true, files: filler('usr/local/lib', per) },
    { files: [{ path: 'app/node_modules/pkg1/.wh.package.json' }, ...filler('var/cache', per)] },
    { gzip: true, files: filler('home/app', per) },
  ];
}

/** The scans, in a process of their own so its peak RSS is the scanner's alone. */
async function scanRounds(archive: string, db: string): Promise<void> {
  const scanner = createContainerScanner({ osvDbPath: db });
  const times: number[] = [];
  let details: ContainerScanDetails | undefined;
  let findings = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now();
    const out = await scanner.scan({
      target: archive,
      options: {},
      chunk: null,
      signal: new AbortController().signal,
      progress: () => undefined,
    });
    times.push(performance.now() - start);
    details = out.details;
    findings = out.findings.length;
  }
  process.stdout.write(JSON.stringify({ times, details, findings, maxRssKiB: process.resourceUsage().maxRSS }));
}

if (process.env.BENCH_CONTAINER_SCAN) {
  const [archive, db] = JSON.parse(process.env.BENCH_CONTAINER_SCAN) as [string, string];
  await scanRounds(archive, db);
} else {
  const dir = mkdtempSync(join(tmpdir(), 'rampart-bench-container-'));
  try {
    const archive = join(dir, 'image.tar');
    const t0 = performance.now();
    const spec = layers(TARGET_MB * MiB);
    await writeDockerArchive(
      archive,
      { config: { config: { User: 'app', Env: ['PATH=/usr/bin:/bin'] } }, layers: spec },
      { workDir: join(dir, 'parts') },
    );
    rmSync(join(dir, 'parts'), { recursive: true, force: true });
    const buildMs = performance.now() - t0;
    const db = join(dir, 'osv.db');
    await importOsvDump(join(import.meta.dirname, '../src/agent/scanners/container/sample-osv'), db);
    const child = spawnSync(process.execPath, [import.meta.filename], {
      env: { ...process.env, BENCH_CONTAINER_SCAN: JSON.stringify([archive, db]) },
      encoding: 'utf8',
      maxBuffer: 64 * MiB,
    });
    if (child.status !== 0) throw new Error(`the scan process failed: ${child.stderr}`);
    const r = JSON.parse(child.stdout) as {
      times: number[];
      details: ContainerScanDetails;
      findings: number;
      maxRssKiB: number;
    };
    const sizeMb = statSync(archive).size / MiB;
    console.log(
      JSON.stringify(
        {
          archiveMiB: round(sizeMb, 1),
          bytesReadMiB: round(r.details.bytesRead / MiB, 1),
          layers: r.details.image.layers,
          tarEntries: spec.reduce((n, l) => n + l.files.length, 0),
          packages: r.details.packages,
          findings: r.findings,
          vulnerabilities: r.details.vulnerabilityTable.map((v) => `${v.id} ${v.package} ${v.installed}`),
          buildSeconds: round(buildMs / 1000, 1),
          scanSeconds: r.times.map((t) => round(t / 1000, 2)),
          medianScanSeconds: round(median(r.times) / 1000, 2),
          throughputMiBPerSecond: round(sizeMb / (median(r.times) / 1000), 0),
          peakRssScanProcessMiB: round(r.maxRssKiB / 1024, 0),
          targetSeconds: 10,
          met: median(r.times) <= 10_000,
        },
        null,
        2,
      ),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
