import { describe, expect, it } from 'vitest';
import { createConcurrencyLimiter, isRefusal } from './concurrency.ts';
import { AppError } from './errors.ts';

describe('concurrency limiter', () => {
  it('holds at most perKey slots for one key and total slots in all', () => {
    const l = createConcurrencyLimiter({ perKey: 2, total: 3, what: 'file analyses' });
    const a1 = l.acquire('alice');
    const a2 = l.acquire('alice');
    expect(l.tryAcquire('alice')).toEqual({ refused: 'key', limit: 2 });
    const b1 = l.acquire('bob');
    expect(l.tryAcquire('carol')).toEqual({ refused: 'total', limit: 3 });
    expect(l.active).toBe(3);
    a1.release();
    a1.release(); // a second release gives nothing back twice
    expect(l.active).toBe(2);
    expect(l.activeFor('alice')).toBe(1);
    const c1 = l.tryAcquire('carol');
    expect(isRefusal(c1)).toBe(false);
    expect(l.tryAcquire('dave')).toEqual({ refused: 'total', limit: 3 });
    a2.release();
    b1.release();
    if (!isRefusal(c1)) c1.release();
    expect(l.active).toBe(0);
    expect(l.activeFor('alice')).toBe(0);
  });

  it('refuses with 429 and a stable code per limit, with Retry-After', () => {
    const l = createConcurrencyLimiter({ perKey: 1, total: 2, what: 'file analyses', retryAfterSeconds: 7 });
    l.acquire('alice');
    const mine = (() => {
      try {
        l.acquire('alice');
      } catch (e) {
        return e;
      }
    })() as AppError;
    expect(mine).toBeInstanceOf(AppError);
    expect(mine.code).toBe('too_many_concurrent');
    expect(mine.status).toBe(429);
    expect(mine.headers).toEqual({ 'retry-after': '7' });
    expect(mine.message).toContain('1 file analyses');
    l.acquire('bob');
    expect(() => l.acquire('carol')).toThrow(expect.objectContaining({ code: 'server_busy', status: 429 }));
  });

  it('run() releases the slot whether the work succeeds or fails', async () => {
    const l = createConcurrencyLimiter({ perKey: 1, total: 1, what: 'x' });
    await expect(l.run('a', async () => 42)).resolves.toBe(42);
    await expect(l.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(l.active).toBe(0);
    // While one runs, a second is refused at once (never queued).
    let finish!: () => void;
    const first = l.run('a', () => new Promise<void>((r) => (finish = r)));
    await expect(l.run('b', async () => 1)).rejects.toMatchObject({ code: 'server_busy' });
    finish();
    await first;
  });

  it('rejects nonsensical limits', () => {
    expect(() => createConcurrencyLimiter({ perKey: 0, total: 1, what: 'x' })).toThrow(RangeError);
    expect(() => createConcurrencyLimiter({ perKey: 1, total: 1.5, what: 'x' })).toThrow(RangeError);
  });
});
