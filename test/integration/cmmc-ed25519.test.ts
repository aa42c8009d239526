// The /verify-script fallback against node:crypto (OpenSSL) signatures: valid ones pass, any
// changed byte of message, signature or key fails.
import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ed25519Verify } from '../../src/web/lib/ed25519.ts';

function keyPair() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  return { raw: new Uint8Array(spki.subarray(spki.length - 32)), privateKey };
}

describe('ed25519Verify (the @noble/ed25519 fallback)', () => {
  it('accepts signatures made by OpenSSL and refuses changed messages, signatures and keys', async () => {
    for (let i = 0; i < 4; i++) {
      const { raw, privateKey } = keyPair();
      const msg = new TextEncoder().encode(`#!/bin/bash\necho device check ${i}\n`.repeat(i * 40 + 1));
      const sig = new Uint8Array(sign(null, msg, privateKey));
      expect(await ed25519Verify(raw, sig, msg)).toBe(true);
      const badMsg = Uint8Array.from(msg);
      badMsg[3]! ^= 1;
      expect(await ed25519Verify(raw, sig, badMsg)).toBe(false);
      const badSig = Uint8Array.from(sig);
      badSig[40]! ^= 1;
      expect(await ed25519Verify(raw, badSig, msg)).toBe(false);
      expect(await ed25519Verify(keyPair().raw, sig, msg)).toBe(false);
    }
  });

  it('refuses malformed input', async () => {
    const { raw, privateKey } = keyPair();
    const msg = new Uint8Array([1, 2, 3]);
    const sig = new Uint8Array(sign(null, msg, privateKey));
    expect(await ed25519Verify(raw.subarray(0, 31), sig, msg)).toBe(false);
    expect(await ed25519Verify(raw, sig.subarray(0, 63), msg)).toBe(false);
    // S ≥ L (non-canonical) is refused.
    const big = Uint8Array.from(sig);
    big.fill(0xff, 32);
    expect(await ed25519Verify(raw, big, msg)).toBe(false);
  });
});
