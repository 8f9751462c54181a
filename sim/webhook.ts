// The webhook source of the model (verified mode, indexer/source/webhook.ts + webhook-verifier.ts): a provider's
// delivery names signatures, at least once and in any order; the receiver stores its event (UNIQUE event_id: a
// repeat is answered 2xx and changes nothing) and one hint per signature (UNIQUE signature; a hint dropped as not
// found comes back with a new delivery) in one transaction. The verifier leases a due hint, asks the chain for the
// transaction at finalized, and the real cores.nextHintStep decides: credit the chain's own receipts through the
// ledger (then mark the hint: a crash between the two re-checks it, and the ledger absorbs the repeat), check again
// later, or drop it (refuted, or not seen before it expired).
import type { Receipt } from '../indexer/decode/receipt';
import type { RecheckPolicy } from '../indexer/source/webhook-hint-plan';
import { RpcFailure } from './chain';
import { ConstraintViolation, DatabaseGone, type HintRow, type Tables } from './database';
import { beginBatch, commitBatch } from './ledger';
import { type Actor, faultReached, Killed, kill, note, pass, type World } from './world';

export interface WebhookEvent {
  eventId: string;
  signatures: string[];
}

export const HINT_MAX_AGE_MS = 20_000;
export const HINT_LEASE_MS = 3_000;
const RECHECK: RecheckPolicy = { baseMs: 200, capMs: 2_000 };

export interface WebhookActor extends Actor {
  /** A provider's delivery of `e`: false when the receiver is down (the provider delivers it again later). */
  receive(e: WebhookEvent): boolean;
}

function setHint(t: Tables, h: HintRow): void {
  t.hints = [...t.hints.filter((x) => x.signature !== h.signature), h];
}

export function createWebhook(w: World): WebhookActor {
  /** The hint being checked: its ledger transaction open, or applied and not yet marked credited. */
  let current: { hint: HintRow; phase: 'open' | 'applied'; receipts: number; inserted: number } | undefined;

  const guarded = (fn: () => void) => {
    try {
      fn();
    } catch (e) {
      if (e instanceof Killed) return kill(w, a);
      if (e instanceof DatabaseGone || e instanceof ConstraintViolation) {
        note(w, `webhook: ${e.message}`);
        w.db.disconnect(a.session);
        a.session = null;
        a.window = null;
        current = undefined;
        return;
      }
      throw e;
    }
  };

  const a: WebhookActor = {
    name: 'webhook',
    kind: 'webhook',
    alive: true,
    session: null,
    window: null,
    forget: () => {
      current = undefined;
    },
    idle: () => current === undefined && !w.db.peek().hints.some((h) => h.state === 'pending'),
    receive(e) {
      if (!a.alive) return false;
      let ok = false;
      guarded(() => {
        if (!w.db.alive(a.session)) a.session = w.db.connect();
        const fresh = w.db.write(a.session, true, (t) => {
          if (t.events.has(e.eventId)) return false;
          t.events = new Set([...t.events, e.eventId]);
          for (const signature of e.signatures) {
            const h = t.hints.find((x) => x.signature === signature);
            // ON CONFLICT: a hint is held once; one dropped because the chain did not show it comes back.
            if (h && !(h.state === 'dropped' && h.dropReason !== 'refuted')) continue;
            setHint(t, {
              id: h?.id ?? ++t.seq,
              eventId: e.eventId,
              signature,
              state: 'pending',
              checks: 0,
              receivedAt: w.now,
              nextCheckAt: w.now,
              leasedUntil: 0,
            });
          }
          return true;
        });
        ok = true;
        if (!fresh) faultReached(w, 'duplicate-delivery', w.actors);
        note(w, `webhook receives ${e.eventId} [${e.signatures.join(',')}]${fresh ? '' : ' (repeat event)'}`);
        pass(w, a, 'webhook.after_hints_stored');
      });
      return ok;
    },
    step() {
      if (!a.alive) {
        a.alive = true;
        note(w, 'webhook starts');
        return;
      }
      guarded(() => {
        if (!w.db.alive(a.session)) {
          a.session = w.db.connect();
          current = undefined;
        }
        if (current?.phase === 'open') {
          commitBatch(w, a);
          current.phase = 'applied';
          return;
        }
        if (current?.phase === 'applied') return settle({ state: 'credited' });
        check();
      });
    },
  };

  function settle(s: { state: 'credited' } | { state: 'dropped'; reason: string }): void {
    const id = current!.hint.id;
    w.db.write(a.session, true, (t) => {
      const h = t.hints.find((x) => x.id === id);
      if (!h || h.state !== 'pending') return;
      setHint(t, { ...h, state: s.state, leasedUntil: 0, dropReason: s.state === 'dropped' ? s.reason : undefined });
    });
    note(w, `webhook: hint ${current!.hint.signature} ${s.state}`);
    current = undefined;
    a.window = null;
  }

  function check(): void {
    // Lease one due hint (checks + 1), as leaseHints does.
    const hint = w.db.write(a.session, true, (t) => {
      const h = t.hints.find((x) => x.state === 'pending' && x.nextCheckAt <= w.now && x.leasedUntil <= w.now);
      if (!h) return undefined;
      const leased: HintRow = { ...h, checks: h.checks + 1, leasedUntil: w.now + HINT_LEASE_MS };
      setHint(t, leased);
      return leased;
    });
    if (!hint) return;
    let tx: ReturnType<World['chain']['transaction']> = null;
    let failed: string | undefined;
    try {
      tx = w.chain.transaction(hint.signature);
    } catch (e) {
      if (!(e instanceof RpcFailure)) throw e;
      failed = e.message;
    }
    const answer =
      failed !== undefined
        ? { kind: 'rpc_error' as const, message: failed }
        : w.cores.classifyChainAnswer(
            tx as Record<string, unknown> | null,
            (x) => (x as { receipts: Receipt[] }).receipts,
          );
    const expired = w.now - hint.receivedAt > HINT_MAX_AGE_MS;
    const step = w.cores.nextHintStep({ checks: hint.checks, expired }, answer, RECHECK, 0.5);
    current = { hint, phase: 'open', receipts: 0, inserted: 0 };
    if (step.action === 'recheck') {
      w.db.write(a.session, true, (t) => {
        const h = t.hints.find((x) => x.id === hint.id);
        if (h && h.state === 'pending') setHint(t, { ...h, nextCheckAt: w.now + step.delayMs, leasedUntil: 0 });
      });
      current = undefined;
      return;
    }
    if (step.action === 'drop') {
      const refuted = step.reason !== 'not_found' && step.reason !== 'rpc_error';
      return settle({ state: 'dropped', reason: refuted ? 'refuted' : step.reason });
    }
    if (step.receipts.length === 0) return settle({ state: 'credited' });
    const r = beginBatch(w, a, { source: 'webhook', receipts: step.receipts });
    if (!r) {
      current = undefined; // the ledger is busy: the lease runs out and the hint is checked again
      return;
    }
    current.receipts = step.receipts.length;
    current.inserted = r.inserted;
  }

  return a;
}
