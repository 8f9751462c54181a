// The slot scanner: each pass asks the node for its newest slot at the chosen commitment, lists the blocks from
// (checkpoint − re-scan window) up to it, fetches and decodes them, and applies them chunk by chunk through the
// ledger, the checkpoint moving in the same transaction as the receipts. The checkpoint only ever covers slots
// that were all processed; re-reading the window is harmless because the ledger inserts each receipt once.
import type { Logger } from 'pino';
import { failpoint } from '../../common/failpoint';
import { backoffDelay } from '../../common/backoff';
import { sleep } from '../../common/sleep';
import { Commitment, RpcClient } from '../rpc';
import type { ReceiptSource } from '../ledger/types';
import { DecodeBlockFn, readSlots } from './block-reader';
import { chunks, planChunk, scanRange } from './scan-plan';
import { LedgerPort, NO_METRICS, SourceMetrics, toSlotNumber } from './ports';
import type { ProvisionalResult, ProvisionalTracker } from './provisional';

export interface ScannerOptions {
  cluster: string;
  /**
   * The ledger is always fed from finalized blocks. With 'confirmed' (and a `provisional` tracker), confirmed
   * blocks above the checkpoint are also recorded as provisional rows, settled once final.
   */
  commitment: Commitment;
  rescanWindow: number;
  fromSlot?: number;
  maxSlotsPerPass: number;
  /** Blocks per ledger transaction. */
  chunkSize: number;
  /** getBlock calls in flight. */
  concurrency: number;
  pollMs: number;
  source?: ReceiptSource;
}

/** Longest wait between two failed passes. */
export const FAILED_PASS_BACKOFF_CAP_MS = 60_000;

export const DEFAULT_SCANNER: Omit<ScannerOptions, 'cluster'> = {
  commitment: 'finalized',
  rescanWindow: 32,
  maxSlotsPerPass: 2000,
  chunkSize: 50,
  concurrency: 4,
  pollMs: 2000,
};

export interface ScannerDeps {
  rpc: Pick<RpcClient, 'getSlot' | 'getBlocks' | 'getBlock'>;
  ledger: LedgerPort;
  decode: DecodeBlockFn;
  log?: Logger;
  metrics?: SourceMetrics;
  /** Confirmed mode only. */
  provisional?: ProvisionalTracker;
}

export interface PassResult {
  target: number;
  range: { start: number; end: number } | null;
  checkpointBefore: number | null;
  checkpointAfter: number | null;
  blocks: number;
  skipped: number;
  receipts: number;
  inserted: number;
  duplicates: number;
  stoppedAt: { slot: number; code: string; message: string } | null;
  /** True when the checkpoint reached the target. */
  caughtUp: boolean;
  provisional?: ProvisionalResult;
}

export interface Scanner {
  runPass(signal?: AbortSignal): Promise<PassResult>;
  /** Loop passes until `signal` aborts (or, with `once`, until caught up or stopped by a slot). */
  run(opts: { signal?: AbortSignal; once?: boolean }): Promise<PassResult | null>;
}

/** What every pass of one scanner uses: its dependencies and its options, the defaults filled in. */
interface ScanState {
  deps: ScannerDeps;
  o: ScannerOptions;
  source: ReceiptSource;
  metrics: SourceMetrics;
  log: Logger | undefined;
}

/** One pass: the node's finalized slot, the blocks listed up to it, applied chunk by chunk, then the provisional rows. */
async function runPass(st: ScanState, signal?: AbortSignal): Promise<PassResult> {
  const { deps, o, source, metrics, log } = st;
  const target = await deps.rpc.getSlot('finalized', { signal });
  const checkpointBefore = toSlotNumber(await deps.ledger.getCheckpoint(o.cluster, source));
  const range = scanRange({
    checkpoint: checkpointBefore,
    fromSlot: o.fromSlot,
    target,
    rescanWindow: o.rescanWindow,
    maxSlotsPerPass: o.maxSlotsPerPass,
  });
  const result: PassResult = {
    target,
    range,
    checkpointBefore,
    checkpointAfter: checkpointBefore,
    blocks: 0,
    skipped: 0,
    receipts: 0,
    inserted: 0,
    duplicates: 0,
    stoppedAt: null,
    caughtUp: checkpointBefore !== null && checkpointBefore >= target,
  };
  if (!range) {
    if (checkpointBefore !== null) metrics.setCheckpointLag(o.cluster, source, Math.max(0, target - checkpointBefore));
    return withProvisional(st, result, signal);
  }
  const listed = await deps.rpc.getBlocks(range.start, range.end, 'finalized', { signal });
  const parts = chunks(listed, o.chunkSize);
  if (parts.length === 0) parts.push([]);
  for (let c = 0; c < parts.length; c++) {
    const stopped = await scanChunk(st, result, parts[c], parts[c + 1]?.[0] ?? null, signal);
    if (stopped) break;
  }
  if (result.checkpointAfter !== null) {
    metrics.setCheckpointLag(o.cluster, source, Math.max(0, target - result.checkpointAfter));
    result.caughtUp = result.checkpointAfter >= target;
  }
  log?.info(
    {
      cluster: o.cluster,
      target,
      start: range.start,
      end: range.end,
      checkpoint: result.checkpointAfter,
      blocks: result.blocks,
      skipped: result.skipped,
      receipts: result.receipts,
      inserted: result.inserted,
      duplicates: result.duplicates,
      stoppedAt: result.stoppedAt?.slot ?? null,
    },
    'scan pass',
  );
  return withProvisional(st, result, signal);
}

/**
 * One chunk of a pass (`slots`, the next listed slot after them `nextListed`): read, planned, applied with its
 * checkpoint in one ledger transaction, and counted into `result`. True when the checkpoint stopped before a slot.
 */
async function scanChunk(
  st: ScanState,
  result: PassResult,
  slots: number[],
  nextListed: number | null,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const { deps, o, source, metrics, log } = st;
  const outcomes = await readSlots({
    rpc: deps.rpc,
    decode: deps.decode,
    commitment: 'finalized',
    slots,
    concurrency: o.concurrency,
    signal,
  });
  const plan = planChunk(outcomes, { nextListed, end: result.range!.end, previousCheckpoint: result.checkpointBefore });
  for (const f of plan.ignored)
    log?.warn(
      { slot: f.slot, code: f.code, err: f.message },
      'slot in the re-scan window failed again; it was processed before',
    );
  const failed = outcomes.filter((x) => x.status === 'failed').length - plan.ignored.length;
  metrics.countSlots(o.cluster, source, 'block', plan.blocks);
  metrics.countSlots(o.cluster, source, 'skipped', plan.skipped);
  if (failed > 0) metrics.countSlots(o.cluster, source, 'failed', failed);
  // A stop at slot 0 leaves nothing to record. Chunks inside the re-scan window carry checkpoints below the
  // current one: harmless, the ledger only ever raises a checkpoint (GREATEST).
  const checkpoint = plan.checkpoint >= 0 ? { slot: plan.checkpoint } : undefined;
  if (plan.receipts.length > 0 || checkpoint) {
    const applied = await deps.ledger.applyBatch({
      cluster: o.cluster,
      source,
      receipts: plan.receipts,
      checkpoint,
    });
    failpoint('scanner.after_batch_commit');
    result.inserted += applied.inserted;
    result.duplicates += applied.duplicates;
    if (applied.rejected?.length) log?.warn({ rejected: applied.rejected }, 'ledger refused malformed receipts');
  }
  result.blocks += plan.blocks;
  result.skipped += plan.skipped;
  result.receipts += plan.receipts.length;
  if (checkpoint) result.checkpointAfter = Math.max(result.checkpointAfter ?? -1, checkpoint.slot);
  if (!plan.stoppedAt) return false;
  result.stoppedAt = plan.stoppedAt;
  log?.warn(
    { slot: plan.stoppedAt.slot, code: plan.stoppedAt.code, err: plan.stoppedAt.message },
    'checkpoint stops before this slot; next pass retries it',
  );
  return true;
}

/** Confirmed mode: the confirmed blocks above the pass's checkpoint kept as provisional rows, the final ones settled. */
async function withProvisional(st: ScanState, result: PassResult, signal?: AbortSignal): Promise<PassResult> {
  const { deps, o, log } = st;
  if (o.commitment !== 'confirmed' || !deps.provisional || result.checkpointAfter === null) return result;
  result.provisional = await deps.provisional.afterFinalizedPass(o.cluster, result.checkpointAfter, signal);
  log?.info({ cluster: o.cluster, ...result.provisional }, 'provisional pass');
  return result;
}

/** Passes until `signal` aborts (with `once`: until caught up or stopped by a slot); a failed pass backs off. */
async function runPasses(
  st: ScanState,
  { signal, once }: { signal?: AbortSignal; once?: boolean },
): Promise<PassResult | null> {
  const { o, log } = st;
  let last: PassResult | null = null;
  let failures = 0;
  while (!signal?.aborted) {
    try {
      last = await runPass(st, signal);
      failures = 0;
      if (once && (last.caughtUp || last.stoppedAt || !last.range)) return last;
      // Still behind and nothing stopped us: go straight on with the next pass.
      if (!last.caughtUp && !last.stoppedAt && last.range) continue;
      await sleep(o.pollMs, signal);
    } catch (e) {
      if (signal?.aborted) break;
      failures++;
      log?.error({ err: (e as Error).message, code: (e as { code?: string }).code, failures }, 'scan pass failed');
      if (once) throw e;
      try {
        // A failed pass (RPC or database away) is simply run again: the checkpoint only covers committed
        // batches and the ledger inserts each receipt once. Jitter keeps restarted scanners from retrying in step.
        await sleep(
          backoffDelay(failures, { baseMs: o.pollMs, capMs: FAILED_PASS_BACKOFF_CAP_MS }, Math.random()),
          signal,
        );
      } catch {
        break;
      }
    }
  }
  return last;
}

export function createScanner(deps: ScannerDeps, options: ScannerOptions): Scanner {
  const st: ScanState = {
    deps,
    o: { ...DEFAULT_SCANNER, ...options },
    source: options.source ?? 'scanner',
    metrics: deps.metrics ?? NO_METRICS,
    log: deps.log,
  };
  return {
    runPass: (signal) => runPass(st, signal),
    async run(opts) {
      try {
        return await runPasses(st, opts);
      } catch (e) {
        if (opts.signal?.aborted) return null;
        throw e;
      }
    },
  };
}
