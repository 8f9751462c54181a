// The reference ledger: the ledger's rule alone, one receipt at a time, for reading and for holding the fast ledger
// (ledger.ts) to it. A property test (tests/indexer/ledger/reference.test.ts) gives both the same random streams of
// deliveries and requires the same rows, credits, exceptions, fulfilments, outbox rows and counters.
//
// The rule, for one batch, in one transaction:
//   1. a malformed receipt is set aside with its code (the rest of the batch goes on);
//   2. the invoices the batch could pay are locked, in id order;
//   3. in chain order (slot, then identity), each receipt is matched against the invoices as they stand, and
//      inserted with the invoice it matched, ON CONFLICT DO NOTHING;
//   4. only an inserted receipt counts: its credit, its exceptions, and for an invoice it completes the one
//      fulfilment and outbox row. A receipt that was in the ledger already (delivered before, or earlier in this
//      batch) is a duplicate and changes nothing;
//   5. the delivery counters and the checkpoint (only forward) move in the same transaction.
// No probe, no COPY, no pipeline, no prediction: those are the fast ledger's, and must not change what it does.
import type { Pool, PoolClient } from 'pg';
import type { Logger } from 'pino';
import { logger } from '../../common/log';
import { exec, one, withTransaction } from '../../db/sql';
import type { Receipt } from '../decode/receipt';
import { matchReceipt } from '../match/match';
import type { InvoiceState } from '../match/types';
import { fulfilmentOpId, invoicePaidPayload } from './fulfilment';
import { lockInvoices, lockStatement } from './credits';
import * as q from './queries';
import type { ApplyBatchInput, ApplyBatchResult } from './types';
import { assertCluster, assertSource, compareReceipts, compareSlot, partitionReceipts, slotText } from './validate';

export interface ReferenceLedger {
  applyBatch(input: ApplyBatchInput): Promise<ApplyBatchResult>;
}

export function createReferenceLedger(deps: { db: Pool; log?: Logger }): ReferenceLedger {
  const log = deps.log ?? logger('ledger');
  async function applyBatch(input: ApplyBatchInput): Promise<ApplyBatchResult> {
    const { cluster, source } = input;
    assertCluster(cluster);
    assertSource(source);
    const checkpoint = input.checkpoint === undefined ? undefined : slotText(input.checkpoint.slot);
    const { good, rejected } = partitionReceipts(input.receipts, cluster);
    for (const r of rejected) log.error({ code: r.code, index: r.index, cluster, source }, r.message);
    return withTransaction(deps.db, async (c) => {
      const result: ApplyBatchResult = {
        inserted: 0,
        duplicates: 0,
        credited: [],
        exceptions: [],
        fulfilled: [],
        rejected,
      };
      const credited = new Map<string, bigint>();
      const invoices = new Map((await lockInvoices(c, lockStatement(good))).map((i) => [i.id, i]));
      for (const r of chainOrder(good)) {
        const { outcome, next } = matchReceipt(r, [...invoices.values()]);
        const inserted = await one<{ id: string }>(c, q.insertReceipt(cluster, source, row(r, outcome.invoiceId)));
        if (!inserted) continue; // in the ledger already: a duplicate, never credited again
        result.inserted += 1;
        if (next) await writeInvoice(c, next, invoices);
        if (outcome.invoiceId && outcome.credit > 0n)
          credited.set(outcome.invoiceId, (credited.get(outcome.invoiceId) ?? 0n) + outcome.credit);
        for (const e of outcome.exceptions) {
          await exec(c, q.insertExceptions([e.kind], [inserted.id], [e.invoiceId], [e.amount.toString()], [e.detail]));
          const { signature, ixIndex, innerIndex } = r;
          result.exceptions.push({
            kind: e.kind,
            invoiceId: e.invoiceId,
            amount: e.amount,
            signature,
            ixIndex,
            innerIndex,
          });
        }
        if (outcome.paidNow && next) {
          await exec(
            c,
            q.insertFulfilments(
              [fulfilmentOpId(next.id)],
              [next.id],
              [next.merchant],
              [JSON.stringify(invoicePaidPayload(next))],
            ),
          );
          result.fulfilled.push(next.id);
        }
      }
      result.credited = [...credited].map(([invoiceId, amount]) => ({ invoiceId, amount }));
      result.duplicates = good.length - result.inserted;
      if (good.length > 0) await exec(c, q.bumpDeliveryCounts(cluster, source, good.length, result.inserted));
      if (checkpoint !== undefined) await exec(c, q.advanceCheckpoint(cluster, source, checkpoint));
      return result;
    });
  }
  return { applyBatch };
}

/** The invoice's new state, in the database and in the map the next receipts are matched against. */
async function writeInvoice(c: PoolClient, next: InvoiceState, invoices: Map<string, InvoiceState>): Promise<void> {
  invoices.set(next.id, next);
  await exec(c, q.updateInvoiceCredits([next.id], [next.creditedAmount.toString()], [next.status === 'paid']));
}

/** Chain order: by slot (none last), then by identity. Stable: repeats keep their delivery order. */
function chainOrder(receipts: readonly Receipt[]): Receipt[] {
  return [...receipts].sort((a, b) => compareSlot(a.slot ?? null, b.slot ?? null) || compareReceipts(a, b));
}

function row(r: Receipt, invoiceId: string | null): q.ReceiptRow {
  const text = (x: bigint | number | null | undefined) => (x === null || x === undefined ? null : x.toString());
  return {
    signature: r.signature,
    ixIndex: r.ixIndex,
    innerIndex: r.innerIndex,
    slot: text(r.slot),
    blockTime: text(r.blockTime),
    program: r.program,
    kind: r.kind,
    mint: r.mint,
    source: r.source,
    destination: r.destination,
    destinationOwner: r.destinationOwner ?? null,
    amount: r.amount.toString(),
    invoiceId,
  };
}
