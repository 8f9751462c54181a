// Pure matching: which invoice a receipt pays, how much it credits, and what exception it raises.
// No I/O, no clock: the ledger loads the candidate invoices (locked) and writes back what this returns.
import type { ExceptionKind, InvoiceState, MatchReceipt, ReceiptOutcome, BatchOutcome } from './types';

function paysAddress(inv: InvoiceState, r: MatchReceipt): boolean {
  return (
    inv.depositAddress !== null && (inv.depositAddress === r.destination || inv.depositAddress === r.destinationOwner)
  );
}

/**
 * A reference invoice matches when its key is one of the transfer instruction's own extra keys, or one of the
 * transaction's account keys AND the money went to its deposit address. Account keys alone are too loose: every
 * transfer of a transaction carries them, including fees paid to third parties.
 */
function referenceHit(inv: InvoiceState, r: MatchReceipt): boolean {
  if (inv.referenceKey === null) return false;
  const inRefs = (r.references ?? []).includes(inv.referenceKey);
  if (inv.depositAddress === null) return inRefs;
  return paysAddress(inv, r) && (inRefs || (r.accountKeys ?? []).includes(inv.referenceKey));
}

function byAge(a: InvoiceState, b: InvoiceState): number {
  return a.createdSeq - b.createdSeq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** The invoice a receipt is for, or whether it at least went to an address we watch. */
export function selectInvoice(
  r: MatchReceipt,
  invoices: readonly InvoiceState[],
): { invoice: InvoiceState | null; watched: boolean } {
  const byRef = invoices.filter((inv) => referenceHit(inv, r)).sort(byAge);
  if (byRef.length > 0) return { invoice: byRef[0], watched: true };
  // Address-only invoices: the oldest open one at that address, else the newest paid one (a late payment).
  const byAddr = invoices.filter((inv) => inv.referenceKey === null && paysAddress(inv, r)).sort(byAge);
  const open = byAddr.find((inv) => inv.status === 'open');
  if (open) return { invoice: open, watched: true };
  if (byAddr.length > 0) return { invoice: byAddr[byAddr.length - 1], watched: true };
  return { invoice: null, watched: invoices.some((inv) => paysAddress(inv, r)) };
}

/** One receipt against the current invoice states. Returns the outcome and the invoice's next state. */
export function matchReceipt(
  r: MatchReceipt,
  invoices: readonly InvoiceState[],
): { outcome: ReceiptOutcome; next: InvoiceState | null } {
  const { invoice, watched } = selectInvoice(r, invoices);
  const none: ReceiptOutcome = { invoiceId: null, credit: 0n, exceptions: [], paidNow: false };
  if (!invoice) {
    if (!watched) return { outcome: none, next: null };
    return {
      outcome: {
        ...none,
        exceptions: [exc('unknown_reference', r.amount, null, 'no invoice matches the reference or address')],
      },
      next: null,
    };
  }
  const base: ReceiptOutcome = { invoiceId: invoice.id, credit: 0n, exceptions: [], paidNow: false };
  if (r.mint === null) {
    return {
      outcome: { ...base, exceptions: [exc('unknown_mint', r.amount, invoice.id, `invoice expects ${invoice.mint}`)] },
      next: null,
    };
  }
  if (r.mint !== invoice.mint) {
    return {
      outcome: {
        ...base,
        exceptions: [exc('mint_mismatch', r.amount, invoice.id, `paid in ${r.mint}, invoice expects ${invoice.mint}`)],
      },
      next: null,
    };
  }
  if (invoice.status === 'paid') {
    return {
      outcome: { ...base, exceptions: [exc('late_payment', r.amount, invoice.id, 'invoice already paid')] },
      next: null,
    };
  }
  const remaining = invoice.expectedAmount - invoice.creditedAmount;
  const credit = r.amount < remaining ? r.amount : remaining;
  const excess = r.amount - credit;
  const creditedAmount = invoice.creditedAmount + credit;
  const paidNow = creditedAmount === invoice.expectedAmount;
  const exceptions =
    excess > 0n ? [exc('overpayment', excess, invoice.id, `expected ${invoice.expectedAmount}, excess ${excess}`)] : [];
  const next: InvoiceState = { ...invoice, creditedAmount, status: paidNow ? 'paid' : 'open' };
  return { outcome: { invoiceId: invoice.id, credit, exceptions, paidNow }, next };
}

/** A batch of receipts, in the given order, against a set of invoices; later receipts see earlier credits. */
export function matchBatch(receipts: readonly MatchReceipt[], invoices: readonly InvoiceState[]): BatchOutcome {
  const matcher = createMatcher(invoices);
  const outcomes = receipts.map((r) => matcher.match(r));
  return { outcomes, invoices: matcher.changed() };
}

/**
 * `matchBatch` one receipt at a time, for a caller that acts on each outcome before the next receipt is matched
 * (the ledger writes a COPY chunk while the next one is matched). The receipts must come in chain order, as to
 * `matchBatch`: each one sees the credits of those before it.
 */
export interface Matcher {
  match(r: MatchReceipt): ReceiptOutcome;
  /** Invoices whose state changed so far, in their new state (in the order they were given). */
  changed(): InvoiceState[];
}

/** The outcome of a receipt no invoice could claim (matchReceipt's answer without candidates), shared: read only. */
const UNWATCHED: ReceiptOutcome = Object.freeze({
  invoiceId: null,
  credit: 0n,
  exceptions: Object.freeze([]) as unknown as ReceiptOutcome['exceptions'],
  paidNow: false,
});

export function createMatcher(invoices: readonly InvoiceState[]): Matcher {
  const state = new Map<string, InvoiceState>();
  for (const inv of invoices) state.set(inv.id, inv);
  // Index by address and reference so each receipt looks at its few candidates, not at every invoice.
  const byKey = new Map<string, string[]>();
  const index = (k: string | null, id: string) => {
    if (k === null) return;
    const ids = byKey.get(k);
    if (ids) ids.push(id);
    else byKey.set(k, [id]);
  };
  for (const inv of invoices) {
    index(inv.depositAddress, inv.id);
    if (inv.referenceKey !== inv.depositAddress) index(inv.referenceKey, inv.id);
  }
  const NONE: InvoiceState[] = [];
  function match(r: MatchReceipt): ReceiptOutcome {
    // The candidates in the order first seen (destination, owner, references, account keys), each once. Most
    // receipts have none or one: no set or key list is built for them.
    let candidates: InvoiceState[] = NONE;
    const add = (k: string | null | undefined) => {
      if (k === null || k === undefined) return;
      const ids = byKey.get(k);
      if (ids === undefined) return;
      for (const id of ids) {
        const inv = state.get(id)!;
        if (candidates === NONE) candidates = [inv];
        else if (!candidates.some((c) => c.id === id)) candidates.push(inv);
      }
    };
    add(r.destination);
    add(r.destinationOwner);
    for (const k of r.references ?? []) add(k);
    for (const k of r.accountKeys ?? []) add(k);
    // Money to an address no invoice knows (most transfers a scanner sees): nothing to decide, nothing allocated.
    if (candidates === NONE) return UNWATCHED;
    const { outcome, next } = matchReceipt(r, candidates);
    if (next) state.set(next.id, next);
    return outcome;
  }
  const changed = () => invoices.map((inv) => state.get(inv.id)!).filter((inv, i) => inv !== invoices[i]);
  return { match, changed };
}

function exc(kind: ExceptionKind, amount: bigint, invoiceId: string | null, detail: string) {
  return { kind, amount, invoiceId, detail };
}
