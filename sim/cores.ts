// The real pure code the model drives, as one object the model's processes call through: the payout journal's
// rules (nextAction, and decideAttempt inside it), the winner lookups, the matcher, the ledger's validation and
// dedup, the scanner's planning, the webhook hint's next step, the fulfilment id. A mutant (sim/mutants.ts)
// replaces one of them in memory with a known bug, so the simulation can show it catches it; nothing else in the
// model calls these functions directly.
//
// Two entries are the model's own and say so: `creditable` is the ledger's rule (what PostgreSQL inserted is what
// gets credited: ON CONFLICT DO NOTHING … RETURNING), which runs in SQL in the real ledger and is held to it by
// tests/sim/ledger-model.test.ts. The flags below it (`sendBeforeJournal`, `claimTakesLock`, `failedHistoryIsEmpty`,
// `deliveryKey`) are the shells' own rules (run-payout.ts, worker.ts, the outbox), seams only mutants turn.
import { nextAction, winnerAmongAttempts, winnerInHistory } from '../app/payout/next-action';
import { createMatcher, matchBatch } from '../indexer/match/match';
import { creditRows } from '../indexer/ledger/credits';
import { compareReceipts, partitionReceipts, uniqueReceipts } from '../indexer/ledger/validate';
import { fulfilmentOpId } from '../indexer/ledger/fulfilment';
import { chunks, planChunk, scanRange } from '../indexer/source/scan-plan';
import { classifyChainAnswer, nextHintStep } from '../indexer/source/webhook-hint-plan';
import type { Receipt } from '../indexer/decode/receipt';

export interface Cores {
  nextAction: typeof nextAction;
  winnerAmongAttempts: typeof winnerAmongAttempts;
  winnerInHistory: typeof winnerInHistory;
  matchBatch: typeof matchBatch;
  createMatcher: typeof createMatcher;
  creditRows: typeof creditRows;
  partitionReceipts: typeof partitionReceipts;
  uniqueReceipts: typeof uniqueReceipts;
  compareReceipts: typeof compareReceipts;
  fulfilmentOpId: typeof fulfilmentOpId;
  scanRange: typeof scanRange;
  planChunk: typeof planChunk;
  chunks: typeof chunks;
  nextHintStep: typeof nextHintStep;
  classifyChainAnswer: typeof classifyChainAnswer;
  /**
   * The ledger's rule: of a batch's distinct receipts, which are credited (matched, exceptions, fulfilment) — the
   * ones this transaction inserted, never one the unique constraint refused.
   */
  creditable(distinct: readonly Receipt[], inserted: readonly Receipt[]): readonly Receipt[];
  /**
   * The executor's order: an attempt is persisted before it is sent (run-payout.ts `sign`). Only a mutant sends
   * first: `send` then runs before `insertAttempt`.
   */
  sendBeforeJournal: boolean;
  /** The outbox's key for a delivery: the fulfilment id (the row's idempotency_key), the same on every attempt. */
  deliveryKey(row: { idempotencyKey: string; attempts: number }): string;
  /** One payout runs on the connection that holds its advisory lock (claimDuePayout): a second claim is refused. */
  claimTakesLock: boolean;
  /**
   * A failed read of the op account's history is a failed chain call (run-payout.ts `find_winner`). Only a mutant
   * reads it as an empty history — the bug this simulation found (CHANGELOG, Fixed).
   */
  failedHistoryIsEmpty: boolean;
}

export const REAL_CORES: Readonly<Cores> = Object.freeze({
  nextAction,
  winnerAmongAttempts,
  winnerInHistory,
  matchBatch,
  createMatcher,
  creditRows,
  partitionReceipts,
  uniqueReceipts,
  compareReceipts,
  fulfilmentOpId,
  scanRange,
  planChunk,
  chunks,
  nextHintStep,
  classifyChainAnswer,
  creditable: (_distinct: readonly Receipt[], inserted: readonly Receipt[]) => inserted,
  sendBeforeJournal: false,
  deliveryKey: (row: { idempotencyKey: string }) => row.idempotencyKey,
  claimTakesLock: true,
  failedHistoryIsEmpty: false,
});
