// Secrets generated on first start in embedded mode (docs/operations.md, embedded install): written once to DATA_DIR with
// mode 0600 and read back on later starts, so sessions and sealed secrets survive restarts.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from './config.ts';

export function loadOrCreateSecret(dataDir: string, name: string, bytes = 32): { value: string; created: boolean } {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, name);
  try {
    const value = readFileSync(file, 'utf8').trim();
    if (value) return { value, created: false };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const value = randomBytes(bytes).toString('base64');
  writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  return { value, created: true };
}

export interface RuntimeSecrets {
  authSecret: string;
  encryptionKey: string;
  /** APP_ENCRYPTION_KEY_PREVIOUS: keys being rotated out, for opening stored secrets only. */
  previousEncryptionKeys: Buffer[];
}

/** AUTH_SECRET / APP_ENCRYPTION_KEY from the environment, else generated once into DATA_DIR. */
export function resolveSecrets(config: Config, log: { warn(message: string): void }): RuntimeSecrets {
  const fromFile = (name: string, what: string) => {
    const { value, created } = loadOrCreateSecret(resolve(config.DATA_DIR), name);
    if (created)
      log.warn(`${what} not set: generated one into ${resolve(config.DATA_DIR, name)}; every replica must share it`);
    return value;
  };
  return {
    authSecret: config.AUTH_SECRET ?? fromFile('auth-secret', 'AUTH_SECRET'),
    encryptionKey: config.APP_ENCRYPTION_KEY ?? fromFile('encryption-key', 'APP_ENCRYPTION_KEY'),
    previousEncryptionKeys: config.APP_ENCRYPTION_KEY_PREVIOUS.map((k) => Buffer.from(k, 'base64')),
  };
}
