// The shapes of exceptions and their settlement (no I/O, no database types: the SDK's public surface uses them).
import type { ExceptionKind } from '../../indexer/match/types';

export type { ExceptionKind };

/** open: nothing done yet · refunding: refund payout not finished · refunded: refund executed on-chain ·
 *  refund_failed: the refund payout failed (see its error; retry with `payout execute --retry-failed`) ·
 *  resolved: closed by an operator without moving money. */
export type ExceptionState = 'open' | 'refunding' | 'refunded' | 'refund_failed' | 'resolved';
export const EXCEPTION_STATES: readonly ExceptionState[] = [
  'open',
  'refunding',
  'refunded',
  'refund_failed',
  'resolved',
];

/** The receipt an exception keeps: where the money came from and went. */
export interface ExceptionReceipt {
  cluster: string;
  signature: string;
  ixIndex: number;
  innerIndex: number;
  slot: bigint | null;
  mint: string | null;
  /** The sender's token account (the refund goes back here unless the operator names another). */
  source: string;
  destination: string;
  destinationOwner: string | null;
}

export interface ExceptionRow {
  id: string;
  kind: ExceptionKind;
  invoiceId: string | null;
  amount: bigint;
  detail: string | null;
  createdAt: Date;
  receipt: ExceptionReceipt;
  state: ExceptionState;
  resolution: { kind: 'refund' | 'resolved'; payoutRowId: string | null; note: string | null; at: Date } | null;
}

export interface ExceptionFilter {
  kind?: ExceptionKind;
  invoiceId?: string;
  state?: ExceptionState;
}

/**
 * Whose exceptions: a registered merchant's (api_merchants id) are those whose money arrived in its vault, those
 * about its API invoices (paid to its receiving wallet), and those it refunded. Absent: every exception (an
 * operator of the whole deployment).
 */
export interface ExceptionScope {
  merchantId?: string;
  /**
   * Also the exceptions of no registered merchant (their money arrived in no registered vault, they are about no
   * API invoice, and nobody refunded them): a refund with `--merchant` names who pays those. Another merchant's stay
   * out of scope.
   */
  orUnowned?: boolean;
}

/** Count and sum (base units) of exceptions per state. */
export type ExceptionTotals = Record<ExceptionState, { count: number; amount: bigint }>;
