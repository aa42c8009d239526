// Container-image archives as `docker save` and OCI tools write them: a tar archive, optionally
// gzip-compressed. The check is deliberately shallow (the first tar header), enough to refuse
// garbage before it is stored; the container scanner reads the image itself.
import { Transform, type TransformCallback } from 'node:stream';
import { constants, gunzipSync } from 'node:zlib';
import { appError } from '../lib/errors.ts';

export type ArchiveFormat = 'tar' | 'tar+gzip';

const BLOCK = 512;
/** Compressed bytes inflated to find the first tar header; bounds the work a hostile file can cause. */
const GZIP_PEEK = 4096;

/** A POSIX (`ustar\0`) or GNU (`ustar `) tar header whose checksum adds up. */
export function isTarHeader(block: Buffer): boolean {
  if (block.length < BLOCK) return false;
  const magic = block.subarray(257, 263).toString('latin1');
  if (magic !== 'ustar\u0000' && magic !== 'ustar ') return false;
  const stored = Number.parseInt(
    block
      .subarray(148, 156)
      .toString('latin1')
      .replace(/[\0 ]+/g, ' ')
      .trim(),
    8,
  );
  if (!Number.isInteger(stored)) return false;
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
  return sum === stored;
}

/** The archive's format from its first bytes, or null when it is neither kind. */
export function sniffArchive(head: Buffer): ArchiveFormat | null {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) {
    try {
      // Z_SYNC_FLUSH inflates a truncated stream as far as it goes instead of failing.
      const inflated = gunzipSync(head.subarray(0, GZIP_PEEK), { finishFlush: constants.Z_SYNC_FLUSH });
      return isTarHeader(inflated.subarray(0, BLOCK)) ? 'tar+gzip' : null;
    } catch {
      return null;
    }
  }
  return isTarHeader(head.subarray(0, BLOCK)) ? 'tar' : null;
}

export const invalidArchive = () =>
  appError(
    'invalid_image_archive',
    'This file is not a container-image archive. Upload the tar file `docker save` or an OCI tool wrote, optionally gzip-compressed.',
  );

/** Passes the stream through once its first bytes are a tar (or gzipped tar) header; fails it otherwise. */
export class ArchiveSniffer extends Transform {
  format: ArchiveFormat | null = null;
  #held: Buffer[] = [];
  #heldLength = 0;

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (this.format) return done(null, chunk);
    this.#held.push(chunk);
    this.#heldLength += chunk.length;
    const gzip = this.#held[0]![0] === 0x1f;
    if (this.#heldLength < (gzip ? GZIP_PEEK : BLOCK)) return done();
    this.#decide(done);
  }

  override _flush(done: TransformCallback): void {
    if (this.format) return done();
    this.#decide(done);
  }

  #decide(done: TransformCallback): void {
    const head = Buffer.concat(this.#held);
    this.#held = [];
    this.format = sniffArchive(head);
    if (!this.format) return done(invalidArchive());
    done(null, head);
  }
}
