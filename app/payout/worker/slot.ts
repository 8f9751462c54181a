// A slot of the payout worker pool: a loop of claim-and-run steps on one connection at a time until stop(), with
// the pause each outcome calls for — none after a run, the idle pause after finding nothing, a jittered backoff
// growing with consecutive database errors — and the held payout released when it ends.
import { backoffDelay } from '../../../common/backoff';
import { claimAndRun } from './claim-and-run';
import { HeldPayout, releaseHeldPayout } from './held-payout';
import { PoolContext, SlotStep } from './pool-context';

export async function runSlot(ctx: PoolContext): Promise<void> {
  const { state } = ctx;
  let databaseErrors = 0;
  let held: HeldPayout | undefined;
  while (!state.stopping) {
    let s: SlotStep;
    try {
      ({ step: s, held } = await claimAndRun(ctx, held));
    } catch (e) {
      // Not expected (every path of a step handles its errors); never let a slot die silently.
      ctx.log.error({ err: (e as Error).message }, 'payout worker slot failed; backing off');
      s = 'database_error';
      held = undefined;
    }
    if (s === 'ran') {
      databaseErrors = 0;
    } else if (s === 'idle') {
      databaseErrors = 0;
      if (!state.stopping) await ctx.idlePause();
    } else {
      databaseErrors += 1;
      if (!state.stopping) await ctx.waker.sleep(backoffDelay(databaseErrors, ctx.databaseBackoff, ctx.random()));
    }
  }
  await releaseHeldPayout(held);
}
