// Waiting for something to become true, for tests, benches and the test runtimes: a row in the ledger, a slot, a
// fresh blockhash.

export interface UntilOptions {
  /** How long to keep asking before giving up. */
  timeoutMs: number;
  /** The pause between two asks. */
  intervalMs: number;
}

/**
 * Asks `fn` until it answers something truthy and returns that answer; when `timeoutMs` has passed without one,
 * throws "timed out waiting for <what>". `fn` is always asked at least once.
 */
export async function until<T>(
  what: string,
  fn: () => Promise<T | null | undefined | false>,
  { timeoutMs, intervalMs }: UntilOptions,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
