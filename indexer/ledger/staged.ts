// A batch on its way in (the batch plan): what was delivered, and what node works out from it once — validation, the
// invoice lock, the chain order. A retried transaction, or a pipeline that prepared the batch while the one before
// committed, reuses each part. Pure but for the log line of each receipt set aside.
import type { Logger } from 'pino';
import type { Query } from '../../db/sql';
import type { Receipt } from '../decode/receipt';
import { chainOrder } from './chain-order';
import { lockStatement } from './credits';
import { pathOf, type Prediction } from './prediction';
import type { ApplyBatchInput, ReceiptSource, RejectedReceipt } from './types';
import { assertCluster, assertSource, dropRepeats, partitionReceipts, slotText } from './validate';

export interface Staged {
  cluster: string;
  source: ReceiptSource;
  receipts: readonly Receipt[];
  checkpoint: string | undefined;
  /** `cluster NUL source`: the path whose history predicts the probe. */
  path: string;
  /** Validated: the good receipts, the rejected ones set aside (and logged). */
  good?: Receipt[];
  rejected?: RejectedReceipt[];
  /** The good receipts in chain order, repeats dropped (the path without the probe). */
  chain?: Receipt[];
  /** The invoice lock (its keys from the batch as delivered). */
  lock?: Query;
}

/** The batch as given; throws (ONCEPAY__LEDGER__…) on a cluster or source the ledger does not take. */
export function stage(input: ApplyBatchInput): Staged {
  assertCluster(input.cluster);
  assertSource(input.source);
  return {
    cluster: input.cluster,
    source: input.source,
    receipts: input.receipts,
    checkpoint: input.checkpoint === undefined ? undefined : slotText(input.checkpoint.slot),
    path: pathOf(input.cluster, input.source),
  };
}

/** The good receipts (made once): the malformed ones are set aside in `s.rejected`, each logged. */
export function validated(s: Staged, log: Logger): Receipt[] {
  if (s.good === undefined) {
    const { good, rejected } = partitionReceipts(s.receipts, s.cluster);
    for (const r of rejected)
      log.error({ code: r.code, index: r.index, cluster: s.cluster, source: s.source }, r.message);
    s.good = good;
    s.rejected = rejected;
  }
  return s.good;
}

/** The invoice lock for the batch as delivered (made once). */
export function lockOf(s: Staged): Query {
  return (s.lock ??= lockStatement(s.receipts));
}

/** The good receipts in chain order without repeats (made once): the candidates of a batch that is not probed. */
export function chainOf(s: Staged, good: Receipt[]): Receipt[] {
  return (s.chain ??= dropRepeats(chainOrder(good)));
}

/**
 * What node can do for a batch before its transaction, in two parts (each made once): in a pipeline, while the
 * batch before it sends its credits (the lock and validation), then while that batch commits (the chain order).
 * Never throw: what fails here fails again in the batch's own transaction, where the error belongs.
 */
export function prepareEarly(s: Staged | undefined, prediction: Prediction, log: Logger): void {
  if (s === undefined) return;
  try {
    // The lock for the batch as delivered is only sent where the probe is skipped (batch-transaction.ts).
    if (!prediction.probes(s.path)) lockOf(s);
    validated(s, log);
  } catch {
    // made again (and fails) in its own transaction
  }
}

export function prepareLate(s: Staged | undefined, prediction: Prediction): void {
  if (s === undefined || s.good === undefined || prediction.probes(s.path)) return;
  try {
    chainOf(s, s.good);
  } catch {
    // made again (and fails) in its own transaction
  }
}
