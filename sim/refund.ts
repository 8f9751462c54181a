// `oncepay exception refund <id>` in the model (app/exception/refund.ts): one transaction stores the refund payout
// — its payout id the exception's receipt key (the real refundPayoutId), so a second request, a double click or a
// re-run after a crash finds the same row (UNIQUE (merchant, payout id)) — and links it to the exception (once);
// then, past `exception.refund_after_link`, it executes that payout with the journal's rules (the payout worker's
// shell, holding the payout's lock), as any payout worker could.
import type { PayoutRow } from '../app/payout/store';
import type { Address, PayoutId } from '../app/types';
import type { OpId } from '../app/op-id';
import { refundPayoutId } from '../app/exception/refund-id';
import { ConstraintViolation, DatabaseGone, type ExceptionRow, newPayoutRow, type Tables } from './database';
import { createPayoutWorker } from './payout-worker';
import { type Actor, Killed, kill, note, pass, type World } from './world';

export interface RefundActor extends Actor {
  /** The operator asks to refund this exception (it may already be refunding or refunded). */
  request(e: ExceptionRow): void;
}

/** The refund payout's row for an exception (the merchant's payout id is the receipt key). */
function refundRow(t: Tables, w: World, e: ExceptionRow, mint: string, source: string): PayoutRow {
  const [signature, ix, inner] = e.receipt.split('/');
  const payoutId = refundPayoutId({ cluster: w.cluster, signature, ixIndex: Number(ix), innerIndex: Number(inner) });
  return newPayoutRow(
    {
      id: String(++t.seq),
      merchantPayoutId: payoutId as PayoutId,
      recipientToken: source as Address,
      mint: mint as Address,
      amount: e.amount,
      opId: `op:${payoutId}` as OpId,
      opPda: `oppda:${payoutId}` as Address,
    },
    new Date(w.now),
  );
}

export function createRefunder(w: World, name: string): RefundActor {
  let asked: ExceptionRow | undefined;
  let payout: string | undefined;
  const runner = createPayoutWorker(w, name, {
    claims: 'due',
    retryFailed: false,
    only: () => payout,
  });

  const a: RefundActor = {
    name,
    kind: 'refund',
    alive: true,
    session: null,
    window: null,
    forget: () => {
      asked = undefined;
      payout = undefined;
      runner.forget();
    },
    idle: () => asked === undefined && (payout === undefined || runner.idle()),
    request(e) {
      if (asked === undefined && payout === undefined) asked = e;
    },
    step() {
      if (!a.alive) {
        a.alive = true;
        note(w, `${name} starts`);
        return;
      }
      try {
        if (asked) return prepare(asked);
        if (payout === undefined) return;
        runner.alive = true;
        runner.session = a.session;
        runner.window = a.window;
        runner.step();
        if (!runner.alive) {
          // Killed inside the run (at a payout failpoint): the refund command dies with it.
          a.alive = false;
          a.session = null;
          a.window = null;
          a.forget();
          return;
        }
        a.session = runner.session;
        a.window = runner.window;
        if (runner.idle()) payout = undefined;
      } catch (e) {
        if (e instanceof Killed) return kill(w, a);
        if (e instanceof DatabaseGone || e instanceof ConstraintViolation) {
          note(w, `${name}: ${e.message}`);
          w.db.disconnect(a.session);
          a.session = null;
          a.window = null;
          asked = undefined;
          payout = undefined;
          return;
        }
        throw e;
      }
    },
  };

  function prepare(e: ExceptionRow): void {
    if (!w.db.alive(a.session)) a.session = w.db.connect();
    const row = w.db.write(a.session, true, (t) => {
      const linked = t.refunds.get(`${e.receipt}#${e.kind}`);
      if (linked) return t.payouts.get(linked)!;
      const receipt = t.receipts.get(e.receipt)!.receipt;
      const fresh = refundRow(t, w, e, receipt.mint ?? '', receipt.source);
      // createPayout: INSERT … ON CONFLICT (merchant, merchant_payout_id) DO NOTHING, the existing row when it is there.
      const existing = [...t.payouts.values()].find((p) => p.merchantPayoutId === fresh.merchantPayoutId);
      if (existing && (existing.amount !== fresh.amount || existing.recipientToken !== fresh.recipientToken))
        throw new ConstraintViolation(`payout ${fresh.merchantPayoutId} exists with other terms`);
      const p = existing ?? fresh;
      if (!existing) t.payouts.set(p.id, p);
      t.refunds.set(`${e.receipt}#${e.kind}`, p.id);
      return p;
    });
    asked = undefined;
    payout = row.id;
    note(w, `${name}: exception ${e.receipt} ${e.kind} → payout ${row.id} (${row.merchantPayoutId})`);
    pass(w, a, 'exception.refund_after_link');
  }

  return a;
}
