// Reads a container image from a `docker save` archive, an OCI layout tar, or an OCI layout
// directory, without extracting it: the archive is streamed once, each layer (plain tar, gzip or
// zstd) is parsed as it passes, and only the files the inventory needs (package databases,
// package.json, Python metadata, os-release) are kept. Layers are then stacked in manifest order
// with whiteouts, so a file deleted by a later layer is not reported. The parts: image-files.ts
// (what is kept, stacking), image-stream.ts (blob and layer streams), image-manifest.ts (which
// image and layers).
import {
  createReadStream,
  openSync,
  readSync,
  closeSync,
  readFileSync,
  realpathSync,
  statSync,
  type Stats,
} from 'node:fs';
import { join, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { ScannerError } from '../types.ts';
import {
  DEFAULT_IMAGE_LIMITS,
  hostile,
  linkTarget,
  MAX_LINK_HOPS,
  MiB,
  cleanPath,
  resolveFiles,
  stackLayers,
  type ImageLimits,
  type KeptKind,
  type LayerFiles,
} from './image-files.ts';
import { dockerChoice, ociChoice, parseJson, type ImageFormat, type ManifestChoice } from './image-manifest.ts';
import { BlobSink, drain, ignore, ReadContext, readError, type EntryStream } from './image-stream.ts';

export {
  classify,
  cleanPath,
  DEFAULT_IMAGE_LIMITS,
  stackLayers,
  type ImageLimits,
  type KeptKind,
} from './image-files.ts';

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
  format: ImageFormat;
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

function assemble(
  choice: ManifestChoice,
  configBuf: Buffer | undefined,
  layerOf: (path: string) => LayerFiles | undefined,
  ctx: ReadContext,
  bytesRead: number,
): ImageContents {
  if (choice.layers.length > ctx.limits.maxLayers)
    throw hostile(`${choice.layers.length} layers, more than ${ctx.limits.maxLayers}`);
  const config = parseJson(configBuf, `the image config ${choice.config}`);
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    throw hostile('the image config is not a JSON object');
  const layers = choice.layers.map((p) => {
    const l = layerOf(p);
    if (!l) throw hostile(`the manifest names the layer ${p}, which the archive does not hold as a layer`);
    return l;
  });
  return {
    format: choice.format,
    config: config as ImageConfig,
    repoTags: choice.repoTags,
    layers: layers.length,
    files: resolveFiles(stackLayers(layers)),
    skipped: ctx.skipped,
    bytesRead,
  };
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
    const decompress = gzip
      ? zlib.createGunzip({ chunkSize: 256 * 1024 })
      : zlib.createZstdDecompress({ chunkSize: 256 * 1024 });
    let out = 0;
    decompress.on('data', (c: Buffer) => {
      out += c.length;
      if (out > ctx.limits.ratioFloorBytes && out > bytesRead * ctx.limits.maxCompressionRatio)
        ctx.fail(
          hostile(
            `it decompresses to more than ${ctx.limits.maxCompressionRatio} times its size (a decompression bomb)`,
          ),
        );
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
    throw new ScannerError(
      'The file is not a docker save archive or an OCI image layout (it has neither manifest.json nor index.json)',
      false,
    );
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
    if (st.size > ctx.limits.maxMetadataBytes)
      throw hostile(`${rel} is larger than ${ctx.limits.maxMetadataBytes} bytes`);
    return readFileSync(full);
  };
  const index = readSmall('index.json');
  if (!index) throw new ScannerError(`The directory ${dir} is not an OCI image layout (no index.json)`, false);
  const choice = ociChoice(readSmall, parseJson(index, 'index.json'));
  if (choice.layers.length > ctx.limits.maxLayers)
    throw hostile(`${choice.layers.length} layers, more than ${ctx.limits.maxLayers}`);
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
    throw new ScannerError(
      `Cannot read the image at ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      false,
      { cause: e },
    );
  }
  opts.signal?.throwIfAborted();
  const ctx = new ReadContext({ ...DEFAULT_IMAGE_LIMITS, ...opts.limits });
  if (st.isDirectory()) return readOciDirectory(path, ctx, opts);
  if (!st.isFile()) throw new ScannerError(`The image path ${path} is neither a file nor a directory`, false);
  return readArchive(path, st, ctx, opts);
}
