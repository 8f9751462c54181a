// A claimed payout whose run threw is handed back, never failed by the worker: the journal rules alone end a payout.
// Why it is handed back is a pure decision on what was thrown (handBackReason); what follows is the I/O of each:
// - drain: stop() aborted it after the grace period; unlocked at once, still due, its open attempts logged;
// - chain_unavailable, unauthorized, error: the chain stayed unreachable, the merchant's payout authority is not
//   ours (any more: rotated since we read it; run-payout logged it), or something about this payout needs a pause:
//   deferred with a capped, jittered backoff stored in the row, then unlocked; other payouts go on;
// - database, unexpected: the database (or the connection holding the lock) failed, or something unexpected (a bug,
//   a statement the server refused): the connection is dropped, which frees the lock on the server if it is still
//   alive; the row stays due for any worker, and the slot backs off.
import { OncepayError } from '../../../common/errors';
import { PAYOUT_CODES } from '../../../common/errors/codes';
import { afterFailure } from '../../../db/queue';
import { isDatabaseUnavailable } from '../../../db/unavailable';
import { DedicatedConnection, unlockPayout } from '../lock';
import { isOpenAttempt } from '../next-action';
import { deferPayout, listAttempts, PayoutRow } from '../store';
import { PoolContext, SlotStep } from './pool-context';

/** The label of oncepay_payout_worker_handbacks_total for each way a run can end unfinished. */
export type HandBackReason = 'drain' | 'chain_unavailable' | 'unauthorized' | 'error' | 'database' | 'unexpected';

/** Pure: why a run that threw `e` hands its payout back. */
export function handBackReason(e: unknown): HandBackReason {
  if (e instanceof OncepayError) {
    if (e.code === PAYOUT_CODES.ABORTED) return 'drain';
    if (e.code === PAYOUT_CODES.CHAIN_UNAVAILABLE) return 'chain_unavailable';
    if (e.code === PAYOUT_CODES.SIGNER_UNAUTHORIZED) return 'unauthorized';
    return 'error';
  }
  return isDatabaseUnavailable(e) ? 'database' : 'unexpected';
}

/** Hand back `row`, whose run on `conn` (holding its lock) threw `e`; says what the slot does next. */
export async function handBack(
  ctx: PoolContext,
  conn: DedicatedConnection,
  row: PayoutRow,
  e: unknown,
): Promise<SlotStep> {
  const reason = handBackReason(e);
  if (reason === 'drain') {
    await handBackDrained(ctx, conn, row.id);
    return 'ran';
  }
  const err = e as Error;
  if (reason === 'database' || reason === 'unexpected') {
    conn.release(err);
    ctx.metrics.queue.settled('released');
    ctx.metrics.handbacks.inc({ reason });
    if (reason === 'database') {
      ctx.log.warn(
        { payout: row.id, err: err.message },
        'database unavailable while running a payout; it stays due, backing off',
      );
    } else {
      // Only an outage is reported as one; anything else is an error an operator must see.
      ctx.log.error(
        { payout: row.id, err: err.message, stack: err.stack },
        'payout run failed with an unexpected error (not a database outage); it stays due, backing off',
      );
    }
    return 'database_error';
  }
  ctx.metrics.handbacks.inc({ reason });
  if (reason === 'unauthorized') ctx.signers.forget(row.merchantId);
  if (reason === 'error') ctx.log.error({ payout: row.id, err: err.message }, 'payout run failed');
  try {
    await defer(ctx, conn, row.id, row.retries, err.message);
    ctx.metrics.queue.settled('retry');
    await unlockPayout(conn, row.id);
    return 'ran';
  } catch (dbErr) {
    conn.release(dbErr as Error);
    return 'database_error';
  }
}

/** stop() aborted the run: say what is left open, so nothing is abandoned silently, and unlock it. */
async function handBackDrained(ctx: PoolContext, conn: DedicatedConnection, id: string): Promise<void> {
  ctx.metrics.handbacks.inc({ reason: 'drain' });
  ctx.metrics.queue.settled('released');
  ctx.state.handedBack.push(id);
  // The next claim resolves what is open from the journal.
  const open = await listAttempts(conn.client, id).then(
    (as) => as.filter(isOpenAttempt).map((a) => ({ attempt: a.attemptNo, signature: a.signature, status: a.status })),
    () => 'unknown (database unavailable)',
  );
  ctx.log.warn(
    { payout: id, open },
    'stopping: payout handed back unfinished; the next claim resolves it from the journal',
  );
  await unlockPayout(conn, id);
}

/** Give the claimed payout back after trouble: not before a backoff, counted in the row. */
async function defer(
  ctx: PoolContext,
  conn: DedicatedConnection,
  id: string,
  retries: number,
  why: string,
): Promise<void> {
  const { policy } = ctx;
  const next = afterFailure(policy, { attempts: retries + 1 }, ctx.random());
  const delayMs = next.next === 'retry' ? next.delayMs : policy.backoff.capMs;
  await deferPayout(conn.client, id, delayMs);
  ctx.log.warn({ payout: id, retries: retries + 1, delayMs, why }, 'payout handed back; retried after the backoff');
}
