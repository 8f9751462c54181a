// The plain executor: the journal rules (next-action.ts, decide.ts) in their most readable form, for reading and for
// holding the fast executor (run-payout.ts) to the same journal suite. One payout, on the one connection that holds
// its lock: the journal is read again before every step, every write (a send's record too) is made before the next
// step, every chain call is its own (no merged calls, no shared blockhash) and a pause is a plain pause. Slower,
// never different: the same rules decide every step, and the same failpoints mark the same moments.
import { PoolClient } from 'pg';
import { Logger } from 'pino';
import { OncepayError } from '../../common/errors';
import { PAYOUT_CODES } from '../../common/errors/codes';
import { failpoint } from '../../common/failpoint';
import { logger } from '../../common/log';
import { buildAttemptTransaction } from './build-attempt';
import { PayoutChain, SignatureStatus } from './chain';
import { payoutMetrics } from './metrics';
import {
  Action,
  isLookAction,
  LookAction,
  nextAction,
  Observation,
  Round,
  winnerAmongAttempts,
  winnerInHistory,
} from './next-action';
import { aborted, ChainCallFailed, chainUnavailable, handBackUnauthorized, markedChain } from './run-control';
import { sleep } from '../../common/sleep';
import { PayoutResult, payoutResult, RunLockedDeps } from './run-payout';
import * as store from './store';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
/** This round's observations, filled in as nextAction asks for them. */
type LiveRound = Mutable<Round> & { expired: Map<string, boolean>; sent: Set<string> };
/** What the rules see besides the journal: this run's own doings, and this round. */
type Seen = Mutable<Omit<Observation, 'now'>> & {
  unsent: Set<string>;
  lastSend: Map<string, number>;
  round: LiveRound;
};
const newRound = (): LiveRound => ({ expired: new Map(), sent: new Set() });

interface Run {
  db: PoolClient;
  chain: PayoutChain;
  deps: RunLockedDeps;
  log: Logger;
  seen: Seen;
}

/** Runs payout `id` to a final state on `db`, a connection that holds its advisory lock (lock.ts). */
export async function runPlainPayoutLocked(db: PoolClient, id: string, deps: RunLockedDeps): Promise<PayoutResult> {
  const log = (deps.log ?? logger('payout')).child({ payout: id, executor: 'plain' });
  const poll = deps.pollIntervalMs ?? 400;
  const seen: Seen = {
    rebroadcastMs: deps.rebroadcastIntervalMs ?? 2000,
    retryFailed: deps.retryFailed ?? false,
    reopened: false,
    unsent: new Set(),
    lastSend: new Map(),
    awaitingWinner: false,
    round: newRound(),
  };
  const run: Run = { db, chain: markedChain(deps.chain), deps, log, seen };
  let failures = 0;
  for (;;) {
    if (deps.signal?.aborted) throw aborted();
    const p = await store.getPayout(db, id);
    if (!p) throw new OncepayError(PAYOUT_CODES.NOT_FOUND, `payout ${id} not found`, { id });
    const attempts = await store.listAttempts(db, id);
    const action = nextAction(p, attempts, { ...seen, now: performance.now() });
    if (action.kind === 'done') return payoutResult(p, attempts.length);
    try {
      const wrote =
        action.kind === 'wait'
          ? await sleep(poll, deps.signal, aborted).then(() => true)
          : await perform(run, p, attempts, action);
      failures = 0;
      if (!wrote) continue; // an observation: the round goes on
    } catch (e) {
      if (!(e instanceof ChainCallFailed)) throw e;
      if (++failures >= (deps.maxChainFailures ?? Infinity)) throw chainUnavailable(id, failures, e.reason);
      log.warn({ err: e.reason }, 'chain call failed; retrying');
      await sleep(poll, deps.signal, aborted);
    }
    seen.round = newRound(); // after a write that settled something, a pause, or a failed chain call
  }
}

/** Performs `action`: true when it wrote to the journal (a new round follows), false when it only observed. */
async function perform(r: Run, p: store.PayoutRow, attempts: store.AttemptRow[], action: Action): Promise<boolean> {
  const { db, chain, seen } = r;
  const { round } = seen;
  const m = payoutMetrics();
  const settle = async (a: store.AttemptRow, to: Parameters<typeof store.settleAttempt>[2], outcome: string) => {
    await store.settleAttempt(db, a.id, to);
    m.attempts.inc({ outcome });
  };
  const finish = async (outcome: store.PayoutOutcome) => {
    if (!(await store.finishPayout(db, p.id, outcome))) return; // final already
    m.payouts.inc({ state: outcome.state });
    if (outcome.state === 'conflict') m.conflicts.inc();
  };
  if (isLookAction(action)) {
    await observe(r, p, attempts, action);
    return false;
  }
  switch (action.kind) {
    case 'reopen':
      seen.reopened = true;
      await store.reopenFailedPayout(db, p.id);
      return true;
    case 'sign': {
      const signers = { authority: r.deps.authority, payer: r.deps.payer };
      const { bytes, signature } = buildAttemptTransaction(p, signers, action.lifetime);
      const a = await store.insertAttempt(db, { payoutId: p.id, signature, ...action.lifetime, txBytes: bytes });
      m.attempts.inc({ outcome: 'built' });
      failpoint('payout.after_persist_before_send');
      seen.unsent.add(a.id);
      return true;
    }
    case 'send': {
      const a = action.attempt;
      seen.lastSend.set(a.id, performance.now());
      seen.unsent.delete(a.id);
      round.sent.add(a.id);
      const kind = action.first ? 'first' : 'rebroadcast';
      // A failed send proves nothing (the node may have executed it): the status tells.
      const ok = await chain.sendRawTransaction(a.txBytes).then(
        () => true,
        () => false,
      );
      m.sends.inc({ kind, outcome: ok ? 'ok' : 'error' });
      failpoint('payout.after_send_before_record');
      await store.markAttemptSent(db, a.id);
      return false;
    }
    case 'settle_landed': {
      const { attempt: a, slot } = action;
      const done = await store.finishLanded(db, p.id, a.id, { signature: a.signature, slot });
      m.attempts.inc({ outcome: 'landed' });
      if (done) m.payouts.inc({ state: 'succeeded' });
      return true;
    }
    case 'settle_consumed':
      await settle(
        action.attempt,
        { status: 'failed', slot: action.slot, error: 'OperationAlreadyConsumed' },
        'consumed',
      );
      seen.awaitingWinner = true;
      return true;
    case 'settle_failed':
      await settle(action.attempt, { status: 'failed', slot: action.slot, error: action.error }, 'failed');
      if (action.failPayout) await finish({ state: 'failed', error: action.error });
      return true;
    case 'hand_back_unauthorized': {
      const settled = await store.settleAttempt(db, action.attempt.id, {
        status: 'failed',
        slot: action.slot,
        error: action.error,
      });
      m.attempts.inc({ outcome: 'unauthorized' });
      if (!settled) return true; // not as the journal said: read it again
      throw await handBackUnauthorized(db, p, action, r.deps.authority, r.log);
    }
    case 'settle_expired':
      await settle(action.attempt, { status: 'expired' }, 'expired');
      return true;
    case 'settle_from_op':
      if (action.mismatches.length > 0)
        r.log.error({ mismatches: action.mismatches, opPda: p.opPda }, 'op account records other terms: conflict');
      for (const s of action.attempts)
        await store.settleAttempt(db, s.attempt.id, s.status === 'landed' ? s : { status: s.status, error: s.error });
      seen.awaitingWinner = false;
      await finish(action.outcome);
      return true;
    case 'done':
    case 'wait':
      return false; // the loop's
  }
}

/** Observes what `action` asks for: fills in this round's observation (no write; the round goes on). */
async function observe(r: Run, p: store.PayoutRow, attempts: store.AttemptRow[], action: LookAction): Promise<void> {
  const { chain } = r;
  const { round } = r.seen;
  switch (action.kind) {
    case 'read_blockhash':
      round.lifetime = await chain.latestBlockhash();
      return;
    case 'read_op_before_signing': {
      const account = await chain.getOpAccount(p.opPda, p.programId, 'finalized');
      round.op = { read: 'before_signing', account, lifetime: await chain.latestBlockhash() };
      return;
    }
    case 'look': {
      const statuses: SignatureStatus[] = await chain.signatureStatuses(action.attempts.map((a) => a.signature));
      round.statuses = new Map(action.attempts.map((a, i) => [a.id, statuses[i]]));
      return;
    }
    case 'check_expiry':
      round.expired.set(action.attempt.id, await chain.blockhashExpired(action.attempt));
      return;
    case 'read_winner_op': {
      // At confirmed, where the 6000 was seen; until the account shows, look again after each pause.
      const account = await chain.getOpAccount(p.opPda, p.programId, 'confirmed').catch((e: unknown) => {
        if (e instanceof ChainCallFailed) return null;
        throw e;
      });
      round.op = { read: 'winner', account };
      return;
    }
    case 'read_expired_op': {
      const account = await chain.getOpAccount(p.opPda, p.programId, 'finalized');
      round.op = { read: 'expired', account, attemptId: action.attempt.id };
      return;
    }
    case 'find_winner': {
      // Among our attempts, else in the op account's history. A failed read of either is a failed chain call
      // (look again after a pause), never "no winner".
      const ours = winnerAmongAttempts(attempts, await chain.signatureStatuses(attempts.map((a) => a.signature)));
      round.winner = ours ?? winnerInHistory(await chain.opAccountSignatures(p.opPda), action.op);
      return;
    }
  }
}
