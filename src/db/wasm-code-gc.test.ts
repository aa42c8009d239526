import { describe, expect, it } from 'vitest';
import { wasmCodeGcOffAtStart } from './wasm-code-gc.ts';

describe('wasmCodeGcOffAtStart', () => {
  it('is true with the flag on the command line or in NODE_OPTIONS', () => {
    expect(wasmCodeGcOffAtStart(['--no-wasm-code-gc'], undefined)).toBe(true);
    expect(wasmCodeGcOffAtStart(['--no-wasm_code_gc'], undefined)).toBe(true);
    expect(wasmCodeGcOffAtStart([], '--max-old-space-size=512 --no-wasm-code-gc')).toBe(true);
  });

  it('is false without the flag, or when a later flag turns the collector back on', () => {
    expect(wasmCodeGcOffAtStart([], undefined)).toBe(false);
    expect(wasmCodeGcOffAtStart(['--max-old-space-size=512'], '')).toBe(false);
    expect(wasmCodeGcOffAtStart(['--no-wasm-code-gc', '--wasm-code-gc'], undefined)).toBe(false);
    expect(wasmCodeGcOffAtStart(['--no-wasm-code-gc'], '--wasm-code-gc')).toBe(false);
  });

  it('holds in this test process: the runner starts its forks with the flag', () => {
    expect(wasmCodeGcOffAtStart()).toBe(true);
  });
});
