// One RPC that takes many keys (getSignatureStatuses, getMultipleAccounts), shared by callers that each ask for a
// few: an ask made while a call is in flight waits, and goes out in the next call with every other ask waiting by
// then (group commit, for RPC). Nothing waits when nothing is in flight, so a lone caller sees no delay; under
// load one call answers many callers. Each caller gets its own keys' answers, in its order.
// A failed call fails every ask it carried, as the chain's own failures do; an answer that does not give one
// value per key asked is a failed call too (rule 6: never trust an RPC answer blindly). Nothing is kept from it.
import { OncepayError, RPC_CODES } from '../../common/errors';

interface Waiter<V> {
  keys: string[];
  resolve(v: V[]): void;
  reject(e: unknown): void;
}

/**
 * Keys that ride along: in a call that goes out anyway (never one of their own), what room the asks leave is offered
 * to `take`, and what the call answered for the keys it carried is handed to `answer` (undefined: the call failed).
 * One call is in flight at a time, so `answer` always answers the last `take`.
 */
export interface CarriedKeys<K, V> {
  take(room: number): K[];
  answer(answers: Map<K, V> | undefined): void;
}

/**
 * `call` merged across its callers: at most `maxKeys` distinct keys a call (a caller's keys always go in one call,
 * so one caller may exceed it alone), a key asked by several callers asked once.
 */
export function mergeWhileInFlight<K extends string, V>(
  call: (keys: K[]) => Promise<V[]>,
  maxKeys: number,
  carried?: CarriedKeys<K, V>,
): (keys: K[]) => Promise<V[]> {
  const waiting: Array<Waiter<V>> = [];
  let inFlight = false;

  function flush(): void {
    if (inFlight || waiting.length === 0) return;
    const batch: Array<Waiter<V>> = [];
    const unique = new Map<string, number>();
    while (waiting.length > 0) {
      const fresh = new Set(waiting[0].keys.filter((k) => !unique.has(k)));
      if (batch.length > 0 && unique.size + fresh.size > maxKeys) break;
      for (const k of fresh) unique.set(k, unique.size);
      batch.push(waiting.shift()!);
    }
    for (const k of carried?.take(Math.max(0, maxKeys - unique.size)) ?? []) {
      if (!unique.has(k)) unique.set(k, unique.size);
    }
    inFlight = true;
    const keys = [...unique.keys()] as K[];
    const settle = (each: (w: Waiter<V>) => void, values?: V[]) => {
      for (const w of batch) each(w);
      carried?.answer(values && new Map(keys.map((k, i) => [k, values[i]])));
      inFlight = false;
      flush();
    };
    let answer: Promise<V[]>;
    try {
      answer = call(keys);
    } catch (e) {
      answer = Promise.reject(e); // a call that throws at once fails its asks as a rejected one does
    }
    answer.then(
      (values) => {
        if (!Array.isArray(values) || values.length !== keys.length) {
          const got = Array.isArray(values) ? `${values.length} values` : 'no list';
          const e = new OncepayError(RPC_CODES.MALFORMED_RESPONSE, `malformed answer: ${got} for ${keys.length} keys`);
          return settle((w) => w.reject(e));
        }
        settle((w) => w.resolve(w.keys.map((k) => values[unique.get(k)!])), values);
      },
      (e: unknown) => settle((w) => w.reject(e)),
    );
  }

  return (keys) => {
    if (keys.length === 0) return Promise.resolve([]);
    return new Promise<V[]>((resolve, reject) => {
      waiting.push({ keys, resolve, reject });
      flush();
    });
  };
}
