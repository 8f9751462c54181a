// What the slots of one payout worker pool share: its settings, its collaborators and its mutable state.
import { Pool } from 'pg';
import type { Logger } from 'pino';
import type { BackoffPolicy } from '../../../common/backoff';
import type { QueuePolicy } from '../../../db/queue';
import { PayoutExecutor } from '../executor';
import { PayoutMetrics } from '../metrics';
import { PayoutResult, RunLockedDeps } from '../run-payout';
import { MerchantSigners } from './merchant-signers';
import { Waker } from './waker';

/** What one step of a slot came to: it ran (or settled) a claim, found nothing, or met a database error. */
export type SlotStep = 'ran' | 'idle' | 'database_error';

/** The pool's mutable state, read and written by every slot and by stop(). */
export interface PoolState {
  /** stop() was called: no new claims. */
  stopping: boolean;
  /** Payouts being executed right now. */
  readonly inFlight: Set<string>;
  /** Payouts aborted by stop() after the grace period and handed back. */
  readonly handedBack: string[];
}

export interface PoolContext {
  db: Pool;
  /** Written to payouts.claimed_by. */
  name: string;
  log: Logger;
  metrics: PayoutMetrics;
  random: () => number;
  /** The payouts as a configuration of the queue mechanism (db/queue): the hand-back backoff. */
  policy: QueuePolicy;
  /** A slot's waits after database errors. */
  databaseBackoff: BackoffPolicy;
  executor: PayoutExecutor;
  /** What each run gets (its authority replaced by the payout's merchant's key). */
  runDeps: RunLockedDeps;
  onFinished?: (r: PayoutResult) => void;
  waker: Waker;
  /** The pause of a slot that found nothing (waker.ts). */
  idlePause: () => Promise<void>;
  signers: MerchantSigners;
  state: PoolState;
}
