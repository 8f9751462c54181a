// The outbox worker's loop: rounds until stopped, or (drain) until nothing is pending or delivering. A round that
// claimed something is followed at once by the next; an empty one by the poll pause; a failed one (the database
// away) by a jittered backoff growing with the failures in a row, never by the end of the loop.
import { backoffDelay } from '../../common/backoff';
import { ignoreAbort, sleep } from '../../common/sleep';
import { isDatabaseUnavailable } from '../../db/unavailable';
import type { OutboxStats } from '../metrics';
import { DeliveryContext } from './deliver-row';
import { addRound, deliverRound, EMPTY_ROUND, RoundResult } from './round';

/** Longest wait between two failed rounds. */
export const FAILED_ROUND_BACKOFF_CAP_MS = 30_000;

export interface OutboxLoopOptions {
  pollMs: number;
  stats: () => Promise<OutboxStats>;
  signal?: AbortSignal;
  drain?: boolean;
}

export async function runOutboxLoop(c: DeliveryContext, opts: OutboxLoopOptions): Promise<RoundResult> {
  let total: RoundResult = { ...EMPTY_ROUND };
  let failures = 0;
  while (!opts.signal?.aborted) {
    try {
      // Deliveries in flight are not aborted by a stop: they finish (within the delivery timeout) and are marked.
      const r = await deliverRound(c, undefined, opts.signal);
      total = addRound(total, r);
      failures = 0;
      if (r.claimed > 0) continue;
      if (opts.drain && (await opts.stats()).depth === 0) break;
      await sleep(opts.pollMs, opts.signal).catch(ignoreAbort);
    } catch (e) {
      // A failed round (the database away) must not end the loop: the rows stay claimable. Back off with jitter.
      failures++;
      const waitMs = backoffDelay(
        failures,
        { baseMs: Math.max(opts.pollMs, 100), capMs: FAILED_ROUND_BACKOFF_CAP_MS },
        Math.random(),
      );
      c.log.error(
        {
          err: (e as Error).message,
          code: (e as { code?: string }).code,
          databaseUnavailable: isDatabaseUnavailable(e),
          failures,
          waitMs,
        },
        'outbox round failed',
      );
      await sleep(waitMs, opts.signal).catch(ignoreAbort);
    }
  }
  return total;
}
