// The indexer's loops wait out a database outage instead of dying: a step that failed because the database is
// away (db/unavailable.ts) is tried again after a capped, jittered backoff (common/backoff.ts), until
// it succeeds or the process is asked to stop. Every step given here must be safe to repeat — a ledger batch is
// one transaction whose receipts are UNIQUE, an outbox mark is a single UPDATE — so a step whose COMMIT reached
// the server but whose answer was lost is applied once, not twice.
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../db/unavailable';
import { backoffDelay } from '../common/backoff';
import { sleep } from '../common/sleep';

export const DATABASE_BACKOFF = { baseMs: 200, capMs: 10_000 } as const;

export interface DatabaseRetryOptions {
  /** Stop retrying (the last error is thrown) once this aborts. */
  signal?: AbortSignal;
  log?: Logger;
  /** What the step does, for the log line. */
  what: string;
  backoff?: { baseMs: number; capMs: number };
  random?: () => number;
}

/** Run `step`; while it fails with a database outage, wait (backoff with jitter) and run it again. */
export async function retryWhileDatabaseUnavailable<T>(step: () => Promise<T>, o: DatabaseRetryOptions): Promise<T> {
  const policy = o.backoff ?? DATABASE_BACKOFF;
  const random = o.random ?? Math.random;
  for (let retry = 1; ; retry++) {
    try {
      const r = await step();
      if (retry > 1) o.log?.info({ what: o.what, retries: retry - 1 }, 'database back; step succeeded');
      return r;
    } catch (e) {
      if (!isDatabaseUnavailable(e) || o.signal?.aborted) throw e;
      const waitMs = backoffDelay(retry, policy, random());
      o.log?.warn(
        { what: o.what, err: (e as Error).message, code: (e as { code?: string }).code, retry, waitMs },
        'database unavailable; backing off',
      );
      try {
        await sleep(waitMs, o.signal);
      } catch {
        throw e;
      }
    }
  }
}
