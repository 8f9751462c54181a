// Pure scanner arithmetic: which slots a pass reads, and how far the checkpoint may move after a chunk of
// blocks. The checkpoint is the highest slot such that every slot up to it was processed; a slot that could
// not be fetched or decoded stops it just below that slot. No I/O here.

export interface ScanRangeInput {
  /** The scanner's checkpoint, or null before its first pass. */
  checkpoint: number | null;
  /** Where to start when there is no checkpoint yet (default: the target minus the re-scan window). */
  fromSlot?: number;
  /** The newest slot at the chosen commitment, as reported by the node. */
  target: number;
  /** Slots below the checkpoint read again each pass (blocks delivered late, a node that lagged). */
  rescanWindow: number;
  /** At most this many new slots per pass, so one pass stays short and commits often. */
  maxSlotsPerPass: number;
}

/** The inclusive slot range of one pass, or null when there is nothing new. */
export function scanRange(i: ScanRangeInput): { start: number; end: number } | null {
  if (i.checkpoint === null) {
    const start = i.fromSlot ?? Math.max(0, i.target - i.rescanWindow);
    if (start > i.target) return null;
    return { start, end: Math.min(i.target, start + i.maxSlotsPerPass - 1) };
  }
  if (i.target <= i.checkpoint) return null;
  const firstNew = i.checkpoint + 1;
  return { start: Math.max(0, firstNew - i.rescanWindow), end: Math.min(i.target, firstNew + i.maxSlotsPerPass - 1) };
}

export type SlotOutcome<R> =
  | { slot: number; status: 'ok'; receipts: R[] }
  | { slot: number; status: 'skipped' }
  | { slot: number; status: 'failed'; code: string; message: string };

export interface ChunkPlan<R> {
  receipts: R[];
  /** The checkpoint this chunk allows (every slot up to it processed). */
  checkpoint: number;
  /** The first slot that stopped the chunk, if any. */
  stoppedAt: { slot: number; code: string; message: string } | null;
  /** Failures below the previous checkpoint: read again in the re-scan window and failed, already processed once. */
  ignored: Array<{ slot: number; code: string; message: string }>;
  blocks: number;
  skipped: number;
}

/**
 * Plan one chunk of a pass. `outcomes` are the slots getBlocks listed in this chunk, ascending. `nextListed`
 * is the next slot getBlocks listed after the chunk (null if none): slots between are empty, so passing them
 * is safe. `end` is the pass's last slot. A failure at or below `previousCheckpoint` does not stop anything:
 * that slot was processed by an earlier pass and only the re-scan window read it again.
 */
export function planChunk<R>(
  outcomes: ReadonlyArray<SlotOutcome<R>>,
  opts: { nextListed: number | null; end: number; previousCheckpoint: number | null },
): ChunkPlan<R> {
  const receipts: R[] = [];
  const ignored: ChunkPlan<R>['ignored'] = [];
  let blocks = 0;
  let skipped = 0;
  for (const o of outcomes) {
    if (o.status === 'failed') {
      if (opts.previousCheckpoint !== null && o.slot <= opts.previousCheckpoint) {
        ignored.push({ slot: o.slot, code: o.code, message: o.message });
        continue;
      }
      return {
        receipts,
        checkpoint: o.slot - 1,
        stoppedAt: { slot: o.slot, code: o.code, message: o.message },
        ignored,
        blocks,
        skipped,
      };
    }
    if (o.status === 'skipped') skipped++;
    else {
      blocks++;
      receipts.push(...o.receipts);
    }
  }
  const checkpoint = opts.nextListed === null ? opts.end : opts.nextListed - 1;
  return { receipts, checkpoint, stoppedAt: null, ignored, blocks, skipped };
}

/** Split `items` into chunks of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
