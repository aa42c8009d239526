import { describe, expect, it } from 'vitest';
import { registryBaseUrl } from '../scanners/container/registry.ts';
import { UsageError } from './common.ts';
import { containerSettings, RUN_HELP } from './run.ts';

describe('rampart-worker run: container settings', () => {
  it('passes --insecure-registry and --pull-dir to the container scanner', () => {
    const s = containerSettings('/data/osv.sqlite', ['Registry.Lan:5000', ' mirror.internal '], 'pulls');
    expect(s).toEqual({
      osvDbPath: '/data/osv.sqlite',
      insecureRegistries: ['registry.lan:5000', 'mirror.internal'],
      pullDir: expect.stringMatching(/\/pulls$/),
    });
    // The registry named by the flag is then reached over HTTP, others still over HTTPS.
    expect(registryBaseUrl('registry.lan:5000', s.insecureRegistries)).toBe('http://registry.lan:5000');
    expect(registryBaseUrl('ghcr.io', s.insecureRegistries)).toBe('https://ghcr.io');
    expect(containerSettings('/db', undefined, undefined)).toEqual({ osvDbPath: '/db' });
  });

  it('refuses a URL or a path where a registry host belongs, and documents both flags', () => {
    expect(() => containerSettings('/db', ['http://registry.lan'], undefined)).toThrow(UsageError);
    expect(() => containerSettings('/db', ['registry.lan/path'], undefined)).toThrow(UsageError);
    expect(RUN_HELP).toContain('--insecure-registry');
    expect(RUN_HELP).toContain('--pull-dir');
  });
});
