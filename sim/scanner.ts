// The slot scanner of the model: indexer/source/scanner.ts's pass around the real planning (cores.scanRange,
// cores.chunks, cores.planChunk). A pass reads the finalized slot and its own checkpoint, lists the blocks of the
// range (the re-scan window below the checkpoint included), and applies them a chunk at a time: read the chunk's
// blocks (a block the node fails to return stops the checkpoint below it), one ledger transaction with the chunk's
// receipts and checkpoint, commit. A crash or a lost connection ends the pass; the next starts from the checkpoint.
import type { SlotOutcome } from '../indexer/source/scan-plan';
import type { Receipt } from '../indexer/decode/receipt';
import { RpcFailure } from './chain';
import { ConstraintViolation, DatabaseGone } from './database';
import { beginBatch, commitBatch, type LedgerBatch } from './ledger';
import { type Actor, Killed, kill, note, pass, type World } from './world';

export interface ScannerParams {
  rescanWindow: number;
  maxSlotsPerPass: number;
  chunkSize: number;
}

interface Pass {
  range: { start: number; end: number };
  checkpointBefore: number | null;
  parts: number[][];
  chunk: number;
  /** The chunk's batch, read and planned, until its transaction begins. */
  batch?: LedgerBatch;
  stopped: boolean;
  open: boolean;
}

export function createScanner(w: World, params: ScannerParams): Actor {
  let p: Pass | undefined;

  const checkpoint = () => w.db.peek().checkpoints.get('scanner') ?? null;
  const a: Actor = {
    name: 'scanner',
    kind: 'scanner',
    alive: true,
    session: null,
    window: null,
    forget: () => {
      p = undefined;
    },
    idle: () => p === undefined && (checkpoint() ?? 0) >= w.chain.finalizedSlot(),
    step() {
      if (!a.alive) {
        a.alive = true;
        note(w, 'scanner starts');
        return;
      }
      try {
        if (!w.db.alive(a.session)) {
          a.session = w.db.connect();
          p = undefined;
        }
        if (!p) return begin();
        if (p.open) return commit(p);
        chunk(p);
      } catch (e) {
        if (e instanceof Killed) return kill(w, a);
        if (e instanceof DatabaseGone || e instanceof ConstraintViolation) {
          // A failed pass is run again from the checkpoint.
          note(w, `scanner: ${e.message}; the pass ends`);
          w.db.disconnect(a.session);
          a.session = null;
          a.window = null;
          p = undefined;
          return;
        }
        throw e;
      }
    },
  };

  function begin(): void {
    const target = w.chain.finalizedTarget();
    const checkpointBefore = w.db.read(a.session, (t) => t.checkpoints.get('scanner') ?? null);
    const range = w.cores.scanRange({
      checkpoint: checkpointBefore,
      fromSlot: 1,
      target,
      rescanWindow: params.rescanWindow,
      maxSlotsPerPass: params.maxSlotsPerPass,
    });
    if (!range) return;
    const parts = w.cores.chunks(w.chain.listBlocks(range.start, range.end), params.chunkSize);
    if (parts.length === 0) parts.push([]);
    p = { range, checkpointBefore, parts, chunk: 0, stopped: false, open: false };
  }

  function chunk(x: Pass): void {
    if (!x.batch) {
      const slots = x.parts[x.chunk];
      const outcomes: Array<SlotOutcome<Receipt>> = slots.map((slot) => {
        try {
          return { slot, status: 'ok', receipts: w.chain.blockReceipts(slot) };
        } catch (e) {
          if (!(e instanceof RpcFailure)) throw e;
          return { slot, status: 'failed', code: 'RPC', message: e.message };
        }
      });
      const plan = w.cores.planChunk(outcomes, {
        nextListed: x.parts[x.chunk + 1]?.[0] ?? null,
        end: x.range.end,
        previousCheckpoint: x.checkpointBefore,
      });
      x.stopped = plan.stoppedAt !== null;
      const cp = plan.checkpoint >= 0 ? plan.checkpoint : undefined;
      if (plan.receipts.length === 0 && cp === undefined) return next(x);
      x.batch = { source: 'scanner', receipts: plan.receipts, checkpoint: cp };
    }
    if (!beginBatch(w, a, x.batch)) return; // waits for the ledger's locks
    x.open = true;
  }

  function commit(x: Pass): void {
    commitBatch(w, a);
    x.open = false;
    x.batch = undefined;
    pass(w, a, 'scanner.after_batch_commit');
    next(x);
  }

  function next(x: Pass): void {
    x.chunk += 1;
    if (x.stopped || x.chunk >= x.parts.length) p = undefined;
  }

  return a;
}
