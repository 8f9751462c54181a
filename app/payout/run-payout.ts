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
import { Signature } from '../types';
import { buildAttemptTransaction } from './build-attempt';
import { PayoutChain, SignatureStatus } from './chain';
import { compareTerms, decideAttempt, TermsMismatch } from './decide';
import { lockPayout } from './lock';
import { payoutMetrics } from './metrics';
import { OpAccount } from './program';
import {
  AttemptRow,
  FINAL_STATES,
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
}

/** What running a payout on a connection that already holds its lock needs (the worker pool's claims). */
export type RunLockedDeps = Omit<RunPayoutDeps, 'db' | 'lock' | 'lockTimeoutMs'>;

/** A payout row and its attempts, as last read or written. */
interface Journal {
  p: PayoutRow;
  attempts: AttemptRow[];
}

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

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(aborted());
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(aborted());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function aborted(): OncepayError {
  return new OncepayError(
    PAYOUT_CODES.ABORTED,
    'payout execution aborted; the journal keeps every attempt, run it again or `oncepay payout resume`',
  );
}

const OPEN = new Set(['built', 'sent']);

/**
 * Execute (or finish executing) one payout. Returns the final result, or null when `lock: 'skip'` and another
 * worker holds the row. Network failures are retried until `signal` aborts; they never decide an outcome.
 */
export async function runPayout(row: Pick<PayoutRow, 'id'>, deps: RunPayoutDeps): Promise<PayoutResult | null> {
  const lock = await lockPayout(deps.db, row.id, deps.lock ?? 'wait', deps.lockTimeoutMs);
  if (!lock) return null;
  try {
    return await runPayoutLocked(lock.client, row.id, deps);
  } finally {
    await lock.release();
  }
}

/** A chain call failed (timeout, 429, dropped connection): it decides nothing. */
class ChainCallFailed extends Error {}

/**
 * The chain, with every failure marked as a chain failure, so the loop below retries exactly those and lets
 * everything else through: a database error (the connection that holds the lock is gone: stop at once), an
 * OncepayError, a bug.
 */
function markedChain(chain: PayoutChain): PayoutChain {
  const mark = (e: unknown) => {
    throw e instanceof OncepayError ? e : new ChainCallFailed((e as Error)?.message ?? String(e));
  };
  return {
    latestBlockhash: () => chain.latestBlockhash().catch(mark),
    sendRawTransaction: (bytes) => chain.sendRawTransaction(bytes),
    signatureStatuses: (sigs) => chain.signatureStatuses(sigs).catch(mark),
    blockhashExpired: (l) => chain.blockhashExpired(l).catch(mark),
    getOpAccount: (pda, program, commitment) => chain.getOpAccount(pda, program, commitment).catch(mark),
    opAccountSignatures: (pda) => chain.opAccountSignatures(pda).catch(mark),
  };
}

/**
 * Run a payout on `db`, a connection that holds the payout's advisory lock: every query of the payout goes
 * through it (see lock.ts). Throws on a database error (the lock may be gone with the connection), on abort, and
 * after `maxChainFailures` chain failures in a row; the journal is consistent at every one of those points.
 */
export async function runPayoutLocked(
  db: PoolClient,
  id: string,
  runDeps: RunLockedDeps,
  claimed?: PayoutRow,
): Promise<PayoutResult> {
  const deps: LockedDeps = { ...runDeps, db, chain: markedChain(runDeps.chain) };
  const log = (deps.log ?? logger('payout')).child({ payout: id });
  const maxChainFailures = deps.maxChainFailures ?? Infinity;
  let chainFailures = 0;
  const m = payoutMetrics();
  const poll = deps.pollIntervalMs ?? 400;
  const rebroadcast = deps.rebroadcastIntervalMs ?? 2000;
  const lastSend = new Map<string, number>(); // attempt id → monotonic ms of our last send (pacing only, never a key)
  const unsent = new Set<string>(); // attempts this run signed and has not handed to a node yet
  let reopened = false;

  // The row and its journal, re-read after every change we make. While only polling, nothing changes them: we
  // hold the row's lock, so no other worker writes to it.
  // `claimed`: the row as the claim read it, under the lock we hold since; a pending row has no attempt yet
  // (insertAttempt moves it to executing in the same statement).
  let loaded: Journal | undefined =
    claimed?.id === id && claimed.state === 'pending' ? { p: claimed, attempts: [] } : undefined;
  // A bookkeeping write in flight on our connection (markAttemptSent): the connection runs it before any later
  // query; awaited before the next read or write of ours, so its failure stops the run there.
  let writing: Promise<void> | undefined;
  for (;;) {
    if (deps.signal?.aborted) throw aborted();
    if (writing) {
      await writing;
      writing = undefined;
    }
    if (!loaded) {
      const row = await getPayout(deps.db, id);
      if (!row) throw new OncepayError(PAYOUT_CODES.NOT_FOUND, `payout ${id} not found`, { id });
      loaded = { p: row, attempts: await listAttempts(deps.db, id) };
    }
    const p = loaded.p;
    let attempts = loaded.attempts;
    if (FINAL_STATES.includes(p.state)) {
      if (p.state === 'failed' && deps.retryFailed && !reopened) {
        reopened = await reopenFailedPayout(deps.db, id);
        loaded = undefined;
        continue;
      }
      return payoutResult(p, attempts.length);
    }

    try {
      const open = attempts.filter((a) => OPEN.has(a.status));
      if (open.length === 0) {
        // Before signing anything new, the op account is the final word: an earlier attempt (ours, or another
        // journal's) may have executed. Read at finalized: absent there means absent on every fork. (The
        // blockhash is fetched alongside; it is only used if the op account is absent.)
        const [op, lifetime] = await Promise.all([
          deps.chain.getOpAccount(p.opPda, p.programId, 'finalized'),
          deps.chain.latestBlockhash(),
        ]);
        if (op) {
          await settleFromOp(p, op, attempts, deps, log);
          loaded = undefined;
          continue;
        }
        const a = await signAttempt(p, lifetime, deps);
        m.attempts.inc({ outcome: 'built' });
        log.info(
          { attempt: a.attemptNo, signature: a.signature, lastValidBlockHeight: a.lastValidBlockHeight.toString() },
          'attempt persisted',
        );
        failpoint('payout.after_persist_before_send');
        // What insertAttempt wrote; no need to read it back.
        loaded = { p: { ...p, state: 'executing' }, attempts: [...attempts, a] };
        unsent.add(a.id);
        continue;
      }

      // An attempt this run signed and has not sent yet cannot be on chain (it was persisted under our lock a
      // moment ago) and its blockhash is fresh: rule 3 says send, without asking the node first. (Were it
      // expired after all, sending the same bytes again is harmless: they can no longer land.)
      const statuses = open.every((a) => unsent.has(a.id))
        ? open.map((): SignatureStatus => ({ found: false }))
        : await deps.chain.signatureStatuses(open.map((a) => a.signature));
      let settled = false;
      let known: Journal | undefined; // what we wrote, when it need not be read back
      for (let i = 0; i < open.length && !settled; i++) {
        const a = open[i];
        const status = statuses[i];
        // Expiry is only worth a call when we would act on it: not found, and not just sent by us.
        const last = lastSend.get(a.id);
        const sentRecently = a.status === 'sent' && last !== undefined && performance.now() - last < rebroadcast;
        const expired =
          status.found || sentRecently ? undefined : unsent.has(a.id) ? false : await deps.chain.blockhashExpired(a);
        const step = decideAttempt({ status, expired, sentRecently });
        switch (step.kind) {
          case 'landed': {
            const done = await finishLanded(deps.db, p.id, a.id, { signature: a.signature, slot: step.slot });
            m.attempts.inc({ outcome: 'landed' });
            if (done) {
              finished({ state: 'succeeded', signature: a.signature, slot: step.slot }, log);
              // The row as it is now (final); the journal has the same attempts, one of them settled.
              known = { p: done, attempts };
            }
            settled = true;
            break;
          }
          case 'consumed': {
            await settleAttempt(deps.db, a.id, {
              status: 'failed',
              slot: step.slot,
              error: 'OperationAlreadyConsumed',
            });
            m.attempts.inc({ outcome: 'consumed' });
            log.warn(
              { attempt: a.attemptNo, signature: a.signature },
              'attempt found the op already consumed: looking up the winner',
            );
            // We saw the error at `confirmed`; the creating transaction is at least as old, so read at confirmed.
            const op = await waitForOpAccount(p, deps, poll);
            attempts = await listAttempts(deps.db, id);
            await settleFromOp(p, op, attempts, deps, log);
            settled = true;
            break;
          }
          case 'failed':
            await settleAttempt(deps.db, a.id, { status: 'failed', slot: step.slot, error: step.error });
            m.attempts.inc({ outcome: 'failed' });
            // Atomic transaction: nothing moved. Another attempt could still be open; only fail when none is.
            if (open.length === 1) await finish(p, { state: 'failed', error: step.error }, deps, log);
            settled = true;
            break;
          case 'wait':
            break;
          case 'send': {
            lastSend.set(a.id, performance.now());
            unsent.delete(a.id);
            const kind = a.sendCount === 0 && last === undefined ? 'first' : 'rebroadcast';
            try {
              await deps.chain.sendRawTransaction(a.txBytes);
              m.sends.inc({ kind, outcome: 'ok' });
            } catch (e) {
              // The node may have executed it anyway (lost response): keep going, the status tells.
              m.sends.inc({ kind, outcome: 'error' });
              log.warn({ attempt: a.attemptNo, err: (e as Error).message }, 'send failed; delivery unknown');
            }
            failpoint('payout.after_send_before_record');
            // Not awaited here: the look at the chain after the pause does not depend on it.
            writing = markAttemptSent(deps.db, a.id);
            writing.catch(() => undefined); // handled where it is awaited
            a.status = 'sent'; // what markAttemptSent wrote (status only ever moves built → sent here)
            a.sendCount += 1;
            break;
          }
          case 'check_op': {
            const op = await deps.chain.getOpAccount(p.opPda, p.programId, 'finalized');
            if (op) {
              log.info({ attempt: a.attemptNo }, 'blockhash expired but the op account exists: executed earlier');
              await settleFromOp(p, op, attempts, deps, log);
            } else {
              await settleAttempt(deps.db, a.id, { status: 'expired' });
              m.attempts.inc({ outcome: 'expired' });
              log.info(
                { attempt: a.attemptNo, signature: a.signature },
                'attempt expired unlanded and the op account is absent at finalized',
              );
            }
            settled = true;
            break;
          }
        }
      }
      chainFailures = 0;
      if (settled) {
        loaded = known;
        continue;
      }
    } catch (e) {
      loaded = undefined;
      if (!(e instanceof ChainCallFailed)) throw e;
      // RPC trouble (timeouts, 429s, dropped connections): it decides nothing. Look again after a pause.
      chainFailures += 1;
      if (chainFailures >= maxChainFailures) {
        throw new OncepayError(
          PAYOUT_CODES.CHAIN_UNAVAILABLE,
          `${chainFailures} chain calls in a row failed (last: ${e.message}); the journal keeps every attempt`,
          { id },
        );
      }
      log.warn({ err: e.message }, 'chain call failed; retrying');
    }
    await sleep(poll, deps.signal);
  }
}

async function signAttempt(
  p: PayoutRow,
  lifetime: { blockhash: string; lastValidBlockHeight: bigint },
  deps: LockedDeps,
): Promise<AttemptRow> {
  const { bytes, signature } = buildAttemptTransaction(p, { authority: deps.authority, payer: deps.payer }, lifetime);
  return insertAttempt(deps.db, { payoutId: p.id, signature, ...lifetime, txBytes: bytes });
}

async function waitForOpAccount(p: PayoutRow, deps: LockedDeps, poll: number): Promise<OpAccount> {
  for (;;) {
    const op = await deps.chain.getOpAccount(p.opPda, p.programId, 'confirmed').catch((e) => {
      if (e instanceof ChainCallFailed) return null;
      throw e;
    });
    if (op) return op;
    await sleep(poll, deps.signal);
  }
}

/**
 * The op account exists: the operation executed. Name the attempt that did it (ours first, else the op
 * account's own history), and finish — `conflict` when the account records other terms than this row.
 */
async function settleFromOp(
  p: PayoutRow,
  op: OpAccount,
  attempts: AttemptRow[],
  deps: LockedDeps,
  log: Logger,
): Promise<void> {
  const mismatches: TermsMismatch[] = compareTerms(
    { opId: p.opId, merchant: p.merchantAddress, recipient: p.recipient, mint: p.mint, amount: p.amount },
    op,
  );
  let winner: { signature: Signature; slot: bigint } | undefined;
  if (attempts.length > 0) {
    const statuses = await deps.chain.signatureStatuses(attempts.map((a) => a.signature));
    const i = statuses.findIndex((s) => s.found && s.settled && s.err === null);
    if (i >= 0) winner = { signature: attempts[i].signature, slot: (statuses[i] as { slot: bigint }).slot };
  }
  if (!winner) {
    // Not among our attempts as far as this node's status cache knows: ask the op account's own history.
    const history = await deps.chain.opAccountSignatures(p.opPda).catch((e) => {
      if (e instanceof ChainCallFailed) return [];
      throw e;
    });
    winner = history.find((h) => h.err === null && h.slot === op.slot) ?? history.find((h) => h.err === null);
  }
  for (const a of attempts) {
    if (a.signature === winner?.signature) {
      await settleAttempt(deps.db, a.id, { status: 'landed', slot: winner.slot });
    } else if (OPEN.has(a.status)) {
      // Can no longer move money: the op is consumed (if it ever lands it fails with 6000).
      await settleAttempt(deps.db, a.id, {
        status: 'failed',
        error: `superseded: op already executed${winner ? ` by ${winner.signature}` : ''}`,
      });
    }
  }
  if (mismatches.length > 0) {
    log.error({ mismatches, opPda: p.opPda }, 'op account records other terms than this payout row: conflict');
    await finish(
      p,
      {
        state: 'conflict',
        signature: winner?.signature ?? null,
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
      },
      deps,
      log,
    );
    return;
  }
  await finish(p, { state: 'succeeded', signature: winner?.signature ?? null, slot: op.slot }, deps, log);
}

async function finish(p: PayoutRow, r: PayoutOutcome, deps: LockedDeps, log: Logger): Promise<void> {
  if (await finishPayout(deps.db, p.id, r)) finished(r, log);
}

function finished(r: PayoutOutcome, log: Logger): void {
  payoutMetrics().payouts.inc({ state: r.state });
  if (r.state === 'conflict') payoutMetrics().conflicts.inc();
  log.info({ state: r.state, signature: r.signature, slot: r.slot?.toString() }, 'payout finished');
}
