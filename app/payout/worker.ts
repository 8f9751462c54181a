// The payout worker pool: `concurrency` slots; each takes a connection of its own, claims one due payout on it
// with one statement (FOR UPDATE SKIP LOCKED + the payout's advisory lock, queries.ts claimDuePayout), runs the
// journal on that same connection (runPayoutLocked), then claims the next payout on it with a statement that also
// unlocks the finished one (or unlocks it and gives the connection back when nothing is due). Any number of worker
// processes can share one database: a payout is held by exactly one connection at a time, and PostgreSQL frees
// it when that connection ends, however the worker ended.
//
// A worker claims only the payouts of the merchants whose on-chain payout authority is one of its keys
// (signers.ts: read at start, every `merchantsRefreshMs`, and at once after a refusal), so workers of several
// merchants share one database without touching each other's payouts.
//
// The worker is a scheduler around the journal rules (run-payout.ts), which it never bypasses:
// - chain unreachable for `maxChainFailures` calls in a row → the payout is handed back with a capped, jittered
//   backoff stored in the row (next_attempt_at, retries), so the slot serves other payouts meanwhile;
// - an attempt refused on chain as Unauthorized (the merchant rotated its payout authority since the last read)
//   → the payout is handed back the same way, never failed, and the worker stops claiming that merchant;
// - database trouble → the slot drops its connection (and with it the lock; the row stays due), backs off with
//   jitter in memory and tries again: the process never exits for it;
// - stop() (SIGTERM) → no new claims; payouts in flight get `graceMs` to finish, then are aborted at their next
//   pause and handed back (unlocked, still due). An attempt already sent stays in the journal as built/sent and
//   is resolved by the next claim with the same rules (found → settled; expired and op absent → re-signed).
//
// This file wires the pool; its parts are in worker/: slot.ts (a slot's loop and pauses), claim-and-run.ts (one
// claim and its run), held-payout.ts (the finished payout's lock a slot carries to its next claim), hand-back.ts
// (a run that ended unfinished), merchant-signers.ts (the merchants the keys sign for), waker.ts (how idle slots
// wait), pool-context.ts (what the slots share).
import * as os from 'os';
import { Keypair } from '@solana/web3.js';
import { Pool } from 'pg';
import { logger } from '../../common/log';
import { type BackoffPolicy } from '../../common/backoff';
import { PayoutResult, RunLockedDeps } from './run-payout';
import { fastExecutor, PayoutExecutor } from './executor';
import { listenForDuePayouts } from './due-listener';
import { payoutMetrics, watchOpenAttempts } from './metrics';
import { openAttemptStats } from './store';
import { startMerchantSigners } from './worker/merchant-signers';
import { PoolContext, PoolState } from './worker/pool-context';
import { runSlot } from './worker/slot';
import { createIdlePause, createWaker } from './worker/waker';

/** The waits of one retry loop (common/backoff.ts). */
export type Backoff = BackoffPolicy;

/** After a payout's claim ran out of chain calls: 1 s, 2 s, 4 s … up to 5 min, half of each step random. */
export const CHAIN_BACKOFF: Backoff = { baseMs: 1_000, capMs: 300_000 };
/** A slot after a database error: 200 ms, 400 ms … up to 10 s, half of each step random. */
export const DATABASE_BACKOFF: Backoff = { baseMs: 200, capMs: 10_000 };
/** Default of PayoutWorkerOptions.blockhashMaxAgeMs (and of `payout worker --blockhash-max-age-ms`). */
export const DEFAULT_BLOCKHASH_MAX_AGE_MS = 250;
/** Default of PayoutWorkerOptions.merchantsRefreshMs (and of `payout worker --merchants-refresh-ms`). */
export const DEFAULT_MERCHANTS_REFRESH_MS = 30_000;

export interface PayoutWorkerOptions extends Omit<RunLockedDeps, 'signal' | 'retryFailed' | 'authority'> {
  db: Pool;
  /**
   * The payout-authority keys this worker signs with (one or several). It claims only the payouts of the
   * registered merchants whose on-chain config names one of them, and signs each with that merchant's key.
   */
  authority: Keypair | readonly Keypair[];
  /** How often the merchants the keys sign for are read again from the registry and the chain (default 30 s). */
  merchantsRefreshMs?: number;
  /** Payouts executed at once by this process (each holds one connection of `db` while it runs). */
  concurrency: number;
  /**
   * Pause of the one idle slot that polls (default 250 ms; the other idle slots wait to be woken); a claim that
   * found work wakes another slot, and a new payout wakes one at once (LISTEN oncepay_payout_due, see
   * due-listener.ts), so this is the fallback.
   */
  idleMs?: number;
  /** Written to payouts.claimed_by (default host:pid). */
  name?: string;
  chainBackoff?: Backoff;
  databaseBackoff?: Backoff;
  /** Called with each payout this worker finished (succeeded, conflict or failed). */
  onFinished?: (r: PayoutResult) => void;
  random?: () => number;
  /**
   * Sign the attempts of every slot on one recent blockhash for this long (ms) before fetching another (default
   * 250; 0: one fetch per attempt). See shared-chain.ts: a lifetime shorter by at most this age, journaled as ever.
   */
  blockhashMaxAgeMs?: number;
  /** Who runs each claimed payout (executor.ts): the fast executor by default. */
  executor?: PayoutExecutor;
}

export interface DrainReport {
  /** Payouts still in flight when the grace period ended: aborted and handed back. */
  handedBack: string[];
}

export interface PayoutWorker {
  readonly name: string;
  /** Payouts being executed right now. */
  inFlight(): string[];
  /** The registered merchants (api_merchants ids) whose payouts it claims now: their payout authority is one of its keys. */
  merchants(): string[];
  /**
   * Stop claiming; let in-flight payouts finish for up to `graceMs`, then abort them at their next pause and
   * hand them back. Resolves when every slot has stopped (its connection returned to the pool).
   */
  stop(opts?: { graceMs?: number }): Promise<DrainReport>;
}

export function startPayoutWorker(opts: PayoutWorkerOptions): PayoutWorker {
  const name = opts.name ?? `${os.hostname()}:${process.pid}`;
  const log = (opts.log ?? logger('payout-worker')).child({ worker: name });
  const random = opts.random ?? Math.random;
  const idleMs = opts.idleMs ?? 250;
  const databaseBackoff = opts.databaseBackoff ?? DATABASE_BACKOFF;
  const abort = new AbortController();
  const waker = createWaker();
  const state: PoolState = { stopping: false, inFlight: new Set(), handedBack: [] };
  const keys: readonly Keypair[] = Array.isArray(opts.authority) ? opts.authority : [opts.authority as Keypair];
  const unwatch = watchOpenAttempts(() => openAttemptStats(opts.db));
  const wakeups = listenForDuePayouts(opts.db, () => waker.wakeOne(), log, databaseBackoff);

  const blockhashMaxAgeMs = opts.blockhashMaxAgeMs ?? DEFAULT_BLOCKHASH_MAX_AGE_MS;
  // The chain as the executor's slots share it: for the fast one, status looks and op-account reads merged into one
  // call while another is in flight, a pausing slot's signatures carried by the others' calls, a shared blockhash.
  const executor = opts.executor ?? fastExecutor;
  const { chain, pauseLooking } = executor.shareChain(opts.chain, { blockhashMaxAgeMs });
  const signers = startMerchantSigners({
    db: opts.db,
    chain: opts.chain,
    keys,
    refreshMs: opts.merchantsRefreshMs ?? DEFAULT_MERCHANTS_REFRESH_MS,
    backoff: databaseBackoff,
    random,
    log,
    onRead: () => waker.wakeAll(),
  });
  const ctx: PoolContext = {
    db: opts.db,
    name,
    log,
    metrics: payoutMetrics(),
    random,
    // The payouts as a configuration of the one queue mechanism (db/queue): one row a claim, held by this session's
    // advisory lock, deferred with the chain backoff; never dead-lettered (the executor's rules end a payout).
    policy: {
      queue: 'payouts',
      batch: 1,
      hold: { session: true },
      backoff: opts.chainBackoff ?? CHAIN_BACKOFF,
      deadLetter: { after: 'never', why: 'a payout ends succeeded, conflict or failed by its journal rules alone' },
    },
    databaseBackoff,
    executor,
    runDeps: {
      chain,
      pauseLooking,
      authority: keys[0], // replaced per payout by its merchant's key
      payer: opts.payer,
      pollIntervalMs: opts.pollIntervalMs,
      rebroadcastIntervalMs: opts.rebroadcastIntervalMs,
      maxChainFailures: opts.maxChainFailures ?? 10,
      signal: abort.signal,
      log: opts.log,
    },
    onFinished: opts.onFinished,
    waker,
    idlePause: createIdlePause(waker, idleMs),
    signers,
    state,
  };

  const concurrency = Math.max(1, Math.floor(opts.concurrency));
  const slots = Array.from({ length: concurrency }, () => runSlot(ctx));
  log.info(
    {
      concurrency,
      idleMs,
      blockhashMaxAgeMs,
      executor: executor.name,
      authorities: keys.map((k) => k.publicKey.toBase58()),
    },
    'payout worker started',
  );

  return {
    name,
    inFlight: () => [...state.inFlight],
    merchants: () => [...signers.current().byMerchant.keys()],
    async stop({ graceMs = 10_000 } = {}) {
      if (!state.stopping) {
        state.stopping = true;
        waker.wakeAll();
        log.info({ inFlight: [...state.inFlight], graceMs }, 'payout worker stopping: no new claims');
      }
      const refreshEnded = signers.stop(); // idempotent: resolves when the merchants refresh loop has ended
      const timer = setTimeout(() => abort.abort(), graceMs);
      try {
        await Promise.all([...slots, refreshEnded]);
      } finally {
        clearTimeout(timer);
        unwatch();
        await wakeups.stop();
      }
      log.info({ handedBack: state.handedBack }, 'payout worker stopped');
      return { handedBack: [...state.handedBack] };
    },
  };
}
