// An exception as the CLI and the SDK show it: the receipt it keeps, how it was settled, and — for a refund — the
// refund payout with its on-chain proof. Amounts and slots stay bigint (the CLI prints them as decimal strings).
import { PayoutRow } from '../payout/queries';
import { ExceptionRow, ExceptionView, RefundView } from './types';

export function refundView(p: PayoutRow): RefundView {
  const executed = p.state === 'succeeded' || p.state === 'conflict';
  return {
    id: p.id,
    payoutId: p.payoutId,
    state: p.state,
    recipient: p.recipient,
    mint: p.mint,
    amount: p.amount,
    opPda: p.opPda,
    proof: executed ? { signature: p.resultSignature, slot: p.resultSlot, opPda: p.opPda } : null,
    error: p.lastError,
  };
}

export function exceptionView(e: ExceptionRow, refund: PayoutRow | null): ExceptionView {
  return {
    id: e.id,
    kind: e.kind,
    invoiceId: e.invoiceId,
    amount: e.amount,
    detail: e.detail,
    state: e.state,
    receipt: e.receipt,
    refund: refund ? refundView(refund) : null,
    note: e.resolution?.note ?? null,
    settledAt: e.resolution?.at ?? null,
    createdAt: e.createdAt,
  };
}
