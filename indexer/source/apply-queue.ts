// A session's apply queue (pure: what to do with a batch is given): items observed are applied in batches, one
// batch at a time, each batch everything queued since the last one began. A batch that fails ends the session
// (`fail`); once the session has ended nothing more is begun. `idle()` waits until everything queued is applied.
import type { SessionScope } from './session-scope';

export interface ApplyQueue<T> {
  /** Queues `items`; a batch begins at once unless one is running (it takes them when it is done). */
  enqueue(items: T[]): void;
  /** Resolves once everything queued so far is applied; rejects with the session's end. */
  idle(): Promise<void>;
  /** The batch being applied, if any (a graceful stop lets it finish). */
  running(): Promise<void> | null;
}

export function createApplyQueue<T>(
  apply: (batch: T[]) => Promise<void>,
  scope: Pick<SessionScope, 'signal' | 'ended' | 'fail' | 'guard'>,
): ApplyQueue<T> {
  const queue: T[] = [];
  let busy: Promise<void> | null = null;
  const kick = (): void => {
    if (busy || queue.length === 0 || scope.signal.aborted) return;
    busy = (async () => {
      while (queue.length > 0 && !scope.signal.aborted) await apply(queue.splice(0));
    })()
      .catch(scope.fail)
      .finally(() => {
        busy = null;
        kick();
      });
  };
  return {
    enqueue(items) {
      queue.push(...items);
      kick();
    },
    async idle() {
      // Once the session has ended nothing more begins: what is left is not waited for (the end is the answer).
      while ((busy || queue.length > 0) && !scope.signal.aborted) {
        kick();
        if (busy) await scope.guard(busy);
      }
      if (scope.signal.aborted) await scope.ended;
    },
    running: () => busy,
  };
}
