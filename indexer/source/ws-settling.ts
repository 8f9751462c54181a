// What the checkpoint settler keeps (pure, no I/O): the slots the node notified on this socket, and the sets of
// addresses subscribed but not yet caught up past the moment the node applied their subscriptions. ws-settler.ts
// explains why, and does the I/O.

/** The node's slot notifications on one socket: resolves waits for a slot above some mark. */
export interface SlotWatch {
  /** A slot notification was read. */
  heard(slot: number): void;
  /** Resolves once a slot above `above` has been notified (at once if one was already). */
  above(above: number): Promise<void>;
}

export function createSlotWatch(): SlotWatch {
  let slotHeard = -1;
  const waiters = new Set<{ above: number; resolve: () => void }>();
  return {
    heard(slot) {
      slotHeard = Math.max(slotHeard, slot);
      for (const w of [...waiters]) {
        if (slot <= w.above) continue;
        waiters.delete(w);
        w.resolve();
      }
    },
    above: (above) =>
      new Promise<void>((resolve) => {
        if (slotHeard > above) resolve();
        else waiters.add({ above, resolve });
      }),
  };
}

/**
 * A set of addresses settling: the checkpoint stays at or below `hold` until they are caught up once more from
 * `hold + 1`, which can be done once the finalized slot reaches `until`.
 */
export interface SettlingSet {
  readonly addresses: readonly string[];
  hold: number;
  until: number;
}

export interface Settling {
  /** A set begins settling (subscribed from now): held at `from` (null: nothing to hold yet), due never (yet). */
  add(addresses: readonly string[], from: number | null): SettlingSet;
  /** The checkpoint `mark` may move to: no higher than any set's hold. */
  held(mark: number): number;
  /** The sets due at finalized slot `finalized`, in the order they began. */
  due(finalized: number): SettlingSet[];
  /** A set is caught up: it holds nothing any more. */
  done(set: SettlingSet): void;
}

export function createSettling(): Settling {
  const sets: SettlingSet[] = [];
  return {
    add(addresses, from) {
      const set = { addresses, hold: from ?? Infinity, until: Infinity };
      sets.push(set);
      return set;
    },
    held: (mark) => Math.min(mark, ...sets.map((x) => x.hold)),
    due: (finalized) => sets.filter((x) => x.until <= finalized),
    done(set) {
      const at = sets.indexOf(set);
      if (at >= 0) sets.splice(at, 1);
    },
  };
}
