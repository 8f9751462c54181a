// Credits, inside a batch's transaction (batch-transaction.ts): locking the invoices the batch's new receipts could
// pay, matching receipts to them (match/match.ts) and writing what the match decided: credits, exceptions, and for
// each invoice paid now its one fulfilment + outbox row.
import type { PoolClient } from 'pg';
import { exec, type Query, rows } from '../../db/sql';
import type { Receipt } from '../decode/receipt';
import { createMatcher, matchBatch } from '../match/match';
import type { BatchOutcome, InvoiceState, ReceiptOutcome } from '../match/types';
import { fulfilmentOpId, invoicePaidPayload } from './fulfilment';
import { invoiceFields } from './invoices';
import * as q from './queries';
import { isStorableText } from './validate';
import type { CreditedAmount, RaisedException } from './types';

/**
 * The statement that locks the invoices the receipts could pay: by deposit address or owner, or by reference (pure:
 * built before its transaction when the ledger can). The receipts may be a batch as delivered, not validated yet: a
 * key is taken only where it is a string PostgreSQL can hold (no NUL), so a malformed receipt can at most add a key
 * (an invoice locked for nothing until the batch ends), never break the lock.
 */
export function lockStatement(receipts: readonly Receipt[]): Query {
  // Repeated keys stay in the lists: PostgreSQL hashes the array for `= ANY` anyway, and a set of them built here
  // (a hash of each fresh key string) cost node more than sending the repeats costs the server.
  const addresses: string[] = [];
  const refs: string[] = [];
  for (const r of receipts) {
    if (typeof r !== 'object' || r === null) continue;
    if (isStorableText(r.destination)) addresses.push(r.destination);
    if (isStorableText(r.destinationOwner) && r.destinationOwner !== '') addresses.push(r.destinationOwner);
    // Account keys need not be looked up: a reference found only among them counts when the money went to
    // the invoice's deposit address, and that address is already in `addresses`.
    if (Array.isArray(r.references)) for (const k of r.references) if (isStorableText(k)) refs.push(k);
  }
  return q.lockCandidateInvoices(addresses, refs);
}

/** Lock (FOR UPDATE, in id order) the invoices of a lockStatement, as the matcher's states. */
export async function lockInvoices(client: PoolClient, statement: Query): Promise<InvoiceState[]> {
  const locked = await rows(client, statement);
  // The creation order is set on the object invoiceFields made (a spread into a new object costs 5x as much here).
  return locked.map((x) => {
    const invoice = invoiceFields(x) as InvoiceState;
    invoice.createdSeq = Number(x.created_epoch);
    return invoice;
  });
}

/** Lock the invoices the receipts could pay (lockStatement, then lockInvoices). */
export function lockCandidates(client: PoolClient, receipts: readonly Receipt[]): Promise<InvoiceState[]> {
  return lockInvoices(client, lockStatement(receipts));
}

/**
 * The match of receipts in chain order against the locked invoices, made only as far as asked (`through(n)`: the
 * first n receipts), so the ledger's COPY inserts one chunk while the next is matched. `invoiceIds[i]` is the
 * invoice of `chain[i]` once it is matched (an array by position: no map keyed by receipt); `plan()` matches the
 * rest and returns the whole outcome.
 */
export interface Planning {
  readonly invoiceIds: (string | null)[];
  through(n: number): void;
  plan(): BatchOutcome;
}

export function planReceipts(chain: readonly Receipt[], invoices: readonly InvoiceState[]): Planning {
  const matcher = createMatcher(invoices);
  const invoiceIds = new Array<string | null>(chain.length);
  const outcomes: ReceiptOutcome[] = [];
  function through(n: number): void {
    for (let i = outcomes.length; i < n; i++) {
      const outcome = matcher.match(chain[i]);
      outcomes.push(outcome);
      invoiceIds[i] = outcome.invoiceId;
    }
  }
  function plan(): BatchOutcome {
    through(chain.length);
    return { outcomes, invoices: matcher.changed() };
  }
  return { invoiceIds, through, plan };
}

/**
 * Another transaction inserted some of the planned receipts first: match again on what this one did insert, and
 * fix the invoice id of any inserted row whose match changed with it (`planned(r)`: the invoice it went in with).
 */
export async function rematchInserted(
  client: PoolClient,
  inserted: Receipt[],
  invoices: InvoiceState[],
  planned: (r: Receipt) => string | null,
  idOf: (r: Receipt) => string,
): Promise<BatchOutcome> {
  const plan = matchBatch(inserted, invoices);
  const fix = inserted.map((r, i) => [r, plan.outcomes[i].invoiceId] as const).filter(([r, inv]) => planned(r) !== inv);
  if (fix.length > 0)
    await exec(
      client,
      q.setReceiptInvoices(
        fix.map(([r]) => idOf(r)),
        fix.map(([, inv]) => inv),
      ),
    );
  return plan;
}

/**
 * What a match writes, as statement columns and the batch's result (pure). An exception's receipt is kept as the
 * receipt: its row id is asked for only when the rows are written (writeCredits), so these can be made while the
 * receipts are still going in.
 */
export interface CreditRows {
  exceptions: {
    kinds: string[];
    receipts: Receipt[];
    invoiceIds: (string | null)[];
    amounts: string[];
    details: string[];
  };
  raised: RaisedException[];
  /** Invoices paid by this batch, in chain order. */
  fulfilled: string[];
  credited: CreditedAmount[];
  /** Invoices whose credited amount or status changed. */
  invoices: InvoiceState[];
}

export function creditRows(inserted: Receipt[], plan: BatchOutcome): CreditRows {
  const ex: CreditRows['exceptions'] = { kinds: [], receipts: [], invoiceIds: [], amounts: [], details: [] };
  const raised: RaisedException[] = [];
  const fulfilled: string[] = [];
  const credited = new Map<string, bigint>();
  plan.outcomes.forEach((o, i) => {
    const r = inserted[i];
    if (o.invoiceId && o.credit > 0n) credited.set(o.invoiceId, (credited.get(o.invoiceId) ?? 0n) + o.credit);
    for (const e of o.exceptions) {
      ex.kinds.push(e.kind);
      ex.receipts.push(r);
      ex.invoiceIds.push(e.invoiceId);
      ex.amounts.push(e.amount.toString());
      ex.details.push(e.detail);
      raised.push({
        kind: e.kind,
        invoiceId: e.invoiceId,
        amount: e.amount,
        signature: r.signature,
        ixIndex: r.ixIndex,
        innerIndex: r.innerIndex,
      });
    }
    if (o.paidNow && o.invoiceId) fulfilled.push(o.invoiceId);
  });
  return {
    exceptions: ex,
    raised,
    fulfilled,
    credited: [...credited].map(([invoiceId, amount]) => ({ invoiceId, amount })),
    invoices: plan.invoices,
  };
}

/**
 * Credits, exceptions, fulfilments + outbox rows of the inserted receipts (in chain order, as planned); `idOf`
 * answers the row id of each receipt that raised an exception.
 */
export async function writeCredits(client: PoolClient, c: CreditRows, idOf: (r: Receipt) => string): Promise<void> {
  const changed = c.invoices;
  if (changed.length > 0) {
    await exec(
      client,
      q.updateInvoiceCredits(
        changed.map((i) => i.id),
        changed.map((i) => i.creditedAmount.toString()),
        changed.map((i) => i.status === 'paid'),
      ),
    );
  }
  const ex = c.exceptions;
  if (ex.kinds.length > 0)
    await exec(client, q.insertExceptions(ex.kinds, ex.receipts.map(idOf), ex.invoiceIds, ex.amounts, ex.details));
  if (c.fulfilled.length > 0) {
    const byId = new Map(changed.map((i) => [i.id, i]));
    const paid = c.fulfilled.map((id) => byId.get(id)!);
    await exec(
      client,
      q.insertFulfilments(
        paid.map((i) => fulfilmentOpId(i.id)),
        paid.map((i) => i.id),
        paid.map((i) => i.merchant),
        paid.map((i) => JSON.stringify(invoicePaidPayload(i))),
      ),
    );
  }
}
