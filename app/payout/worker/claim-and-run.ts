// One step of a slot: claim the next due payout on the slot's connection (the claim's statement also unlocks the
// payout the slot held, see held-payout.ts), run it with its merchant's key, and say what the slot does next. A
// payout that finished leaves its lock held on the connection for the next step; one that did not is handed back
// (hand-back.ts).
import { checkoutDedicated, DedicatedConnection, unlockPayout } from '../lock';
import { claimDuePayout, PayoutRow } from '../store';
import { handBack } from './hand-back';
import { HeldPayout, releaseHeldPayout } from './held-payout';
import { PoolContext, SlotStep } from './pool-context';

export interface StepResult {
  step: SlotStep;
  /** The connection the slot carries to its next step, holding a finished payout's lock. */
  held?: HeldPayout;
}

export async function claimAndRun(ctx: PoolContext, held: HeldPayout | undefined): Promise<StepResult> {
  const { metrics: m, state } = ctx;
  if (state.stopping) {
    await releaseHeldPayout(held);
    return { step: 'idle' };
  }
  const merchantIds = [...ctx.signers.current().byMerchant.keys()];
  // Nothing this worker may sign (yet): no claim, unless one is needed to unlock the payout the slot holds.
  if (merchantIds.length === 0 && !held) return { step: 'idle' };
  let conn: DedicatedConnection;
  if (held) {
    conn = held.conn;
  } else {
    try {
      conn = await checkoutDedicated(ctx.db);
    } catch (e) {
      m.claims.inc({ result: 'error' });
      ctx.log.warn({ err: (e as Error).message }, 'database unavailable (connect); backing off');
      return { step: 'database_error' };
    }
  }
  let claim: Awaited<ReturnType<typeof claimDuePayout>>;
  try {
    claim = await claimDuePayout(conn.client, ctx.name, merchantIds, held?.finishedId);
  } catch (e) {
    conn.release(e as Error);
    m.claims.inc({ result: 'error' });
    ctx.log.warn({ err: (e as Error).message }, 'database unavailable (claim); backing off');
    return { step: 'database_error' };
  }
  if (!claim) {
    conn.release();
    m.claims.inc({ result: 'empty' });
    return { step: 'idle' };
  }
  const { row, locked } = claim;
  if (!locked) {
    // `oncepay payout execute` took the row's lock between our look at pg_locks and our try: it runs it.
    conn.release();
    m.claims.inc({ result: 'busy' });
    return { step: 'ran' };
  }
  const signer = ctx.signers.current().byMerchant.get(row.merchantId);
  if (state.stopping || !signer) {
    // stop() came while the claim was in flight (another slot may just have handed this very row back), or a
    // refusal took its merchant off this worker's list meanwhile: do not start it, and do not report it as handed
    // back — it was never run here. The next worker claims it.
    await unlockPayout(conn, row.id);
    return { step: 'idle' };
  }
  m.claims.inc({ result: 'claimed' });
  m.queue.claimed(1);
  ctx.waker.wakeOne(); // more may be due
  return run(ctx, conn, row, signer);
}

/** Run the claimed `row` on `conn` (which holds its lock) and keep the lock if it finished. */
async function run(
  ctx: PoolContext,
  conn: DedicatedConnection,
  row: PayoutRow,
  authority: PoolContext['runDeps']['authority'],
): Promise<StepResult> {
  ctx.state.inFlight.add(row.id);
  try {
    const r = await ctx.executor.runLocked(conn.client, row.id, { ...ctx.runDeps, authority }, row);
    ctx.onFinished?.(r);
    ctx.metrics.queue.settled('done');
    // Final and committed: the lock goes with the next claim on this connection (or when the slot stops).
    return { step: 'ran', held: { conn, finishedId: row.id } };
  } catch (e) {
    return { step: await handBack(ctx, conn, row, e) };
  } finally {
    ctx.state.inFlight.delete(row.id);
  }
}
