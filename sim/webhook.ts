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

/** The webhook receiver's state: its world, itself, and the hint it is checking. */
interface WebhookState {
  w: World;
  a: WebhookActor;
  /** The hint being checked: its ledger transaction open, or applied and not yet marked credited. */
  current: { hint: HintRow; phase: 'open' | 'applied'; receipts: number; inserted: number } | undefined;
}

export function createWebhook(w: World): WebhookActor {
  const st = { w, current: undefined } as WebhookState;
  st.a = {
    name: 'webhook',
    kind: 'webhook',
    alive: true,
    session: null,
    window: null,
    forget: () => {
      st.current = undefined;
    },
    idle: () => st.current === undefined && !w.db.peek().hints.some((h) => h.state === 'pending'),
    receive: (e) => receive(st, e),
    step: () => step(st),
  };
  return st.a;
}

/** Runs fn; a kill kills the receiver, a lost database or a violated constraint drops its session and its hint. */
function guarded(st: WebhookState, fn: () => void): void {
  const { w, a } = st;
  try {
    fn();
  } catch (e) {
    if (e instanceof Killed) return kill(w, a);
    if (e instanceof DatabaseGone || e instanceof ConstraintViolation) {
      note(w, `webhook: ${e.message}`);
      w.db.disconnect(a.session);
      a.session = null;
      a.window = null;
      st.current = undefined;
      return;
    }
    throw e;
  }
}

/** A provider's delivery: its event recorded once, its hints stored (ON CONFLICT). */
function receive(st: WebhookState, e: WebhookEvent): boolean {
  const { w, a } = st;
  if (!a.alive) return false;
  let ok = false;
  guarded(st, () => {
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
}

/** One step of the checker: start again after a kill, commit or settle the current hint, or check the next one. */
function step(st: WebhookState): void {
  const { w, a } = st;
  if (!a.alive) {
    a.alive = true;
    note(w, 'webhook starts');
    return;
  }
  guarded(st, () => {
    if (!w.db.alive(a.session)) {
      a.session = w.db.connect();
      st.current = undefined;
    }
    if (st.current?.phase === 'open') {
      commitBatch(w, a);
      st.current.phase = 'applied';
      return;
    }
    if (st.current?.phase === 'applied') return settle(st, { state: 'credited' });
    check(st);
  });
}

function settle(st: WebhookState, s: { state: 'credited' } | { state: 'dropped'; reason: string }): void {
  const { w, a } = st;
  const id = st.current!.hint.id;
  w.db.write(a.session, true, (t) => {
    const h = t.hints.find((x) => x.id === id);
    if (!h || h.state !== 'pending') return;
    setHint(t, { ...h, state: s.state, leasedUntil: 0, dropReason: s.state === 'dropped' ? s.reason : undefined });
  });
  note(w, `webhook: hint ${st.current!.hint.signature} ${s.state}`);
  st.current = undefined;
  a.window = null;
}

function check(st: WebhookState): void {
  const { w, a } = st;
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
  const next = w.cores.nextHintStep({ checks: hint.checks, expired }, answer, RECHECK, 0.5);
  const current = (st.current = { hint, phase: 'open', receipts: 0, inserted: 0 });
  if (next.action === 'recheck') {
    w.db.write(a.session, true, (t) => {
      const h = t.hints.find((x) => x.id === hint.id);
      if (h && h.state === 'pending') setHint(t, { ...h, nextCheckAt: w.now + next.delayMs, leasedUntil: 0 });
    });
    st.current = undefined;
    return;
  }
  if (next.action === 'drop') {
    const refuted = next.reason !== 'not_found' && next.reason !== 'rpc_error';
    return settle(st, { state: 'dropped', reason: refuted ? 'refuted' : next.reason });
  }
  if (next.receipts.length === 0) return settle(st, { state: 'credited' });
  const r = beginBatch(w, a, { source: 'webhook', receipts: next.receipts });
  if (!r) {
    st.current = undefined; // the ledger is busy: the lease runs out and the hint is checked again
    return;
  }
  current.receipts = next.receipts.length;
  current.inserted = r.inserted;
}
