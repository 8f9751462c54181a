// The pipeline: batches of one stream applied in the order given, one transaction each, settled in that order. It
// owns only the order: `run` (ledger.ts) applies one batch. While a batch waits on PostgreSQL, `run` prepares the
// batch given after it (`next`); once its COMMIT is on its way (`onCommitting`) the next one begins, its work held
// back by `gate` until this one has settled. When a batch fails, it and every batch given after it reject
// (PIPELINE_BROKEN), unapplied: a checkpoint never passes a batch that did not commit.
import { OncepayError } from '../../common/errors';
import { LEDGER_CODES } from '../../common/errors/codes';
import type { ApplyBatchInput, ApplyBatchResult, ReceiptSource } from './types';

export interface BatchPipeline {
  /** Resolves once this batch committed (after every batch given before it), as applyBatch does. */
  apply(input: ApplyBatchInput): Promise<ApplyBatchResult>;
}

/** What the pipeline needs to know of a staged batch (staged.ts Staged). */
export interface PipelineBatch {
  cluster: string;
  source: ReceiptSource;
}

/**
 * One batch in its transaction. `next()` names the batch given after this one (prepared while this one waits on
 * PostgreSQL); `gate` settles when the batch before this one has (a rejected gate rolls this one back);
 * `onCommitting` runs once this one's COMMIT is on its way.
 */
export type RunBatch<S> = (
  s: S,
  next: () => S | undefined,
  gate: Promise<void>,
  onCommitting: () => void,
) => Promise<ApplyBatchResult>;

/** A pipeline's batch: given, begun (its transaction started) or not, settled through `done`. */
interface Entry<S> {
  s: S;
  begun: boolean;
  done: Promise<ApplyBatchResult>;
  resolve(result: ApplyBatchResult): void;
  reject(error: unknown): void;
}

function entry<S>(s: S): Entry<S> {
  const e = { s, begun: false } as Entry<S>;
  e.done = new Promise<ApplyBatchResult>((resolve, reject) => {
    e.resolve = resolve;
    e.reject = reject;
  });
  return e;
}

/** The error of a batch given after one that failed (`cause`): it was not applied. */
export function brokenError(s: PipelineBatch, cause: unknown): OncepayError {
  return new OncepayError(
    LEDGER_CODES.PIPELINE_BROKEN,
    'an earlier batch of this pipeline failed; this one was not applied',
    {
      cluster: s.cluster,
      source: s.source,
      cause: cause instanceof Error ? cause.message : String(cause),
    },
  );
}

/** A pipeline over `run`; `stage` turns an input into a batch (and throws on one the ledger does not take). */
export function createPipeline<S extends PipelineBatch>(
  stage: (input: ApplyBatchInput) => S,
  run: RunBatch<S>,
): BatchPipeline {
  // The batches given and not settled yet, in order: the first is running; the second may have begun too (below).
  const queue: Entry<S>[] = [];
  let broken: { cause: unknown } | undefined;

  /**
   * Runs `e` once `gate` has resolved, except its invoice lock: that goes out at once, so a batch begun while the
   * one before commits waits on that batch's row locks inside PostgreSQL and takes them the moment it ends. Nothing
   * else of `e` runs before the batch before it committed (`gate`), and if that one failed, `e` rolls back.
   */
  function begin(e: Entry<S>, gate: Promise<void>): void {
    e.begun = true;
    const after = () => queue[queue.indexOf(e) + 1];
    const outcome = run(
      e.s,
      () => after()?.s,
      gate,
      () => {
        // This batch's COMMIT is on its way: begin the next one given (if any, and not begun).
        const n = after();
        if (n && !n.begun)
          begin(
            n,
            e.done.then(
              () => undefined,
              (cause: unknown) => {
                throw brokenError(n.s, cause);
              },
            ),
          );
      },
    );
    // Settled in order: a batch that fails before its gate (its lock refused) settles after the one before it.
    void Promise.allSettled([gate, outcome]).then(([, o]) => settle(e, o));
  }

  function settle(e: Entry<S>, o: PromiseSettledResult<ApplyBatchResult>): void {
    queue.shift(); // e: batches settle in order (each one's work waits for the gate of the one before)
    if (o.status === 'fulfilled') e.resolve(o.value);
    else {
      broken ??= { cause: o.reason };
      e.reject(o.reason);
    }
    const n = queue[0];
    if (n && !n.begun) {
      if (broken) {
        // Not begun: it, and every batch after it, fails here without a transaction.
        for (const x of queue.splice(0)) x.reject(brokenError(x.s, broken.cause));
      } else begin(n, Promise.resolve());
    }
  }

  function apply(input: ApplyBatchInput): Promise<ApplyBatchResult> {
    let s: S;
    try {
      s = stage(input);
    } catch (e) {
      return Promise.reject(e);
    }
    if (broken) return Promise.reject(brokenError(s, broken.cause));
    const e = entry(s);
    queue.push(e);
    if (queue.length === 1) begin(e, Promise.resolve());
    return e.done;
  }
  return { apply };
}

/**
 * `inputs` through one pipeline of `ledger`, two in flight (the next given before the one before is awaited), with
 * `each` called on every result in order. Rejects with the first failure; the batches after it are not applied.
 */
export async function applyInOrder(
  ledger: { pipeline(): BatchPipeline },
  inputs: Iterable<ApplyBatchInput>,
  each: (result: ApplyBatchResult) => void = () => undefined,
): Promise<void> {
  const pipe = ledger.pipeline();
  let before: Promise<void> | undefined;
  for (const input of inputs) {
    const applying = pipe.apply(input).then(each);
    applying.catch(() => undefined); // awaited next turn (or below); the error that ends the run is the first one
    await before;
    before = applying;
  }
  await before;
}
