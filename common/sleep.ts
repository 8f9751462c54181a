// The one pause of the codebase. One abort rule: an abort ends the pause at once by REJECTING — with the caller's
// abort error when it names one (its area's ABORTED code: the payout run's, the RPC client's), else with
// ONCEPAY__COMMON__ABORTED. A pause never resolves early: whoever waits learns that it was stopped, and a loop
// whose stop is its own condition says so where it waits (`await sleep(ms, signal).catch(ignoreAbort)`).
import { isOncepayError, OncepayError } from './errors';
import { COMMON_CODES } from './errors/codes';

/** The default abort error: ONCEPAY__COMMON__ABORTED, with the signal's reason as context. */
export function abortedWait(signal?: AbortSignal): OncepayError {
  return new OncepayError(COMMON_CODES.ABORTED, undefined, { reason: String(signal?.reason ?? '') });
}

/**
 * Wait `ms` milliseconds. An abort of `signal` (before or during the wait) rejects with `aborted()` (default:
 * abortedWait). The timer and the listener are removed either way, so nothing is left behind.
 */
export function sleep(
  ms: number,
  signal?: AbortSignal,
  aborted: () => OncepayError = () => abortedWait(signal),
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(aborted());
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    function onAbort() {
      clearTimeout(t);
      reject(aborted());
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * For a loop that stops on its own condition (`while (!signal.aborted)`): swallow the rejection of an aborted
 * pause (any OncepayError whose code ends in __ABORTED), rethrow anything else.
 */
export function ignoreAbort(e: unknown): void {
  if (isOncepayError(e) && e.code.endsWith('__ABORTED')) return;
  throw e;
}
