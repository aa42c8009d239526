// Streams of one image read: each blob (an archive member or an OCI blob file) is routed by its
// first bytes to a layer parser (tar, gzip or zstd; only kept files are buffered, whiteouts
// recorded) or, when it is small JSON, to memory. Limits are checked as bytes pass; the first
// failure tears every stream of the read down (ReadContext).
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { ScannerError } from '../types.ts';
import { capOf, classify, cleanPath, hostile, MiB, type ImageLimits, type LayerFiles } from './image-files.ts';

/** State shared by every stream of one image read. */
export class ReadContext {
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
export interface EntryStream {
  on(event: 'error', f: () => void): unknown;
  on(event: 'data', f: (chunk: Buffer) => void): unknown;
  on(event: 'end', f: () => void): unknown;
  resume(): unknown;
  pipe(dest: Writable): unknown;
}

export const ignore = () => undefined;

/** Drains an entry and moves on; no listener per chunk. */
export function drain(stream: EntryStream, next: () => void): void {
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
      if (++ctx.entries > ctx.limits.maxEntries)
        throw hostile(`more than ${ctx.limits.maxEntries} entries in its layers`);
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
      if (size > cap.max && cap.over === 'refuse')
        throw hostile(`${path} is ${size} bytes, more than the ${cap.max}-byte limit for a package database`);
      if (size > cap.max && cap.over === 'skip') {
        ctx.skipped.push(path);
        return drain(stream, next);
      }
      const keep = Math.min(size, cap.max);
      if (++ctx.keptFiles > ctx.limits.maxKeptFiles)
        throw hostile(`more than ${ctx.limits.maxKeptFiles} package metadata files`);
      ctx.keptBytes += keep;
      if (ctx.keptBytes > ctx.limits.maxKeptBytes)
        throw hostile(`more than ${ctx.limits.maxKeptBytes} bytes of package metadata`);
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
export class BlobSink extends Writable {
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
    const isTar =
      head.length >= 512 &&
      (head.toString('latin1', 257, 262) === 'ustar' || head.subarray(0, 512).every((b) => b === 0));
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
          if (this.ctx.uncompressed > this.ctx.limits.maxUncompressedBytes)
            refusal = hostile(`its layers hold more than ${this.ctx.limits.maxUncompressedBytes} bytes`);
          else if (
            compressedIn &&
            out > this.ctx.limits.ratioFloorBytes &&
            out > compressedIn * this.ctx.limits.maxCompressionRatio
          ) {
            refusal = hostile(
              `the layer ${this.name} decompresses to more than ${this.ctx.limits.maxCompressionRatio} times its size (a decompression bomb)`,
            );
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
      ex.on('error', (e: Error) =>
        this.ctx.fail(hostile(`the layer ${this.name} is not a valid tar archive (${e.message})`)),
      );
      counter.on('error', (e: Error) => this.ctx.fail(e));
      const stages: Writable[] = [];
      if (gzip || zstd) {
        const decompress = gzip
          ? zlib.createGunzip({ chunkSize: 256 * 1024 })
          : zlib.createZstdDecompress({ chunkSize: 256 * 1024 });
        decompress.on('error', (e: Error) =>
          this.ctx.fail(hostile(`the layer ${this.name} could not be decompressed (${e.message})`)),
        );
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

/** A disk error (worth another attempt) or content that is not what it claims (not worth one). */
export function readError(e: unknown, what: string): ScannerError {
  const err = e as NodeJS.ErrnoException;
  if (err.syscall) return new ScannerError(`Cannot read the image: ${err.code ?? err.message}`, true, { cause: e });
  return hostile(`${what} (${err.message})`);
}
