import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDirLockedError, lockDataDir } from './client.ts';

describe('DATA_DIR lock', () => {
  it('refuses a second holder and frees the lock on release', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rampart-lock-'));
    const release = lockDataDir(dir);
    expect(readFileSync(join(dir, 'rampart.lock'), 'utf8')).toBe(String(process.pid));
    expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
    release();
    expect(existsSync(join(dir, 'rampart.lock'))).toBe(false);
    lockDataDir(dir)();
  });

  it('takes over the lock of a process that no longer exists', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rampart-lock-'));
    writeFileSync(join(dir, 'rampart.lock'), '2147483646'); // no such pid
    const release = lockDataDir(dir);
    expect(readFileSync(join(dir, 'rampart.lock'), 'utf8')).toBe(String(process.pid));
    release();
  });
});
