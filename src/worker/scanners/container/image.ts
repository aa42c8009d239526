// Reads a container image from a `docker save` archive, an OCI layout tar, or an OCI layout
// directory, without extracting it: the archive is streamed once, each layer (plain tar, gzip or
// zstd) is parsed as it passes, and only the files the inventory needs (package databases,
// package.json, Python metadata, os-release) are kept. Layers are then stacked in manifest order
// with whiteouts, so a file deleted by a later layer is not reported.
import { createReadStream, openSync, readSync, closeSync, readFileSync, realpathSync, statSync, type Stats } from 'node:fs';
import { join, sep } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar from 'tar-stream';
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

interface KeptEntry {
  kind: KeptKind;
  data?: Buffer;
  /** A symbolic or hard link, resolved after the layers are stacked. */
  link?: string;
  hard?: boolean;
}

interface LayerFiles {
  files: Map<string, KeptEntry>;
  whiteouts: string[];
  opaque: string[];
}

/** The image's config (the parts the checks read). */
export interface ImageConfig {
  architecture?: string;
  os?: string;
  config?: {
    User?: string;
    Env?: string[];
    ExposedPorts?: Record<string, unknown>;
    Entrypoint?: string[] | string | null;
    Cmd?: string[] | string | null;
    Labels?: Record<string, string> | null;
  } | null;
  history?: { created_by?: string; empty_layer?: boolean }[];
}

export interface ImageContents {
  format: 'docker-archive' | 'oci-layout';
  config: ImageConfig;
  repoTags: string[];
  layers: number;
  /** Visible kept files after whiteouts, links resolved, by path relative to the root. */
  files: Map<string, { kind: KeptKind; data: Buffer }>;
  /** Files over their size cap that were left out (package.json and similar). */
  skipped: string[];
  /** Bytes read from disk. */
  bytesRead: number;
}

export interface ReadImageOptions {
  signal?: AbortSignal;
  onProgress?: (p: { bytesRead: number; totalBytes: number; layers: number }) => void;
  limits?: Partial<ImageLimits>;
}

const MiB = 1024 * 1024;
/** Linux's PATH_MAX: no file in a real image has a longer name. */
const MAX_PATH = 4096;
const hostile = (message: string) => new ScannerError(`The image archive was refused: ${message}`, false);

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
    if (n >= 3 && parts[n - 3] === 'node_modules' && !parts[n - 2]!.startsWith('@') && !parts[n - 2]!.startsWith('.')) return 'npm';
    if (n >= 4 && parts[n - 4] === 'node_modules' && parts[n - 3]!.startsWith('@')) return 'npm';
    return null;
  }
  if (path.endsWith('.dist-info/METADATA') || path.endsWith('.egg-info/PKG-INFO') || path.endsWith('.egg-info')) return 'pypi';
  return null;
}

// Per kind: the most kept, and whether a bigger file fails the scan (a package database cut short
// would hide packages) or is truncated (Python metadata: the headers come first) or skipped.
function capOf(kind: KeptKind, limits: ImageLimits): { max: number; over: 'refuse' | 'truncate' | 'skip' } {
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

/** State shared by every stream of one image read. */
class ReadContext {
  readonly limits: ImageLimits;
  entries = 0;
  uncompressed = 0;
  keptBytes = 0;
  keptFiles = 0;
  readonly skipped: string[] = [];
  error: Error | null = null;
  private readonly onFail: Set<(e: Error) => void> = new Set();

  constructor(limits: ImageLimits) {
    this.limits = limits;
  }

  fail(e: Error): void {
    if (this.error) return;
    this.error = e instanceof ScannerError ? e : readError(e, 'it could not be read');
    for (const f of this.onFail) f(this.error);
  }

  /** Registers a stream to tear down on failure; returns the unregister function. */
  onFailure(f: (e: Error) => void): () => void {
    this.onFail.add(f);
    return () => this.onFail.delete(f);
  }
}

/** A tar entry's body (a streamx Readable). */
interface EntryStream {
  on(event: 'error', f: () => void): unknown;
  on(event: 'data', f: (chunk: Buffer) => void): unknown;
  on(event: 'end', f: () => void): unknown;
  resume(): unknown;
  pipe(dest: Writable): unknown;
}

const ignore = () => undefined;

/** Drains an entry and moves on; no listener per chunk. */
function drain(stream: EntryStream, next: () => void): void {
  stream.on('end', () => next());
  stream.resume();
}

/** A tar parser for one layer that keeps the files classify() names and records whiteouts. */
function layerExtract(ctx: ReadContext, layer: LayerFiles): tar.Extract {
  const ex = tar.extract();
  ex.on('entry', (h, body, next) => {
    const stream = body as unknown as EntryStream;
    // A failed read destroys the current entry with the error; the failure is handled once, via ctx.
    stream.on('error', ignore);
    try {
      if (++ctx.entries > ctx.limits.maxEntries) throw hostile(`more than ${ctx.limits.maxEntries} entries in its layers`);
      const path = cleanPath(h.name);
      const slash = path.lastIndexOf('/');
      const base = path.slice(slash + 1);
      if (base.startsWith('.wh.')) {
        const dir = slash < 0 ? '' : path.slice(0, slash);
        if (base === '.wh..wh..opq') layer.opaque.push(dir);
        else layer.whiteouts.push(dir ? `${dir}/${base.slice(4)}` : base.slice(4));
        return drain(stream, next);
      }
      if (h.size > ctx.limits.maxUncompressedBytes) throw hostile(`${path} declares ${h.size} bytes`);
      const kind = path ? classify(path) : null;
      if (!kind) return drain(stream, next);
      if (h.type === 'symlink' || h.type === 'link') {
        layer.files.set(path, { kind, link: h.linkname ?? '', hard: h.type === 'link' });
        return drain(stream, next);
      }
      if (h.type !== 'file' && h.type !== 'contiguous-file') return drain(stream, next);
      const cap = capOf(kind, ctx.limits);
      const size = h.size ?? 0;
      if (size > cap.max && cap.over === 'refuse') throw hostile(`${path} is ${size} bytes, more than the ${cap.max}-byte limit for a package database`);
      if (size > cap.max && cap.over === 'skip') {
        ctx.skipped.push(path);
        return drain(stream, next);
      }
      const keep = Math.min(size, cap.max);
      if (++ctx.keptFiles > ctx.limits.maxKeptFiles) throw hostile(`more than ${ctx.limits.maxKeptFiles} package metadata files`);
      ctx.keptBytes += keep;
      if (ctx.keptBytes > ctx.limits.maxKeptBytes) throw hostile(`more than ${ctx.limits.maxKeptBytes} bytes of package metadata`);
      const data = Buffer.allocUnsafe(keep);
      let at = 0;
      stream.on('data', (c) => {
        if (at >= keep) return;
        const n = Math.min(c.length, keep - at);
        c.copy(data, at, 0, n);
        at += n;
      });
      stream.on('end', () => {
        layer.files.set(path, { kind, data: at === keep ? data : data.subarray(0, at) });
        next();
      });
    } catch (e) {
      ctx.fail(e as Error);
      next(e as Error);
    }
  });
  return ex;
}

type BlobKind = 'layer' | 'json' | 'other';

/**
 * Takes one blob's bytes (an outer archive member or an OCI blob file), decides from its first
 * bytes what it is, and routes it: a layer (tar, gzip or zstd) to a layer parser, small JSON to
 * memory, anything else nowhere. Write callbacks wait for the parser, so backpressure holds.
 */
class BlobSink extends Writable {
  kind: BlobKind | null = null;
  readonly layer: LayerFiles = { files: new Map(), whiteouts: [], opaque: [] };
  json: Buffer | null = null;
  private head: Buffer[] = [];
  private headLength = 0;
  private target: Writable | null = null;
  private done: Promise<void> | null = null;
  private jsonChunks: Buffer[] = [];
  private jsonLength = 0;
  private readonly ctx: ReadContext;
  private readonly name: string;

  constructor(ctx: ReadContext, name: string) {
    super({ highWaterMark: MiB });
    this.ctx = ctx;
    this.name = name;
  }

  private decide(): void {
    const head = Buffer.concat(this.head);
    const gzip = head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
    const zstd = head.length >= 4 && head.readUInt32LE(0) === 0xfd2fb528;
    const isTar = head.length >= 512 && (head.toString('latin1', 257, 262) === 'ustar' || head.subarray(0, 512).every((b) => b === 0));
    const text = head.subarray(0, 64).toString('latin1').trimStart();
    if (gzip || zstd || isTar) {
      this.kind = 'layer';
      const ex = layerExtract(this.ctx, this.layer);
      let compressedIn = 0;
      let out = 0;
      const counter = new Writable({
        highWaterMark: MiB,
        write: (chunk: Buffer, _enc, cb) => {
          out += chunk.length;
          this.ctx.uncompressed += chunk.length;
          let refusal: ScannerError | null = null;
          if (this.ctx.uncompressed > this.ctx.limits.maxUncompressedBytes) refusal = hostile(`its layers hold more than ${this.ctx.limits.maxUncompressedBytes} bytes`);
          else if (compressedIn && out > this.ctx.limits.ratioFloorBytes && out > compressedIn * this.ctx.limits.maxCompressionRatio) {
            refusal = hostile(`the layer ${this.name} decompresses to more than ${this.ctx.limits.maxCompressionRatio} times its size (a decompression bomb)`);
          }
          if (refusal) {
            this.ctx.fail(refusal);
            return cb(refusal);
          }
          if (ex.write(chunk)) cb();
          else ex.once('drain', () => cb());
        },
        final: (cb) => {
          ex.once('finish', () => cb());
          ex.once('error', (e: Error) => cb(e));
          ex.end(undefined);
        },
      });
      // Every stage's failure fails the whole read: a stage that stops silently would leave the
      // writers above it waiting for a drain that never comes.
      ex.on('error', (e: Error) => this.ctx.fail(hostile(`the layer ${this.name} is not a valid tar archive (${e.message})`)));
      counter.on('error', (e: Error) => this.ctx.fail(e));
      const stages: Writable[] = [];
      if (gzip || zstd) {
        const decompress = gzip ? zlib.createGunzip({ chunkSize: 256 * 1024 }) : zlib.createZstdDecompress({ chunkSize: 256 * 1024 });
        decompress.on('error', (e: Error) => this.ctx.fail(hostile(`the layer ${this.name} could not be decompressed (${e.message})`)));
        const meter = new Writable({
          write: (chunk: Buffer, _enc, cb) => {
            compressedIn += chunk.length;
            if (decompress.write(chunk)) cb();
            else decompress.once('drain', () => cb());
          },
          final: (cb) => {
            decompress.end();
            cb();
          },
        });
        stages.push(meter, decompress);
        this.done = pipeline(decompress, counter).catch((e: Error) => {
          throw this.ctx.error ?? hostile(`the layer ${this.name} could not be decompressed (${e.message})`);
        });
        this.target = meter;
      } else {
        this.target = counter;
        this.done = new Promise((resolve, reject) => {
          counter.once('finish', resolve);
          counter.once('error', reject);
        });
      }
      // Torn down quietly: the failure is already recorded, and the pipelines awaiting these
      // stages turn a premature close into ctx.error.
      const unregister = this.ctx.onFailure(() => {
        ex.destroy();
        for (const s of [counter, ...stages]) s.destroy();
      });
      this.done = this.done.finally(unregister);
      // Awaited only at the end of the blob; a failure before then is already in ctx.
      this.done.catch(ignore);
      return;
    }
    if (text.startsWith('{') || text.startsWith('[')) {
      this.kind = 'json';
      return;
    }
    this.kind = 'other';
  }

  private forward(chunk: Buffer, cb: (e?: Error | null) => void): void {
    if (this.kind === 'json') {
      this.jsonLength += chunk.length;
      if (this.jsonLength > this.ctx.limits.maxMetadataBytes) {
        // Too big to be a manifest or config: not needed, and not kept.
        this.kind = 'other';
        this.jsonChunks = [];
      } else this.jsonChunks.push(chunk);
      return cb();
    }
    if (this.kind !== 'layer') return cb();
    const t = this.target!;
    if (t.write(chunk)) cb();
    else t.once('drain', () => cb());
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    if (this.ctx.error) return cb(this.ctx.error);
    if (this.kind !== null) return this.forward(chunk, cb);
    this.head.push(chunk);
    this.headLength += chunk.length;
    if (this.headLength < 512) return cb();
    this.decide();
    const head = Buffer.concat(this.head);
    this.head = [];
    this.forward(head, cb);
  }

  override _final(cb: (e?: Error | null) => void): void {
    if (this.kind === null) {
      this.decide();
      const head = Buffer.concat(this.head);
      this.head = [];
      return this.forward(head, (e) => (e ? cb(e) : this.finish(cb)));
    }
    this.finish(cb);
  }

  private finish(cb: (e?: Error | null) => void): void {
    if (this.kind === 'json') this.json = Buffer.concat(this.jsonChunks);
    if (this.kind !== 'layer') return cb();
    this.target!.end();
    this.done!.then(
      () => cb(this.ctx.error),
      (e: Error) => cb(this.ctx.error ?? e),
    );
  }
}

interface ManifestChoice {
  format: ImageContents['format'];
  config: string;
  layers: string[];
  repoTags: string[];
}

function parseJson(buf: Buffer | undefined, what: string): unknown {
  if (!buf) throw hostile(`${what} is missing`);
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch {
    throw hostile(`${what} is not valid JSON`);
  }
}

const DIGEST_RE = /^(sha256|sha512):([a-f0-9]{64}|[a-f0-9]{128})$/;
const MANIFEST_TYPES = new Set(['application/vnd.oci.image.manifest.v1+json', 'application/vnd.docker.distribution.manifest.v2+json']);
const INDEX_TYPES = new Set(['application/vnd.oci.image.index.v1+json', 'application/vnd.docker.distribution.manifest.list.v2+json']);

function blobPath(digest: unknown): string {
  const m = typeof digest === 'string' ? DIGEST_RE.exec(digest) : null;
  if (!m) throw hostile(`the digest ${JSON.stringify(String(digest).slice(0, 100))} is not a sha256 or sha512 digest`);
  return `blobs/${m[1]}/${m[2]}`;
}

interface Descriptor {
  mediaType?: string;
  digest?: string;
  platform?: { os?: string; architecture?: string };
  annotations?: Record<string, string>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The OCI manifest an index leads to: linux/amd64 when platforms are given, else the first image. */
function ociManifest(readBlob: (path: string) => Buffer | undefined, index: unknown, depth = 0): { manifest: Record<string, unknown>; tags: string[] } {
  if (depth > 4) throw hostile('OCI indexes nest too deeply');
  const manifests = isObject(index) && Array.isArray(index.manifests) ? (index.manifests.filter(isObject) as Descriptor[]) : [];
  if (manifests.length === 0) throw hostile('the OCI index lists no manifests');
  const platform = (m: Descriptor) => (isObject(m.platform) ? m.platform : {});
  const images = manifests.filter((m) => platform(m).os !== 'unknown');
  const pick = images.find((m) => platform(m).os === 'linux' && platform(m).architecture === 'amd64') ?? images[0] ?? manifests[0]!;
  const path = blobPath(pick.digest);
  const doc = parseJson(readBlob(path), `the manifest ${pick.digest}`);
  if (!isObject(doc)) throw hostile(`the manifest ${pick.digest} is not a JSON object`);
  const mediaType = typeof doc.mediaType === 'string' ? doc.mediaType : typeof pick.mediaType === 'string' ? pick.mediaType : undefined;
  const annotated = isObject(pick.annotations) ? pick.annotations['org.opencontainers.image.ref.name'] : undefined;
  const tag = typeof annotated === 'string' ? annotated.slice(0, 300) : undefined;
  if ((mediaType && INDEX_TYPES.has(mediaType)) || (!mediaType && Array.isArray(doc.manifests))) {
    const inner = ociManifest(readBlob, doc, depth + 1);
    return { manifest: inner.manifest, tags: tag ? [tag, ...inner.tags] : inner.tags };
  }
  if (mediaType && !MANIFEST_TYPES.has(mediaType)) throw hostile(`the manifest media type ${mediaType} is not an image manifest`);
  return { manifest: doc, tags: tag ? [tag] : [] };
}

function ociChoice(readBlob: (path: string) => Buffer | undefined, index: unknown): ManifestChoice {
  const { manifest, tags } = ociManifest(readBlob, index);
  const config = blobPath(isObject(manifest.config) ? manifest.config.digest : undefined);
  const layers = manifest.layers;
  if (!Array.isArray(layers)) throw hostile('the image manifest lists no layers');
  return { format: 'oci-layout', config, layers: layers.map((l: unknown) => blobPath(isObject(l) ? l.digest : undefined)), repoTags: tags };
}

function dockerChoice(manifestJson: unknown): ManifestChoice {
  const first: unknown = Array.isArray(manifestJson) ? manifestJson[0] : undefined;
  if (!isObject(first) || typeof first.Config !== 'string' || !Array.isArray(first.Layers)) throw hostile('manifest.json does not describe an image');
  return {
    format: 'docker-archive',
    config: cleanPath(first.Config),
    layers: first.Layers.map((l) => {
      if (typeof l !== 'string') throw hostile('manifest.json names a layer that is not a path');
      return cleanPath(l);
    }),
    repoTags: Array.isArray(first.RepoTags) ? first.RepoTags.filter((t): t is string => typeof t === 'string').slice(0, 20) : [],
  };
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

const MAX_LINK_HOPS = 40;

/** A link target as a root-relative path; `..` stops at the root, as it does inside a chroot. */
function linkTarget(from: string, link: string, hard: boolean): string {
  const parts = hard || link.startsWith('/') ? [] : from.split('/').slice(0, -1);
  for (const p of link.split('/')) {
    if (p === '' || p === '.') continue;
    if (p === '..') parts.pop();
    else parts.push(p);
  }
  return parts.join('/');
}

function resolveFiles(visible: Map<string, KeptEntry>): Map<string, { kind: KeptKind; data: Buffer }> {
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

function assemble(choice: ManifestChoice, configBuf: Buffer | undefined, layerOf: (path: string) => LayerFiles | undefined, ctx: ReadContext, bytesRead: number): ImageContents {
  if (choice.layers.length > ctx.limits.maxLayers) throw hostile(`${choice.layers.length} layers, more than ${ctx.limits.maxLayers}`);
  const config = parseJson(configBuf, `the image config ${choice.config}`);
  if (typeof config !== 'object' || config === null || Array.isArray(config)) throw hostile('the image config is not a JSON object');
  const layers = choice.layers.map((p) => {
    const l = layerOf(p);
    if (!l) throw hostile(`the manifest names the layer ${p}, which the archive does not hold as a layer`);
    return l;
  });
  return { format: choice.format, config: config as ImageConfig, repoTags: choice.repoTags, layers: layers.length, files: resolveFiles(stackLayers(layers)), skipped: ctx.skipped, bytesRead };
}

/** A disk error (worth another attempt) or content that is not what it claims (not worth one). */
function readError(e: unknown, what: string): ScannerError {
  const err = e as NodeJS.ErrnoException;
  if (err.syscall) return new ScannerError(`Cannot read the image: ${err.code ?? err.message}`, true, { cause: e });
  return hostile(`${what} (${err.message})`);
}

function magicOf(path: string): Buffer {
  const head = Buffer.alloc(4);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, head, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  return head;
}

async function readArchive(path: string, st: Stats, ctx: ReadContext, opts: ReadImageOptions): Promise<ImageContents> {
  const source = createReadStream(path, { highWaterMark: MiB });
  const magic = magicOf(path);
  const gzip = magic[0] === 0x1f && magic[1] === 0x8b;
  const zstd = magic.readUInt32LE(0) === 0xfd2fb528;
  let bytesRead = 0;
  let layersSeen = 0;
  source.on('data', (c) => {
    bytesRead += c.length;
    opts.onProgress?.({ bytesRead, totalBytes: st.size, layers: layersSeen });
  });
  const sinks = new Map<string, BlobSink>();
  const links = new Map<string, string>();
  const outer = tar.extract();
  outer.on('entry', (h, body, next) => {
    const stream = body as unknown as EntryStream;
    stream.on('error', ignore);
    let name: string;
    try {
      if (++ctx.entries > ctx.limits.maxEntries) throw hostile(`more than ${ctx.limits.maxEntries} entries`);
      name = cleanPath(h.name);
    } catch (e) {
      ctx.fail(e as Error);
      return next(e as Error);
    }
    if (name && (h.type === 'symlink' || h.type === 'link')) {
      // docker save (before Docker 25) links a layer.tar that several images share to one copy.
      links.set(name, linkTarget(name, h.linkname ?? '', h.type === 'link'));
      return drain(stream, next);
    }
    if ((h.type !== 'file' && h.type !== 'contiguous-file') || !name) return drain(stream, next);
    if (h.size > ctx.limits.maxUncompressedBytes) {
      ctx.fail(hostile(`the member ${name} declares ${h.size} bytes`));
      return next(ctx.error!);
    }
    const sink = new BlobSink(ctx, name);
    sinks.set(name, sink);
    sink.once('finish', () => {
      if (sink.kind === 'layer') layersSeen++;
      next();
    });
    sink.once('error', (e: Error) => {
      ctx.fail(e);
      next(e);
    });
    stream.pipe(sink);
  });
  const stages: NodeJS.ReadWriteStream[] = [];
  if (gzip || zstd) {
    const decompress = gzip ? zlib.createGunzip({ chunkSize: 256 * 1024 }) : zlib.createZstdDecompress({ chunkSize: 256 * 1024 });
    let out = 0;
    decompress.on('data', (c: Buffer) => {
      out += c.length;
      if (out > ctx.limits.ratioFloorBytes && out > bytesRead * ctx.limits.maxCompressionRatio) ctx.fail(hostile(`it decompresses to more than ${ctx.limits.maxCompressionRatio} times its size (a decompression bomb)`));
    });
    stages.push(decompress);
  }
  const unregister = ctx.onFailure((e) => source.destroy(e));
  try {
    const streams = [source, ...stages, outer] as unknown as NodeJS.WritableStream[];
    await pipeline(streams, opts.signal ? { signal: opts.signal } : {});
  } catch (e) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    if (ctx.error) throw ctx.error;
    throw readError(e, 'it is not a readable tar archive');
  } finally {
    unregister();
  }
  if (ctx.error) throw ctx.error;
  const member = (p: string) => {
    for (let hops = 0; hops <= MAX_LINK_HOPS; hops++) {
      const s = sinks.get(p);
      if (s) return s;
      const target = links.get(p);
      if (target === undefined) return undefined;
      p = target;
    }
    throw hostile(`${p} is a symbolic link loop`);
  };
  const readBlob = (p: string) => member(p)?.json ?? undefined;
  const layerOf = (p: string) => {
    const s = member(p);
    return s?.kind === 'layer' ? s.layer : undefined;
  };
  let choice: ManifestChoice;
  if (sinks.has('manifest.json')) {
    choice = dockerChoice(parseJson(readBlob('manifest.json'), 'manifest.json'));
  } else if (sinks.has('index.json')) {
    choice = ociChoice(readBlob, parseJson(readBlob('index.json'), 'index.json'));
  } else {
    throw new ScannerError('The file is not a docker save archive or an OCI image layout (it has neither manifest.json nor index.json)', false);
  }
  return assemble(choice, readBlob(choice.config), layerOf, ctx, bytesRead);
}

async function readOciDirectory(dir: string, ctx: ReadContext, opts: ReadImageOptions): Promise<ImageContents> {
  const root = realpathSync(dir);
  /** A path under the layout, refused if a symbolic link leads it outside. */
  const inside = (rel: string): string => {
    const full = realpathSync(join(dir, rel));
    if (!full.startsWith(root + sep)) throw hostile(`${rel} leads outside the layout directory`);
    return full;
  };
  const readSmall = (rel: string): Buffer | undefined => {
    let full;
    let st;
    try {
      full = inside(rel);
      st = statSync(full);
    } catch (e) {
      if (e instanceof ScannerError) throw e;
      return undefined;
    }
    if (!st.isFile()) return undefined;
    if (st.size > ctx.limits.maxMetadataBytes) throw hostile(`${rel} is larger than ${ctx.limits.maxMetadataBytes} bytes`);
    return readFileSync(full);
  };
  const index = readSmall('index.json');
  if (!index) throw new ScannerError(`The directory ${dir} is not an OCI image layout (no index.json)`, false);
  const choice = ociChoice(readSmall, parseJson(index, 'index.json'));
  if (choice.layers.length > ctx.limits.maxLayers) throw hostile(`${choice.layers.length} layers, more than ${ctx.limits.maxLayers}`);
  const files = choice.layers.map((l) => {
    try {
      const full = inside(l);
      const st = statSync(full);
      if (!st.isFile()) throw new Error('not a file');
      return { full, size: st.size };
    } catch (e) {
      if (e instanceof ScannerError) throw e;
      throw hostile(`the manifest names the layer ${l}, which the layout does not hold`);
    }
  });
  const sizes = files.map((f) => f.size);
  const totalBytes = sizes.reduce((a, b) => a + b, 0);
  let bytesRead = 0;
  const layers = new Map<string, LayerFiles>();
  for (const [i, rel] of choice.layers.entries()) {
    if (layers.has(rel)) continue;
    const source = createReadStream(files[i]!.full, { highWaterMark: MiB });
    source.on('data', (c) => {
      bytesRead += c.length;
      opts.onProgress?.({ bytesRead, totalBytes, layers: i });
    });
    const sink = new BlobSink(ctx, rel);
    const unregister = ctx.onFailure((e) => source.destroy(e));
    try {
      await pipeline(source, sink, opts.signal ? { signal: opts.signal } : {});
    } catch (e) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      if (ctx.error) throw ctx.error;
      throw readError(e, `the layer ${rel} could not be read`);
    } finally {
      unregister();
    }
    if (sink.kind !== 'layer') throw hostile(`the layer ${rel} is not a tar, gzip or zstd stream`);
    layers.set(rel, sink.layer);
  }
  return assemble(choice, readSmall(choice.config), (p) => layers.get(p), ctx, bytesRead);
}

/** Reads an image from an archive file (docker save or OCI layout tar, optionally compressed) or an OCI layout directory. */
export async function readImage(path: string, opts: ReadImageOptions = {}): Promise<ImageContents> {
  let st: Stats;
  try {
    st = statSync(path);
  } catch (e) {
    throw new ScannerError(`Cannot read the image at ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, false, { cause: e });
  }
  opts.signal?.throwIfAborted();
  const ctx = new ReadContext({ ...DEFAULT_IMAGE_LIMITS, ...opts.limits });
  if (st.isDirectory()) return readOciDirectory(path, ctx, opts);
  if (!st.isFile()) throw new ScannerError(`The image path ${path} is neither a file nor a directory`, false);
  return readArchive(path, st, ctx, opts);
}
