// The one backoff rule of the codebase: capped exponential with "equal jitter" (half of each step fixed, half
// random, as pg-boss computes its retry delay), so retries of many clients spread out yet a wait never collapses
// to zero. Pure: the caller passes the random number. Used by every retry loop (RPC calls, database outages, the
// payout workers' deferrals, the webhook hints' rechecks); db/queue/ writes the same formula in SQL for the rows
// it schedules (its tests hold the two to the same bounds).

/** How long the waits of one retry loop are. */
export interface BackoffPolicy {
  /** The first retry's step, in ms (its wait is in [baseMs/2, baseMs]). */
  baseMs: number;
  /** No single wait is longer than this, in ms. */
  capMs: number;
}

/** The largest exponent used: 2^31 is far beyond any cap, and clamping keeps the arithmetic finite. */
const MAX_EXPONENT = 31;

/**
 * The wait before retry `retry` (1 for the first retry; below 1: no wait), in whole ms: the step
 * min(baseMs·2^(retry−1), capMs), of which half is fixed and half scaled by `random` (a number in [0, 1)).
 */
export function backoffDelay(retry: number, policy: BackoffPolicy, random: number): number {
  if (!(retry >= 1)) return 0;
  const step = Math.min(policy.baseMs * 2 ** Math.min(retry - 1, MAX_EXPONENT), policy.capMs);
  const half = step / 2;
  return Math.floor(half + half * Math.min(Math.max(random, 0), 1));
}
