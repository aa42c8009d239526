// Ed25519 verification for browsers whose WebCrypto lacks Ed25519 (the /verify-script fallback),
// with @noble/ed25519 (audited, dependency-free; it hashes with WebCrypto's SHA-512). Malformed
// keys or signatures are a failed check, never an exception.
import { verifyAsync } from '@noble/ed25519';

/** True when `signature` (64 bytes) is a valid Ed25519 signature of `message` by `publicKey` (32 bytes). */
export async function ed25519Verify(
  publicKey: Uint8Array,
  signature: Uint8Array,
  message: Uint8Array,
): Promise<boolean> {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  try {
    return await verifyAsync(signature, message, publicKey);
  } catch {
    return false;
  }
}
