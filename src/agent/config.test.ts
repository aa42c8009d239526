// The worker config holds a token and a secret: written 0600 (directory 0700), tightened back to
// 0600 when found looser, and refused with a clear message when missing or broken.
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, configSummary, defaultConfigPath, readConfig, writeConfig, type WorkerConfig } from './config.ts';

const dir = mkdtempSync(join(tmpdir(), 'rampart-worker-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config: WorkerConfig = {
  version: 1,
  serverUrl: 'https://rampart.example.test',
  workerId: 'w-1',
  tenantId: 't-1',
  name: 'edge-1',
  token: 'rw_secret_token',
  signingSecret: 'whsec_abc',
  enrolledAt: '2025-01-01T00:00:00.000Z',
};
const modeOf = (p: string) => statSync(p).mode & 0o777;

describe.skipIf(process.platform === 'win32')('worker config file', () => {
  it('is created with mode 0600 in a 0700 directory', async () => {
    const path = join(dir, 'a', 'rampart-worker', 'config.json');
    await writeConfig(path, config);
    expect(modeOf(path)).toBe(0o600);
    expect(modeOf(join(dir, 'a', 'rampart-worker'))).toBe(0o700);
    expect(await readConfig(path)).toEqual(config);
  });

  it('is rewritten 0600 over a looser existing file, and tightened on read', async () => {
    const path = join(dir, 'b.json');
    writeFileSync(path, '{}', { mode: 0o644 });
    chmodSync(path, 0o644);
    await writeConfig(path, config);
    expect(modeOf(path)).toBe(0o600);
    chmodSync(path, 0o664);
    await readConfig(path);
    expect(modeOf(path)).toBe(0o600);
  });

  it('explains a missing or broken file', async () => {
    await expect(readConfig(join(dir, 'none.json'))).rejects.toThrow(/rampart-worker enroll/);
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"version":1,"serverUrl":"x"}');
    await expect(readConfig(broken)).rejects.toThrow(ConfigError);
    await expect(readConfig(broken)).rejects.toThrow(/workerId, tenantId, name, token, signingSecret/);
    writeFileSync(broken, 'not json');
    await expect(readConfig(broken)).rejects.toThrow(/not valid JSON/);
  });

  it('keeps secrets out of the summary', () => {
    const text = JSON.stringify(configSummary(config));
    expect(text).not.toContain(config.token);
    expect(text).not.toContain(config.signingSecret);
    expect(readFileSync(join(dir, 'b.json'), 'utf8')).toContain(config.token);
  });
});

describe('default config path', () => {
  it('follows XDG, ~/.config, %APPDATA% and RAMPART_WORKER_CONFIG', () => {
    expect(defaultConfigPath({ XDG_CONFIG_HOME: '/x' }, 'linux', '/home/u')).toBe('/x/rampart-worker/config.json');
    expect(defaultConfigPath({}, 'darwin', '/Users/u')).toBe('/Users/u/.config/rampart-worker/config.json');
    expect(defaultConfigPath({ APPDATA: 'C:/Users/u/AppData/Roaming' }, 'win32', 'C:/Users/u')).toContain(
      join('C:/Users/u/AppData/Roaming', 'rampart-worker', 'config.json'),
    );
    expect(defaultConfigPath({ RAMPART_WORKER_CONFIG: '/etc/rw.json', XDG_CONFIG_HOME: '/x' }, 'linux', '/h')).toBe(
      '/etc/rw.json',
    );
  });
});
