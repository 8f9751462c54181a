// The pause between two looks at a payout's statuses, carried by its worker's status calls. While a slot pauses,
// every status call the other slots make anyway carries its signatures too (merged-call.ts CarriedKeys), and the first
// such answer ends the pause early with its statuses: the slot's next look, taken by a call sent after its pause
// began (so no poll interval gets longer, some get shorter). A pause whose time is up while a call carries its
// signatures waits for that answer (sooner than asking anew, which would wait for that call and then its own).
// Slots that pause together wake together, and the first of them to ask carries all the others: one call for the
// pool, not one per slot as their timers drift apart.
// A failed call ends no pause early (its slot looks itself when its time is up); nothing is kept from any answer.
import { CarriedKeys } from './merged-call';

interface Pause<K, V> {
  keys: K[];
  carried: boolean;
  timeUp: boolean;
  finish(statuses: V[] | undefined): void;
}

export interface StatusPauses<K, V> extends CarriedKeys<K, V> {
  /**
   * Pause for `ms` with `keys` riding on the calls made meanwhile. Resolves to their values from the first call
   * that carried them, or undefined when the pause ran its course (or `signal` aborted it) without an answer.
   */
  pause(keys: K[], ms: number, signal?: AbortSignal): Promise<V[] | undefined>;
}

export function statusPauses<K, V>(): StatusPauses<K, V> {
  const pauses = new Set<Pause<K, V>>();
  return {
    pause(keys, ms, signal) {
      if (signal?.aborted) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        const onAbort = () => pause.finish(undefined);
        const timer = setTimeout(() => {
          pause.timeUp = true;
          if (!pause.carried) pause.finish(undefined);
        }, ms);
        const pause: Pause<K, V> = {
          keys,
          carried: false,
          timeUp: false,
          finish(values) {
            if (!pauses.delete(pause)) return;
            clearTimeout(timer);
            signal?.removeEventListener('abort', onAbort);
            resolve(values);
          },
        };
        pauses.add(pause);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    take(room) {
      const keys: K[] = [];
      for (const r of pauses) {
        if (r.carried || r.keys.length === 0 || keys.length + r.keys.length > room) continue;
        r.carried = true;
        keys.push(...r.keys);
      }
      return keys;
    },
    answer(answers) {
      for (const r of [...pauses]) {
        if (!r.carried) continue;
        r.carried = false;
        if (answers) r.finish(r.keys.map((k) => answers.get(k)!));
        else if (r.timeUp) r.finish(undefined);
      }
    },
  };
}
