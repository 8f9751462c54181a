// Internal rows → the SDK's public shapes (bigint amounts and slots). A payout is the same view as `oncepay payout
// show` and the API give (app/payout/view.ts), with its decimal strings turned back into bigint.
import { ExceptionRow } from '../app/exception/types';
import { payoutView } from '../app/payout/view';
import { AttemptRow, PayoutRow } from '../app/payout/store';
import { MerchantRow } from '../app/merchant/store';
import type { InvoiceDetail, InvoiceRow } from '../app/invoice/types';
import { invoiceView } from '../app/invoice/view';
import { ExceptionView, Invoice, Payout, PayoutState, RegisteredMerchant } from './types';

export function toRegistered(m: MerchantRow): RegisteredMerchant {
  return {
    id: m.id,
    name: m.name,
    programId: m.programId,
    merchant: m.merchantAddress,
    vault: m.vault,
    tokenProgram: m.tokenProgram,
  };
}

export function toPayout(p: PayoutRow, attempts: AttemptRow[]): Payout {
  const v = payoutView(p, attempts);
  return {
    id: v.id,
    payoutId: v.payoutId,
    merchant: v.merchant,
    state: v.state as PayoutState,
    recipient: v.recipient,
    mint: v.mint,
    amount: BigInt(v.amount),
    opId: v.opId,
    opPda: v.opPda,
    proof: v.proof && {
      signature: v.proof.signature,
      slot: v.proof.slot === null ? null : BigInt(v.proof.slot),
      opPda: v.proof.opPda,
    },
    attempts: attempts.length,
    conflict: v.conflict,
    error: v.error,
    createdAt: p.createdAt,
    finishedAt: p.finishedAt,
  };
}

export function toExceptionView(e: ExceptionRow, refund: Payout | null): ExceptionView {
  return {
    id: e.id,
    kind: e.kind,
    invoiceId: e.invoiceId,
    amount: e.amount,
    detail: e.detail,
    state: e.state,
    receipt: e.receipt,
    refund,
    note: e.resolution?.note ?? null,
    settledAt: e.resolution?.at ?? null,
    createdAt: e.createdAt,
  };
}

const date = (iso: string | null) => (iso === null ? null : new Date(iso));

/** An invoice is the API's view of it (app/invoice/view.ts), with its decimal strings and times turned back. */
export function toInvoice(r: InvoiceRow, detail: InvoiceDetail): Invoice {
  const {
    id: _id,
    amount,
    creditedAmount,
    expiresAt,
    checkoutUrl,
    createdAt,
    paidAt,
    ...asInApi
  } = invoiceView(r, undefined);
  return {
    ...asInApi,
    amount: BigInt(amount),
    creditedAmount: BigInt(creditedAmount),
    expiresAt: date(expiresAt),
    checkoutPath: checkoutUrl,
    createdAt: new Date(createdAt),
    paidAt: date(paidAt),
    ...detail,
  };
}
