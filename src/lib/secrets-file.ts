// Secrets generated on first start in embedded mode (DESIGN §4): written once to DATA_DIR with
// mode 0600 and read back on later starts, so sessions and sealed secrets survive restarts.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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
