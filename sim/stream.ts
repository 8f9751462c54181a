// The subscription stream of the model (Yellowstone gRPC, indexer/source/stream.ts): subscribed from `from_slot` =
// its durable checkpoint (the checkpoint slot itself is streamed again), it receives each finalized slot's
// transactions that name a watched address, and applies each slot as one ledger transaction with that slot as its
// checkpoint (a slot with nothing watched moves only its position in memory). A dropped stream, a crash or a lost
// connection resubscribes from the checkpoint: what was streamed and not committed comes again, as duplicates.
import type { Receipt } from '../indexer/decode/receipt';
import { ConstraintViolation, DatabaseGone } from './database';
import { beginBatch, commitBatch } from './ledger';
import { type Actor, Killed, kill, note, type World } from './world';

export interface StreamControl extends Actor {
  /** The server ends the stream (UNAVAILABLE): the client resubscribes from its checkpoint. */
  drop(): void;
  /** The server sends the next slot's update twice. */
  repeatNext(): void;
}

export function createStream(w: World, watched: () => ReadonlySet<string>): StreamControl {
  let next: number | null = null;
  let open: number | null = null;
  let repeat = false;

  const a: StreamControl = {
    name: 'stream',
    kind: 'stream',
    alive: true,
    session: null,
    window: null,
    forget: () => {
      next = null;
      open = null;
      repeat = false;
    },
    idle: () => open === null && next !== null && next > w.chain.finalizedSlot(),
    drop() {
      next = null;
    },
    repeatNext() {
      repeat = true;
    },
    step() {
      if (!a.alive) {
        a.alive = true;
        note(w, 'stream starts');
        return;
      }
      try {
        if (!w.db.alive(a.session)) {
          a.session = w.db.connect();
          next = null;
          open = null;
        }
        if (open !== null) {
          commitBatch(w, a);
          const slot = open;
          open = null;
          if (repeat) repeat = false;
          else if (next !== null) next = slot + 1;
          return;
        }
        if (next === null) {
          next = w.db.read(a.session, (t) => t.checkpoints.get('stream')) ?? 1;
          note(w, `stream subscribes from slot ${next}`);
          return;
        }
        const receipts = w.chain.finalizedSlotReceipts(next);
        if (receipts === null) return; // not final yet
        const mine = watchedTransactions(receipts, watched());
        if (mine.length === 0) {
          next += 1;
          return;
        }
        if (!beginBatch(w, a, { source: 'stream', receipts: mine, checkpoint: next })) return;
        open = next;
      } catch (e) {
        if (e instanceof Killed) return kill(w, a);
        if (e instanceof DatabaseGone || e instanceof ConstraintViolation) {
          note(w, `stream: ${e.message}; resubscribing`);
          w.db.disconnect(a.session);
          a.session = null;
          a.window = null;
          next = null;
          open = null;
          return;
        }
        throw e;
      }
    },
  };
  return a;
}

/** The receipts of every transaction that names a watched address (all of that transaction's transfers). */
function watchedTransactions(receipts: readonly Receipt[], watched: ReadonlySet<string>): Receipt[] {
  const hit = new Set<string>();
  for (const r of receipts) {
    const keys = [r.destination, r.destinationOwner ?? '', ...(r.references ?? [])];
    if (keys.some((k) => watched.has(k))) hit.add(r.signature);
  }
  return receipts.filter((r) => hit.has(r.signature));
}
