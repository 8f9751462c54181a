// Pure decisions of the chain verifier (webhook-verifier.ts): what the chain's answer for a hinted signature means,
// and what happens to the hint next. No I/O, no clock: the database says whether a hint has expired.
import { isOncepayError } from '../../common/errors';
import { DECODE_CODES } from '../../common/errors/codes';
import type { Receipt } from '../decode/receipt';
import { backoffDelay, type BackoffPolicy } from '../../common/backoff';
import { afterFailure } from '../../db/queue/policy';
import type { SignatureStatus } from '../rpc/client';

/** What `getTransaction` at finalized said about a signature. */
export type ChainAnswer =
  | { kind: 'not_found' }
  /** The node has it, but not finalized yet: it is real and close, so it is looked at again soon (no backoff). */
  | { kind: 'not_final'; confirmationStatus: string }
  | { kind: 'rpc_error'; message: string }
  | { kind: 'failed_on_chain'; err: unknown }
  /** The chain has it, but the decoder refuses its transaction (e.g. a balance mismatch): never credited. */
  | { kind: 'refused'; code: string; message: string }
  | { kind: 'confirmed'; receipts: Receipt[] };

/** Why a hint was dropped: the `reason` label of oncepay_webhook_provisional_dropped_total. */
export const DROP_REASONS = ['not_found', 'rpc_error', 'failed_on_chain', 'balance_mismatch', 'malformed'] as const;
export type DropReason = (typeof DROP_REASONS)[number];

export type HintStep =
  | { action: 'credit'; receipts: Receipt[] }
  | { action: 'recheck'; delayMs: number; lastError: string }
  | { action: 'drop'; reason: DropReason; detail: string };

/** The waits between a hint's checks: baseMs before the second, doubling per check (with jitter) up to capMs. */
export type RecheckPolicy = BackoffPolicy;

export const DEFAULT_RECHECK: RecheckPolicy = { baseMs: 1_000, capMs: 60_000 };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * What a getSignatureStatuses entry (searchTransactionHistory) says about a hinted signature, before any
 * getTransaction: unknown to the node, seen but not final, failed at finalized, or `fetch` — finalized without error,
 * the only case worth a getTransaction. So a flood of made-up signatures costs one status call per 256 of them.
 */
export function classifyStatus(s: SignatureStatus | null): ChainAnswer | { kind: 'fetch' } {
  if (s === null) return { kind: 'not_found' };
  if (s.confirmationStatus !== 'finalized') return { kind: 'not_final', confirmationStatus: s.confirmationStatus };
  if (s.err !== null && s.err !== undefined) return { kind: 'failed_on_chain', err: s.err };
  return { kind: 'fetch' };
}

/** Classify a getTransaction result (null = not found at that commitment) with the given decoder. */
export function classifyChainAnswer(
  tx: Record<string, unknown> | null,
  decode: (tx: unknown) => Receipt[],
): ChainAnswer {
  if (tx === null) return { kind: 'not_found' };
  const meta = tx.meta;
  if (
    isRecord(meta) &&
    ((meta.err !== null && meta.err !== undefined) || (isRecord(meta.status) && meta.status.Err !== undefined))
  ) {
    return { kind: 'failed_on_chain', err: meta.err ?? meta.status };
  }
  try {
    return { kind: 'confirmed', receipts: decode(tx) };
  } catch (e) {
    if (isOncepayError(e)) return { kind: 'refused', code: e.code, message: e.message };
    throw e;
  }
}

/**
 * The next step for a hint after its `checks`-th check (1 = the first) got `answer`. Confirmed → credit; refuted
 * (failed, refused) → drop now; not (yet) seen or the RPC failing → check again later with capped exponential
 * backoff and jitter, until the hint has expired, then drop with what was last seen.
 */
export function nextHintStep(
  hint: { checks: number; expired: boolean },
  answer: ChainAnswer,
  policy: RecheckPolicy,
  random: number,
): HintStep {
  switch (answer.kind) {
    case 'confirmed':
      return { action: 'credit', receipts: answer.receipts };
    case 'failed_on_chain':
      return {
        action: 'drop',
        reason: 'failed_on_chain',
        detail: `the transaction failed on chain: ${JSON.stringify(answer.err)}`,
      };
    case 'refused':
      return {
        action: 'drop',
        reason: answer.code === DECODE_CODES.BALANCE_MISMATCH ? 'balance_mismatch' : 'malformed',
        detail: answer.message,
      };
    case 'not_final': {
      const lastError = `seen ${answer.confirmationStatus}, not finalized yet`;
      if (hint.expired) return { action: 'drop', reason: 'not_found', detail: `${lastError} when it expired` };
      // Real and about to be final: looked at again after the first step of the backoff, not a doubled one.
      return { action: 'recheck', delayMs: backoffDelay(1, policy, random), lastError };
    }
    case 'not_found':
    case 'rpc_error': {
      const lastError = answer.kind === 'not_found' ? 'not found at finalized' : answer.message;
      // The hints queue's policy (db/queue): retried with backoff, dropped once past its own expiry.
      const next = afterFailure(
        { backoff: policy, deadLetter: { after: 'age' } },
        { attempts: hint.checks, expired: hint.expired },
        random,
      );
      if (next.next === 'dead') return { action: 'drop', reason: answer.kind, detail: lastError };
      return { action: 'recheck', delayMs: next.delayMs, lastError };
    }
  }
}

/** What a delivery's own transaction claims, in a canonical form (stored with the hint, compared with the chain's). */
export interface ClaimedTransfer {
  ixIndex: number;
  innerIndex: number;
  mint: string | null;
  destination: string;
  amount: string;
}

export function claimOf(receipts: readonly Receipt[]): ClaimedTransfer[] {
  return receipts
    .map((r) => ({
      ixIndex: r.ixIndex,
      innerIndex: r.innerIndex,
      mint: r.mint,
      destination: r.destination,
      amount: r.amount.toString(),
    }))
    .sort((a, b) => a.ixIndex - b.ixIndex || a.innerIndex - b.innerIndex);
}

/** Where the delivery's claim and the chain's transaction disagree (null: they agree). */
export function claimDisagreement(claimed: readonly ClaimedTransfer[], chain: readonly Receipt[]): string | null {
  const truth = claimOf(chain);
  if (claimed.length !== truth.length)
    return `the delivery claims ${claimed.length} transfer(s), the chain has ${truth.length}`;
  for (let i = 0; i < truth.length; i++) {
    const a = claimed[i];
    const b = truth[i];
    for (const k of ['ixIndex', 'innerIndex', 'mint', 'destination', 'amount'] as const) {
      if (a[k] !== b[k])
        return `transfer ${b.ixIndex}/${b.innerIndex}: the delivery says ${k} ${String(a[k])}, the chain ${String(b[k])}`;
    }
  }
  return null;
}
