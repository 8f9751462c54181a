// The outbox worker and the merchant endpoint of the model (indexer/outbox/worker.ts, demo/merchant-endpoint.ts).
// The worker claims one due row (pending whose time has come, or delivering whose lease ran out: its worker died)
// with a lease and attempts + 1, POSTs it under its Idempotency-Key, and marks it delivered, or failed with a
// backoff (dead after MAX_ATTEMPTS; the operator replays dead rows once the faults stop). The merchant applies
// each Idempotency-Key once and answers 2xx to a repeat, as the merchant's side of the contract asks; it can
// fail (5xx, nothing applied) or apply and lose its answer.
import { backoffDelay } from '../common/backoff';
import { ConstraintViolation, DatabaseGone, type OutboxRow } from './database';
import { type Actor, faultReached, Killed, kill, note, pass, type World } from './world';

export const OUTBOX_LEASE_MS = 2_000;
export const OUTBOX_MAX_ATTEMPTS = 5;
const BACKOFF = { baseMs: 100, capMs: 2_000 };

export type MerchantFault = 'fail' | 'lose-answer';

export interface MerchantRequest {
  key: string;
  invoiceId: string;
  outcome: 'applied' | 'repeat' | 'failed';
}

/** The merchant's endpoint: applies each Idempotency-Key once. */
export function createMerchantEndpoint() {
  const applied = new Map<string, string>();
  const requests: MerchantRequest[] = [];
  const faults: MerchantFault[] = [];
  return {
    applied: (): ReadonlyMap<string, string> => applied,
    requests: (): readonly MerchantRequest[] => requests,
    arm(f: MerchantFault): void {
      faults.push(f);
    },
    clearFaults(): void {
      faults.length = 0;
    },
    /** True when the caller got a 2xx back. */
    receive(key: string, invoiceId: string): boolean {
      const fault = faults.shift();
      if (fault === 'fail') {
        requests.push({ key, invoiceId, outcome: 'failed' });
        return false;
      }
      const repeat = applied.has(key);
      if (!repeat) applied.set(key, invoiceId);
      requests.push({ key, invoiceId, outcome: repeat ? 'repeat' : 'applied' });
      return fault !== 'lose-answer';
    },
  };
}

export type MerchantEndpoint = ReturnType<typeof createMerchantEndpoint>;

export function createOutboxWorker(w: World, name: string): Actor {
  let claimed: { row: OutboxRow; answered?: boolean } | undefined;

  const a: Actor = {
    name,
    kind: 'outbox',
    alive: true,
    session: null,
    window: null,
    forget: () => {
      claimed = undefined;
    },
    idle: () => claimed === undefined && [...w.db.peek().outbox.values()].every((r) => r.state === 'delivered'),
    step() {
      if (!a.alive) {
        a.alive = true;
        note(w, `${name} starts`);
        return;
      }
      try {
        if (!w.db.alive(a.session)) a.session = w.db.connect();
        if (!claimed) return claim();
        if (claimed.answered === undefined) return deliver(claimed.row, claimed);
        mark(claimed.row, claimed.answered);
      } catch (e) {
        if (e instanceof Killed) return kill(w, a);
        if (e instanceof DatabaseGone || e instanceof ConstraintViolation) {
          // The row stays delivering until its lease runs out; then it is delivered again, under the same key.
          note(w, `${name}: ${e.message}`);
          w.db.disconnect(a.session);
          a.session = null;
          a.window = null;
          claimed = undefined;
          return;
        }
        throw e;
      }
    },
  };

  function claim(): void {
    const row = w.db.write(a.session, true, (t) => {
      const due = [...t.outbox.values()].find(
        (r) =>
          (r.state === 'pending' && r.nextAttemptAt <= w.now) ||
          (r.state === 'delivering' && r.lockedUntil !== null && r.lockedUntil < w.now),
      );
      if (!due) return undefined;
      const c: OutboxRow = {
        ...due,
        state: 'delivering',
        attempts: due.attempts + 1,
        lockedUntil: w.now + OUTBOX_LEASE_MS,
      };
      t.outbox.set(c.fulfilmentId, c);
      return c;
    });
    if (row) claimed = { row };
  }

  function deliver(row: OutboxRow, c: { answered?: boolean }): void {
    const ok = w.merchant.receive(w.cores.deliveryKey(row), row.invoiceId);
    if (!ok) faultReached(w, 'merchant-failed', w.actors);
    c.answered = ok;
    note(w, `${name}: ${row.invoiceId} attempt ${row.attempts} → ${ok ? '2xx' : 'failed'}`);
    pass(w, a, 'outbox.after_response_before_mark');
  }

  function mark(row: OutboxRow, ok: boolean): void {
    w.db.write(a.session, true, (t) => {
      const r = t.outbox.get(row.fulfilmentId);
      if (!r || r.state !== 'delivering') return;
      if (ok) t.outbox.set(r.fulfilmentId, { ...r, state: 'delivered', lockedUntil: null });
      else if (r.attempts === row.attempts) {
        const dead = r.attempts >= OUTBOX_MAX_ATTEMPTS;
        const delay = backoffDelay(r.attempts, BACKOFF, 0.5);
        t.outbox.set(r.fulfilmentId, {
          ...r,
          state: dead ? 'dead' : 'pending',
          lockedUntil: null,
          nextAttemptAt: w.now + delay,
        });
      }
    });
    claimed = undefined;
    a.window = null;
  }

  return a;
}

/** `oncepay outbox replay --all-dead`: every dead row back to pending with a fresh attempt budget. */
export function replayDead(w: World): number {
  let n = 0;
  w.db.seed((t) => {
    for (const r of t.outbox.values())
      if (r.state === 'dead') {
        t.outbox.set(r.fulfilmentId, { ...r, state: 'pending', attempts: 0, nextAttemptAt: w.now });
        n++;
      }
  });
  return n;
}
