// Builders for container images on disk, for the container scanner's tests and benchmark: docker
// save archives and OCI layouts (directory or tar), layers plain or gzipped, written as streams so
// a benchmark image of hundreds of megabytes never sits in memory.
import { createHash, randomFillSync } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DatabaseSync } from 'node:sqlite';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import type { ImageConfig } from './image.ts';

export interface TestFile {
  path: string;
  /** File content; omitted for links and directories. */
  content?: string | Buffer;
  /** Random bytes of this length instead of content, generated while writing (filler). */
  randomBytes?: number;
  /** Zero bytes of this length (compresses extremely well: decompression bombs). */
  zeroBytes?: number;
  type?: 'file' | 'symlink' | 'link' | 'directory';
  linkname?: string;
}

export interface TestLayer {
  files: TestFile[];
  gzip?: boolean;
  zstd?: boolean;
}

export interface TestImage {
  config: ImageConfig;
  layers: TestLayer[];
  repoTags?: string[];
}

interface WrittenBlob {
  digest: string;
  size: number;
  /** sha256 of the uncompressed tar (the config's diff_id). */
  diffId: string;
}

const CHUNK = 256 * 1024;

/** Writes a file's body into a tar entry with backpressure. */
async function writeBody(entry: Writable, f: TestFile): Promise<void> {
  const total = f.randomBytes ?? f.zeroBytes ?? 0;
  const buf = Buffer.alloc(Math.min(CHUNK, total));
  for (let done = 0; done < total; ) {
    const n = Math.min(CHUNK, total - done);
    const chunk = f.randomBytes !== undefined ? randomFillSync(Buffer.allocUnsafe(n)) : buf.subarray(0, n);
    done += n;
    if (!entry.write(chunk)) await new Promise((r) => entry.once('drain', r));
  }
  await new Promise<void>((resolve, reject) => {
    entry.once('error', reject);
    entry.end(() => resolve());
  });
}

/** Packs entries into a tar stream (tar-stream pack), written as they are produced. */
async function packInto(files: TestFile[], out: Writable): Promise<void> {
  const pack = tar.pack();
  const piped = pipeline(pack as unknown as NodeJS.ReadableStream, out);
  for (const f of files) {
    const type = f.type ?? 'file';
    if (type !== 'file') {
      await new Promise<void>((resolve, reject) => pack.entry({ name: f.path, type, linkname: f.linkname ?? '', mode: type === 'directory' ? 0o755 : 0o777 }, (e) => (e ? reject(e) : resolve())));
      continue;
    }
    if (f.randomBytes !== undefined || f.zeroBytes !== undefined) {
      const entry = pack.entry({ name: f.path, size: f.randomBytes ?? f.zeroBytes!, mode: 0o644 }) as unknown as Writable;
      await writeBody(entry, f);
      continue;
    }
    const body = typeof f.content === 'string' ? Buffer.from(f.content) : (f.content ?? Buffer.alloc(0));
    await new Promise<void>((resolve, reject) => pack.entry({ name: f.path, size: body.length, mode: 0o644 }, body, (e) => (e ? reject(e) : resolve())));
  }
  pack.finalize();
  await piped;
}

/** A Writable that hashes and counts what passes into a file. */
function hashingFile(path: string): { stream: Writable; done: Promise<{ digest: string; size: number }> } {
  const hash = createHash('sha256');
  let size = 0;
  const file = createWriteStream(path);
  const tap = new PassThrough();
  tap.on('data', (c: Buffer) => {
    hash.update(c);
    size += c.length;
  });
  const done = pipeline(tap, file).then(() => ({ digest: `sha256:${hash.digest('hex')}`, size }));
  return { stream: tap, done };
}

/** Writes one layer tar (gzipped when asked) to path; returns its digest, size and diff id. */
export async function writeLayer(path: string, layer: TestLayer): Promise<WrittenBlob> {
  const stored = hashingFile(path);
  const raw = createHash('sha256');
  const tap = new PassThrough();
  tap.on('data', (c: Buffer) => raw.update(c));
  const sink = layer.gzip
    ? pipeline(tap, zlib.createGzip({ level: 1 }), stored.stream)
    : layer.zstd
      ? pipeline(tap, zlib.createZstdCompress(), stored.stream)
      : pipeline(tap, stored.stream);
  await packInto(layer.files, tap);
  await sink;
  const { digest, size } = await stored.done;
  return { digest, size, diffId: `sha256:${raw.digest('hex')}` };
}

function configWithRootfs(image: TestImage, diffIds: string[]): Buffer {
  return Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', ...image.config, rootfs: { type: 'layers', diff_ids: diffIds } }));
}

const digestHex = (d: string) => d.slice('sha256:'.length);

/**
 * Writes a `docker save` archive: <hex>/layer.tar per layer, <hex>.json config, manifest.json.
 * Layers are written to workDir first (default <outPath>.parts, removed afterwards).
 */
export async function writeDockerArchive(outPath: string, image: TestImage, opts: { gzipWhole?: boolean; workDir?: string } = {}): Promise<void> {
  const work = opts.workDir ?? `${outPath}.parts`;
  mkdirSync(work, { recursive: true });
  const layers: (WrittenBlob & { file: string })[] = [];
  for (const [i, l] of image.layers.entries()) {
    const file = join(work, `layer-${i}`);
    layers.push({ ...(await writeLayer(file, l)), file });
  }
  const config = configWithRootfs(image, layers.map((l) => l.diffId));
  const configName = `${createHash('sha256').update(config).digest('hex')}.json`;
  const layerNames = layers.map((l) => `${digestHex(l.digest)}/layer.tar`);
  const manifest = Buffer.from(JSON.stringify([{ Config: configName, RepoTags: image.repoTags ?? ['rampart-test:latest'], Layers: layerNames }]));
  const pack = tar.pack();
  const file = createWriteStream(outPath);
  const piped = opts.gzipWhole ? pipeline(pack as unknown as NodeJS.ReadableStream, zlib.createGzip({ level: 1 }), file) : pipeline(pack as unknown as NodeJS.ReadableStream, file);
  // docker save writes layers first and manifest.json last; the reader must not depend on order.
  for (const [i, l] of layers.entries()) {
    const entry = pack.entry({ name: layerNames[i]!, size: l.size, mode: 0o644 }) as unknown as Writable;
    await pipeline(createReadStream(l.file), entry);
  }
  await new Promise<void>((r, j) => pack.entry({ name: configName, size: config.length }, config, (e) => (e ? j(e) : r())));
  await new Promise<void>((r, j) => pack.entry({ name: 'manifest.json', size: manifest.length }, manifest, (e) => (e ? j(e) : r())));
  pack.finalize();
  await piped;
  if (!opts.workDir) rmSync(work, { recursive: true, force: true });
}

/** Writes an OCI image layout directory (oci-layout, index.json, blobs/sha256/…). */
export async function writeOciLayout(dir: string, image: TestImage): Promise<void> {
  const blobs = join(dir, 'blobs', 'sha256');
  mkdirSync(blobs, { recursive: true });
  const layers: WrittenBlob[] = [];
  for (const [i, l] of image.layers.entries()) {
    const tmp = join(blobs, `tmp-${i}`);
    const w = await writeLayer(tmp, l);
    renameSync(tmp, join(blobs, digestHex(w.digest)));
    layers.push(w);
  }
  const putJson = (value: unknown) => {
    const buf = Buffer.isBuffer(value) ? value : Buffer.from(JSON.stringify(value));
    const digest = `sha256:${createHash('sha256').update(buf).digest('hex')}`;
    writeFileSync(join(blobs, digestHex(digest)), buf);
    return { digest, size: buf.length };
  };
  const config = putJson(configWithRootfs(image, layers.map((l) => l.diffId)));
  const manifest = putJson({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
    layers: image.layers.map((l, i) => ({ mediaType: `application/vnd.oci.image.layer.v1.tar${l.gzip ? '+gzip' : l.zstd ? '+zstd' : ''}`, digest: layers[i]!.digest, size: layers[i]!.size })),
  });
  writeFileSync(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  writeFileSync(
    join(dir, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.index.v1+json',
      manifests: [{ mediaType: 'application/vnd.oci.image.manifest.v1+json', ...manifest, platform: { os: 'linux', architecture: 'amd64' }, annotations: { 'org.opencontainers.image.ref.name': image.repoTags?.[0] ?? 'latest' } }],
    }),
  );
}

/** Writes an OCI layout tar: the layout directory (kept beside it at <outPath>.layout) packed into one file. */
export async function writeOciArchive(outPath: string, image: TestImage, opts: { gzipWhole?: boolean } = {}): Promise<void> {
  const dir = `${outPath}.layout`;
  await writeOciLayout(dir, image);
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
  const pack = tar.pack();
  const file = createWriteStream(outPath);
  const piped = opts.gzipWhole ? pipeline(pack as unknown as NodeJS.ReadableStream, zlib.createGzip({ level: 1 }), file) : pipeline(pack as unknown as NodeJS.ReadableStream, file);
  for (const rel of files) {
    const entry = pack.entry({ name: rel, size: statSync(join(dir, rel)).size, mode: 0o644 }) as unknown as Writable;
    await pipeline(createReadStream(join(dir, rel)), entry);
  }
  pack.finalize();
  await piped;
}

/** Writes a raw tar of the given entries (for hostile archives the writers above would never make). */
export async function writeTar(outPath: string, files: TestFile[], opts: { gzip?: boolean } = {}): Promise<void> {
  const file = createWriteStream(outPath);
  if (opts.gzip) {
    const gz = zlib.createGzip({ level: 9 });
    const done = pipeline(gz, file);
    await packInto(files, gz);
    await done;
  } else await packInto(files, file);
}

// ---- the images the tests scan -----------------------------------------------------------------

const dpkgStanza = (p: { name: string; version: string; source?: string; status?: string; arch?: string }) =>
  [`Package: ${p.name}`, `Status: ${p.status ?? 'install ok installed'}`, 'Priority: optional', `Architecture: ${p.arch ?? 'amd64'}`, ...(p.source ? [`Source: ${p.source}`] : []), `Version: ${p.version}`, 'Description: test package', ' A continuation line: with a colon.', ''].join('\n');

export const DEBIAN_OS_RELEASE = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nVERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\n';

/** dpkg status of the vulnerable Debian image: openssl 3.0.11-1~deb12u1 (fixed in ~deb12u2 by DSA-5532-1). */
export const DEBIAN_DPKG_STATUS = [
  dpkgStanza({ name: 'base-files', version: '12.4+deb12u5' }),
  dpkgStanza({ name: 'libc6', version: '2.36-9+deb12u3', source: 'glibc' }),
  dpkgStanza({ name: 'libssl3', version: '3.0.11-1~deb12u1', source: 'openssl' }),
  dpkgStanza({ name: 'openssl', version: '3.0.11-1~deb12u1' }),
  dpkgStanza({ name: 'zlib1g', version: '1:1.2.13.dfsg-1', source: 'zlib' }),
  dpkgStanza({ name: 'tzdata', version: '2024a-0+deb12u1', arch: 'all' }),
  dpkgStanza({ name: 'old-tool', version: '1.0-1', status: 'deinstall ok config-files' }),
].join('\n');

const pkgJson = (name: string, version: string) => JSON.stringify({ name, version, description: 'test', main: 'index.js' });
const pyMetadata = (name: string, version: string) => `Metadata-Version: 2.1\nName: ${name}\nVersion: ${version}\nSummary: test\n\nLong description.\nName: not-this\n`;

/**
 * A Debian 12 image that every check fires on: vulnerable openssl (source of libssl3), unfixed
 * zlib, lodash 4.17.20, nested debug 4.1.0, requests 2.30.0; root user, secrets in Env, Telnet
 * exposed, an unpinned ADD. Its last layer deletes left-pad's package.json and makes vendor/
 * node_modules opaque, so old-vendored disappears and new-vendored (same layer) stays.
 */
export function debianImage(opts: { filler?: number } = {}): TestImage {
  return {
    repoTags: ['rampart-test/debian-app:1'],
    config: {
      config: {
        Env: [
          'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
          'DB_PASSWORD=hunter2-very-secret',
          'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
          'UPSTREAM_ID=AKIAIOSFODNN7EXAMPLE',
          'POSTGRES_PASSWORD_FILE=/run/secrets/db',
          'API_TOKEN=',
          'NODE_ENV=production',
        ],
        ExposedPorts: { '23/tcp': {}, '8080/tcp': {} },
        Cmd: ['node', 'server.js'],
      },
      history: [
        { created_by: '/bin/sh -c #(nop) ADD file:abc in / ' },
        { created_by: 'ADD https://downloads.example.test/tool.tar.gz?token=abc /opt/ # buildkit' },
        { created_by: 'ADD --checksum=sha256:0123 https://downloads.example.test/pinned.tar.gz /opt/ # buildkit' },
      ],
    },
    layers: [
      {
        files: [
          { path: 'etc/', type: 'directory' },
          { path: 'etc/os-release', type: 'symlink', linkname: '../usr/lib/os-release' },
          { path: 'usr/lib/os-release', content: DEBIAN_OS_RELEASE },
          { path: 'var/lib/dpkg/status', content: DEBIAN_DPKG_STATUS },
          { path: 'var/lib/dpkg/status-old', content: dpkgStanza({ name: 'ghost', version: '9.9' }) },
          { path: 'bin/bash', randomBytes: 4096 },
        ],
      },
      {
        gzip: true,
        files: [
          { path: 'usr/src/app/node_modules/lodash/package.json', content: pkgJson('lodash', '4.17.20') },
          { path: 'usr/src/app/node_modules/lodash/lodash.js', randomBytes: 2048 },
          { path: 'usr/src/app/node_modules/@acme/widget/package.json', content: pkgJson('@acme/widget', '2.0.0') },
          { path: 'usr/src/app/node_modules/express/package.json', content: pkgJson('express', '4.18.2') },
          { path: 'usr/src/app/node_modules/express/node_modules/debug/package.json', content: pkgJson('debug', '4.1.0') },
          { path: 'usr/src/app/node_modules/express/node_modules/@types/node/package.json', content: pkgJson('@types/node', '20.1.0') },
          { path: 'usr/src/app/node_modules/left-pad/package.json', content: pkgJson('left-pad', '1.3.0') },
          { path: 'usr/src/app/node_modules/lodash/fp/package.json', content: '{"main":"../fp.js"}' },
          { path: 'usr/src/app/vendor/node_modules/old-vendored/package.json', content: pkgJson('old-vendored', '0.1.0') },
          { path: 'usr/src/app/package.json', content: pkgJson('my-app', '1.0.0') },
          { path: 'usr/lib/python3/dist-packages/requests-2.30.0.dist-info/METADATA', content: pyMetadata('requests', '2.30.0') },
          { path: 'usr/lib/python3/dist-packages/Typing_Extensions-4.9.0.dist-info/METADATA', content: pyMetadata('Typing_Extensions', '4.9.0') },
          ...(opts.filler ? [{ path: 'usr/share/filler.bin', randomBytes: opts.filler }] : []),
        ],
      },
      {
        files: [
          { path: 'usr/src/app/node_modules/left-pad/.wh.package.json' },
          { path: 'usr/src/app/vendor/node_modules/.wh..wh..opq' },
          { path: 'usr/src/app/vendor/node_modules/new-vendored/package.json', content: pkgJson('new-vendored', '0.2.0') },
        ],
      },
    ],
  };
}

export const ALPINE_APK_INSTALLED = [
  ['C:Q1abc=', 'P:musl', 'V:1.2.4_git20230717-r4', 'A:x86_64', 'S:383152', 'o:musl', 'm:Timo', 'r:', ''],
  ['C:Q1def=', 'P:busybox', 'V:1.36.1-r15', 'A:x86_64', 'o:busybox', ''],
  ['C:Q1ghi=', 'P:libcrypto3', 'V:3.1.4-r5', 'A:x86_64', 'o:openssl', ''],
  ['C:Q1jkl=', 'P:libssl3', 'V:3.1.4-r5', 'A:x86_64', 'o:openssl', ''],
]
  .map((l) => l.join('\n'))
  .join('\n');

/** An Alpine 3.19 image (meant for an OCI layout): musl before its fix, running as a named user. */
export function alpineImage(): TestImage {
  return {
    repoTags: ['rampart-test/alpine:3.19'],
    config: { config: { User: 'app', Env: ['PATH=/usr/bin:/bin'], Cmd: ['/bin/sh'] } },
    layers: [
      {
        gzip: true,
        files: [
          { path: 'etc/os-release', content: 'NAME="Alpine Linux"\nID=alpine\nVERSION_ID=3.19.1\nPRETTY_NAME="Alpine Linux v3.19"\n' },
          { path: 'lib/apk/db/installed', content: ALPINE_APK_INSTALLED },
          { path: 'bin/busybox', randomBytes: 8192 },
        ],
      },
    ],
  };
}

/** A Debian image with nothing to report: a non-root user, no secrets, no risky ports, fixed packages. */
export function cleanImage(): TestImage {
  return {
    config: { config: { User: '10001:10001', Env: ['PATH=/usr/bin:/bin', 'NODE_ENV=production', 'GPG_KEY=7169605F62C751356D054A26A821E680E5FA6305'], ExposedPorts: { '8080/tcp': {} } }, history: [{ created_by: 'COPY . /app # buildkit' }] },
    layers: [
      {
        files: [
          { path: 'etc/os-release', content: DEBIAN_OS_RELEASE },
          { path: 'var/lib/dpkg/status', content: [dpkgStanza({ name: 'libssl3', version: '3.0.11-1~deb12u2', source: 'openssl' }), dpkgStanza({ name: 'libc6', version: '2.36-9+deb12u3', source: 'glibc' })].join('\n') },
          { path: 'app/node_modules/lodash/package.json', content: pkgJson('lodash', '4.17.21') },
          // Distroless images list packages one file each, without a Status field.
          { path: 'var/lib/dpkg/status.d/base-files', content: 'Package: base-files\nVersion: 12.4+deb12u5\nArchitecture: amd64\n' },
          { path: 'var/lib/dpkg/status.d/base-files.md5sums', content: 'd41d8cd98f00b204e9800998ecf8427e  etc/issue\n' },
        ],
      },
    ],
  };
}

// ---- hostile archives -------------------------------------------------------------------------

/** A docker save archive whose layer holds a `../` path that climbs out of the root. */
export async function writeTraversalArchive(outPath: string): Promise<void> {
  await writeDockerArchive(outPath, { config: { config: { User: 'app' } }, layers: [{ files: [{ path: 'usr/../../../root/.ssh/authorized_keys', content: 'ssh-ed25519 AAAA' }] }] });
}

/** A docker save archive with one gzipped layer holding `bytes` of zeros (about 1,000:1 compressed). */
export async function writeGzipBombArchive(outPath: string, bytes: number): Promise<void> {
  await writeDockerArchive(outPath, { config: { config: { User: 'app' } }, layers: [{ gzip: true, files: [{ path: 'zeros', zeroBytes: bytes }] }] });
}

// ---- rpm -----------------------------------------------------------------------------------

/** An rpm header blob (the rpmdb's Packages.blob) with NAME, VERSION, RELEASE and optionally EPOCH. */
export function rpmHeaderBlob(p: { name: string; version: string; release: string; epoch?: number }): Buffer {
  const entries: [number, number, number][] = [];
  const data: Buffer[] = [];
  let size = 0;
  if (p.epoch !== undefined) {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(p.epoch);
    entries.push([1003, 4, size]);
    data.push(b);
    size += 4;
  }
  for (const [tag, s] of [[1000, p.name], [1001, p.version], [1002, p.release]] as const) {
    const b = Buffer.from(`${s}\0`);
    entries.push([tag, 6, size]);
    data.push(b);
    size += b.length;
  }
  const head = Buffer.alloc(8 + entries.length * 16);
  head.writeUInt32BE(entries.length, 0);
  head.writeUInt32BE(size, 4);
  for (const [i, [tag, type, offset]] of entries.entries()) {
    head.writeUInt32BE(tag, 8 + i * 16);
    head.writeUInt32BE(type, 12 + i * 16);
    head.writeUInt32BE(offset, 16 + i * 16);
    head.writeUInt32BE(1, 20 + i * 16);
  }
  return Buffer.concat([head, ...data]);
}

/** An rpmdb.sqlite holding these packages (plus a gpg-pubkey entry, which readers skip). */
export function rpmdbSqlite(pkgs: { name: string; version: string; release: string; epoch?: number }[]): Buffer {
  const db = new DatabaseSync(':memory:');
  db.exec('create table Packages (hnum integer primary key autoincrement, blob blob not null)');
  const insert = db.prepare('insert into Packages (blob) values (?)');
  for (const p of [...pkgs, { name: 'gpg-pubkey', version: 'fd431d51', release: '4ae0493b' }]) insert.run(rpmHeaderBlob(p));
  const out = Buffer.from(db.serialize());
  db.close();
  return out;
}
