// Concurrency limits for expensive work a caller starts (reading an uploaded file, say): at most
// `perKey` at once for one key (a user) and `total` at once in this process. A request over either
// limit is refused at once with a 429 and a stable code, never queued: queued uploads would hold
// their bodies (and memory) while they wait.
//
// The limits are per process on purpose: what they protect is this process's memory and CPU.
// Every replica enforces its own; nothing else relies on them.
import { AppError } from './errors.ts';

export interface ConcurrencyLimits {
  /** Concurrent slots one key may hold (e.g. one user's file analyses). */
  perKey: number;
  /** Concurrent slots in this process, all keys together. */
  total: number;
  /** What is being limited, for messages: "file analyses". */
  what: string;
  /** Suggested wait sent as Retry-After (default 5 s). */
  retryAfterSeconds?: number;
}

export interface Slot {
  /** Gives the slot back; calling it again does nothing. */
  release(): void;
}

export type Refusal = { refused: 'key' | 'total'; limit: number };

export interface ConcurrencyLimiter {
  /** A slot, or why there is none. */
  tryAcquire(key: string): Slot | Refusal;
  /**
   * A slot, or an AppError 429: `too_many_concurrent` when the key holds all of its slots,
   * `server_busy` when the process does.
   */
  acquire(key: string): Slot;
  /** Runs `work` holding a slot, released when it settles. */
  run<T>(key: string, work: () => Promise<T>): Promise<T>;
  readonly active: number;
  activeFor(key: string): number;
  readonly limits: Readonly<ConcurrencyLimits>;
}

export const isRefusal = (s: Slot | Refusal): s is Refusal => 'refused' in s;

export function createConcurrencyLimiter(limits: ConcurrencyLimits): ConcurrencyLimiter {
  if (!Number.isInteger(limits.perKey) || limits.perKey < 1) throw new RangeError('perKey must be a positive integer');
  if (!Number.isInteger(limits.total) || limits.total < 1) throw new RangeError('total must be a positive integer');
  const retryAfter = Math.max(1, Math.round(limits.retryAfterSeconds ?? 5));
  const byKey = new Map<string, number>();
  let active = 0;

  function tryAcquire(key: string): Slot | Refusal {
    const mine = byKey.get(key) ?? 0;
    if (mine >= limits.perKey) return { refused: 'key', limit: limits.perKey };
    if (active >= limits.total) return { refused: 'total', limit: limits.total };
    byKey.set(key, mine + 1);
    active += 1;
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        active -= 1;
        const left = (byKey.get(key) ?? 1) - 1;
        if (left <= 0) byKey.delete(key);
        else byKey.set(key, left);
      },
    };
  }

  function acquire(key: string): Slot {
    const s = tryAcquire(key);
    if (!isRefusal(s)) return s;
    const opts = {
      headers: { 'retry-after': String(retryAfter) },
      details: { limit: s.limit, retryAfterSeconds: retryAfter },
    };
    if (s.refused === 'key')
      throw new AppError(
        'too_many_concurrent',
        `You already have ${s.limit} ${limits.what} running; wait for one to finish, then retry.`,
        opts,
      );
    throw new AppError(
      'server_busy',
      `The server is running as many ${limits.what} as it can; retry in ${retryAfter} seconds.`,
      opts,
    );
  }

  return {
    tryAcquire,
    acquire,
    async run(key, work) {
      const slot = acquire(key);
      try {
        return await work();
      } finally {
        slot.release();
      }
    },
    get active() {
      return active;
    },
    activeFor: (key) => byKey.get(key) ?? 0,
    limits: Object.freeze({ ...limits }),
  };
}
