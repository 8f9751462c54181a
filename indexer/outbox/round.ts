// One claim round of the outbox: claim up to a batch of due rows in one statement, deliver them concurrently, mark
// each; and what the rounds delivered, summed.
import { rows } from '../../db/sql';
import { ClaimedRow, deliverRow, DeliveryContext } from './deliver-row';
import * as q from './queries';

export interface RoundResult {
  claimed: number;
  delivered: number;
  failed: number;
  dead: number;
}

export const EMPTY_ROUND: Readonly<RoundResult> = { claimed: 0, delivered: 0, failed: 0, dead: 0 };

/** Pure: `total` plus `r`, field by field. */
export function addRound(total: RoundResult, r: RoundResult): RoundResult {
  return {
    claimed: total.claimed + r.claimed,
    delivered: total.delivered + r.delivered,
    failed: total.failed + r.failed,
    dead: total.dead + r.dead,
  };
}

/** `signal` aborts the deliveries themselves; `markSignal` only ends a wait for the database to record them. */
export async function deliverRound(
  c: DeliveryContext,
  signal?: AbortSignal,
  markSignal?: AbortSignal,
): Promise<RoundResult> {
  const claimed = await rows<ClaimedRow>(c.db, q.claimDue(c.policy));
  c.queue.claimed(claimed.length);
  const settled = await Promise.allSettled(claimed.map((r) => deliverRow(c, r, signal, markSignal ?? signal)));
  const results = settled.map((x) => (x.status === 'fulfilled' ? x.value : undefined));
  const unmarked = settled.filter((x): x is PromiseRejectedResult => x.status === 'rejected');
  // A row whose result could not be recorded stays 'delivering' and is claimed again after its lease.
  c.queue.settled('released', unmarked.length);
  for (const x of unmarked)
    c.log.error({ err: (x.reason as Error).message }, 'outbox row not marked; its lease hands it back');
  return {
    claimed: claimed.length,
    delivered: results.filter((r) => r === 'delivered').length,
    failed: results.filter((r) => r === 'failed').length,
    dead: results.filter((r) => r === 'dead').length,
  };
}
