// Pure rules of the attempt journal: what an observation of the chain means for one attempt and for the payout.
// No I/O here; next-action.ts applies them to the whole journal, run-payout.ts gathers the observations and writes.
import { customErrorCode, describeTransactionError, PROGRAM_ERRORS } from '../program/errors';
import { OpAccount } from './program';
import { SignatureStatus } from './chain';

export type AttemptStatus = 'built' | 'sent' | 'landed' | 'failed' | 'expired';

/** What to do next about one open attempt (status built or sent). */
export type AttemptStep =
  | { kind: 'landed'; slot: bigint }
  /** Landed with OperationAlreadyConsumed: another attempt executed this op_id. Read the op account. */
  | { kind: 'consumed'; slot: bigint }
  /**
   * Landed with Unauthorized: the signer is not the merchant's payout authority (a worker started with the wrong
   * key, or the authority was rotated). Nothing moved, and the payout is not at fault: hand it back.
   */
  | { kind: 'unauthorized'; slot: bigint; error: string }
  /** Landed with another error: this attempt changed nothing (transactions are atomic). */
  | { kind: 'failed'; slot: bigint; error: string }
  /** Seen but not settled yet: poll again, do not re-sign. */
  | { kind: 'wait' }
  /** Not found, blockhash still valid: (re)send the SAME bytes. */
  | { kind: 'send' }
  /** Not found and the blockhash expired at finalized: only the op account can tell what happened. */
  | { kind: 'check_op' };

/**
 * `expired`: whether the finalized block height is past the attempt's lastValidBlockHeight (undefined: not
 * asked). `sentRecently`: this process sent the bytes less than a rebroadcast interval ago.
 */
export function decideAttempt(obs: {
  status: SignatureStatus;
  expired: boolean | undefined;
  sentRecently?: boolean;
}): AttemptStep {
  const s = obs.status;
  if (s.found) {
    if (!s.settled) return { kind: 'wait' };
    if (s.err === null) return { kind: 'landed', slot: s.slot };
    const code = customErrorCode(s.err);
    if (code === PROGRAM_ERRORS.OperationAlreadyConsumed) return { kind: 'consumed', slot: s.slot };
    // Stored as the IDL names it, e.g. "MerchantPaused (6002)".
    const error = describeTransactionError(s.err);
    if (code === PROGRAM_ERRORS.Unauthorized) return { kind: 'unauthorized', slot: s.slot, error };
    return { kind: 'failed', slot: s.slot, error };
  }
  // A timeout, a dropped response or an expired blockhash alone never proves non-execution: only a finalized
  // height past lastValidBlockHeight followed by an absent op account does (see check_op).
  if (obs.expired === true) return { kind: 'check_op' };
  if (obs.sentRecently) return { kind: 'wait' };
  return { kind: 'send' };
}

/** The terms a payout row asks for, compared with what the op account records. */
export interface PayoutTerms {
  opId: string;
  merchant: string;
  recipient: string;
  mint: string;
  amount: bigint;
}

export interface TermsMismatch {
  field: 'opId' | 'merchant' | 'recipient' | 'mint' | 'amount';
  row: string;
  chain: string;
}

/** Empty when the op account records exactly this row's terms; otherwise every differing field. */
export function compareTerms(row: PayoutTerms, op: OpAccount): TermsMismatch[] {
  const out: TermsMismatch[] = [];
  const pairs: Array<[TermsMismatch['field'], string, string]> = [
    ['opId', row.opId, op.opId],
    ['merchant', row.merchant, op.merchant],
    ['recipient', row.recipient, op.recipient],
    ['mint', row.mint, op.mint],
    ['amount', row.amount.toString(), op.amount.toString()],
  ];
  for (const [field, a, b] of pairs) if (a !== b) out.push({ field, row: a, chain: b });
  return out;
}
