// Counts and hashes a body while it streams, and stops it the moment it breaks a limit, so no
// store ever keeps bytes it should refuse: over `maxBytes` → payload_too_large; a different size
// or SHA-256 than the caller declared → upload_mismatch.
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { appError } from '../lib/errors.ts';
import type { PutResult } from './storage-types.ts';

export interface PutLimits {
  maxBytes: number;
  expected?: { size?: number; sha256?: string } | undefined;
}

export function tooLarge(maxBytes: number) {
  return appError('payload_too_large', `The upload exceeds the limit of ${maxBytes.toLocaleString('en-US')} bytes.`, {
    details: { maxBytes },
  });
}

/** Refuses before a byte is read when the declared size alone breaks the limit. */
export function checkLimits(limits: PutLimits): void {
  if (!Number.isSafeInteger(limits.maxBytes) || limits.maxBytes < 0)
    throw new Error('maxBytes must be a non-negative integer');
  const { expected } = limits;
  if (expected?.size !== undefined && expected.size > limits.maxBytes) throw tooLarge(limits.maxBytes);
  if (expected?.sha256 !== undefined && !/^[0-9a-f]{64}$/i.test(expected.sha256))
    throw appError('validation_failed', 'The declared SHA-256 is not 64 hex digits.');
}

export class Meter extends Transform {
  size = 0;
  sha256 = '';
  readonly #hash = createHash('sha256');
  readonly #limits: PutLimits;

  constructor(limits: PutLimits) {
    super();
    checkLimits(limits);
    this.#limits = limits;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    const expectedSize = this.#limits.expected?.size;
    if (this.size > this.#limits.maxBytes) return done(tooLarge(this.#limits.maxBytes));
    if (expectedSize !== undefined && this.size > expectedSize)
      return done(mismatch(`more than the declared ${expectedSize} bytes arrived`));
    this.#hash.update(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    this.sha256 = this.#hash.digest('hex');
    const e = this.#limits.expected;
    if (e?.size !== undefined && this.size !== e.size)
      return done(mismatch(`${this.size} bytes arrived, ${e.size} were declared`));
    if (e?.sha256 !== undefined && this.sha256 !== e.sha256.toLowerCase())
      return done(mismatch('the SHA-256 of the bytes differs from the declared one'));
    done();
  }

  result(): PutResult {
    return { size: this.size, sha256: this.sha256 };
  }
}

function mismatch(why: string) {
  return appError('upload_mismatch', `The upload does not match its declaration: ${why}. Nothing was stored.`);
}
