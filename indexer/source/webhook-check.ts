// One check of leased webhook hints, every one of them settled at its end: getSignatureStatuses for 256 signatures a
// call, getTransaction at `finalized` for the finalized ones only (`concurrency` calls of each at once, credits
// first), then one statement schedules the rest again and one deletes those that expired unconfirmed. A check that
// stops early gives the hints it has not settled back at once.
import { isOncepayError, OncepayError, SOURCE_CODES } from '../../common/errors';
import { MAX_SIGNATURES_PER_STATUS_CALL, type SignatureStatus } from '../rpc';
import {
  addSummary,
  type CheckSummary,
  EMPTY_SUMMARY,
  type HintResult,
  splitResults,
  waiterOutcome,
} from './webhook-check-summary';
import { classifyStatus, nextHintStep } from './webhook-hint-plan';
import { fetchAndSettle, type SettleContext, settleWithout } from './webhook-hint-settle';
import type { ClaimedHint } from './webhook-store';

/** What a check uses: settling's context, and how many status and transaction calls it keeps in flight. */
export interface CheckContext extends SettleContext {
  concurrency: number;
}

/**
 * `f` over `items`, at most `limit` at a time; results in order. After a failure no new item starts, and the promise
 * rejects with that first failure only when every call in flight has ended: a caller's cleanup (releasing the hints'
 * leases and the session they hold) never runs beside a call still using them.
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, f: (x: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async () => {
    for (let i = next++; i < items.length && failure === undefined; i = next++) {
      try {
        out[i] = await f(items[i]);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failure !== undefined) throw failure.error;
  return out;
}

/** Step 1 for one chunk of at most 256 hints: what the node knows of each (an RPC failure: rpc_error for all). */
async function lookChunk(ctx: CheckContext, chunk: ClaimedHint[], signal?: AbortSignal) {
  let statuses: Array<SignatureStatus | null>;
  try {
    statuses = await ctx.rpc.getSignatureStatuses(
      chunk.map((h) => h.signature),
      { signal },
    );
  } catch (e) {
    if (signal?.aborted || !isOncepayError(e)) throw e;
    return chunk.map((): ReturnType<typeof classifyStatus> => ({ kind: 'rpc_error', message: e.message }));
  }
  return statuses.map(classifyStatus);
}

/**
 * Check leased hints (in their lease order) and settle every one of them: credited, dropped, scheduled again or
 * deleted. Each hint's outcome, as a delivery waiting on it sees it, goes into `outcomes` as it settles. If the check
 * stops early (the signal, the database gone), the hints not settled yet go back at once (best effort: where the
 * database is still away, their holder session is gone with it and frees them anyway).
 */
export async function checkLeased(
  ctx: CheckContext,
  hints: ClaimedHint[],
  signal: AbortSignal | undefined,
  outcomes: Map<string, Partial<CheckSummary>>,
): Promise<CheckSummary> {
  const sum = { ...EMPTY_SUMMARY, checked: hints.length };
  const settled = new Set<string>();
  const outcome = (h: ClaimedHint, r: HintResult) => {
    outcomes.set(h.id, waiterOutcome(r));
    settled.add(h.id);
    return r;
  };
  try {
    const chunks: ClaimedHint[][] = [];
    for (let i = 0; i < hints.length; i += MAX_SIGNATURES_PER_STATUS_CALL)
      chunks.push(hints.slice(i, i + MAX_SIGNATURES_PER_STATUS_CALL));
    const looks = (await mapLimit(chunks, ctx.concurrency, (c) => lookChunk(ctx, c, signal))).flat();
    const toFetch: ClaimedHint[] = [];
    const results: HintResult[] = [];
    for (let i = 0; i < hints.length; i++) {
      const look = looks[i];
      if (look.kind === 'fetch') {
        toFetch.push(hints[i]);
        continue;
      }
      const step = nextHintStep(hints[i], look, ctx.policy, ctx.random());
      if (step.action === 'credit')
        throw new OncepayError(SOURCE_CODES.HINT_STEP_INVALID, 'a status alone never credits'); // only a transaction does
      results.push(outcome(hints[i], await settleWithout(ctx, hints[i], step, null)));
    }
    // Credits first: a real payment is applied before the flood around it is scheduled again.
    for (const r of await mapLimit(toFetch, ctx.concurrency, async (h) =>
      outcome(h, await fetchAndSettle(ctx, h, signal)),
    ))
      results.push(r);
    const { settled: done, recheck, expired } = splitResults(results);
    await ctx.onSession(async (s) => {
      await s.recheckLater(recheck);
      await s.deleteExpired(expired.map((x) => x.expired.id));
    });
    for (const x of expired) ctx.metrics.countDropped(x.reason);
    ctx.metrics.queue.settled('done', done.length);
    ctx.metrics.queue.settled('retry', recheck.length);
    ctx.metrics.queue.settled('dead', expired.length);
    if (expired.length > 0) {
      // One line per check, not per hint: a flood of made-up signatures does not flood the log.
      ctx.log?.warn(
        {
          deleted: expired.length,
          signatures: expired.slice(0, 5).map((x) => x.expired.signature),
          providers: [...new Set(expired.map((x) => x.expired.provider))].slice(0, 5),
        },
        'webhook hints deleted: the chain never confirmed them before they expired',
      );
    }
    for (const r of done) addSummary(sum, r);
    sum.pending += recheck.length;
    sum.dropped += expired.length;
    return sum;
  } catch (e) {
    const rest = hints.filter((h) => !settled.has(h.id)).map((h) => h.id);
    ctx.metrics.queue.settled('released', rest.length);
    await ctx
      .onSession((s) => s.release(rest))
      .catch((err: Error) =>
        ctx.log?.warn(
          { hints: rest.length, err: err.message },
          'webhook hint leases not released; their session frees them',
        ),
      );
    // Interrupted (a delivery's deadline, shutdown): what was not settled stays pending for the background loop.
    if (signal?.aborted) return { ...sum, pending: sum.pending + rest.length };
    throw e;
  }
}
