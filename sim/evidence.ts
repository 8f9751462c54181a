// What the invariants are checked against, as plain data: the chain's truth (which transactions touched each op
// account and whether they paid, what each recipient holds, which transfers are final), the database's rows (the
// payout journal, the receipts, invoices, exceptions, fulfilments, the outbox, the delivery counters) and the
// merchant endpoint's own record. The model fills it from its world (sim/runner.ts), the chaos runs from the real
// chain over RPC, PostgreSQL and the merchant endpoint they ran (sim/chaos/evidence.ts): one set of checks for both.

export interface PayoutEvidence {
  /** The payout row's id. */
  id: string;
  /** The merchant's payout id: the business operation. */
  payoutId: string;
  opId: string;
  amount: bigint;
  recipient: string;
  state: string;
  resultSignature: string | null;
  attempts: Array<{ signature: string; status: string }>;
}

export interface OpTransaction {
  opId: string;
  signature: string;
  /** null: it executed the op and paid; a number: the program error it landed with (6000: already consumed). */
  err: number | null;
}

export interface TransferEvidence {
  /** The receipt identity it must have: `signature/ix/inner`. */
  key: string;
  amount: bigint;
  /** It names a watched address (an invoice's deposit address or reference): the ledger must hold it. */
  watched: boolean;
  /** It is in a finalized block (only those are credited). */
  final: boolean;
}

export interface Evidence {
  /** The cluster name, part of every receipt identity (and refund payout id). */
  cluster: string;
  payouts: PayoutEvidence[];
  opTransactions: OpTransaction[];
  /** What each payout's recipient holds on chain (what payouts paid it: the model's customers hold nothing else). */
  recipientBalances: Map<string, bigint>;
  transfers: TransferEvidence[];
  receipts: Array<{ key: string; amount: bigint; invoiceId: string | null }>;
  invoices: Array<{ id: string; expected: bigint; credited: bigint; status: string }>;
  exceptions: Array<{ receipt: string; kind: string; amount: bigint; invoiceId: string | null }>;
  fulfilments: Array<{ invoiceId: string; id: string }>;
  outbox: Array<{ fulfilmentId: string; invoiceId: string; state: string }>;
  merchant: {
    /** Idempotency-Key → invoice id, for each key the merchant applied (once, by its own dedup). */
    applied: Array<{ key: string; invoiceId: string }>;
    /** Every request it received: its key and invoice. */
    requests: Array<{ key: string; invoiceId: string }>;
  };
  counters: Array<{ source: string; delivered: number; inserted: number; duplicates: number }>;
  /** Each exception linked to a refund: the exception (its receipt and kind), its amount, and the refund payout. */
  refunds: Array<{ receipt: string; kind: string; amount: bigint; payoutRow: string }>;
  /**
   * Sources with a checkpoint, where the run knows what each delivered: the final transfers at or below the
   * checkpoint that the source should have seen and never handed to the ledger (the model only).
   */
  checkpointGaps?: Array<{ source: string; checkpoint: number; missing: string[] }>;
  /** Signatures a process sent before they were journaled (the model sees each send; the chaos runs do not). */
  sentUnjournaled?: string[];
  /** The merchant API's answers to payout requests (the chaos runs; the model has no API). */
  api?: Array<{
    key: string;
    payoutId: string;
    amount: string;
    status: number;
    code: string | null;
    rowId: string | null;
  }>;
}
