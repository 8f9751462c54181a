// The shapes of an invoice: what is asked (InvoiceInput, checked into InvoiceTerms), its row, and what the ledger
// did with it. No I/O and no database types: the SDK's public surface is declared with them, and a merchant's project
// type-checks with only the package (tests/sdk/package.test.ts).
import type { Address } from '../types';

export interface InvoiceInput {
  invoiceId: string;
  /** Base units as a decimal string (or bigint): never a JS number. */
  amount: string | bigint;
  /** A mint address, or 'SOL'. */
  mint: string;
  /** The wallet to pay; the merchant's receiving address when absent. */
  recipient?: string;
  label?: string;
  message?: string;
  memo?: string;
  /** ISO 8601 (or a Date); after it an unpaid invoice is expired (a later payment still credits: never dropped). */
  expiresAt?: string | Date;
}

/** What the request asks for, checked: the terms two requests for the same invoice id are compared on. */
export interface InvoiceTerms {
  merchantId: string;
  invoiceId: string;
  amount: bigint;
  mint: Address | 'SOL';
  recipient: Address;
  label: string | null;
  message: string | null;
  memo: string | null;
  expiresAt: Date | null;
}

export type InvoiceStatus = 'open' | 'paid' | 'expired';

export interface InvoiceRow extends InvoiceTerms {
  id: string;
  ledgerInvoiceId: string;
  checkoutId: string;
  /** The Solana Pay reference key, generated once at creation. */
  reference: string;
  decimals: number;
  status: InvoiceStatus;
  creditedAmount: bigint;
  paidAt: Date | null;
  createdAt: Date;
}

export interface InvoiceReceipt {
  signature: string;
  ixIndex: number;
  innerIndex: number;
  slot: bigint | null;
  amount: bigint;
  mint: string | null;
  source: string;
  deliveredBy: string;
}

export interface InvoiceException {
  id: string;
  kind: string;
  amount: bigint;
  detail: string | null;
  signature: string;
  createdAt: Date;
}

export interface InvoiceFulfilment {
  id: string;
  delivery: string | null;
  attempts: number;
  lastStatus: number | null;
  deliveredAt: Date | null;
}

export interface InvoiceDetail {
  receipts: InvoiceReceipt[];
  exceptions: InvoiceException[];
  fulfilment: InvoiceFulfilment | null;
}
