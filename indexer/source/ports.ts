// What the sources need from the rest of the indexer, as narrow interfaces: the ledger (one transaction per
// batch) and a metrics sink. Tests and the CLI pass the real ones.
import type { ApplyBatchInput, ApplyBatchResult } from '../ledger/types';
import { OncepayError, SOURCE_CODES } from '../../common/errors';

export interface LedgerPort {
  applyBatch(input: ApplyBatchInput): Promise<ApplyBatchResult>;
  getCheckpoint(cluster: string, source: ApplyBatchInput['source']): Promise<bigint | number | string | null>;
}

export interface SourceMetrics {
  /** oncepay_checkpoint_lag_slots{cluster,source}: target slot − checkpoint. */
  setCheckpointLag(cluster: string, source: string, slots: number): void;
  /** oncepay_rpc_errors_total{kind}: one per failed RPC attempt. */
  countRpcError(kind: string): void;
  /** Slots a pass read, by outcome ('block' | 'skipped' | 'failed'). */
  countSlots(cluster: string, source: string, outcome: 'block' | 'skipped' | 'failed', n: number): void;
  /** Webhook deliveries by result ('applied' | 'duplicate' | 'dead_letter' | 'unauthorized' | …). */
  countWebhook(provider: string, result: string): void;
  /** oncepay_balance_mismatch_total{cluster,source}: transactions refused because their transfers disagree with their token balances. */
  countBalanceMismatch(cluster: string, source: string): void;
}

export const NO_METRICS: SourceMetrics = {
  setCheckpointLag() {},
  countRpcError() {},
  countSlots() {},
  countWebhook() {},
  countBalanceMismatch() {},
};

export function toSlotNumber(x: bigint | number | string | null): number | null {
  if (x === null || x === undefined) return null;
  const n = Number(x);
  if (!Number.isSafeInteger(n) || n < 0) throw new OncepayError(SOURCE_CODES.INVALID_CHECKPOINT, String(x));
  return n;
}
