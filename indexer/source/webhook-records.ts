// The rows one accepted webhook delivery writes, built from the delivery and its refused items: its dead letters
// (one per refused item, in index order, each keeping the raw body) and its event record (what tells a redelivery
// from a new delivery). Pure: the route and the intakes (webhook-hold.ts, webhook-trusted.ts) write them.
import type { ItemRefusal } from './webhook-plan';
import type { DeadLetter, EventRecord } from './webhook-store';

/** One authenticated, parsed delivery, as its rows and answers name it. */
export interface Delivery {
  /** The provider name in the URL (the rows keep it as sent). */
  provider: string;
  /** Its label: the configured name, or `unknown` (metrics, the cap of pending hints). */
  bucket: string;
  eventId: string | null;
  raw: Buffer;
  bodySha256: string;
  /** Transaction items in the delivery. */
  items: number;
  /** The same event id was recorded before with other bytes: processed, but its event record is not rewritten. */
  reused: boolean;
}

/** The dead letters of the refused items, in index order. */
export function deadLetterRows(d: Delivery, refused: readonly ItemRefusal[]): DeadLetter[] {
  return [...refused]
    .sort((a, b) => a.index - b.index)
    .map((b) => ({
      provider: d.provider,
      eventId: d.eventId,
      itemIndex: b.index,
      reason: b.code,
      detail: b.message,
      rawBody: d.raw,
    }));
}

/**
 * The event record a delivery writes, or null when it writes none: without an event id nothing tells its redelivery
 * apart, and a reused event id keeps the record of its first body.
 */
export function eventRecord(d: Delivery, deadLettered: number, receipts: number, inserted: number): EventRecord | null {
  if (d.eventId === null || d.reused) return null;
  return {
    provider: d.provider,
    eventId: d.eventId,
    bodySha256: d.bodySha256,
    transactions: d.items,
    receipts,
    inserted,
    deadLettered,
  };
}
