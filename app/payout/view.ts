// The JSON shape of a payout with its attempts and on-chain proof, shared by the API and `oncepay payout show`.
// Amounts and slots are decimal strings; transaction bytes are base64.
import { AttemptRow, PayoutRow } from './store';

export interface AttemptView {
  attemptNo: number;
  signature: string;
  status: string;
  blockhash: string;
  lastValidBlockHeight: string;
  slot: string | null;
  error: string | null;
  sendCount: number;
  createdAt: string;
}

export interface PayoutView {
  id: string;
  payoutId: string;
  state: string;
  recipient: string;
  mint: string;
  amount: string;
  opId: string;
  opPda: string;
  programId: string;
  merchant: string;
  proof: { signature: string | null; slot: string | null; opPda: string } | null;
  conflict: unknown;
  error: string | null;
  attempts: AttemptView[];
  createdAt: string;
  finishedAt: string | null;
}

export function attemptView(a: AttemptRow): AttemptView {
  return {
    attemptNo: a.attemptNo,
    signature: a.signature,
    status: a.status,
    blockhash: a.blockhash,
    lastValidBlockHeight: a.lastValidBlockHeight.toString(),
    slot: a.slot === null ? null : a.slot.toString(),
    error: a.error,
    sendCount: a.sendCount,
    createdAt: a.createdAt.toISOString(),
  };
}

export function payoutView(p: PayoutRow, attempts: AttemptRow[]): PayoutView {
  const executed = p.state === 'succeeded' || p.state === 'conflict';
  return {
    id: p.id,
    payoutId: p.merchantPayoutId,
    state: p.state,
    recipient: p.recipientToken,
    mint: p.mint,
    amount: p.amount.toString(),
    opId: p.opId,
    opPda: p.opPda,
    programId: p.programId,
    merchant: p.merchantAddress,
    proof: executed
      ? { signature: p.resultSignature, slot: p.resultSlot === null ? null : p.resultSlot.toString(), opPda: p.opPda }
      : null,
    conflict: p.conflict ?? null,
    error: p.lastError,
    attempts: attempts.map(attemptView),
    createdAt: p.createdAt.toISOString(),
    finishedAt: p.finishedAt ? p.finishedAt.toISOString() : null,
  };
}
