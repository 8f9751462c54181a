// Chain order (pure): slot, then identity, no slot last. It decides which of two payments completes an invoice and
// which is excess, and it is the order every batch takes its receipts' index entries in (COPY sends them so, the
// INSERT sorts them so), so two overlapping batches wait on each other instead of deadlocking.
import type { Receipt } from '../decode/receipt';
import { compareReceipts, compareSlot } from './validate';

/**
 * The receipts in chain order. Sorted on number keys (a slot is far below 2^53): comparing bigints is the costly
 * part of a comparator; a slot beyond it would fall back to comparing the bigints.
 */
export function chainOrder(receipts: readonly Receipt[]): Receipt[] {
  const n = receipts.length;
  const keys = new Float64Array(n);
  let exact = true;
  for (let i = 0; i < n; i++) {
    const slot = receipts[i].slot;
    const key = slot === null || slot === undefined ? Infinity : Number(slot);
    if (key > Number.MAX_SAFE_INTEGER && key !== Infinity) exact = false;
    keys[i] = key;
  }
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) order[i] = i;
  const bySlot = exact
    ? (a: number, b: number) => keys[a] - keys[b]
    : (a: number, b: number) => compareSlot(receipts[a].slot ?? null, receipts[b].slot ?? null);
  order.sort((a, b) => bySlot(a, b) || compareReceipts(receipts[a], receipts[b]));
  return order.map((i) => receipts[i]);
}
