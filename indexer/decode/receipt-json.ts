// The one output line of `oncepay decode`, field order fixed by the CLI contract (design.md).
import type { Receipt } from './receipt';

export interface ReceiptJson {
  signature: string;
  ixIndex: number;
  innerIndex: number;
  program: string;
  kind: string;
  mint: string | null;
  source: string;
  destination: string;
  destinationOwner: string | null;
  /** Decimal string of base units. */
  amount: string;
}

export function receiptToJsonObject(r: Receipt): ReceiptJson {
  return {
    signature: r.signature,
    ixIndex: r.ixIndex,
    innerIndex: r.innerIndex,
    program: r.program,
    kind: r.kind,
    mint: r.mint,
    source: r.source,
    destination: r.destination,
    destinationOwner: r.destinationOwner,
    amount: r.amount.toString(10),
  };
}

/** One JSON line (no trailing newline). */
export function receiptToJson(r: Receipt): string {
  return JSON.stringify(receiptToJsonObject(r));
}
