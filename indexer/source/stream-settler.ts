// The gRPC stream's finalized-slot settler: a slot's receipts, held since their transactions arrived, go to the
// ledger with the (cluster, 'stream') checkpoint when that slot's own FINALIZED update arrives; confirmed slots below
// it that never got theirs are dropped; finalized slots with nothing to credit move the checkpoint at most once per
// `checkpointMs`, and on a flush.
import type { Receipt } from '../decode';
import type { SourceMetrics } from './ports';
import { STREAM_SOURCE } from './stream-options';
import type { createSubscriptionSink, SessionCounts } from './subscription-sink';

export interface StreamSettlerDeps {
  sink: Pick<ReturnType<typeof createSubscriptionSink>, 'apply'>;
  metrics: SourceMetrics;
  cluster: string;
  checkpointMs: number;
  /** The source's counters: the checkpoint written last. */
  stats: Pick<SessionCounts, 'checkpoint'>;
}

/** Receipts per confirmed slot of one session, waiting for that slot's FINALIZED update. */
export type PendingSlots = Map<number, Receipt[]>;

/** `receipts` held under `slot` until that slot is final. */
export function holdReceipts(pending: PendingSlots, slot: number, receipts: readonly Receipt[]): void {
  const list = pending.get(slot) ?? [];
  list.push(...receipts);
  pending.set(slot, list);
}

/** One per source: what it has not written yet outlives a session. */
export function createStreamSettler(d: StreamSettlerDeps) {
  /** A finalized slot with nothing to credit, not yet written: its checkpoint waits for the next write. */
  let unwritten: number | null = null;
  let lastWrite = 0;

  async function write(slot: number, receipts: Receipt[]): Promise<void> {
    await d.sink.apply(receipts, { slot, checkpoint: slot });
    lastWrite = Date.now();
    unwritten = null;
  }

  return {
    /** `slot` is final: its receipts (and the checkpoint) to the ledger; the slots at or below it leave `pending`. */
    async applyFinalized(slot: number, pending: PendingSlots): Promise<void> {
      const receipts = pending.get(slot) ?? [];
      // Confirmed slots below a finalized one that never got their own FINALIZED update were not on the finalized
      // fork: their receipts are dropped (their provisional rows settle as reversed).
      for (const s of [...pending.keys()]) if (s <= slot) pending.delete(s);
      d.metrics.countSlots(d.cluster, STREAM_SOURCE, 'block', 1);
      if (d.stats.checkpoint !== null && slot <= d.stats.checkpoint && receipts.length === 0) return;
      // Empty slots move the checkpoint at most once per checkpointMs (one ledger transaction per slot would fall
      // behind a fast chain); a checkpoint written late only means more duplicates after a restart, never a gap.
      if (receipts.length === 0 && Date.now() - lastWrite < d.checkpointMs) {
        unwritten = slot;
        return;
      }
      await write(slot, receipts);
    },
    /** Write the checkpoint of the empty slots seen since the last write (on a timer and before stopping). */
    async flush(): Promise<void> {
      if (unwritten !== null) await write(unwritten, []);
    },
  };
}

export type StreamSettler = ReturnType<typeof createStreamSettler>;
