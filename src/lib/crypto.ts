import { createCipheriv, createDecipheriv, hash, randomBytes, timingSafeEqual } from 'node:crypto';

// crypto.hash: one-shot, without a Hash object per call (the mesh hashes every dispatch body).
export const sha256Hex = (data: string | Uint8Array): string => hash('sha256', data, 'hex');

/** Constant-time string comparison that never throws on length mismatch. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab); // keep timing independent of where the strings differ
    return false;
  }
  return timingSafeEqual(ab, bb);
}

/**
 * AES-256-GCM for secrets stored at rest (tenant S3 keys, webhook secrets).
 * Format: v1.<iv b64url>.<tag b64url>.<ciphertext b64url>
 * Sealing always uses the current key; opening tries the current key, then the previous keys
 * (APP_ENCRYPTION_KEY_PREVIOUS), so a key can be rotated without downtime and the stored values
 * re-sealed afterwards (src/ops/reseal.ts).
 */
export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

export function createSecretBox(key: Buffer, previousKeys: readonly Buffer[] = []): SecretBox {
  for (const k of [key, ...previousKeys]) if (k.length !== 32) throw new Error('encryption key must be 32 bytes');
  const openWith = (k: Buffer, iv: string, tag: string, ct: string): string => {
    const decipher = createDecipheriv('aes-256-gcm', k, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  };
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join(
        '.',
      );
    },
    open(sealed) {
      const [v, iv, tag, ct] = sealed.split('.');
      if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unrecognised sealed secret');
      try {
        return openWith(key, iv, tag, ct);
      } catch (err) {
        // GCM authentication fails under the wrong key: try the keys being rotated out.
        for (const k of previousKeys) {
          try {
            return openWith(k, iv, tag, ct);
          } catch {
            /* next key */
          }
        }
        throw err;
      }
    },
  };
}
