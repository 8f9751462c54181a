// A LedgerPort that takes every batch as new and stores nothing: for measuring or observing a source without
// PostgreSQL (bench/scan-throughput's attribution, the observed sink's pure tests). `onBatch` sees each batch.
import type { ApplyBatchInput, ApplyBatchResult } from '../indexer/ledger/types';
import type { LedgerPort } from '../indexer/source/ports';

export function acceptingLedger(onBatch?: (input: ApplyBatchInput) => void): LedgerPort {
  return {
    async applyBatch(input: ApplyBatchInput): Promise<ApplyBatchResult> {
      onBatch?.(input);
      return {
        inserted: input.receipts.length,
        duplicates: 0,
        credited: [],
        exceptions: [],
        fulfilled: [],
        rejected: [],
      };
    },
    getCheckpoint: async () => null,
  };
}
