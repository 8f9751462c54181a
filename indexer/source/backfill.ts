// Backfill: read a fixed slot range through the same fetch → decode → ledger path as the scanner, with source
// 'backfill' and no checkpoint of its own (a range is a one-off job; rerunning it is harmless because the
// ledger inserts each receipt once). Safe beside a running scanner for the same reason. A slot it cannot
// process does not stop the rest: it is reported, and the run ends with BACKFILL_INCOMPLETE.
import type { Logger } from 'pino';
import { OncepayError } from '../../common/errors';
import { retryWhileDatabaseUnavailable } from '../database-retry';
import type { Receipt } from '../decode/receipt';
import { Commitment, RpcClient } from '../rpc';
import { DecodeBlockFn, readSlots } from './block-reader';
import { SOURCE_CODES } from '../../common/errors/codes';
import { LedgerPort, NO_METRICS, SourceMetrics } from './ports';
import { chunks } from './scan-plan';

export interface BackfillOptions {
  cluster: string;
  fromSlot: number;
  toSlot: number;
  commitment: Commitment;
  /** Slots listed per getBlocks call (nodes cap a range at 500 000). */
  listSpan: number;
  chunkSize: number;
  concurrency: number;
}

export interface BackfillProgress {
  /** Slots of the range covered so far. */
  done: number;
  total: number;
  blocks: number;
  receipts: number;
  inserted: number;
  duplicates: number;
  failed: number;
}

export interface BackfillResult extends BackfillProgress {
  failures: Array<{ slot: number; code: string; message: string }>;
  /** Set when the run was stopped (SIGTERM / SIGINT) before the end: run again from this slot to finish. */
  interrupted?: { resumeFromSlot: number };
}

export interface BackfillDeps {
  rpc: Pick<RpcClient, 'getBlocks' | 'getBlock'>;
  ledger: Pick<LedgerPort, 'applyBatch'>;
  decode: DecodeBlockFn;
  log?: Logger;
  metrics?: SourceMetrics;
  onProgress?: (p: BackfillProgress) => void;
}

export async function runBackfill(
  deps: BackfillDeps,
  o: BackfillOptions,
  signal?: AbortSignal,
): Promise<BackfillResult> {
  if (!Number.isSafeInteger(o.fromSlot) || !Number.isSafeInteger(o.toSlot) || o.fromSlot < 0 || o.toSlot < o.fromSlot) {
    throw new OncepayError(
      SOURCE_CODES.INVALID_OPTION,
      `backfill range must be 0 ≤ from ≤ to, got ${o.fromSlot}..${o.toSlot}`,
    );
  }
  const metrics = deps.metrics ?? NO_METRICS;
  const r: BackfillResult = {
    done: 0,
    total: o.toSlot - o.fromSlot + 1,
    blocks: 0,
    receipts: 0,
    inserted: 0,
    duplicates: 0,
    failed: 0,
    failures: [],
  };
  try {
    await backfillRange(deps, o, r, metrics, signal);
  } catch (e) {
    // Stopped: every chunk counted in r.done was committed whole; the rest is for the next run.
    if (signal?.aborted) return { ...r, interrupted: { resumeFromSlot: o.fromSlot + r.done } };
    throw e;
  }
  return r;
}

async function backfillRange(
  deps: BackfillDeps,
  o: BackfillOptions,
  r: BackfillResult,
  metrics: SourceMetrics,
  signal?: AbortSignal,
): Promise<void> {
  for (let start = o.fromSlot; start <= o.toSlot; start += o.listSpan) {
    const end = Math.min(o.toSlot, start + o.listSpan - 1);
    const listed = await deps.rpc.getBlocks(start, end, o.commitment, { signal });
    for (const part of chunks(listed, o.chunkSize)) {
      if (signal?.aborted) throw signal.reason ?? new OncepayError(SOURCE_CODES.STOPPED, 'aborted');
      const outcomes = await readSlots({
        rpc: deps.rpc,
        decode: deps.decode,
        commitment: o.commitment,
        slots: part,
        concurrency: o.concurrency,
        signal,
      });
      const receipts: Receipt[] = [];
      for (const x of outcomes) {
        if (x.status === 'ok') {
          r.blocks++;
          receipts.push(...x.receipts);
        } else if (x.status === 'failed') {
          r.failed++;
          r.failures.push({ slot: x.slot, code: x.code, message: x.message });
          deps.log?.warn({ slot: x.slot, code: x.code, err: x.message }, 'backfill could not process slot');
        }
      }
      metrics.countSlots(o.cluster, 'backfill', 'block', outcomes.filter((x) => x.status === 'ok').length);
      metrics.countSlots(o.cluster, 'backfill', 'skipped', outcomes.filter((x) => x.status === 'skipped').length);
      metrics.countSlots(o.cluster, 'backfill', 'failed', outcomes.filter((x) => x.status === 'failed').length);
      if (receipts.length > 0) {
        // A database outage waits (backoff with jitter) instead of ending the run; the batch is one transaction of
        // UNIQUE receipts, so trying it again after an answer that was lost applies it once.
        const applied = await retryWhileDatabaseUnavailable(
          () => deps.ledger.applyBatch({ cluster: o.cluster, source: 'backfill', receipts }),
          {
            signal,
            log: deps.log,
            what: 'backfill batch',
          },
        );
        r.inserted += applied.inserted;
        r.duplicates += applied.duplicates;
        r.receipts += receipts.length;
      }
      r.done = part[part.length - 1] - o.fromSlot + 1;
      deps.onProgress?.(progressOf(r));
    }
    r.done = end - o.fromSlot + 1;
    deps.onProgress?.(progressOf(r));
  }
}

function progressOf(r: BackfillResult): BackfillProgress {
  return {
    done: r.done,
    total: r.total,
    blocks: r.blocks,
    receipts: r.receipts,
    inserted: r.inserted,
    duplicates: r.duplicates,
    failed: r.failed,
  };
}
