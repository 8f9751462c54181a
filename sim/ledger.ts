// The ledger's rule on the database model, in memory: one batch is one transaction — validate, drop repeats,
// insert each receipt unless its identity is there (ON CONFLICT DO NOTHING), match what was inserted in chain
// order (the real matcher), credit it, raise its exceptions, give each invoice paid now its one fulfilment and
// outbox row (UNIQUE (invoice_id)), bump the source's counters, raise its checkpoint. The SQL ledger
// (indexer/ledger) does this in PostgreSQL; tests/sim/ledger-model.test.ts feeds both the same streams and requires
// the same rows, credits, exceptions, fulfilments and counters, so this model cannot drift from it.
import type { Receipt } from '../indexer/decode/receipt';
import type { ApplyBatchResult, ReceiptSource } from '../indexer/ledger/types';
import type { Cores } from './cores';
import { ConstraintViolation, identityKey, type Tables } from './database';
import { type Actor, faultReached, note, pass, type World } from './world';

export interface LedgerBatch {
  source: ReceiptSource;
  receipts: readonly Receipt[];
  checkpoint?: number;
}

/** The batch's receipts in chain order: slot (none last), then identity (the real ledger's chainOrder). */
function chainOrder(receipts: readonly Receipt[], compare: Cores['compareReceipts']): Receipt[] {
  const slot = (r: Receipt) => (r.slot === null || r.slot === undefined ? Infinity : Number(r.slot));
  return [...receipts].sort((a, b) => slot(a) - slot(b) || compare(a, b));
}

/**
 * Stage one batch against the tables as they are at the start of its transaction: what it will write (applied at
 * commit) and what applyBatch answers. Throws ConstraintViolation where PostgreSQL would refuse a statement.
 */
export function stageBatch(
  t: Readonly<Tables>,
  batch: LedgerBatch,
  cores: Cores,
  cluster: string,
): { result: ApplyBatchResult; apply: (t: Tables) => void } {
  const { good, rejected } = cores.partitionReceipts(batch.receipts, cluster);
  const distinct = cores.uniqueReceipts(good);
  const inserted = distinct.filter((r) => !t.receipts.has(identityKey(r)));
  const chain = chainOrder(cores.creditable(distinct, inserted), cores.compareReceipts);
  const invoices = [...t.invoices.values()];
  const plan = cores.matchBatch(chain, invoices);
  const credits = cores.creditRows(chain, plan);

  const exceptionKeys = new Set(t.exceptions.map((e) => `${e.receipt}#${e.kind}`));
  for (const e of credits.raised) {
    const k = `${identityKey(e)}#${e.kind}`;
    if (exceptionKeys.has(k)) throw new ConstraintViolation(`exceptions (receipt_id, kind) ${k} exists`);
    exceptionKeys.add(k);
  }
  for (const inv of credits.invoices) {
    if (inv.creditedAmount > inv.expectedAmount)
      throw new ConstraintViolation(`invoices ${inv.id}: credited_amount above expected_amount`);
  }
  const result: ApplyBatchResult = {
    inserted: inserted.length,
    duplicates: good.length - inserted.length,
    credited: credits.credited,
    exceptions: credits.raised,
    fulfilled: credits.fulfilled,
    rejected,
  };
  const invoiceOf = new Map(chain.map((r, i) => [r, plan.outcomes[i].invoiceId]));

  function apply(w: Tables): void {
    for (const r of inserted) {
      const k = identityKey(r);
      if (!w.receipts.has(k))
        w.receipts.set(k, { receipt: r, invoiceId: invoiceOf.get(r) ?? null, firstSource: batch.source });
    }
    for (const inv of credits.invoices) {
      const was = w.invoices.get(inv.id)!;
      w.invoices.set(inv.id, { ...was, creditedAmount: inv.creditedAmount, status: inv.status });
    }
    if (credits.raised.length > 0) {
      w.exceptions = [
        ...w.exceptions,
        ...credits.raised.map((e) => ({
          kind: e.kind,
          receipt: identityKey(e),
          invoiceId: e.invoiceId,
          amount: e.amount,
        })),
      ];
    }
    for (const invoiceId of credits.fulfilled) {
      if (w.fulfilments.has(invoiceId)) continue; // ON CONFLICT (invoice_id) DO NOTHING: no second operation
      const id = cores.fulfilmentOpId(invoiceId);
      w.fulfilments.set(invoiceId, id);
      if (!w.outbox.has(id))
        w.outbox.set(id, {
          fulfilmentId: id,
          invoiceId,
          idempotencyKey: id,
          state: 'pending',
          attempts: 0,
          nextAttemptAt: 0,
          lockedUntil: null,
        });
    }
    if (good.length > 0) {
      const c = w.counters.get(batch.source) ?? { delivered: 0, inserted: 0, duplicates: 0 };
      w.counters.set(batch.source, {
        delivered: c.delivered + good.length,
        inserted: c.inserted + result.inserted,
        duplicates: c.duplicates + result.duplicates,
      });
    }
    if (batch.checkpoint !== undefined && batch.checkpoint >= 0)
      w.checkpoints.set(batch.source, Math.max(w.checkpoints.get(batch.source) ?? -1, batch.checkpoint));
  }
  return { result, apply };
}

/** Each process's batch in its open transaction (what it delivered, recorded once it commits). */
const openBatches = new WeakMap<Actor, LedgerBatch>();

/**
 * Begin `batch` as `a`'s ledger transaction (its writes held until commitBatch). False while another process holds
 * the ledger's locks: the batch waits, as it would on the invoice rows inside PostgreSQL. A batch with repeats is a
 * duplicate delivery reaching every process's window (the fault-space cells).
 */
export function beginBatch(w: World, a: Actor, batch: LedgerBatch): ApplyBatchResult | undefined {
  let result: ApplyBatchResult | undefined;
  const begun = w.db.begin(a.session, a.name, (t) => {
    const staged = stageBatch(t, batch, w.cores, w.cluster);
    result = staged.result;
    return staged.apply;
  });
  if (!begun) return undefined;
  openBatches.set(a, batch);
  if (result!.duplicates > 0) faultReached(w, 'duplicate-delivery', w.actors);
  note(
    w,
    `${a.name}: batch of ${batch.receipts.length} (${result!.inserted} new, ${result!.duplicates} repeats)${batch.checkpoint === undefined ? '' : ` checkpoint ${batch.checkpoint}`}`,
  );
  a.window = null;
  pass(w, a, 'ledger.after_insert_before_commit');
  return result;
}

/** Commit `a`'s open ledger transaction. */
export function commitBatch(w: World, a: Actor): void {
  w.db.commit(a.session);
  const batch = openBatches.get(a);
  openBatches.delete(a);
  if (batch) {
    const mine = w.delivered.get(batch.source) ?? new Set<string>();
    for (const r of batch.receipts) mine.add(identityKey(r));
    w.delivered.set(batch.source, mine);
  }
  a.window = null;
  pass(w, a, 'ledger.after_commit');
}
