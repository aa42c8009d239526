// The worker's config file: server URL, worker id and token, and the tenant's signing secret.
// It holds credentials, so it is written with mode 0600 (atomically: a temporary file in the same
// directory, then rename) and tightened back to 0600 whenever it is read with looser bits.
import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export const CONFIG_VERSION = 1;

export interface WorkerConfig {
  version: typeof CONFIG_VERSION;
  serverUrl: string;
  workerId: string;
  tenantId: string;
  name: string;
  token: string;
  signingSecret: string;
  enrolledAt: string;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** $XDG_CONFIG_HOME/rampart-worker/config.json, ~/.config/… without it; %APPDATA%\rampart-worker\config.json on Windows. */
export function defaultConfigPath(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = homedir(),
): string {
  if (env.RAMPART_WORKER_CONFIG) return env.RAMPART_WORKER_CONFIG;
  if (platform === 'win32')
    return join(env.APPDATA || join(home, 'AppData', 'Roaming'), 'rampart-worker', 'config.json');
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'rampart-worker', 'config.json');
}

/** The advisory database the container scanner reads: RAMPART_OSV_DB, else osv.sqlite next to the config file. */
export function defaultOsvDbPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RAMPART_OSV_DB?.trim()) return env.RAMPART_OSV_DB.trim();
  return join(dirname(defaultConfigPath(env)), 'osv.sqlite');
}

const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.trim().length > 0;

export function parseConfig(text: string, path: string): WorkerConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ConfigError(`${path} is not valid JSON; enroll again to rewrite it`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(`${path} must hold a JSON object`);
  const c = raw as Record<string, unknown>;
  if (c.version !== CONFIG_VERSION)
    throw new ConfigError(
      `${path} has config version ${JSON.stringify(c.version)}; this worker reads version ${CONFIG_VERSION}`,
    );
  const missing = (['serverUrl', 'workerId', 'tenantId', 'name', 'token', 'signingSecret'] as const).filter(
    (k) => !nonEmpty(c[k]),
  );
  if (missing.length) throw new ConfigError(`${path} lacks ${missing.join(', ')}; enroll again to rewrite it`);
  return {
    version: CONFIG_VERSION,
    serverUrl: c.serverUrl as string,
    workerId: c.workerId as string,
    tenantId: c.tenantId as string,
    name: c.name as string,
    token: c.token as string,
    signingSecret: c.signingSecret as string,
    enrolledAt: nonEmpty(c.enrolledAt) ? c.enrolledAt : '',
  };
}

/** Reads the config; tightens its mode to 0600 when group or others could read it (POSIX). */
export async function readConfig(path: string): Promise<WorkerConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw new ConfigError(
        `No worker config at ${path}; run \`rampart-worker enroll --server URL --code CODE\` first`,
      );
    throw new ConfigError(`Cannot read ${path}: ${(e as Error).message}`);
  }
  await tighten(path);
  return parseConfig(text, path);
}

async function tighten(path: string): Promise<void> {
  if (process.platform === 'win32') return;
  const st = await stat(path).catch(() => null);
  if (st && (st.mode & 0o077) !== 0) await chmod(path, 0o600).catch(() => undefined);
}

/** Writes the config atomically with mode 0600; its directory is created with 0700. */
export async function writeConfig(path: string, config: WorkerConfig): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `.config-${process.pid}-${Date.now()}.tmp`);
  await writeFile(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  // The umask can only remove bits, but chmod anyway so the mode is exactly 0600.
  await chmod(tmp, 0o600);
  await rename(tmp, path);
  await chmod(path, 0o600);
}

/** What `status` shows: everything but the token and the secret. */
export function configSummary(c: WorkerConfig): Record<string, string> {
  return {
    serverUrl: c.serverUrl,
    workerId: c.workerId,
    tenantId: c.tenantId,
    name: c.name,
    enrolledAt: c.enrolledAt || 'unknown',
  };
}
