// An invoice as the API and the SDK show it: amounts as decimal strings of base units (and tokens), its Solana Pay
// URL and its checkout link, and — for one invoice — what the ledger did with it.
import { checkoutPath } from './checkout-id';
import { paymentUrl } from './payment-url';
import type { InvoiceDetail, InvoiceRow, InvoiceStatus } from './types';
import { tokensOf } from './tokens';

/** The one definition of an invoice's fields: the SDK's `Invoice` is this with bigint amounts and Date times. */
export interface InvoiceView {
  /** oncepay's id of the invoice row. */
  id: string;
  /** The merchant's invoice id. */
  invoiceId: string;
  /** 'paid' once the ledger credited the whole amount at finality; 'expired' when open past expiresAt. */
  status: InvoiceStatus;
  /** Base units, a decimal string. */
  amount: string;
  /** The amount in tokens, an exact decimal string ("1.5"). */
  amountTokens: string;
  /** Base units the ledger credited at finality. */
  creditedAmount: string;
  /** A mint address, or 'SOL'. */
  mint: string;
  decimals: number;
  /** The wallet paid. */
  recipient: string;
  /** The Solana Pay reference key oncepay generated. */
  reference: string;
  label: string | null;
  message: string | null;
  memo: string | null;
  expiresAt: string | null;
  /** The Solana Pay transfer-request URL (solana:…), built by @solana/pay. */
  paymentUrl: string;
  /** The payer's checkout page: /pay/<unguessable id>, absolute when the API knows its public URL. */
  checkoutUrl: string;
  createdAt: string;
  paidAt: string | null;
  receipts?: Array<{
    signature: string;
    ixIndex: number;
    innerIndex: number;
    slot: string | null;
    amount: string;
    mint: string | null;
    source: string;
    deliveredBy: string;
  }>;
  exceptions?: Array<{ id: string; kind: string; amount: string; detail: string | null; signature: string }>;
  fulfilment?: {
    id: string;
    delivery: string | null;
    attempts: number;
    lastStatus: number | null;
    deliveredAt: string | null;
  } | null;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/** `publicUrl`: where the API is reached from outside (the checkout link is absolute then; a path otherwise). */
export function invoiceView(r: InvoiceRow, publicUrl: string | undefined, detail?: InvoiceDetail): InvoiceView {
  const v: InvoiceView = {
    id: r.id,
    invoiceId: r.invoiceId,
    status: r.status,
    amount: r.amount.toString(),
    amountTokens: tokensOf(r.amount, r.decimals),
    creditedAmount: r.creditedAmount.toString(),
    mint: r.mint,
    decimals: r.decimals,
    recipient: r.recipient,
    reference: r.reference,
    label: r.label,
    message: r.message,
    memo: r.memo,
    expiresAt: iso(r.expiresAt),
    paymentUrl: paymentUrl(r),
    checkoutUrl: `${publicUrl?.replace(/\/+$/, '') ?? ''}${checkoutPath(r.checkoutId)}`,
    createdAt: iso(r.createdAt)!,
    paidAt: iso(r.paidAt),
  };
  if (!detail) return v;
  return {
    ...v,
    receipts: detail.receipts.map((x) => ({
      ...x,
      slot: x.slot === null ? null : x.slot.toString(),
      amount: x.amount.toString(),
    })),
    exceptions: detail.exceptions.map((e) => ({
      id: e.id,
      kind: e.kind,
      amount: e.amount.toString(),
      detail: e.detail,
      signature: e.signature,
    })),
    fulfilment: detail.fulfilment && { ...detail.fulfilment, deliveredAt: iso(detail.fulfilment.deliveredAt) },
  };
}
