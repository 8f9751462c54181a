// The ledger's public shapes. The sources helper codes against ApplyBatchInput / ApplyBatchResult.
import type { Receipt } from '../decode/receipt';
import type { ExceptionKind, InvoiceState } from '../match/types';

export const RECEIPT_SOURCES = ['scanner', 'backfill', 'webhook', 'file', 'stream', 'ws'] as const;
export type ReceiptSource = (typeof RECEIPT_SOURCES)[number];

/**
 * The columns of a receipts row that say which transfer it is and where it came from, as pg returns them (slot as
 * text): one definition for every reader of the table (app/exception, the console).
 */
export interface ReceiptSqlColumns {
  cluster: string;
  signature: string;
  ix_index: number;
  inner_index: number;
  slot: string | null;
  mint: string | null;
  /** The sender's token account. */
  source: string;
}

export interface ApplyBatchInput {
  /** e.g. 'mainnet-beta', 'devnet', 'localnet': part of every receipt's identity. */
  cluster: string;
  /** Which delivery path brought these receipts (counted per source, kept as `first_source`). */
  source: ReceiptSource;
  receipts: readonly Receipt[];
  /** Advance checkpoints(cluster, source) to at least this slot in the same transaction. */
  checkpoint?: { slot: bigint | number };
}

export interface CreditedAmount {
  invoiceId: string;
  amount: bigint;
}

export interface RaisedException {
  kind: ExceptionKind;
  invoiceId: string | null;
  amount: bigint;
  signature: string;
  ixIndex: number;
  innerIndex: number;
}

export interface RejectedReceipt {
  /** Position in the input `receipts` array. */
  index: number;
  code: string;
  message: string;
}

export interface ApplyBatchResult {
  /** Receipts new to the ledger (credited / matched only these). */
  inserted: number;
  /** Receipts already in the ledger or repeated inside the batch. */
  duplicates: number;
  /** Per invoice, what this batch credited. */
  credited: CreditedAmount[];
  exceptions: RaisedException[];
  /** Invoice ids that became paid in this batch (each got its one fulfilment + outbox row). */
  fulfilled: string[];
  /** Receipts refused as malformed; the rest of the batch was still applied. */
  rejected: RejectedReceipt[];
}

export interface NewInvoice {
  id: string;
  merchant?: string;
  mint: string;
  expectedAmount: bigint;
  depositAddress?: string | null;
  referenceKey?: string | null;
}

/** An invoice as the ledger shows it: the matcher's state without its creation order, with the time it was paid. */
export interface InvoiceRow extends Omit<InvoiceState, 'createdSeq'> {
  paidAt: string | null;
}

export interface LedgerReport {
  invoices: Array<{
    id: string;
    merchant: string;
    mint: string;
    expected: string;
    credited: string;
    status: 'open' | 'paid';
    paidAt: string | null;
  }>;
  receipts: { total: number; matched: number; bySource: Record<string, number> };
  deliveries: Array<{ cluster: string; source: string; delivered: number; inserted: number; duplicates: number }>;
  exceptions: Record<string, { count: number; amount: string }>;
  outbox: Record<string, number>;
  checkpoints: Array<{ cluster: string; source: string; slot: string }>;
}
