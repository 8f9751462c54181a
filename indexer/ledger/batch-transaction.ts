// One batch inside its transaction, in the ledger's order: candidates (probed, or the whole batch), the invoice lock,
// the match, the insert (copy-path.ts, else insert-path.ts), credits, counters, checkpoint. Every batch takes its
// locks in one order — invoices (by id) → receipts (chain order: slot, then identity, as the COPY sends them and the
// INSERT sorts them) → counters → checkpoint — so concurrent batches queue instead of deadlocking.
import type { PoolClient } from 'pg';
import type { Logger } from 'pino';
import { failpoint } from '../../common/failpoint';
import { exec } from '../../db/sql';
import type { Receipt } from '../decode/receipt';
import type { InvoiceState } from '../match/types';
import { chainOrder } from './chain-order';
import { insertByCopy, usesCopy } from './copy-path';
import { insertByStatement } from './insert-path';
import { lockCandidates, lockInvoices, planReceipts, writeCredits } from './credits';
import { unknownReceipts } from './probe';
import * as q from './queries';
import { chainOf, lockOf, type Staged, validated } from './staged';
import type { ApplyBatchResult } from './types';
import { uniqueReceipts } from './validate';

export interface BatchOptions {
  /** Probe the ledger for the known receipts first (else every receipt is a candidate; prediction.ts). */
  probe: boolean;
  /** The candidates are expected new: COPY them (prediction.ts `copies`). */
  copy: boolean;
  /** Node's work for the next batch of a pipeline, run while this one waits on PostgreSQL. */
  aside?: () => void;
  /** Settles when the batch before this one (in a pipeline) has: nothing but the invoice lock runs before it. */
  gate?: Promise<void>;
  log: Logger;
}

/** The batch's result (rejected receipts aside) and how many distinct receipts it held (for the prediction). */
export interface BatchOutcome {
  result: ApplyBatchResult;
  distinct: number;
}

/** The candidates of a batch, in chain order, without repeats; and the lock of the invoices they could pay. */
interface Candidates {
  chain: Receipt[];
  distinct: number;
  locking: Promise<InvoiceState[]> | undefined;
}

export async function applyInTransaction(client: PoolClient, s: Staged, o: BatchOptions): Promise<BatchOutcome> {
  const result: ApplyBatchResult = {
    inserted: 0,
    duplicates: 0,
    credited: [],
    exceptions: [],
    fulfilled: [],
    rejected: [],
  };
  const { chain, distinct, locking } = await candidates(client, s, o);
  const delivered = s.good!.length;
  let inserted: Receipt[] = [];
  if (chain.length === 0) await locking;
  else inserted = await insertAndCredit(client, s, o, chain, (await locking)!, result);
  result.inserted = inserted.length;
  result.duplicates = delivered - inserted.length;
  if (delivered > 0) {
    const counting = exec(client, q.bumpDeliveryCounts(s.cluster, s.source, delivered, inserted.length));
    o.aside?.();
    await counting;
  }
  if (s.checkpoint !== undefined) await exec(client, q.advanceCheckpoint(s.cluster, s.source, s.checkpoint));
  failpoint('ledger.after_insert_before_commit');
  return { result, distinct };
}

/**
 * Which receipts may be new, without repeats, in chain order. The probe (identity only) makes a mostly-duplicate
 * batch cheap; when this path's last batch was mostly new it is skipped: every receipt is a candidate, and the
 * insert decides, as it does anyway. Without the probe the invoice lock goes out first, for the keys of the batch as
 * delivered (lockStatement takes only well-formed keys; a rejected or repeated receipt can only add one), and node
 * validates, sorts and drops repeats while PostgreSQL takes the locks (unless that was done already).
 */
async function candidates(client: PoolClient, s: Staged, o: BatchOptions): Promise<Candidates> {
  let locking: Promise<InvoiceState[]> | undefined;
  if (!o.probe) {
    locking = lockInvoices(client, lockOf(s));
    locking.catch(() => undefined); // awaited by the caller
  }
  // A pipeline's batch begun early does nothing more until the batch before it committed (its rows locked by
  // that batch, the lock above waits inside PostgreSQL and takes them as it ends).
  if (o.gate) await o.gate;
  const good = validated(s, o.log);
  if (!o.probe) {
    const chain = chainOf(s, good);
    return { chain, distinct: chain.length, locking };
  }
  const batch = uniqueReceipts(good);
  const unknown = batch.length === 0 ? [] : await unknownReceipts(client, s.cluster, batch);
  // Lock the invoices they could pay (sent before node sorts them), so each row goes in with its invoice id.
  if (unknown.length > 0) {
    locking = lockCandidates(client, unknown);
    locking.catch(() => undefined); // awaited by the caller
  }
  return { chain: chainOrder(unknown), distinct: batch.length, locking };
}

/**
 * Matches the candidates in chain order against the locked invoices (as far as each COPY chunk needs it), inserts
 * them — by COPY when they are expected new, else or when the COPY met a known identity by INSERT … ON CONFLICT —
 * and credits only what this transaction inserted. Fills `result`'s credits; answers the inserted receipts.
 */
async function insertAndCredit(
  client: PoolClient,
  s: Staged,
  o: BatchOptions,
  chain: Receipt[],
  invoices: InvoiceState[],
  result: ApplyBatchResult,
): Promise<Receipt[]> {
  const planning = planReceipts(chain, invoices);
  const done =
    (usesCopy(o.copy, chain.length) ? await insertByCopy(client, s.cluster, s.source, chain, planning) : undefined) ??
    (await insertByStatement(client, s.cluster, s.source, chain, planning, invoices));
  // The credit UPDATE is on its way (writeCredits sends it before it first waits): node's turn for `aside` (the
  // counters call it too, for a batch with nothing to credit: what it made once, it does not redo).
  const writing = writeCredits(client, done.credits, done.idOf);
  o.aside?.();
  await writing;
  result.exceptions = done.credits.raised;
  result.fulfilled = done.credits.fulfilled;
  result.credited = done.credits.credited;
  return done.inserted;
}
