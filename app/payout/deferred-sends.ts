// The fast executor's deferred bookkeeping (run-payout.ts): a send is journaled later, not before the next step.
// A `sent` mark is bookkeeping only — a `built` attempt is resolved exactly like a `sent` one (the journal rules,
// next-action.ts) — so it rides on the attempt's settling write, or is written at a pause once the attempt has been
// out for a while (operators then see it sent), or when the run stops. A write goes out without being waited for:
// the connection runs it before any later query, and its failure surfaces at the next `written()`.
// The plain executor (plain-executor.ts) writes each send before its next step instead.

export interface DeferredSends {
  /** Attempt `id` was handed to a node at `now` (monotonic ms): one more send to record. */
  sent(id: string, now: number): void;
  /** The sends of `id` not recorded yet, for its settling write to carry (forgotten here). */
  take(id: string): number;
  /** Write, without waiting, the sends of every attempt whose first unrecorded send `due(since)` says is due. */
  record(due: (since: number) => boolean): Promise<void>;
  /** Waits for the writes in flight (rejects with the first failure); none in flight afterwards. */
  written(): Promise<void>;
}

/** `write(id, sends)` records `sends` more sends of attempt `id` (store.ts markAttemptSent on the run's connection). */
export function deferSends(write: (id: string, sends: number) => Promise<void>): DeferredSends {
  const unrecorded = new Map<string, { sends: number; since: number }>();
  let writing: Promise<void> | undefined;
  return {
    sent(id, now) {
      const u = unrecorded.get(id);
      unrecorded.set(id, { sends: (u?.sends ?? 0) + 1, since: u?.since ?? now });
    },
    take(id) {
      const n = unrecorded.get(id)?.sends ?? 0;
      unrecorded.delete(id);
      return n;
    },
    record(due) {
      for (const [id, u] of unrecorded) {
        if (!due(u.since)) continue;
        unrecorded.delete(id);
        const marking = write(id, u.sends);
        writing = writing ? Promise.all([writing, marking]).then(() => undefined) : marking;
        writing.catch(() => undefined); // handled where it is awaited (written)
      }
      return writing ?? Promise.resolve();
    },
    async written() {
      const w = writing;
      writing = undefined;
      await w;
    },
  };
}
