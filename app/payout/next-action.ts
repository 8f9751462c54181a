// nextAction(row, attempts, observation): the payout journal's rules as one pure function. From the payout row,
// its attempts and what this run has observed of the chain so far, it names the one thing to do next: an
// observation to make (look, check_expiry, read an op account…), a write to make (sign, settle…), a send, a pause
// or the end. No I/O and no clock here: run-payout.ts performs the action, records what it saw or wrote, and asks
// again. The numbered rules are app/README.md's "The rules"; decideAttempt (decide.ts) is rules 2–4 for one attempt.
import { AttemptRow, FINAL_STATES, PayoutOutcome, PayoutRow } from './store';
import { SignatureStatus } from './chain';
import { OpAccount } from './program';
import { compareTerms, decideAttempt, TermsMismatch } from './decide';
import { Signature } from '../types';
import { TransactionError } from '@solana/web3.js';

/** A recent blockhash and the last block height at which a transaction using it can land. */
export interface Lifetime {
  blockhash: string;
  lastValidBlockHeight: bigint;
}

/** The attempt that executed the op (created the op account), when one could be named. */
export interface Winner {
  signature: Signature;
  slot: bigint;
}

/**
 * One look at the op account, and why it was read: `before_signing` (rule 1, at finalized, with a fresh blockhash),
 * `expired` (rule 4, at finalized, after the blockhash of `attemptId` expired unlanded), `winner` (rule 2, at
 * confirmed, after an attempt landed with OperationAlreadyConsumed).
 */
export type OpLook =
  | { read: 'before_signing'; account: OpAccount | null; lifetime: Lifetime }
  | { read: 'expired'; account: OpAccount | null; attemptId: string }
  | { read: 'winner'; account: OpAccount | null };

/**
 * What this run knows beyond the journal. A **round** is one look at the chain: it starts empty after every write
 * that settles something and after every pause, so a decision never rests on a stale status.
 */
export interface Observation {
  /** Monotonic milliseconds (performance.now()), only to pace rebroadcasts. */
  now: number;
  /** Between two sends of the same bytes while the blockhash is valid. */
  rebroadcastMs: number;
  /** Re-open a payout whose last attempt failed with a program error (an operator's explicit decision)… */
  retryFailed: boolean;
  /** …once per run. */
  reopened: boolean;
  /** Attempts this run signed and persisted and has not handed to a node yet. */
  unsent: ReadonlySet<string>;
  /** When this run last sent each attempt (monotonic ms; pacing only, never a key). */
  lastSend: ReadonlyMap<string, number>;
  /**
   * An attempt of this run landed with OperationAlreadyConsumed: the op executed, and we saw it at confirmed.
   * Until the op account shows up (at confirmed), nothing else is done: no attempt is signed over it.
   */
  awaitingWinner: boolean;
  round: Round;
}

/** What this round has observed of the chain. */
export interface Round {
  /** Statuses of the open attempts (by attempt id), when looked at this round. */
  statuses?: ReadonlyMap<string, SignatureStatus>;
  /** Whether the finalized block height is past each attempt's lastValidBlockHeight (by attempt id). */
  expired: ReadonlyMap<string, boolean>;
  op?: OpLook;
  /** A recent blockhash read for a payout's first attempt (rule 1: nothing of its own can be on chain yet). */
  lifetime?: Lifetime;
  /** Once the op account is present: who executed it (null: no attempt or history entry could be named). */
  winner?: Winner | null;
  /** Attempts sent this round: each is looked at again only in the next round. */
  sent: ReadonlySet<string>;
}

export const emptyRound = (): Round => ({ expired: new Map(), sent: new Set() });

/** A write that settles an attempt, as settleAttempt takes it. */
export type AttemptSettlement =
  { attempt: AttemptRow; status: 'landed'; slot: bigint } | { attempt: AttemptRow; status: 'failed'; error: string };

export type Action =
  /** The payout is final: return it. */
  | { kind: 'done' }
  /** A failed payout, and the operator asked to retry it: back to executing (once per run). */
  | { kind: 'reopen' }
  /**
   * Rule 1: no attempt is open (and one was journaled before). Read the op account at finalized and a blockhash,
   * side by side.
   */
  | { kind: 'read_op_before_signing' }
  /** Rule 1, the payout's first attempt: no attempt was ever journaled, so only a blockhash is needed. */
  | { kind: 'read_blockhash' }
  /**
   * Rule 1: the first attempt, or no attempt open and the op account absent at finalized: sign with this blockhash,
   * persist, then send.
   */
  | { kind: 'sign'; lifetime: Lifetime }
  /** Read the statuses of the open attempts. */
  | { kind: 'look'; attempts: AttemptRow[] }
  /** Not found and not just sent: is the attempt's blockhash expired at finalized? */
  | { kind: 'check_expiry'; attempt: AttemptRow }
  /** Rule 3: hand the same bytes to a node (again). */
  | { kind: 'send'; attempt: AttemptRow; first: boolean }
  /** Rule 2: landed without error; the attempt and the payout settle together. */
  | { kind: 'settle_landed'; attempt: AttemptRow; slot: bigint }
  /** Rule 2: landed with OperationAlreadyConsumed: another attempt won; settle this one, then find the winner. */
  | { kind: 'settle_consumed'; attempt: AttemptRow; slot: bigint }
  /** Landed with another error: nothing moved. The payout fails only if no other attempt is open. */
  | { kind: 'settle_failed'; attempt: AttemptRow; slot: bigint; error: string; failPayout: boolean }
  /**
   * Landed with Unauthorized and no other attempt is open: nothing moved and the signer, not the payout, is wrong.
   * Settle the attempt and hand the payout back (still due, never failed) for a worker holding the merchant's
   * payout authority; rule 1 signs its next attempt.
   */
  | { kind: 'hand_back_unauthorized'; attempt: AttemptRow; slot: bigint; error: string }
  /** Rule 4: not found after expiry: read the op account at finalized. */
  | { kind: 'read_expired_op'; attempt: AttemptRow }
  /** Rule 4: expired unlanded and the op account absent at finalized: the attempt is expired. */
  | { kind: 'settle_expired'; attempt: AttemptRow }
  /** Rule 2: after OperationAlreadyConsumed, read the op account at confirmed. */
  | { kind: 'read_winner_op' }
  /** The op account exists: name the attempt that created it (our statuses, else the account's history). */
  | { kind: 'find_winner'; op: OpAccount }
  /** The op account exists and its winner is named (or not): settle the open attempts and finish (rule 5). */
  | {
      kind: 'settle_from_op';
      op: OpAccount;
      attempts: AttemptSettlement[];
      outcome: PayoutOutcome;
      mismatches: TermsMismatch[];
    }
  /** Nothing to do until the chain moves: pause, then a new round. */
  | { kind: 'wait' };

/** The actions that only read the chain: each fills in one part of this round's observation, and the round goes on. */
export const LOOK_ACTION_KINDS = [
  'read_op_before_signing',
  'read_blockhash',
  'look',
  'check_expiry',
  'read_expired_op',
  'read_winner_op',
  'find_winner',
] as const satisfies ReadonlyArray<Action['kind']>;
export type LookAction = Extract<Action, { kind: (typeof LOOK_ACTION_KINDS)[number] }>;
export const isLookAction = (a: Action): a is LookAction => (LOOK_ACTION_KINDS as readonly string[]).includes(a.kind);

/** An attempt that may still land: built (journaled, maybe sent) or sent, not settled. */
export const isOpenAttempt = (a: AttemptRow): boolean => a.status === 'built' || a.status === 'sent';

export function nextAction(p: PayoutRow, attempts: readonly AttemptRow[], o: Observation): Action {
  if (FINAL_STATES.includes(p.state)) {
    return p.state === 'failed' && o.retryFailed && !o.reopened ? { kind: 'reopen' } : { kind: 'done' };
  }
  const r = o.round;

  // The op account exists: the operation executed (by one of our attempts or another journal's). Whatever else
  // is open can no longer move money (it would fail with 6000).
  if (r.op?.account) {
    if (r.winner === undefined) return { kind: 'find_winner', op: r.op.account };
    return settleFromOp(p, attempts, r.op.account, r.winner);
  }
  if (o.awaitingWinner) return r.op?.read === 'winner' ? { kind: 'wait' } : { kind: 'read_winner_op' };

  if (attempts.length === 0) {
    // Rule 1, first attempt: nothing was ever signed for this payout (every attempt is journaled before it is
    // sent), so no attempt of ours can be on chain, and the op account can only exist if another journal ran the
    // same op id (a restored backup, a second deployment). The op PDA guards that case on chain: the attempt
    // fails with OperationAlreadyConsumed, moves nothing, and rule 2 reads the op account. A read here would
    // only spare that one fee, at the price of a finalized read before every payout.
    if (!r.lifetime) return { kind: 'read_blockhash' };
    return { kind: 'sign', lifetime: r.lifetime };
  }
  const open = attempts.filter(isOpenAttempt);
  if (open.length === 0) {
    // Rule 1, a later attempt: before signing anything new, the op account is the final word: an earlier attempt
    // (ours, or another journal's) may have executed. Read at finalized: absent there means absent on every fork.
    if (r.op?.read !== 'before_signing') return { kind: 'read_op_before_signing' };
    const { lifetime } = r.op;
    // Never the same bytes under a new attempt number: a blockhash an attempt of this payout already used (a
    // shared one, or a lagging node's) waits for a newer one.
    if (attempts.some((a) => a.blockhash === lifetime.blockhash)) return { kind: 'wait' };
    return { kind: 'sign', lifetime };
  }

  // An attempt this run signed and has not sent yet cannot be on chain (it was persisted under our lock a moment
  // ago) and its blockhash is fresh: rule 3 says send, without asking the node first. (Were it expired after all,
  // sending the same bytes again is harmless: they can no longer land.)
  // An attempt sent this round is looked at only in the next round (its status now would be set aside below), so
  // a round that sent every open attempt it did not just sign waits without a look.
  const toLook = open.some((a) => !o.unsent.has(a.id) && !r.sent.has(a.id));
  if (!r.statuses && toLook) return { kind: 'look', attempts: open };

  for (const a of open) {
    if (r.sent.has(a.id)) continue;
    const status: SignatureStatus = r.statuses?.get(a.id) ?? { found: false };
    const last = o.lastSend.get(a.id);
    const sentRecently = a.status === 'sent' && last !== undefined && o.now - last < o.rebroadcastMs;
    // Expiry is only worth a call when we would act on it: not found, and not just sent by us.
    let expired: boolean | undefined;
    if (!status.found && !sentRecently) {
      expired = o.unsent.has(a.id) ? false : r.expired.get(a.id);
      if (expired === undefined) return { kind: 'check_expiry', attempt: a };
    }
    const step = decideAttempt({ status, expired, sentRecently });
    switch (step.kind) {
      case 'landed':
        return { kind: 'settle_landed', attempt: a, slot: step.slot };
      case 'consumed':
        return { kind: 'settle_consumed', attempt: a, slot: step.slot };
      case 'failed':
        // Atomic transaction: nothing moved. Another attempt could still be open; only fail when none is.
        return { kind: 'settle_failed', attempt: a, slot: step.slot, error: step.error, failPayout: open.length === 1 };
      case 'unauthorized':
        // Nothing moved either, but a wrong signer never fails the payout: with another attempt open, that one
        // decides; with none, the payout goes back to the queue.
        if (open.length === 1)
          return { kind: 'hand_back_unauthorized', attempt: a, slot: step.slot, error: step.error };
        return { kind: 'settle_failed', attempt: a, slot: step.slot, error: step.error, failPayout: false };
      case 'send':
        return { kind: 'send', attempt: a, first: a.sendCount === 0 && last === undefined };
      case 'check_op':
        // (The op account, had it been present, was handled above.)
        if (r.op?.read === 'expired' && r.op.attemptId === a.id) return { kind: 'settle_expired', attempt: a };
        return { kind: 'read_expired_op', attempt: a };
      case 'wait':
        break;
    }
  }
  return { kind: 'wait' };
}

/**
 * Rules 2 and 5 once the op account exists: the named winner lands, every other open attempt is superseded, and
 * the payout finishes — `conflict` when the account records other terms than this row (flagged, never "fixed").
 */
function settleFromOp(p: PayoutRow, attempts: readonly AttemptRow[], op: OpAccount, winner: Winner | null): Action {
  const mismatches = compareTerms(
    { opId: p.opId, merchant: p.merchantAddress, recipient: p.recipientToken, mint: p.mint, amount: p.amount },
    op,
  );
  const settle: AttemptSettlement[] = [];
  for (const a of attempts) {
    if (!isOpenAttempt(a)) continue; // an attempt already settled keeps its first outcome
    if (a.signature === winner?.signature) settle.push({ attempt: a, status: 'landed', slot: winner.slot });
    // Can no longer move money: the op is consumed (if it ever lands it fails with 6000).
    else
      settle.push({
        attempt: a,
        status: 'failed',
        error: `superseded: op already executed${winner ? ` by ${winner.signature}` : ''}`,
      });
  }
  const signature = winner?.signature ?? null;
  const outcome: PayoutOutcome =
    mismatches.length === 0
      ? { state: 'succeeded', signature, slot: op.slot }
      : {
          state: 'conflict',
          signature,
          slot: op.slot,
          conflict: {
            mismatches,
            opAccount: {
              opId: op.opId,
              merchant: op.merchant,
              recipient: op.recipient,
              mint: op.mint,
              amount: op.amount.toString(),
              slot: op.slot.toString(),
            },
          },
          error: 'the op account records other terms than this row',
        };
  return { kind: 'settle_from_op', op, attempts: settle, outcome, mismatches };
}

/** Among our attempts (statuses in the same order), the one found settled without error. */
export function winnerAmongAttempts(
  attempts: readonly AttemptRow[],
  statuses: readonly SignatureStatus[],
): Winner | null {
  for (let i = 0; i < attempts.length; i++) {
    const s = statuses[i];
    if (s?.found && s.settled && s.err === null) return { signature: attempts[i].signature, slot: s.slot };
  }
  return null;
}

/**
 * Not among our attempts as far as the node's status cache knows: the op account's own history names it — the
 * successful transaction in the op account's creation slot, else the first successful one.
 */
export function winnerInHistory(
  history: ReadonlyArray<{ signature: Signature; slot: bigint; err: TransactionError | null }>,
  op: OpAccount,
): Winner | null {
  const h = history.find((x) => x.err === null && x.slot === op.slot) ?? history.find((x) => x.err === null);
  return h ? { signature: h.signature, slot: h.slot } : null;
}
