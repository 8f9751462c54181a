// Login throttling with constant memory. Two limits:
// - per operator, in the database (operators.failed_logins / locked_until): after `freeFailures` wrong passwords an
//   operator's logins are refused for a lock that doubles with each further failure (capped); a success resets it.
//   Only existing operators have a row, so a stranger's guesses at names grow nothing.
// - for the whole process, a token bucket (this file): at most `burst` password checks at once and `perSecond`
//   sustained, whoever asks — scrypt costs ~32 MiB and tens of ms each, so this caps memory and CPU a flood can take.
//   A refused attempt gets 429 and runs no scrypt.

export interface ThrottleLimits {
  freeFailures: number;
  baseLockMs: number;
  maxLockMs: number;
  perSecond: number;
  burst: number;
}

export const DEFAULT_THROTTLE: ThrottleLimits = {
  freeFailures: 5,
  baseLockMs: 30_000,
  maxLockMs: 15 * 60_000,
  perSecond: 5,
  burst: 10,
};

/** The lock after the `failures`-th consecutive wrong password (pure): 0 while under the free allowance. */
export function lockMsAfter(failures: number, l: ThrottleLimits): number {
  if (failures < l.freeFailures) return 0;
  const doublings = Math.min(failures - l.freeFailures, 20);
  return Math.min(l.maxLockMs, l.baseLockMs * 2 ** doublings);
}

/** A token bucket over a caller-given clock: `take(now)` is true when a check may run. Two numbers of state. */
export function createTokenBucket(l: Pick<ThrottleLimits, 'perSecond' | 'burst'>) {
  let tokens = l.burst;
  let at = -Infinity;
  return {
    take(nowMs: number): boolean {
      if (at !== -Infinity) tokens = Math.min(l.burst, tokens + ((nowMs - at) / 1000) * l.perSecond);
      at = nowMs;
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    },
  };
}
