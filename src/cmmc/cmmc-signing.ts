// The device-check script signing key (docs/cmmc.md): Ed25519 private seed =
// HKDF-SHA256(ikm = CMMC_SCRIPT_SIGNING_SEED, salt = "rampart", info = "cmmc-script-signing v1", 32 bytes).
// Unset in embedded mode: a random seed is generated once into DATA_DIR (with a warning) and used
// as the HKDF input. Unset with an external database: signing is unavailable (503), since
// replicas could not share a generated key.
//
// Signed scripts end with `# RAMPART-SIGNATURE v1 ed25519 <base64 signature>`; the signature covers
// every byte before that line. The service signs only text it generated itself.
import { createPrivateKey, createPublicKey, hkdfSync, sign, verify, type KeyObject } from 'node:crypto';
import { sha256Hex } from '../lib/crypto.ts';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadOrCreateSecret } from '../lib/secrets-file.ts';
import { cmmcErrors } from './cmmc-errors.ts';

export const SIGNATURE_PREFIX = '# RAMPART-SIGNATURE v1 ed25519 ';
export const SEED_FILE = 'cmmc-script-signing-seed';
const HKDF_SALT = 'rampart';
const HKDF_INFO = 'cmmc-script-signing v1';
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface SigningKeyInfo {
  algorithm: 'Ed25519';
  /** base64 of the raw 32-byte public key */
  publicKey: string;
  /** SPKI PEM */
  publicKeyPem: string;
  /** lowercase hex SHA-256 of the raw public key */
  fingerprint: string;
}

export interface ScriptSigner {
  /** Appends the signature line to a script this service generated. */
  signScript(body: string): string;
  keyInfo(): SigningKeyInfo;
}

/** The Ed25519 private seed (32 bytes) derived from the configured seed text. */
export function deriveSigningSeed(ikm: string): Buffer {
  return Buffer.from(
    hkdfSync('sha256', Buffer.from(ikm, 'utf8'), Buffer.from(HKDF_SALT, 'utf8'), Buffer.from(HKDF_INFO, 'utf8'), 32),
  );
}

export function signerFromSeed(ikm: string): ScriptSigner {
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, deriveSigningSeed(ikm)]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicKey = createPublicKey(privateKey);
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const raw = spki.subarray(spki.length - 32);
  const info: SigningKeyInfo = Object.freeze({
    algorithm: 'Ed25519',
    publicKey: raw.toString('base64'),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    fingerprint: sha256Hex(raw),
  });
  return {
    signScript(body: string): string {
      if (body.length && !body.endsWith('\n')) throw new Error('script body must end with a newline');
      const signature = sign(null, Buffer.from(body, 'utf8'), privateKey).toString('base64');
      return `${body}${SIGNATURE_PREFIX}${signature}\n`;
    },
    keyInfo: () => info,
  };
}

/**
 * The signer for this deployment, resolved on first use: from CMMC_SCRIPT_SIGNING_SEED, or in
 * embedded mode from a seed generated into DATA_DIR. Null (signing unavailable) otherwise.
 */
export function lazySigner(opts: {
  seed: string | undefined;
  embedded: boolean;
  dataDir: string;
  warn: (msg: string) => void;
}): () => ScriptSigner {
  let signer: ScriptSigner | null = null;
  return () => {
    if (signer) return signer;
    let ikm = opts.seed;
    if (!ikm) {
      if (!opts.embedded) throw cmmcErrors.signingUnavailable();
      const dir = resolve(opts.dataDir);
      let created = false;
      try {
        const r = loadOrCreateSecret(dir, SEED_FILE);
        ikm = r.value;
        created = r.created;
      } catch (e) {
        // Another process created it between our read and write: read theirs.
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        ikm = readFileSync(join(dir, SEED_FILE), 'utf8').trim();
      }
      if (created)
        opts.warn(
          `CMMC_SCRIPT_SIGNING_SEED not set: generated a device-check script signing seed into ${join(dir, SEED_FILE)}; set CMMC_SCRIPT_SIGNING_SEED to keep the key stable across machines`,
        );
    }
    signer = signerFromSeed(ikm);
    return signer;
  };
}

/** Splits a signed script into the signed bytes and the signature; null when there is no signature line. */
export function splitSignedScript(text: string): { body: string; signature: string } | null {
  const trimmed = text.replace(/(\r?\n)+$/, '');
  const start = trimmed.lastIndexOf('\n') + 1;
  const last = trimmed.slice(start).replace(/\r$/, '');
  if (!last.startsWith(SIGNATURE_PREFIX)) return null;
  return { body: trimmed.slice(0, start), signature: last.slice(SIGNATURE_PREFIX.length).trim() };
}

/** Verifies a signed script against a public key (CRLF line endings tolerated). */
export function verifySignedScript(text: string, publicKey: KeyObject | string): boolean {
  const parts = splitSignedScript(text);
  if (!parts || !/^[A-Za-z0-9+/]{86}==$/.test(parts.signature)) return false;
  const sig = Buffer.from(parts.signature, 'base64');
  const key = typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey;
  if (verify(null, Buffer.from(parts.body, 'utf8'), key, sig)) return true;
  return parts.body.includes('\r\n') && verify(null, Buffer.from(parts.body.replace(/\r\n/g, '\n'), 'utf8'), key, sig);
}
