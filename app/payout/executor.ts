// The payout executor's seam. What a payout's journal must do is decided by the pure rules (next-action.ts,
// decide.ts); an executor performs those decisions on the connection that holds the payout's lock (lock.ts). Two
// executors sit behind this one interface, and the same journal suite runs on both (tests/app/payout/localnet.test.ts):
// - `fast` (run-payout.ts, the default): the throughput machinery — the journal kept in memory between writes, the
//   `sent` mark deferred (deferred-sends.ts), a pause that rides on the status calls of the worker's other slots,
//   and in a worker pool the slots' chain calls shared (shared-chain.ts: merged status and op-account calls
//   (merged-call.ts), status pauses (status-pause.ts), one recent blockhash for a short while);
// - `plain` (plain-executor.ts): the rules in their most readable form — the journal read before every step, every
//   write made before the next step, every chain call its own, a plain pause.
import { PoolClient } from 'pg';
import { OncepayError } from '../../common/errors';
import { PAYOUT_CODES } from '../../common/errors/codes';
import { PayoutChain } from './chain';
import { runPlainPayoutLocked } from './plain-executor';
import { PayoutResult, RunLockedDeps, runPayoutLocked } from './run-payout';
import { shareChainCalls, SharedChain } from './shared-chain';
import { PayoutRow } from './store';

export const EXECUTOR_NAMES = ['fast', 'plain'] as const;
export type ExecutorName = (typeof EXECUTOR_NAMES)[number];

export interface PayoutExecutor {
  readonly name: ExecutorName;
  /**
   * Run payout `id` to a final state on `db`, a connection that holds its advisory lock (every query of the payout
   * goes through it). `claimed`: the row as the claim that took the lock read it. Throws on a database error, on
   * abort (PAYOUT_CODES.ABORTED) and after `deps.maxChainFailures` chain failures in a row (CHAIN_UNAVAILABLE); the
   * journal is consistent at each of those points.
   */
  runLocked(db: PoolClient, id: string, deps: RunLockedDeps, claimed?: PayoutRow): Promise<PayoutResult>;
  /** The chain as the slots of one worker process use it together (each slot runs one payout at a time). */
  shareChain(chain: PayoutChain, opts: { blockhashMaxAgeMs: number }): WorkerChain;
}

/** A worker's chain: what its slots call, and the pause between looks when it can ride on their calls. */
export interface WorkerChain {
  chain: PayoutChain;
  pauseLooking?: SharedChain['pauseLooking'];
}

export const fastExecutor: PayoutExecutor = {
  name: 'fast',
  runLocked: runPayoutLocked,
  shareChain(chain, opts) {
    const shared = shareChainCalls(chain, opts);
    return { chain: shared, pauseLooking: shared.pauseLooking };
  },
};

export const plainExecutor: PayoutExecutor = {
  name: 'plain',
  runLocked: (db, id, deps) => runPlainPayoutLocked(db, id, deps),
  shareChain: (chain) => ({ chain }),
};

/** The executor of that name (`--executor`), or OPTION_INVALID. */
export function executorNamed(name: string): PayoutExecutor {
  if (name === 'fast') return fastExecutor;
  if (name === 'plain') return plainExecutor;
  throw new OncepayError(PAYOUT_CODES.OPTION_INVALID, `--executor must be one of ${EXECUTOR_NAMES.join(', ')}`, {
    executor: name,
  });
}
