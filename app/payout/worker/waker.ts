// How the pool's idle slots wait: a pause that ends early when the pool wakes its slots (new work, or stop), and
// the rule that only one idle slot at a time polls while the others wait to be woken.
export interface Waker {
  /** Until woken, or `ms` have passed (undefined: until woken only). */
  sleep(ms?: number): Promise<void>;
  wakeOne(): void;
  wakeAll(): void;
}

export function createWaker(): Waker {
  const sleepers = new Set<() => void>();
  return {
    sleep(ms?: number): Promise<void> {
      return new Promise((resolve) => {
        const done = () => {
          if (t) clearTimeout(t);
          sleepers.delete(done);
          resolve();
        };
        const t = ms === undefined ? undefined : setTimeout(done, ms);
        sleepers.add(done);
      });
    },
    wakeOne(): void {
      const first = sleepers.values().next();
      if (!first.done) first.value();
    },
    wakeAll(): void {
      for (const s of [...sleepers]) s();
    },
  };
}

/**
 * The pause of a slot that found nothing to claim. One idle slot at a time polls (claims again after `idleMs`);
 * the other idle slots wait to be woken: by a new payout (LISTEN), by a slot whose claim found work (more may be
 * due: it wakes one, which polls in turn if it finds nothing), or by stop(). An idle pool makes one claim per
 * `idleMs`, not one per slot, and no payout that comes due by time (a backoff ending) waits longer than with every
 * slot polling.
 */
export function createIdlePause(waker: Waker, idleMs: number): () => Promise<void> {
  let polling = false;
  return async function idlePause(): Promise<void> {
    if (polling) return waker.sleep();
    polling = true;
    try {
      await waker.sleep(idleMs);
    } finally {
      polling = false;
    }
  };
}
