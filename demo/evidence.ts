// The evidence the final table is checked against, as plain data (amounts as decimal strings). Gathered from
// independent places: the chain over RPC, the database rows, the merchant endpoint's own request log, and the
// HTTP answers the demo received. Nothing here is a number the demo wrote down in advance.
export interface InvoiceEvidence {
  id: string;
  expected: string;
  /** Balance of the invoice's deposit token account, read from the chain. */
  paidOnChain: string;
  /** What the demo's customers sent (the script's own record, compared with the chain). */
  sentByCustomers: string;
  credited: string;
  status: string;
  receipts: number;
  exceptions: Array<{ kind: string; amount: string; signature: string }>;
  fulfilmentIds: string[];
  outboxStates: string[];
  /** Requests the merchant endpoint saw for this invoice, in order, with their Idempotency-Key and answer. */
  deliveries: Array<{ key: string | null; status: number; outcome: string; signatureValid: boolean }>;
  /** Times the merchant applied (fulfilled) this invoice. */
  applied: number;
}

export interface PayoutEvidenceRow {
  payoutId: string;
  amount: string;
  recipient: string;
  state: string;
  signature: string | null;
  opPda: string;
  fault: string;
  attempts: Array<{ no: number; status: string; signature: string; sendCount: number }>;
  /** Signatures the racing workers reported (null: a worker got nothing back). */
  workerSignatures: Array<string | null>;
  /** From the chain: the op account (null if absent), successful transactions touching it, the recipient's balance. */
  opAccount: { amount: string; recipient: string; mint: string } | null;
  successfulOpTransactions: string[];
  recipientBalance: string;
}

export interface DemoEvidence {
  cluster: string;
  chainPayments: Array<{ signature: string; found: boolean; err: unknown; transfers: number }>;
  receiptRows: number;
  receiptsPerSignature: Record<string, number>;
  deliveriesBySource: Array<{ source: string; delivered: number; inserted: number; duplicates: number }>;
  invoices: InvoiceEvidence[];
  secondPayment: { invoiceId: string; signature: string; amount: string };
  failOnceInvoice: string;
  crash: {
    failpoint: string;
    killedBy: string | null;
    receiptsAfterKill: number;
    checkpointBefore: string | null;
    checkpointAfterKill: string | null;
    restartExitCode: number | null;
    receiptsAfterRestart: number;
  };
  webhook: Array<{ eventId: string; status: number; duplicateEvent: boolean; inserted: number; duplicates: number }>;
  api: Array<{
    label: string;
    idempotencyKey: string;
    payoutId: string;
    status: number;
    replayed: boolean;
    code: string | null;
    rowId: string | null;
  }>;
  payoutRows: number;
  payouts: PayoutEvidenceRow[];
  vault: { funded: string; balance: string };
}
