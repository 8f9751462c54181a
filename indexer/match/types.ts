// Shapes the matcher works on. Amounts are bigint base units.

/** Exception kinds, mirrored by the `exception_kind` enum in migrations/0001_ledger.sql (see its comment). */
export const EXCEPTION_KINDS = [
  'overpayment',
  'late_payment',
  'unknown_reference',
  'mint_mismatch',
  'unknown_mint',
] as const;
export type ExceptionKind = (typeof EXCEPTION_KINDS)[number];

export interface InvoiceState {
  id: string;
  merchant: string;
  mint: string;
  expectedAmount: bigint;
  creditedAmount: bigint;
  depositAddress: string | null;
  referenceKey: string | null;
  status: 'open' | 'paid';
  /** Creation order (older first); picks among several open invoices at one deposit address. */
  createdSeq: number;
}

/** The fields of a Receipt the matcher reads. */
export interface MatchReceipt {
  mint: string | null;
  destination: string;
  destinationOwner: string | null;
  amount: bigint;
  accountKeys?: string[];
  references?: string[];
}

export interface MatchException {
  kind: ExceptionKind;
  amount: bigint;
  invoiceId: string | null;
  detail: string;
}

export interface ReceiptOutcome {
  /** The invoice the receipt was matched to (also when it raised an exception instead of crediting). */
  invoiceId: string | null;
  credit: bigint;
  exceptions: MatchException[];
  /** This receipt completed the invoice. */
  paidNow: boolean;
}

export interface BatchOutcome {
  outcomes: ReceiptOutcome[];
  /** Invoices whose state changed, in their new state. */
  invoices: InvoiceState[];
}
