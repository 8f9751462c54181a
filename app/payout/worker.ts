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
import * as os from 'os';
import { Keypair } from '@solana/web3.js';
import { Pool } from 'pg';
import { OncepayError } from '../../common/errors';
import { isDatabaseUnavailable } from '../../db/unavailable';
import { logger } from '../../common/log';
import { backoffDelay, type BackoffPolicy } from '../../common/backoff';
import { afterFailure, type QueuePolicy } from '../../db/queue';
import { ignoreAbort, sleep } from '../../common/sleep';
import { PAYOUT_CODES } from '../../common/errors/codes';
import { PayoutResult, RunLockedDeps } from './run-payout';
import { fastExecutor, PayoutExecutor } from './executor';
import { listenForDuePayouts } from './due-listener';
import { DedicatedConnection, checkoutDedicated, unlockPayout } from './lock';
import { isOpenAttempt } from './next-action';
import { payoutMetrics, watchOpenAttempts } from './metrics';
import { claimDuePayout, deferPayout, listAttempts, openAttemptStats } from './store';
import { NO_SIGNERS, readSigners, Signers } from './signers';

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

/** A pause that ends early when the worker wakes its slots (new work, or stop). */
function createWaker() {
  const sleepers = new Set<() => void>();
  return {
    /** Until woken, or `ms` have passed (undefined: until woken only). */
    sleep(ms?: number): Promise<void> {
      return new Promise((resolve) => {
        const done = () => {
          if (t) clearTimeout(t);
          sleepers.delete(done);
          resolve();
        };
        const t = ms === undefined ? undefined : setTimeout(done, ms);
        sleepers.add(done);
      });
    },
    wakeOne(): void {
      const first = sleepers.values().next();
      if (!first.done) first.value();
    },
    wakeAll(): void {
      for (const s of [...sleepers]) s();
    },
  };
}

type SlotStep = 'ran' | 'idle' | 'database_error';

export function startPayoutWorker(opts: PayoutWorkerOptions): PayoutWorker {
  const name = opts.name ?? `${os.hostname()}:${process.pid}`;
  const log = (opts.log ?? logger('payout-worker')).child({ worker: name });
  const m = payoutMetrics();
  const random = opts.random ?? Math.random;
  const idleMs = opts.idleMs ?? 250;
  // The payouts as a configuration of the one queue mechanism (db/queue): one row a claim, held by this session's
  // advisory lock, deferred with the chain backoff; never dead-lettered (the executor's rules end a payout).
  const policy: QueuePolicy = {
    queue: 'payouts',
    batch: 1,
    hold: { session: true },
    backoff: opts.chainBackoff ?? CHAIN_BACKOFF,
    deadLetter: { after: 'never', why: 'a payout ends succeeded, conflict or failed by its journal rules alone' },
  };
  const databaseBackoff = opts.databaseBackoff ?? DATABASE_BACKOFF;
  const abort = new AbortController();
  const waker = createWaker();
  const inFlight = new Set<string>();
  const handedBack: string[] = [];
  let stopping = false;
  const halt = new AbortController(); // ends the merchants refresh loop at stop()
  const keys: readonly Keypair[] = Array.isArray(opts.authority) ? opts.authority : [opts.authority as Keypair];
  const unwatch = watchOpenAttempts(() => openAttemptStats(opts.db));
  const wakeups = listenForDuePayouts(opts.db, () => waker.wakeOne(), log, databaseBackoff);

  const blockhashMaxAgeMs = opts.blockhashMaxAgeMs ?? DEFAULT_BLOCKHASH_MAX_AGE_MS;
  // The chain as the executor's slots share it: for the fast one, status looks and op-account reads merged into one
  // call while another is in flight, a pausing slot's signatures carried by the others' calls, a shared blockhash.
  const executor = opts.executor ?? fastExecutor;
  const { chain, pauseLooking } = executor.shareChain(opts.chain, { blockhashMaxAgeMs });
  const runDeps: RunLockedDeps = {
    chain,
    pauseLooking,
    authority: keys[0], // replaced per payout by its merchant's key
    payer: opts.payer,
    pollIntervalMs: opts.pollIntervalMs,
    rebroadcastIntervalMs: opts.rebroadcastIntervalMs,
    maxChainFailures: opts.maxChainFailures ?? 10,
    signal: abort.signal,
    log: opts.log,
  };

  /**
   * The merchants this worker's keys sign for (signers.ts). Until the first read succeeds it claims nothing; a read
   * that fails (database or chain away) keeps the last set and is retried with backoff.
   */
  let signers: Signers = NO_SIGNERS;
  let signersRead = false;
  let refreshing: Promise<void> | undefined;
  let refreshFailures = 0;
  const refreshMs = opts.merchantsRefreshMs ?? DEFAULT_MERCHANTS_REFRESH_MS;
  const signingSummary = (s: Signers) =>
    s.merchants.filter((x) => x.signable).map((x) => ({ id: x.id, name: x.name, merchant: x.merchant }));
  function refreshSigners(): Promise<void> {
    refreshing ??= readSigners(opts.db, opts.chain, keys)
      .then((next) => {
        refreshFailures = 0;
        const before = JSON.stringify(signingSummary(signers));
        const first = !signersRead;
        signers = next;
        signersRead = true;
        const signs = signingSummary(next);
        if (first || JSON.stringify(signs) !== before) {
          log.info(
            {
              signs,
              others: next.merchants.length - signs.length,
              authorities: keys.map((k) => k.publicKey.toBase58()),
            },
            'payout worker merchants: claims the payouts of these merchants only (their payout authority is one of its keys)',
          );
        }
        waker.wakeAll();
      })
      .catch((e: Error) => {
        refreshFailures += 1;
        log.warn({ err: e.message }, 'merchants not read (database or chain unavailable); keeping the last set');
      })
      .finally(() => (refreshing = undefined));
    return refreshing;
  }
  /** A refusal showed that `merchantId`'s payout authority is no longer ours: stop claiming it now, then re-read. */
  function forgetMerchant(merchantId: string): void {
    const byMerchant = new Map(signers.byMerchant);
    byMerchant.delete(merchantId);
    signers = { ...signers, byMerchant };
    void refreshSigners();
  }
  const refreshLoop = (async () => {
    while (!stopping) {
      await refreshSigners();
      const pause = refreshFailures === 0 ? refreshMs : backoffDelay(refreshFailures, databaseBackoff, random());
      await sleep(pause, halt.signal).catch(ignoreAbort);
    }
  })();

  /** Give the claimed payout back after trouble: not before a backoff, counted in the row. */
  async function defer(conn: DedicatedConnection, id: string, retries: number, why: string): Promise<void> {
    const next = afterFailure(policy, { attempts: retries + 1 }, random());
    const delayMs = next.next === 'retry' ? next.delayMs : policy.backoff.capMs;
    await deferPayout(conn.client, id, delayMs);
    log.warn({ payout: id, retries: retries + 1, delayMs, why }, 'payout handed back; retried after the backoff');
  }

  /**
   * A slot's connection after a payout finished: it still holds that payout's lock (its final state is committed),
   * and the slot's next claim on the same connection unlocks it in the claim's own statement.
   */
  interface Kept {
    conn: DedicatedConnection;
    finished: string;
  }

  /** Unlock the finished payout a slot kept and give its connection back (the slot stops or found nothing). */
  async function letGo(kept: Kept | undefined): Promise<void> {
    if (kept) await unlockPayout(kept.conn, kept.finished);
  }

  async function step(kept: Kept | undefined): Promise<{ step: SlotStep; kept?: Kept }> {
    if (stopping) {
      await letGo(kept);
      return { step: 'idle' };
    }
    const merchantIds = [...signers.byMerchant.keys()];
    // Nothing this worker may sign (yet): no claim, unless one is needed to unlock the payout a slot kept.
    if (merchantIds.length === 0 && !kept) return { step: 'idle' };
    let conn: DedicatedConnection;
    if (kept) {
      conn = kept.conn;
    } else {
      try {
        conn = await checkoutDedicated(opts.db);
      } catch (e) {
        m.claims.inc({ result: 'error' });
        log.warn({ err: (e as Error).message }, 'database unavailable (connect); backing off');
        return { step: 'database_error' };
      }
    }
    let claim: Awaited<ReturnType<typeof claimDuePayout>>;
    try {
      claim = await claimDuePayout(conn.client, name, merchantIds, kept?.finished);
    } catch (e) {
      conn.release(e as Error);
      m.claims.inc({ result: 'error' });
      log.warn({ err: (e as Error).message }, 'database unavailable (claim); backing off');
      return { step: 'database_error' };
    }
    if (!claim) {
      conn.release();
      m.claims.inc({ result: 'empty' });
      return { step: 'idle' };
    }
    const { row, locked } = claim;
    if (!locked) {
      // `oncepay payout execute` took the row's lock between our look at pg_locks and our try: it runs it.
      conn.release();
      m.claims.inc({ result: 'busy' });
      return { step: 'ran' };
    }
    const signer = signers.byMerchant.get(row.merchantId);
    if (stopping || !signer) {
      // stop() came while the claim was in flight (another slot may just have handed this very row back), or a
      // refusal took its merchant off this worker's list meanwhile: do not start it, and do not report it as handed
      // back — it was never run here. The next worker claims it.
      await unlockPayout(conn, row.id);
      return { step: 'idle' };
    }
    m.claims.inc({ result: 'claimed' });
    m.queue.claimed(1);
    waker.wakeOne(); // more may be due
    inFlight.add(row.id);
    try {
      const r = await executor.runLocked(conn.client, row.id, { ...runDeps, authority: signer }, row);
      opts.onFinished?.(r);
      m.queue.settled('done');
      // Final and committed: the lock goes with the next claim on this connection (or when the slot stops).
      return { step: 'ran', kept: { conn, finished: row.id } };
    } catch (e) {
      if (e instanceof OncepayError && e.code === PAYOUT_CODES.ABORTED) {
        m.handbacks.inc({ reason: 'drain' });
        m.queue.settled('released');
        handedBack.push(row.id);
        // Say what is left open, so nothing is abandoned silently: the next claim resolves it by the journal.
        const open = await listAttempts(conn.client, row.id).then(
          (as) =>
            as.filter(isOpenAttempt).map((a) => ({ attempt: a.attemptNo, signature: a.signature, status: a.status })),
          () => 'unknown (database unavailable)',
        );
        log.warn(
          { payout: row.id, open },
          'stopping: payout handed back unfinished; the next claim resolves it from the journal',
        );
        await unlockPayout(conn, row.id);
        return { step: 'ran' };
      }
      if (e instanceof OncepayError) {
        // The chain stayed unreachable, the merchant's payout authority is not ours (any more: it was rotated since
        // we read it; run-payout logged it), or something about this payout needs a pause (logged): other payouts
        // go on, and this one stays due for whichever worker can run it.
        if (e.code === PAYOUT_CODES.CHAIN_UNAVAILABLE) {
          m.handbacks.inc({ reason: 'chain_unavailable' });
        } else if (e.code === PAYOUT_CODES.SIGNER_UNAUTHORIZED) {
          m.handbacks.inc({ reason: 'unauthorized' });
          forgetMerchant(row.merchantId);
        } else {
          m.handbacks.inc({ reason: 'error' });
          log.error({ payout: row.id, err: e.message }, 'payout run failed');
        }
        try {
          await defer(conn, row.id, row.retries, e.message);
          m.queue.settled('retry');
          await unlockPayout(conn, row.id);
          return { step: 'ran' };
        } catch (dbErr) {
          conn.release(dbErr as Error);
          return { step: 'database_error' };
        }
      }
      // The database (or the connection holding the lock) failed, or something unexpected (a bug, a statement the
      // server refused): drop the connection, which frees the lock on the server if it is still alive; the row
      // stays due for any worker. Only an outage is reported as one; anything else is an error an operator must see.
      conn.release(e as Error);
      m.queue.settled('released');
      if (isDatabaseUnavailable(e)) {
        m.handbacks.inc({ reason: 'database' });
        log.warn(
          { payout: row.id, err: (e as Error).message },
          'database unavailable while running a payout; it stays due, backing off',
        );
      } else {
        m.handbacks.inc({ reason: 'unexpected' });
        log.error(
          { payout: row.id, err: (e as Error).message, stack: (e as Error).stack },
          'payout run failed with an unexpected error (not a database outage); it stays due, backing off',
        );
      }
      return { step: 'database_error' };
    } finally {
      inFlight.delete(row.id);
    }
  }

  /**
   * One idle slot at a time polls (claims again after `idleMs`); the other idle slots wait to be woken: by a new
   * payout (LISTEN), by a slot whose claim found work (more may be due: it wakes one, which polls in turn if it
   * finds nothing), or by stop(). An idle pool makes one claim per `idleMs`, not one per slot, and no payout that
   * comes due by time (a backoff ending) waits longer than with every slot polling.
   */
  let polling = false;
  async function idlePause(): Promise<void> {
    if (polling) return waker.sleep();
    polling = true;
    try {
      await waker.sleep(idleMs);
    } finally {
      polling = false;
    }
  }

  async function slot(): Promise<void> {
    let databaseErrors = 0;
    let kept: Kept | undefined;
    while (!stopping) {
      let s: SlotStep;
      try {
        ({ step: s, kept } = await step(kept));
      } catch (e) {
        // Not expected (every path above handles its errors); never let a slot die silently.
        log.error({ err: (e as Error).message }, 'payout worker slot failed; backing off');
        s = 'database_error';
        kept = undefined;
      }
      if (s === 'ran') {
        databaseErrors = 0;
      } else if (s === 'idle') {
        databaseErrors = 0;
        if (!stopping) await idlePause();
      } else {
        databaseErrors += 1;
        if (!stopping) await waker.sleep(backoffDelay(databaseErrors, databaseBackoff, random()));
      }
    }
    await letGo(kept);
  }

  const concurrency = Math.max(1, Math.floor(opts.concurrency));
  const slots = Array.from({ length: concurrency }, () => slot());
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
    inFlight: () => [...inFlight],
    merchants: () => [...signers.byMerchant.keys()],
    async stop({ graceMs = 10_000 } = {}) {
      if (!stopping) {
        stopping = true;
        halt.abort();
        waker.wakeAll();
        log.info({ inFlight: [...inFlight], graceMs }, 'payout worker stopping: no new claims');
      }
      const timer = setTimeout(() => abort.abort(), graceMs);
      try {
        await Promise.all([...slots, refreshLoop]);
      } finally {
        clearTimeout(timer);
        unwatch();
        await wakeups.stop();
      }
      log.info({ handedBack }, 'payout worker stopped');
      return { handedBack: [...handedBack] };
    },
  };
}
