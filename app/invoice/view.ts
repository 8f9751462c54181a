// An invoice as the API and the SDK show it: amounts as decimal strings of base units (and tokens), its Solana Pay
// URL and its checkout link, and — for one invoice — what the ledger did with it.
import { checkoutPath } from './checkout-id';
import { paymentUrl } from './payment-url';
import type { InvoiceDetail, InvoiceRow } from './store';
import { tokensOf } from './tokens';

export interface InvoiceView {
  id: string;
  invoiceId: string;
  status: 'open' | 'paid' | 'expired';
  amount: string;
  amountTokens: string;
  creditedAmount: string;
  mint: string;
  decimals: number;
  recipient: string;
  reference: string;
  label: string | null;
  message: string | null;
  memo: string | null;
  expiresAt: string | null;
  paymentUrl: string;
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
