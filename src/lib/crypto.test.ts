import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSecretBox, safeEqual, sha256Hex } from './crypto.ts';

describe('secret box (AES-256-GCM at rest)', () => {
  const box = createSecretBox(randomBytes(32));

  it('round-trips and never stores the plaintext', () => {
    const sealed = box.seal('AKIA-secret-key');
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('AKIA');
    expect(box.open(sealed)).toBe('AKIA-secret-key');
    expect(box.seal('same')).not.toBe(box.seal('same')); // fresh IV each time
  });

  it('refuses tampered ciphertext, another key, and a wrong key length', () => {
    const sealed = box.seal('value');
    const parts = sealed.split('.');
    const flipped = Buffer.from(parts[3]!, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    expect(() => box.open([parts[0], parts[1], parts[2], flipped.toString('base64url')].join('.'))).toThrow();
    expect(() => createSecretBox(randomBytes(32)).open(sealed)).toThrow();
    expect(() => box.open('v2.a.b.c')).toThrow(/unrecognised/);
    expect(() => createSecretBox(randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe('helpers', () => {
  it('compares in constant time without throwing on length mismatch', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});
