// runPayout(row, deps): a function of the durable payout row alone. Each signed transaction is persisted
// before it is sent; every outcome is read back from the chain. Safe to call again at any time, from any
// process, after any crash: it picks up from the journal (payout_attempts) and the op account.
import { Keypair } from '@solana/web3.js';
import { Pool, PoolClient } from 'pg';
import { Logger } from 'pino';
import { OncepayError } from '../../common/errors';
import { failpoint } from '../../common/failpoint';
import { logger } from '../../common/log';
import { PAYOUT_CODES } from '../../common/errors/codes';
import { buildAttemptTransaction } from './build-attempt';
import { PayoutChain, SignatureStatus } from './chain';
import { deferSends, DeferredSends } from './deferred-sends';
import type { PayoutExecutor } from './executor';
import { lockPayout } from './lock';
import { aborted, ChainCallFailed, chainUnavailable, handBackUnauthorized, markedChain } from './run-control';
import { sleep } from '../../common/sleep';
import { SharedChain } from './shared-chain';
import { payoutMetrics } from './metrics';
import {
  Action,
  isLookAction,
  isOpenAttempt,
  Lifetime,
  LookAction,
  nextAction,
  OpLook,
  Winner,
  winnerAmongAttempts,
  winnerInHistory,
} from './next-action';
import {
  AttemptRow,
  PayoutOutcome,
  PayoutRow,
  PayoutState,
  finishLanded,
  finishPayout,
  getPayout,
  insertAttempt,
  listAttempts,
  markAttemptSent,
  reopenFailedPayout,
  settleAttempt,
} from './store';

export interface RunPayoutDeps {
  db: Pool;
  chain: PayoutChain;
  /** The merchant's payout authority (signs every attempt). */
  authority: Keypair;
  /** Fee payer; defaults to the authority. */
  payer?: Keypair;
  log?: Logger;
  /** Between two looks at the chain. */
  pollIntervalMs?: number;
  /**
   * The pause between two looks when the chain is shared with other payouts (shared-chain.ts pauseLooking): it may
   * end early with the open attempts' statuses from a status call made meanwhile, which the next round's look
   * uses instead of asking again. Default: a plain pause of pollIntervalMs.
   */
  pauseLooking?: SharedChain['pauseLooking'];
  /** Between two sends of the same bytes while the blockhash is valid. */
  rebroadcastIntervalMs?: number;
  /** `wait` for another worker holding the row (default), or `skip` it (resume does). */
  lock?: 'wait' | 'skip';
  lockTimeoutMs?: number;
  /** Re-open a payout whose last attempt failed with a program error (an operator's explicit decision). */
  retryFailed?: boolean;
  signal?: AbortSignal;
  /**
   * Give up (ONCEPAY__PAYOUT__CHAIN_UNAVAILABLE) after this many chain calls in a row failed; the journal keeps
   * every attempt and the next run resolves them. Default: never (retry until `signal` aborts).
   */
  maxChainFailures?: number;
  /** Who performs the rules (executor.ts): this file's fast executor by default, or the plain one. */
  executor?: PayoutExecutor;
}

/** Between two sends of the same bytes while the blockhash is valid (RunPayoutDeps.rebroadcastIntervalMs). */
const DEFAULT_REBROADCAST_MS = 2000;

/** What running a payout on a connection that already holds its lock needs (the worker pool's claims). */
export type RunLockedDeps = Omit<RunPayoutDeps, 'db' | 'lock' | 'lockTimeoutMs'>;

/** Inside runPayoutLocked: the connection that holds the lock, and the chain with its failures marked. */
type LockedDeps = RunLockedDeps & { db: PoolClient };

export interface PayoutResult {
  id: string;
  payoutId: string;
  state: PayoutState;
  opId: string;
  opPda: string;
  signature: string | null;
  slot: string | null;
  attempts: number;
  conflict: unknown;
  error: string | null;
}

export function payoutResult(p: PayoutRow, attempts: number): PayoutResult {
  return {
    id: p.id,
    payoutId: p.merchantPayoutId,
    state: p.state,
    opId: p.opId,
    opPda: p.opPda,
    signature: p.resultSignature,
    slot: p.resultSlot === null ? null : p.resultSlot.toString(),
    attempts,
    conflict: p.conflict ?? null,
    error: p.lastError,
  };
}

/**
 * Execute (or finish executing) one payout. Returns the final result, or null when `lock: 'skip'` and another
 * worker holds the row. Network failures are retried until `signal` aborts; they never decide an outcome.
 */
export async function runPayout(row: Pick<PayoutRow, 'id'>, deps: RunPayoutDeps): Promise<PayoutResult | null> {
  const lock = await lockPayout(deps.db, row.id, deps.lock ?? 'wait', deps.lockTimeoutMs);
  if (!lock) return null;
  try {
    const run = deps.executor?.runLocked ?? runPayoutLocked;
    return await run(lock.client, row.id, deps);
  } finally {
    await lock.release();
  }
}

/**
 * Run a payout on `db`, a connection that holds the payout's advisory lock: every query of the payout goes
 * through it (see lock.ts). Throws on a database error (the lock may be gone with the connection), on abort, and
 * after `maxChainFailures` chain failures in a row; the journal is consistent at every one of those points.
 *
 * The loop: observe only what nextAction asks for, perform the one action it names, apply what the action saw
 * (to this round's observation) or wrote (to the in-memory journal: every write returns the rows it wrote), ask
 * again. The journal is read once: while we hold the lock nobody else writes to it; only a write that finds its
 * row not as we left it (someone wrote without the lock) makes us read it again.
 */
export async function runPayoutLocked(
  db: PoolClient,
  id: string,
  runDeps: RunLockedDeps,
  claimed?: PayoutRow,
): Promise<PayoutResult> {
  const deps: LockedDeps = { ...runDeps, db, chain: markedChain(runDeps.chain) };
  const log = (deps.log ?? logger('payout')).child({ payout: id });
  const run: RunState = {
    // `claimed`: the row as the claim read it, under the lock we hold since; a pending row has no attempt yet
    // (insertAttempt moves it to executing in the same statement).
    journal: claimed?.id === id && claimed.state === 'pending' ? { p: claimed, attempts: [] } : undefined,
    unsent: new Set(),
    lastSend: new Map(),
    reopened: false,
    awaitingWinner: false,
    sends: deferSends((attemptId, n) => markAttemptSent(db, attemptId, n)),
  };
  try {
    return await runRounds(run, id, deps, log);
  } catch (e) {
    // Aborted, or the chain unreachable: the connection is fine, so the sends not yet recorded are written now
    // (operators and the next claim see the attempt as sent). After a database error nothing more is tried.
    if (e instanceof OncepayError) await run.sends.record(() => true).catch(() => undefined);
    throw e;
  }
}

async function runRounds(run: RunState, id: string, deps: LockedDeps, log: Logger): Promise<PayoutResult> {
  const maxChainFailures = deps.maxChainFailures ?? Infinity;
  let chainFailures = 0;
  const poll = deps.pollIntervalMs ?? 400;
  const rebroadcastMs = deps.rebroadcastIntervalMs ?? DEFAULT_REBROADCAST_MS;
  /** Statuses a pause brought back: for the look of the round right after it only. */
  let seen: Seen | undefined;
  for (;;) {
    if (deps.signal?.aborted) throw aborted();
    await run.sends.written();
    run.journal ??= await readJournal(deps.db, id);
    let end: RoundEnd;
    try {
      end = await playRound(run, deps, log, rebroadcastMs, seen);
      chainFailures = 0;
    } catch (e) {
      if (!(e instanceof ChainCallFailed)) throw e;
      // RPC trouble (timeouts, 429s, dropped connections): it decides nothing. Look again after a pause.
      chainFailures += 1;
      if (chainFailures >= maxChainFailures) {
        throw chainUnavailable(id, chainFailures, e.reason);
      }
      log.warn({ err: e.reason }, 'chain call failed; retrying');
      end = 'pause';
    }
    seen = undefined;
    if (typeof end === 'object') return end;
    if (end === 'pause') {
      const now = performance.now();
      void run.sends.record((since) => now - since >= rebroadcastMs);
      seen = await pauseBetweenLooks(run, deps, poll);
    }
  }
}

/** Statuses by signature, as a status call answered them. */
type Seen = Map<string, SignatureStatus>;

/**
 * The pause after a round that waits for the chain. With deps.pauseLooking, the open attempts' signatures ride on
 * the status calls made meanwhile, and an answer ends the pause early: the next round's look, already taken.
 */
async function pauseBetweenLooks(run: RunState, deps: LockedDeps, poll: number): Promise<Seen | undefined> {
  const open = run.journal?.attempts.filter(isOpenAttempt) ?? [];
  if (!deps.pauseLooking || open.length === 0) {
    await sleep(poll, deps.signal, aborted);
    return undefined;
  }
  const signatures = open.map((a) => a.signature);
  const statuses = await deps.pauseLooking(signatures, poll, deps.signal);
  if (deps.signal?.aborted) throw aborted();
  return statuses && new Map(signatures.map((s, i) => [s, statuses[i]]));
}

/** A payout row and its attempts, as last read or written. */
interface Journal {
  p: PayoutRow;
  attempts: AttemptRow[];
}

/** What one run of a payout keeps between rounds. */
interface RunState {
  /** undefined: to be read (at the start, or after a write found its row not as we left it). */
  journal: Journal | undefined;
  unsent: Set<string>;
  lastSend: Map<string, number>;
  reopened: boolean;
  awaitingWinner: boolean;
  /** Sends not yet recorded in the journal: bookkeeping deferred (deferred-sends.ts). */
  sends: DeferredSends;
}

/** This round's observations (next-action.ts Round), as the loop fills them in. */
interface LiveRound {
  statuses?: Map<string, SignatureStatus>;
  expired: Map<string, boolean>;
  op?: OpLook;
  lifetime?: Lifetime;
  winner?: Winner | null;
  sent: Set<string>;
}

/** How a round ended: a new round at once (after a write), after a pause, or the payout's final result. */
type RoundEnd = 'next' | 'pause' | PayoutResult;

/** The journal with one attempt as it was just written (matched by id). */
function withAttempt(journal: Journal, written: AttemptRow): Journal {
  return { ...journal, attempts: journal.attempts.map((x) => (x.id === written.id ? written : x)) };
}

async function readJournal(db: PoolClient, id: string): Promise<Journal> {
  const row = await getPayout(db, id);
  if (!row) throw new OncepayError(PAYOUT_CODES.NOT_FOUND, `payout ${id} not found`, { id });
  return { p: row, attempts: await listAttempts(db, id) };
}

/** What the steps of one round share: the run, its dependencies, this round's observations. */
interface RoundContext {
  run: RunState;
  deps: LockedDeps;
  log: Logger;
  round: LiveRound;
  /** Statuses the pause before this round brought back (taken after it began). */
  seen: Seen | undefined;
}

/** One look at the chain and what follows from it, until a write settles something or nothing is left to do. */
async function playRound(
  run: RunState,
  deps: LockedDeps,
  log: Logger,
  rebroadcastMs: number,
  seen: Seen | undefined,
): Promise<RoundEnd> {
  const c: RoundContext = { run, deps, log, round: { expired: new Map(), sent: new Set() }, seen };
  for (;;) {
    if (!run.journal) return 'next';
    const { p, attempts } = run.journal;
    const action = nextAction(p, attempts, {
      now: performance.now(),
      rebroadcastMs,
      retryFailed: deps.retryFailed ?? false,
      reopened: run.reopened,
      unsent: run.unsent,
      lastSend: run.lastSend,
      awaitingWinner: run.awaitingWinner,
      round: c.round,
    });
    const end = await performAction(c, run.journal, action);
    if (end) return end;
  }
}

/** Perform the one action nextAction named; undefined: the round goes on (ask nextAction again). */
async function performAction(c: RoundContext, journal: Journal, action: Action): Promise<RoundEnd | undefined> {
  const { run, deps, log } = c;
  const { p, attempts } = journal;
  if (isLookAction(action)) {
    await lookAtChain(c, p, attempts, action);
    return undefined;
  }
  switch (action.kind) {
    case 'done':
      return payoutResult(p, attempts.length);
    case 'reopen': {
      run.reopened = true;
      const row = await reopenFailedPayout(deps.db, p.id);
      run.journal = row ? { p: row, attempts } : undefined;
      return 'next';
    }
    case 'sign':
      return signNewAttempt(c, journal, action.lifetime);
    case 'send':
      await sendAttempt(c, action.attempt, action.first);
      return undefined;
    case 'settle_landed':
      return settleLanded(c, journal, action.attempt, action.slot);
    case 'settle_consumed': {
      const a = action.attempt;
      await settle(c, a, { status: 'failed', slot: action.slot, error: 'OperationAlreadyConsumed' });
      payoutMetrics().attempts.inc({ outcome: 'consumed' });
      log.warn(
        { attempt: a.attemptNo, signature: a.signature },
        'attempt found the op already consumed: looking up the winner',
      );
      run.awaitingWinner = true;
      return 'next';
    }
    case 'settle_failed':
      await settle(c, action.attempt, { status: 'failed', slot: action.slot, error: action.error });
      payoutMetrics().attempts.inc({ outcome: 'failed' });
      // The attempt not as the journal said (settled by another writer): the next round reads it again and decides.
      if (action.failPayout && run.journal) await finish(c, { state: 'failed', error: action.error });
      return 'next';
    case 'hand_back_unauthorized':
      await settle(c, action.attempt, { status: 'failed', slot: action.slot, error: action.error });
      payoutMetrics().attempts.inc({ outcome: 'unauthorized' });
      if (!run.journal) return 'next';
      throw await handBackUnauthorized(deps.db, p, action, deps.authority, log);
    case 'settle_expired': {
      const a = action.attempt;
      await settle(c, a, { status: 'expired' });
      payoutMetrics().attempts.inc({ outcome: 'expired' });
      log.info(
        { attempt: a.attemptNo, signature: a.signature },
        'attempt expired unlanded and the op account is absent at finalized',
      );
      return 'next';
    }
    case 'settle_from_op':
      return settleFromOp(c, p, action);
    case 'wait':
      return 'pause';
  }
}

/** A look at the chain: what it saw goes into this round's observation. */
async function lookAtChain(c: RoundContext, p: PayoutRow, attempts: AttemptRow[], action: LookAction): Promise<void> {
  const { deps, log, round, seen } = c;
  switch (action.kind) {
    case 'read_op_before_signing': {
      // The blockhash is fetched alongside; it is only used if the op account is absent.
      const [account, lifetime] = await Promise.all([
        deps.chain.getOpAccount(p.opPda, p.programId, 'finalized'),
        deps.chain.latestBlockhash(),
      ]);
      round.op = { read: 'before_signing', account, lifetime };
      return;
    }
    case 'read_blockhash':
      round.lifetime = await deps.chain.latestBlockhash();
      return;
    case 'look': {
      // The pause before this round may have brought the statuses back already (taken after it began).
      const signatures = action.attempts.map((a) => a.signature);
      const statuses =
        seen && signatures.every((s) => seen.has(s))
          ? signatures.map((s) => seen.get(s)!)
          : await deps.chain.signatureStatuses(signatures);
      round.statuses = new Map(action.attempts.map((a, i) => [a.id, statuses[i]]));
      return;
    }
    case 'check_expiry':
      round.expired.set(action.attempt.id, await deps.chain.blockhashExpired(action.attempt));
      return;
    case 'read_winner_op':
      // We saw the error at `confirmed`; the creating transaction is at least as old, so read at confirmed.
      // Until it shows, look again after each pause (a failed read is only a later look).
      round.op = {
        read: 'winner',
        account: await deps.chain.getOpAccount(p.opPda, p.programId, 'confirmed').catch((e) => {
          if (e instanceof ChainCallFailed) return null;
          throw e;
        }),
      };
      return;
    case 'read_expired_op': {
      const account = await deps.chain.getOpAccount(p.opPda, p.programId, 'finalized');
      if (account) {
        log.info(
          { attempt: action.attempt.attemptNo },
          'blockhash expired but the op account exists: executed earlier',
        );
      }
      round.op = { read: 'expired', account, attemptId: action.attempt.id };
      return;
    }
    case 'find_winner': {
      let winner: Winner | null = null;
      if (attempts.length > 0) {
        winner = winnerAmongAttempts(attempts, await deps.chain.signatureStatuses(attempts.map((a) => a.signature)));
      }
      // Not among our attempts as far as this node's status cache knows: ask the op account's own history. A
      // failed read of it is a failed chain call (look again after a pause), never "no history": read as
      // empty, it settled the attempt that paid as superseded and the payout without its proof (sim/ found it).
      winner ??= winnerInHistory(await deps.chain.opAccountSignatures(p.opPda), action.op);
      round.winner = winner;
      return;
    }
  }
}

/** Sign a new attempt and persist it before anything sends it. */
async function signNewAttempt(c: RoundContext, journal: Journal, lifetime: Lifetime): Promise<RoundEnd> {
  const { p, attempts } = journal;
  const a = await signAttempt(p, lifetime, c.deps);
  payoutMetrics().attempts.inc({ outcome: 'built' });
  c.log.info(
    { attempt: a.attemptNo, signature: a.signature, lastValidBlockHeight: a.lastValidBlockHeight.toString() },
    'attempt persisted',
  );
  failpoint('payout.after_persist_before_send');
  // What insertAttempt wrote (the attempt, and the payout moved to executing); no need to read it back.
  c.run.journal = { p: { ...p, state: 'executing' }, attempts: [...attempts, a] };
  c.run.unsent.add(a.id);
  return 'next';
}

/** Send (or send again) a persisted attempt's bytes; a failed send decides nothing. */
async function sendAttempt(c: RoundContext, a: AttemptRow, first: boolean): Promise<void> {
  const { run, deps, log } = c;
  const m = payoutMetrics();
  run.lastSend.set(a.id, performance.now());
  run.unsent.delete(a.id);
  c.round.sent.add(a.id);
  const kind = first ? 'first' : 'rebroadcast';
  try {
    await deps.chain.sendRawTransaction(a.txBytes);
    m.sends.inc({ kind, outcome: 'ok' });
  } catch (e) {
    // The node may have executed it anyway (lost response): keep going, the status tells.
    m.sends.inc({ kind, outcome: 'error' });
    log.warn({ attempt: a.attemptNo, err: (e as Error).message }, 'send failed; delivery unknown');
  }
  failpoint('payout.after_send_before_record');
  // Recorded later (RunState.sends): the look at the chain after the pause does not depend on it.
  run.sends.sent(a.id, performance.now());
  // What markAttemptSent will write (status only ever moves built → sent here).
  const sent = { ...a, status: 'sent' as const, sendCount: a.sendCount + 1 };
  run.journal = withAttempt(run.journal!, sent);
}

/** Our attempt landed: the payout succeeded, and the attempt is marked landed, in one statement. */
async function settleLanded(c: RoundContext, journal: Journal, a: AttemptRow, slot: bigint): Promise<RoundEnd> {
  const { p, attempts } = journal;
  const sends = c.run.sends.take(a.id);
  const done = await finishLanded(c.deps.db, p.id, a.id, { signature: a.signature, slot }, sends);
  payoutMetrics().attempts.inc({ outcome: 'landed' });
  if (done) {
    finished({ state: 'succeeded', signature: a.signature, slot }, c.log);
    // What finishLanded wrote: the row (final) and the attempt landed, in one statement.
    const landed = { ...a, status: 'landed' as const, slot };
    c.run.journal = withAttempt({ p: done, attempts }, landed);
  } else c.run.journal = undefined;
  return 'next';
}

/** The op account exists and its winner is known: settle every open attempt by it, then the payout. */
async function settleFromOp(
  c: RoundContext,
  p: PayoutRow,
  action: Extract<Action, { kind: 'settle_from_op' }>,
): Promise<RoundEnd> {
  for (const s of action.attempts) {
    await settle(
      c,
      s.attempt,
      s.status === 'landed' ? { status: 'landed', slot: s.slot } : { status: 'failed', error: s.error },
    );
    if (!c.run.journal) return 'next';
  }
  if (action.mismatches.length > 0) {
    c.log.error(
      { mismatches: action.mismatches, opPda: p.opPda },
      'op account records other terms than this payout row: conflict',
    );
  }
  c.run.awaitingWinner = false;
  await finish(c, action.outcome);
  return 'next';
}

/** Apply a settled attempt as written; when it was not as we left it, the journal is read again. */
async function settle(c: RoundContext, a: AttemptRow, r: Parameters<typeof settleAttempt>[2]): Promise<void> {
  const row = await settleAttempt(c.deps.db, a.id, r, c.run.sends.take(a.id));
  if (!row) c.run.journal = undefined;
  else c.run.journal = withAttempt(c.run.journal!, row);
}

/** Write the payout's final state; when it was not as we left it, the journal is read again. */
async function finish(c: RoundContext, r: PayoutOutcome): Promise<void> {
  const row = await finishPayout(c.deps.db, c.run.journal!.p.id, r);
  if (row) finished(r, c.log);
  c.run.journal = row ? { ...c.run.journal!, p: row } : undefined;
}

async function signAttempt(p: PayoutRow, lifetime: Lifetime, deps: LockedDeps): Promise<AttemptRow> {
  const { bytes, signature } = buildAttemptTransaction(p, { authority: deps.authority, payer: deps.payer }, lifetime);
  return insertAttempt(deps.db, { payoutId: p.id, signature, ...lifetime, txBytes: bytes });
}

function finished(r: PayoutOutcome, log: Logger): void {
  payoutMetrics().payouts.inc({ state: r.state });
  if (r.state === 'conflict') payoutMetrics().conflicts.inc();
  log.info({ state: r.state, signature: r.signature, slot: r.slot?.toString() }, 'payout finished');
}
