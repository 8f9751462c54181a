// Account history for reads at a commitment: per account, its state before each change with the slot of the
// change (an undo log). Reading at slot S = the `pre` of the first change after S, else the current state.
// Entries at or below the finalized slot are pruned. In memory and without I/O.
import type { AccountSnapshot } from './encode';

export interface AccountHistory {
  /** Note the changes one transaction made in `slot`: `keys[i]` went from `pre[i]` to `post[i]`. */
  record(slot: number, keys: string[], pre: Array<AccountSnapshot | null>, post: Array<AccountSnapshot | null>): void;
  /** The account as of `slot`, given its current state. */
  at(address: string, slot: number, current: AccountSnapshot | null): AccountSnapshot | null;
  /** Forget changes at or below the finalized slot (nobody reads under it). */
  prune(finalizedSlot: number): void;
  /** Accounts with remembered changes (for tests). */
  size(): number;
}

export function sameAccount(a: AccountSnapshot | null, b: AccountSnapshot | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.lamports === b.lamports &&
    a.owner === b.owner &&
    a.executable === b.executable &&
    Buffer.from(a.data).equals(Buffer.from(b.data))
  );
}

export function createAccountHistory(): AccountHistory {
  const undo = new Map<string, Array<{ slot: number; pre: AccountSnapshot | null }>>();
  const undoQueue: Array<{ slot: number; address: string }> = [];
  let undoHead = 0;
  return {
    record(slot, keys, pre, post) {
      keys.forEach((k, i) => {
        if (sameAccount(pre[i], post[i])) return;
        let list = undo.get(k);
        if (!list) undo.set(k, (list = []));
        list.push({ slot, pre: pre[i] });
        undoQueue.push({ slot, address: k });
      });
    },
    at(address, slot, current) {
      const list = undo.get(address);
      if (!list) return current;
      const change = list.find((e) => e.slot > slot);
      return change ? change.pre : current;
    },
    prune(fin) {
      while (undoHead < undoQueue.length && undoQueue[undoHead].slot <= fin) {
        const { address } = undoQueue[undoHead++];
        const list = undo.get(address)!;
        list.shift();
        if (list.length === 0) undo.delete(address);
      }
      // Compact now and then rather than shifting the queue one entry at a time.
      if (undoHead > 4096 && undoHead * 2 > undoQueue.length) {
        undoQueue.splice(0, undoHead);
        undoHead = 0;
      }
    },
    size: () => undo.size,
  };
}
